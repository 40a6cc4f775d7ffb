#include "atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "eagerflow/core/error.h"

namespace ef::io::detail {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kTempMarker = ".tmp-";

// Distinguishes concurrent saves of one target by threads of one process.
std::atomic<uint64_t> g_temp_counter{0};

std::string folder_of(const std::string& path) {
  std::string parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

void fsync_or_fail(int fd, std::string_view op, const std::string& path) {
  while (::fsync(fd) != 0)
    if (errno != EINTR) fail_io(op, "fsync", path, errno);
}

}  // namespace

void fail_io(std::string_view op, std::string_view action, const std::string& path, int err) {
  const std::string msg = ef::detail::str(op, ": cannot ", action, " '", path, "': ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR: throw NotFoundError(msg);
    case ENOSPC:
    case EDQUOT:
    case ENOMEM:
    case EFBIG: throw ResourceExhaustedError(msg);
    default: throw FailedPreconditionError(msg);
  }
}

void FileWriter::write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io(op_, "write", path_, errno);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void write_file_atomically(const std::string& path, const std::function<void(FileWriter&)>& fill, std::string_view op) {
  const std::string filename = fs::path(path).filename().string();
  if (filename.empty() || filename == "." || filename == "..")
    fail(op, ": '", path, "' does not name a file");
  const std::string folder = folder_of(path);
  const std::string temp = (fs::path(folder) / ("." + filename + std::string(kTempMarker) + std::to_string(::getpid()) +
                                                "-" + std::to_string(g_temp_counter++)))
                               .string();

  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail_io(op, "create", temp, errno);
  try {
    FileWriter writer(fd, temp, op);
    fill(writer);
    fsync_or_fail(fd, op, temp);  // the data is on disk before the name points at it
    int closed = ::close(fd);
    fd = -1;
    if (closed != 0) fail_io(op, "close", temp, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) fail_io(op, "rename the temporary file to", path, errno);
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  // The rename itself is durable once the folder's entry is on disk.
  int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) fail_io(op, "open the folder", folder, errno);
  int r;
  do r = ::fsync(dir);
  while (r != 0 && errno == EINTR);
  const int err = r != 0 ? errno : 0;
  ::close(dir);
  // Some file systems cannot fsync a folder (EINVAL): the rename has happened anyway.
  if (err != 0 && err != EINVAL) fail_io(op, "fsync the folder", folder, err);
}

bool is_temporary_file_name(std::string_view filename) {
  return filename.size() > 1 && filename[0] == '.' && filename.find(kTempMarker) != std::string_view::npos;
}

void remove_stale_temporary_files(const std::string& path) {
  const std::string prefix = "." + fs::path(path).filename().string() + std::string(kTempMarker);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder_of(path), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string rest = name.substr(prefix.size());  // "<pid>-<n>"
    char* end = nullptr;
    long pid = std::strtol(rest.c_str(), &end, 10);
    if (pid <= 0 || end == rest.c_str() || *end != '-') continue;
    if (pid == ::getpid()) continue;  // ours: in progress on another thread
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove(entry.path(), ec);
  }
}

}  // namespace ef::io::detail
