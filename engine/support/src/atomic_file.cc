// Copyright attune authors.
#include "attune/support/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace attune::support {
namespace {

Status Failed(const char* what, const std::string& path, int err) {
  return Status::IoError(std::string("cannot ") + what + " " + path + ": " + std::strerror(err));
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Status WriteAll(int fd, std::string_view text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Failed("write", path, errno);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view text, Durability durability) {
  const bool sync = durability == Durability::kPowerLoss;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Failed("create", tmp, errno);
  Status written = WriteAll(fd, text, tmp);
  // fsync before rename: otherwise a power loss can leave the new name on an empty file.
  if (written.ok() && sync && ::fsync(fd) != 0) written = Failed("fsync", tmp, errno);
  if (::close(fd) != 0 && written.ok()) written = Failed("close", tmp, errno);
  if (!written.ok()) {
    ::unlink(tmp.c_str());
    return written;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status failed = Failed("rename a new version onto", path, errno);
    ::unlink(tmp.c_str());
    return failed;
  }
  if (!sync) return Status::Ok();
  const std::string dir = DirectoryOf(path);
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Failed("open directory", dir, errno);
  const int rc = ::fsync(dir_fd);  // because the rename itself must survive a power loss
  const int err = errno;
  ::close(dir_fd);
  if (rc != 0) return Failed("fsync directory", dir, err);
  return Status::Ok();
}

}  // namespace attune::support
