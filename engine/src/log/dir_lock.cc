#include "log/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "log/resource_advice.h"

namespace attune::log {
namespace {

std::string ReadHolder(int fd) {
  char buf[32] = {};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

// The pid holding an flock on the file or directory open as `fd`, from /proc/locks
// ("1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"), or "".
std::string FlockHolderOf(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return "";
  char inode[96];  // /proc/locks names a file as MAJOR:MINOR:INODE, the device numbers in hex
  std::snprintf(inode, sizeof inode, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string n, kind, advisory, mode, pid, where;
    if (!(in >> n >> kind) || kind == "->" || kind != "FLOCK") continue;
    if (!(in >> advisory >> mode >> pid >> where)) continue;
    if (where == inode) return pid;
  }
  return "";
}

Status InUse(const std::string& dir, const std::string& holder) {
  return Status::FailedPrecondition(
      "campaign directory " + dir + " is in use by attune pid " + holder +
      "; wait for it to finish, stop it (kill -INT " + holder +
      "), or use another --dir. Read-only commands (attune status/events/verify) work meanwhile");
}

}  // namespace

Result<std::unique_ptr<DirLock>> DirLock::Acquire(const std::string& dir) {
  // First the directory itself: a lock that no deleted file can lose.
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    return WithResourceAdvice(
        Status::IoError("cannot open campaign directory " + dir + ": " + std::strerror(errno)), dir);
  }
  if (flock(dir_fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = FlockHolderOf(dir_fd);
    close(dir_fd);
    if (err != EWOULDBLOCK) {
      return Status::IoError("cannot lock " + dir + ": " + std::strerror(err));
    }
    if (holder.empty()) {
      // Fall back to the pid file, which the holder wrote after taking both locks.
      int fd = open((dir + "/" + kLockFile).c_str(), O_RDONLY | O_CLOEXEC);
      holder = fd >= 0 ? ReadHolder(fd) : "unknown";
      if (fd >= 0) close(fd);
    }
    return InUse(dir, holder);
  }
  std::string path = dir + "/" + kLockFile;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    close(dir_fd);
    return WithResourceAdvice(
        Status::IoError("cannot open lock file " + path + ": " + std::strerror(err)), dir);
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = ReadHolder(fd);
    close(fd);
    close(dir_fd);
    if (err != EWOULDBLOCK) {
      return Status::IoError("cannot lock " + path + ": " + std::strerror(err));
    }
    return InUse(dir, holder);
  }
  // Only the holder writes the pid, after it owns the lock.
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    int err = errno;
    close(fd);
    close(dir_fd);
    return WithResourceAdvice(
        Status::IoError("cannot record the pid in " + path + ": " + std::strerror(err)), dir);
  }
  return std::unique_ptr<DirLock>(new DirLock(dir_fd, fd));
}

DirLock::~DirLock() {
  // Closing the descriptors releases the flocks.
  close(fd_);
  close(dir_fd_);
}

}  // namespace attune::log
