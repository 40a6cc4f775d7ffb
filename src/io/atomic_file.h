// Writing a file atomically (Note [checkpoint integrity] in eagerflow/io/safetensors.h):
// temporary file in the same folder, fsync, rename over the target, fsync the folder.
// Internal to src/io.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ef::io::detail {

// Appends bytes to the temporary file; throws a typed error (naming `op` and the
// file) when the write fails, e.g. ResourceExhaustedError for a full disk.
class FileWriter {
 public:
  FileWriter(int fd, std::string path, std::string_view op) : fd_(fd), path_(std::move(path)), op_(op) {}
  void write(const void* data, size_t size);

 private:
  int fd_;
  std::string path_;
  std::string_view op_;
};

// Creates `path` (or replaces it) with the bytes `fill` writes, so that at every moment
// `path` holds either its old content or the complete new one. On error the temporary
// file is removed and the error (naming `op`) propagates; `path` is untouched.
void write_file_atomically(const std::string& path, const std::function<void(FileWriter&)>& fill, std::string_view op);

// True for the names write_file_atomically gives its temporary files (".<name>.tmp-<pid>-<n>").
bool is_temporary_file_name(std::string_view filename);

// Removes temporary files left next to `path` by processes that were killed while
// saving it (their pid is no longer running). Errors are ignored: this is tidying.
void remove_stale_temporary_files(const std::string& path);

// Throws the error matching errno value `err` (NotFoundError for a missing file,
// ResourceExhaustedError for a full disk, FailedPreconditionError otherwise).
[[noreturn]] void fail_io(std::string_view op, std::string_view action, const std::string& path, int err);

}  // namespace ef::io::detail
