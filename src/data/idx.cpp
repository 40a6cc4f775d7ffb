// The IDX reader. zlib's gz* functions read gzip and plain files alike (a file
// without the gzip magic is read as is), so one code path serves both.
#include "eagerflow/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>

namespace ef::data {

namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzPtr = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

bool known_type(uint8_t code) {
  switch (static_cast<IdxType>(code)) {
    case IdxType::UInt8:
    case IdxType::Int8:
    case IdxType::Int16:
    case IdxType::Int32:
    case IdxType::Float32:
    case IdxType::Float64:
      return true;
  }
  return false;
}

const char* type_name(IdxType type) {
  switch (type) {
    case IdxType::UInt8:
      return "ubyte";
    case IdxType::Int8:
      return "byte";
    case IdxType::Int16:
      return "short";
    case IdxType::Int32:
      return "int";
    case IdxType::Float32:
      return "float";
    case IdxType::Float64:
      return "double";
  }
  return "unknown";
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    errno = 0;
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_)
      fail<NotFoundError>("read_idx: cannot open '", path,
                          "': ", errno ? std::strerror(errno) : "out of memory");
    gzbuffer(file_.get(), 1 << 17);
  }

  // Reads up to n bytes; returns how many it got (fewer only at the end of the data).
  size_t read(void* out, size_t n) {
    size_t got = 0;
    while (got < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
      const int r = gzread(file_.get(), static_cast<char*>(out) + got, chunk);
      if (r < 0) corrupt();
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    // A gzip stream cut short reads as a short count plus an error state.
    int err = Z_OK;
    gzerror(file_.get(), &err);
    if (err != Z_OK && err != Z_STREAM_END) corrupt();
    return got;
  }

  [[noreturn]] void malformed(const std::string& field, const std::string& what) const {
    fail("read_idx: '", path_, "' is not a valid IDX file: ", field, ": ", what);
  }

 private:
  [[noreturn]] void corrupt() const {
    int err = Z_OK;
    const char* message = gzerror(file_.get(), &err);
    if (err == Z_ERRNO) fail("read_idx: cannot read '", path_, "': ", std::strerror(errno));
    fail("read_idx: '", path_, "' is not a valid IDX file: gzip data: ", message ? message : "corrupt");
  }

  std::string path_;
  GzPtr file_;
};

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Elements arrive big-endian; flip them in place on little-endian machines.
void to_native(std::vector<uint8_t>& data, size_t width) {
  if (width == 1 || std::endian::native == std::endian::big) return;
  for (size_t i = 0; i + width <= data.size(); i += width)
    std::reverse(data.begin() + i, data.begin() + i + width);
}

// The elements of `file` (stored as S) in a new tensor of D's dtype.
template <class S, class D>
Tensor widen(const IdxFile& file) {
  Tensor t = ef::detail::empty_tensor(dtype_of<D>, Shape(file.dims), kCPU, "read_idx");
  D* out = static_cast<D*>(t.impl()->storage->data());
  const size_t n = file.data.size() / sizeof(S);
  for (size_t i = 0; i < n; ++i) {
    S v;
    std::memcpy(&v, file.data.data() + i * sizeof(S), sizeof(S));
    out[i] = static_cast<D>(v);
  }
  return t;
}

}  // namespace

size_t element_size(IdxType type) {
  switch (type) {
    case IdxType::UInt8:
    case IdxType::Int8:
      return 1;
    case IdxType::Int16:
      return 2;
    case IdxType::Int32:
    case IdxType::Float32:
      return 4;
    case IdxType::Float64:
      return 8;
  }
  return 1;
}

IdxFile read_idx_file(const std::string& path, CallSite where) {
  try {
    Reader in(path);
    uint8_t magic[4];
    const size_t got = in.read(magic, 4);
    if (got < 4)
      in.malformed("magic number", detail::str("the file has only ", got, " bytes, the header needs 4"));
    if (magic[0] != 0 || magic[1] != 0)
      in.malformed("magic number",
                   detail::str("the first two bytes must be 0, got ", int{magic[0]}, " and ", int{magic[1]}));
    if (!known_type(magic[2]))
      in.malformed("type code", detail::str("0x", std::hex, int{magic[2]},
                                            " is not one of 0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E"));
    if (magic[3] < 1 || magic[3] > kMaxRank)
      in.malformed("number of dimensions", detail::str(int{magic[3]}, " is outside [1, ", kMaxRank, "]"));

    IdxFile file;
    file.type = static_cast<IdxType>(magic[2]);
    const size_t width = element_size(file.type);
    std::vector<uint8_t> header(4 * size_t{magic[3]});
    if (in.read(header.data(), header.size()) < header.size())
      in.malformed("dimensions", detail::str("the file ends inside the ", int{magic[3]}, " dimension sizes"));
    for (int d = 0; d < magic[3]; ++d) file.dims.push_back(big_endian_u32(header.data() + 4 * d));
    std::string shape;
    for (size_t d = 0; d < file.dims.size(); ++d) shape += (d ? "x" : "") + std::to_string(file.dims[d]);
    // Cap the byte count at 2^48 (256 TiB): far beyond any real file, far from int64's limit.
    uint64_t count = std::find(file.dims.begin(), file.dims.end(), 0) != file.dims.end() ? 0 : 1;
    for (int64_t size : file.dims) {
      if (count != 0 && count > (uint64_t{1} << 48) / width / static_cast<uint64_t>(size))
        in.malformed("dimensions",
                     detail::str(shape, " ", type_name(file.type), " elements overflow the size limit"));
      count *= static_cast<uint64_t>(size);
    }

    // Grow the buffer as data arrives rather than trusting the header with one huge
    // allocation: a forged header must not cost more memory than the file's content.
    const size_t expected = static_cast<size_t>(count) * width;
    size_t have = 0;
    while (have < expected) {
      file.data.resize(std::min(expected, std::max<size_t>(have * 2, 1 << 20)));
      const size_t got_now = in.read(file.data.data() + have, file.data.size() - have);
      have += got_now;
      if (have < file.data.size()) break;
    }
    if (have < expected)
      in.malformed("data", detail::str("truncated: dimensions ", shape, " need ", expected, " bytes of ",
                                       type_name(file.type), " data, the file holds ", have));
    file.data.resize(expected);
    uint8_t extra;
    if (in.read(&extra, 1) != 0)
      in.malformed("data", detail::str("the file holds more than the ", expected, " bytes that dimensions ",
                                       shape, " of ", type_name(file.type), " need"));
    to_native(file.data, width);
    return file;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor read_idx(const std::string& path, CallSite where) {
  try {
    const IdxFile file = read_idx_file(path);
    switch (file.type) {
      case IdxType::UInt8:
        return widen<uint8_t, int32_t>(file);
      case IdxType::Int8:
        return widen<int8_t, int32_t>(file);
      case IdxType::Int16:
        return widen<int16_t, int32_t>(file);
      case IdxType::Int32:
        return widen<int32_t, int32_t>(file);
      case IdxType::Float32:
        return widen<float, float>(file);
      case IdxType::Float64:
        return widen<double, double>(file);
    }
    fail<InternalError>("read_idx: unhandled IDX type code ", int(file.type));
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::data
