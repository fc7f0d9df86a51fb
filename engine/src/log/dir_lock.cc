#include "log/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

}  // namespace

Result<std::unique_ptr<DirLock>> DirLock::Acquire(const std::string& dir) {
  std::string path = dir + "/" + kLockFile;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return WithResourceAdvice(
        Status::IoError("cannot open lock file " + path + ": " + std::strerror(errno)), dir);
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = ReadHolder(fd);
    close(fd);
    if (err != EWOULDBLOCK) {
      return Status::IoError("cannot lock " + path + ": " + std::strerror(err));
    }
    return Status::FailedPrecondition(
        "campaign directory " + dir + " is in use by attune pid " + holder +
        "; wait for it to finish, stop it (kill -INT " + holder +
        "), or use another --dir. Read-only commands (attune status/events/verify) work meanwhile");
  }
  // Only the holder writes the pid, after it owns the lock.
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    int err = errno;
    close(fd);
    return WithResourceAdvice(
        Status::IoError("cannot record the pid in " + path + ": " + std::strerror(err)), dir);
  }
  return std::unique_ptr<DirLock>(new DirLock(fd));
}

DirLock::~DirLock() {
  // Closing the descriptor releases the flock.
  close(fd_);
}

}  // namespace attune::log
