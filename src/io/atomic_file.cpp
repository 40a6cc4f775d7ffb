#include "atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

// When process `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat),
// or -1 when it does not exist (or /proc is not there).
long long process_start_time(long pid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return -1;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // The command name (field 2) is in parentheses and may hold spaces: count after its ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p) return -1;
  long long value = -1;
  for (int field = 3; field <= 22 && *p; ++field) {
    while (*p == ' ' || *p == ')') ++p;
    if (field == 22) value = std::strtoll(p, nullptr, 10);
    while (*p && *p != ' ') ++p;
  }
  return value;
}

// Whether the writer of a temporary file, by the "<pid>-<start>-<n>" (or older
// "<pid>-<n>") after its marker, has gone.
bool writer_is_gone(const std::string& rest) {
  char* end = nullptr;
  const long pid = std::strtol(rest.c_str(), &end, 10);
  if (pid <= 0 || end == rest.c_str() || *end != '-') return false;  // not ours: leave it
  if (pid == ::getpid()) return false;  // in progress on another thread of this process
  const char* after_pid = end + 1;
  const long long recorded = std::strtoll(after_pid, &end, 10);
  const bool has_start_time = end != after_pid && *end == '-';
  const long long now = process_start_time(pid);
  if (now >= 0) return has_start_time && now != recorded;  // alive, unless its pid was reused
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
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

std::vector<uint8_t> read_file_bytes(const std::string& path, std::string_view op) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_io(op, "open", path, errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_io(op, "stat", path, errno);
  if (!S_ISREG(st.st_mode))
    fail<FailedPreconditionError>(op, ": '", path, "' is not a regular file (a folder, a device or a pipe)");
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_io(op, "read", path, errno);
    if (n == 0) break;  // the file shrank while being read
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
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
  struct stat existing;
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) && !S_ISLNK(existing.st_mode))
    fail<FailedPreconditionError>(op, ": '", path, "' exists and is ", file_kind(existing.st_mode),
                                  ", not a regular file; refusing to replace it");
  const std::string folder = folder_of(path);
  static const long long start_time = process_start_time(::getpid());
  const std::string temp =
      (fs::path(folder) /
       ("." + filename + std::string(kTempMarker) + std::to_string(::getpid()) + "-" +
        std::to_string(start_time < 0 ? 0 : start_time) + "-" + std::to_string(g_temp_counter++)))
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
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder_of(path), ec)) {
    const std::string name = entry.path().filename().string();
    if (!is_temporary_file_name(name)) continue;
    const std::string rest = name.substr(name.rfind(kTempMarker) + kTempMarker.size());
    if (writer_is_gone(rest)) fs::remove(entry.path(), ec);
  }
}

const char* file_kind(unsigned mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

}  // namespace ef::io::detail
