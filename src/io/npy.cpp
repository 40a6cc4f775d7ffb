// NumPy .npy and .npz files (eagerflow/io/npy.h). The .npy layout: the magic
// "\x93NUMPY", a version (1.0: 2-byte header length; 2.0 and 3.0: 4 bytes), the header,
// a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces to a multiple of 64 bytes and ended by '\n', then the raw data.
#include "eagerflow/io/npy.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <vector>

#include "eagerflow/ops/array.h"
#include "io/atomic_file.h"

namespace ef::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct DtypeCode {
  DType dtype;
  const char* descr;
};
constexpr DtypeCode kCodes[] = {{DType::Float32, "<f4"}, {DType::Float64, "<f8"}, {DType::Int32, "<i4"},
                                {DType::Int64, "<i8"},   {DType::Bool, "|b1"},    {DType::Float16, "<f2"},
                                {DType::Int8, "|i1"},    {DType::UInt8, "|u1"},   {DType::Int16, "<i2"},
                                {DType::UInt16, "<u2"},  {DType::UInt32, "<u4"}};

[[noreturn]] void damaged(const std::string& source, const std::string& field, const std::string& why) {
  fail<DataLossError>("npy file '", source, "': ", field, ": ", why);
}

// The value after `'key':` in the header dict, up to the next top-level comma or '}'.
std::string dict_value(const std::string& header, const std::string& key, const std::string& source) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) damaged(source, "header", "no '" + key + "' entry in " + header);
  size_t p = header.find(':', at);
  if (p == std::string::npos) damaged(source, key, "no value");
  ++p;
  int depth = 0;
  size_t end = p;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) damaged(source, key, "unbalanced parentheses");
  }
  std::string v = header.substr(p, end - p);
  const auto first = v.find_first_not_of(' '), last = v.find_last_not_of(' ');
  return first == std::string::npos ? "" : v.substr(first, last - first + 1);
}

Shape parse_shape(const std::string& text, const std::string& source) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    damaged(source, "shape", "'" + text + "' is not a tuple");
  std::vector<int64_t> dims;
  size_t p = 1;
  while (p < text.size() - 1) {
    while (p < text.size() - 1 && (text[p] == ' ' || text[p] == ',')) ++p;
    if (p >= text.size() - 1) break;
    size_t digits = p;
    while (digits < text.size() - 1 && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    if (digits == p || digits - p > 18)
      damaged(source, "shape", "'" + text + "' holds something other than sizes");
    dims.push_back(std::stoll(text.substr(p, digits - p)));
    p = digits;
  }
  if (dims.size() > static_cast<size_t>(kMaxRank))
    damaged(source, "shape", "rank " + std::to_string(dims.size()) + " exceeds " + std::to_string(kMaxRank));
  Shape shape(dims);
  try {
    validate_shape(shape, "load_npy", "shape", 8);
  } catch (const Error& e) {
    damaged(source, "shape", e.message());
  }
  return shape;
}

std::string header_text(const Tensor& t) {
  const char* descr = nullptr;
  for (const DtypeCode& c : kCodes)
    if (c.dtype == t.dtype()) descr = c.descr;
  if (!descr) fail<UnimplementedError>("save_npy: NumPy has no ", t.dtype(), " dtype; cast to float32 first");
  std::string shape = "(";
  for (int d = 0; d < t.rank(); ++d)
    shape += std::to_string(t.shape()[d]) + (t.rank() == 1 ? ",)" : d + 1 < t.rank() ? ", " : ")");
  if (t.rank() == 0) shape += ")";
  std::string h = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  return h;
}

std::vector<uint8_t> npy_bytes(const Tensor& value, std::string_view op) {
  if (!value.defined()) fail(op, ": the tensor is undefined");
  if (value.is_symbolic()) fail(op, ": the tensor is symbolic; save eager values");
  const Tensor host = value.cpu().contiguous();
  const std::string header = header_text(host);
  if (header.size() > 65535) fail(op, ": the header is too long for format 1.0");
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const size_t n = static_cast<size_t>(host.num_elements()) * size_of(host.dtype());
  const auto* data = static_cast<const uint8_t*>(host.raw_data());
  if (n) out.insert(out.end(), data, data + n);
  return out;
}

void put16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}
uint32_t get16(const uint8_t* p) { return p[0] | (uint32_t{p[1]} << 8); }
uint32_t get32(const uint8_t* p) { return get16(p) | (get16(p + 2) << 16); }

}  // namespace

Tensor parse_npy(std::span<const uint8_t> bytes, const std::string& source) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    damaged(source, "magic", "not a .npy file (it does not start with \\x93NUMPY)");
  const uint8_t major = bytes[6];
  if (major < 1 || major > 3)
    damaged(source, "version", std::to_string(major) + "." + std::to_string(bytes[7]));
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + length_bytes) damaged(source, "header length", "the file ends inside it");
  const size_t header_len = major == 1 ? get16(bytes.data() + 8) : get32(bytes.data() + 8);
  const size_t data_start = 8 + length_bytes + header_len;
  if (header_len > bytes.size() || data_start > bytes.size())
    damaged(source, "header length", std::to_string(header_len) + " bytes, more than the file holds");
  const std::string header(reinterpret_cast<const char*>(bytes.data()) + 8 + length_bytes, header_len);
  const std::string descr = dict_value(header, "descr", source);
  DType dtype{};
  bool known = false;
  for (const DtypeCode& c : kCodes)
    if (descr == std::string("'") + c.descr + "'" || (c.dtype == DType::Bool && descr == "'<b1'") ||
        (std::string(c.descr)[0] == '<' && descr == std::string("'=") + (c.descr + 1) + "'"))
      dtype = c.dtype, known = true;
  if (!known)
    fail<UnimplementedError>("npy file '", source, "': descr: dtype ", descr,
                             " is not one eagerflow reads (float16/32/64, int32/64, bool, little-endian)");
  const std::string fortran = dict_value(header, "fortran_order", source);
  if (fortran != "False" && fortran != "True") damaged(source, "fortran_order", "'" + fortran + "'");
  Shape shape = parse_shape(dict_value(header, "shape", source), source);
  const size_t n = static_cast<size_t>(shape.num_elements()) * size_of(dtype);
  if (bytes.size() - data_start != n)
    damaged(source, "data",
            "holds " + std::to_string(bytes.size() - data_start) + " bytes; shape " + shape.to_string() +
                " of " + std::string(name(dtype)) + " needs " + std::to_string(n));
  const bool is_fortran = fortran == "True";
  Shape stored = shape;
  if (is_fortran) std::reverse(stored.dims().begin(), stored.dims().end());
  Tensor t = ef::detail::empty_tensor(dtype, stored, kCPU, "load_npy");
  if (n) std::memcpy(const_cast<void*>(t.raw_data()), bytes.data() + data_start, n);
  if (dtype == DType::Bool)
    for (size_t i = 0; i < n; ++i)
      if (bytes[data_start + i] > 1)
        damaged(source, "data", "a bool byte is " + std::to_string(bytes[data_start + i]));
  if (!is_fortran || shape.rank() < 2) return t;
  std::vector<int64_t> reversed(static_cast<size_t>(shape.rank()));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  return transpose(t, reversed).contiguous();
}

Tensor load_npy(const std::string& path, CallSite where) {
  try {
    const std::vector<uint8_t> bytes = detail::read_file_bytes(path, "load_npy");
    return parse_npy(bytes, path);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

void save_npy(const std::string& path, const Tensor& value, CallSite where) {
  try {
    const std::vector<uint8_t> bytes = npy_bytes(value, "save_npy");
    detail::write_file_atomically(
        path, [&](detail::FileWriter& w) { w.write(bytes.data(), bytes.size()); }, "save_npy");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

// An uncompressed zip (local headers, data, central directory, end record), as
// np.savez writes; sizes stay below 4 GiB (no zip64).
void save_npz(const std::string& path, const std::map<std::string, Tensor>& tensors, CallSite where) {
  try {
    std::vector<uint8_t> zip, central;
    for (const auto& [name, value] : tensors) {
      if (name.empty()) fail("save_npz: a tensor has an empty name");
      const std::vector<uint8_t> member = npy_bytes(value, "save_npz");
      const std::string file = name + ".npy";
      if (member.size() >= 0xffffffffu || zip.size() >= 0xffffffffu)
        fail<UnimplementedError>("save_npz: '", name,
                                 "' makes the archive larger than 4 GiB (zip64 is not written)");
      const uint32_t crc = static_cast<uint32_t>(::crc32(0, member.data(), static_cast<uInt>(member.size())));
      const uint32_t offset = static_cast<uint32_t>(zip.size());
      const auto header = [&](std::vector<uint8_t>& out, bool is_central) {
        put32(out, is_central ? 0x02014b50 : 0x04034b50);
        if (is_central) put16(out, 20);  // made by
        put16(out, 20);                  // needed to extract
        put16(out, 0);                   // flags
        put16(out, 0);                   // stored
        put16(out, 0);                   // time
        put16(out, 0x21);                // date: 1980-01-01
        put32(out, crc);
        put32(out, static_cast<uint32_t>(member.size()));
        put32(out, static_cast<uint32_t>(member.size()));
        put16(out, static_cast<uint32_t>(file.size()));
        put16(out, 0);  // extra
        if (is_central) {
          put16(out, 0);  // comment
          put16(out, 0);  // disk
          put16(out, 0);  // internal attributes
          put32(out, 0);  // external attributes
          put32(out, offset);
        }
        out.insert(out.end(), file.begin(), file.end());
      };
      header(zip, false);
      zip.insert(zip.end(), member.begin(), member.end());
      header(central, true);
    }
    const uint32_t central_offset = static_cast<uint32_t>(zip.size());
    zip.insert(zip.end(), central.begin(), central.end());
    put32(zip, 0x06054b50);
    put16(zip, 0);
    put16(zip, 0);
    put16(zip, static_cast<uint32_t>(tensors.size()));
    put16(zip, static_cast<uint32_t>(tensors.size()));
    put32(zip, static_cast<uint32_t>(central.size()));
    put32(zip, central_offset);
    put16(zip, 0);
    detail::write_file_atomically(
        path, [&](detail::FileWriter& w) { w.write(zip.data(), zip.size()); }, "save_npz");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::map<std::string, Tensor> load_npz(const std::string& path, CallSite where) {
  try {
    const std::vector<uint8_t> bytes = detail::read_file_bytes(path, "load_npz");
    std::map<std::string, Tensor> out;
    size_t p = 0;
    while (p + 4 <= bytes.size() && get32(bytes.data() + p) == 0x04034b50) {
      if (p + 30 > bytes.size()) damaged(path, "zip", "a member header is cut off");
      const uint8_t* h = bytes.data() + p;
      if (get16(h + 6) & 0x8) damaged(path, "zip", "members with data descriptors are not read");
      if (get16(h + 8) != 0)
        fail<UnimplementedError>("load_npz: '", path, "' is compressed (np.savez_compressed); use np.savez");
      const size_t size = get32(h + 18), name_len = get16(h + 26), extra = get16(h + 28);
      const size_t start = p + 30 + name_len + extra;
      if (start > bytes.size() || size > bytes.size() - start)
        damaged(path, "zip", "a member runs past the end");
      std::string name(reinterpret_cast<const char*>(h + 30), name_len);
      const std::span<const uint8_t> member(bytes.data() + start, size);
      if (static_cast<uint32_t>(::crc32(0, member.data(), static_cast<uInt>(size))) != get32(h + 14))
        damaged(path, name, "the CRC-32 does not match");
      if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
      out[name] = parse_npy(member, path + ":" + name);
      p = start + size;
    }
    if (out.empty()) damaged(path, "zip", "no members (not an .npz written by np.savez?)");
    return out;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::io
