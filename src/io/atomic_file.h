// Writing a file atomically (Note [checkpoint integrity] in eagerflow/io/safetensors.h):
// temporary file in the same folder, fsync, rename over the target, fsync the folder.
// Internal to src/io.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

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
// file is removed and the error (naming `op`) propagates; `path` is untouched. A `path`
// that exists and is neither a regular file nor a symbolic link (a folder, a FIFO, a
// device) is a FailedPreconditionError, checked before anything is written; a symbolic
// link is replaced by the new file, as rename does (the file it pointed to is untouched).
void write_file_atomically(const std::string& path, const std::function<void(FileWriter&)>& fill, std::string_view op);

// True for the names write_file_atomically gives its temporary files
// (".<name>.tmp-<pid>-<process start time>-<n>"; ".<name>.tmp-<pid>-<n>" before).
bool is_temporary_file_name(std::string_view filename);

// Note [stale temporary files]: a process killed while saving leaves its temporary
// file. Every save and every load removes, in the folder of `path`, the temporary files
// (of any target) whose writer is gone: no process has its pid, or the process that has
// it started at another time than the writer (the pid was reused). Files of live
// writers, this process's included, are left alone. Errors are ignored: this is tidying.
void remove_stale_temporary_files(const std::string& path);

// "a FIFO", "a folder", ...: what a non-regular file is, for error messages.
const char* file_kind(unsigned mode);

// Throws the error matching errno value `err` (NotFoundError for a missing file,
// ResourceExhaustedError for a full disk, FailedPreconditionError otherwise).
[[noreturn]] void fail_io(std::string_view op, std::string_view action, const std::string& path, int err);

// The whole content of the regular file `path`; errors as fail_io's, naming `op` (a
// folder or another non-regular file is a FailedPreconditionError).
std::vector<uint8_t> read_file_bytes(const std::string& path, std::string_view op);

}  // namespace ef::io::detail
