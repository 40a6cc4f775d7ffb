// Saving and loading safetensors files (format and guarantees: eagerflow/io/safetensors.h).
#include "eagerflow/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <functional>

#include "atomic_file.h"
#include "safetensors_header.h"

namespace ef::io {
namespace {

// The data section is the tensors' memory as is; a big-endian host would need swaps here.
static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian data");

// A file about to be written: its header and the tensors, contiguous on the CPU, in order.
struct Prepared {
  std::string header;
  std::vector<std::pair<const void*, size_t>> chunks;
  std::vector<Tensor> keep_alive;
};

Prepared prepare(const std::map<std::string, Tensor>& tensors, const std::map<std::string, std::string>& metadata,
                 std::string_view op) {
  for (const auto& [key, value] : metadata) {
    if (key.starts_with(detail::kCrcPrefix))
      fail(op, ": metadata key '", key, "' starts with the reserved prefix '", detail::kCrcPrefix, "'");
    if (key == detail::kFormatKey) fail(op, ": metadata key '", key, "' is reserved");
  }
  Prepared p;
  std::vector<detail::TensorEntry> entries;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == "__metadata__") fail(op, ": '__metadata__' is reserved and cannot name a tensor");
    if (!tensor.defined()) fail(op, ": tensor '", name, "' is undefined");
    if (tensor.is_symbolic()) fail(op, ": tensor '", name, "' is symbolic (graph mode) and has no value to save");
    Tensor t = tensor.cpu().contiguous();
    const size_t bytes = static_cast<size_t>(t.num_elements()) * size_of(t.dtype());
    const void* data = bytes ? t.raw_data() : nullptr;
    entries.push_back(
        {name, t.dtype(), t.shape(), offset, offset + bytes,
         detail::tensor_checksum(detail::kFormatVersion, name, t.dtype(), t.shape(), data, bytes)});
    offset += bytes;
    p.chunks.emplace_back(data, bytes);
    p.keep_alive.push_back(std::move(t));
  }
  p.header = detail::encode_header(entries, metadata);
  return p;
}

template <class Sink>
void emit(const Prepared& p, Sink&& sink) {
  uint8_t length[8];
  uint64_t n = p.header.size();
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(n >> (8 * i));
  sink(length, 8);
  sink(p.header.data(), p.header.size());
  for (const auto& [data, size] : p.chunks)
    if (size) sink(data, size);
}

// Copies `size` bytes at absolute file offset `offset` into `dst` (or throws).
using ReadFn = std::function<void(uint64_t offset, size_t size, void* dst)>;

// Reads and validates a whole file of `file_size` bytes through `read`; errors start
// with `context`. Nothing is returned unless everything is valid.
TensorFile read_contents(uint64_t file_size, const ReadFn& read, const std::string& context) {
  if (file_size < 8)
    fail<DataLossError>(context, ": field 'header length': the file has ", file_size, " bytes, fewer than the 8 it needs");
  uint8_t length[8];
  read(0, 8, length);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{length[i]} << (8 * i);
  if (n > detail::kMaxHeaderSize)
    fail<DataLossError>(context, ": field 'header length': ", n, " bytes exceeds the limit of ", detail::kMaxHeaderSize);
  if (n > file_size - 8)
    fail<DataLossError>(context, ": field 'header length': ", n, " bytes but only ", file_size - 8,
                        " bytes follow (file truncated?)");
  std::string json(n, '\0');
  read(8, n, json.data());
  detail::Header header = detail::decode_header(json, file_size - 8 - n, context);

  TensorFile out;
  out.metadata = std::move(header.metadata);
  out.checksummed = header.checksum_version > 0;
  const uint64_t data_start = 8 + n;
  for (const detail::TensorEntry& e : header.entries) {
    Tensor t = ef::detail::empty_tensor(e.dtype, e.shape, kCPU, "load_safetensors");
    const size_t bytes = e.end - e.begin;
    auto* dst = static_cast<unsigned char*>(const_cast<void*>(bytes ? t.raw_data() : nullptr));
    if (bytes) read(data_start + e.begin, bytes, dst);
    if (e.crc) {
      const uint32_t actual =
          detail::tensor_checksum(header.checksum_version, e.name, e.dtype, e.shape, dst, bytes);
      if (actual != *e.crc)
        fail<DataLossError>(context, ": tensor '", e.name, "' field 'crc32c': the data's checksum ", std::hex, actual,
                            " differs from the stored ", *e.crc, " (corrupted data)");
    }
    if (e.dtype == DType::Bool)  // any other byte would be an invalid C++ bool
      for (size_t i = 0; i < bytes; ++i)
        if (dst[i] > 1)
          fail<DataLossError>(context, ": tensor '", e.name, "' field 'data': byte ", i, " is ", int{dst[i]},
                              ", not a bool (0 or 1)");
    out.tensors.emplace(e.name, std::move(t));
  }
  return out;
}

// Closes a file descriptor on every path.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata, CallSite where) {
  try {
    Prepared p = prepare(tensors, metadata, "save_safetensors");
    detail::remove_stale_temporary_files(path);
    detail::write_file_atomically(
        path, [&](detail::FileWriter& w) { emit(p, [&](const void* d, size_t n) { w.write(d, n); }); },
        "save_safetensors");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::vector<uint8_t> serialize_safetensors(const std::map<std::string, Tensor>& tensors,
                                           const std::map<std::string, std::string>& metadata, CallSite where) {
  try {
    Prepared p = prepare(tensors, metadata, "serialize_safetensors");
    std::vector<uint8_t> out;
    emit(p, [&](const void* d, size_t n) {
      const auto* b = static_cast<const uint8_t*>(d);
      out.insert(out.end(), b, b + n);
    });
    return out;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

TensorFile parse_safetensors(std::span<const uint8_t> bytes, const std::string& source, CallSite where) {
  try {
    return read_contents(
        bytes.size(), [&](uint64_t offset, size_t size, void* dst) { std::memcpy(dst, bytes.data() + offset, size); },
        "parse_safetensors: '" + source + "'");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

TensorFile load_safetensors(const std::string& path, CallSite where) {
  try {
    const std::string context = "load_safetensors: file '" + path + "'";
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer forever.
    // Regular files ignore the flag; anything else is refused below before any read.
    FdGuard file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) detail::fail_io("load_safetensors", "open", path, errno);
    struct stat st;
    if (::fstat(file.fd, &st) != 0) detail::fail_io("load_safetensors", "stat", path, errno);
    if (!S_ISREG(st.st_mode)) fail(context, ": not a regular file (", detail::file_kind(st.st_mode), ")");
    detail::remove_stale_temporary_files(path);
    return read_contents(
        static_cast<uint64_t>(st.st_size),
        [&](uint64_t offset, size_t size, void* dst) {
          auto* p = static_cast<char*>(dst);
          while (size > 0) {
            ssize_t n = ::pread(file.fd, p, size, static_cast<off_t>(offset));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) detail::fail_io("load_safetensors", "read", path, errno);
            if (n == 0) fail<DataLossError>(context, ": unexpected end of file at byte ", offset, " (file shrank while read)");
            p += n;
            size -= static_cast<size_t>(n);
            offset += static_cast<uint64_t>(n);
          }
        },
        context);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::io
