// Copyright attune authors.
//
// Atomic record files for the job wrapper.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "jobwrap/job_wrapper.h"

namespace attune::jobwrap {
namespace {

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

std::string DirectoryOf(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(ErrnoText("cannot write", path));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(ErrnoText("cannot create", tmp));
  Status written = WriteAll(fd, text, tmp);
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  if (written.ok() && ::fsync(fd) != 0) written = Status::IoError(ErrnoText("cannot fsync", tmp));
  ::close(fd);
  if (!written.ok()) {
    ::unlink(tmp.c_str());
    return written;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status failed = Status::IoError(ErrnoText("cannot rename to", path));
    ::unlink(tmp.c_str());
    return failed;
  }
  std::string dir = DirectoryOf(path);
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Status::IoError(ErrnoText("cannot open directory", dir));
  int rc = ::fsync(dir_fd);  // because the rename itself must survive a crash
  ::close(dir_fd);
  if (rc != 0) return Status::IoError(ErrnoText("cannot fsync directory", dir));
  return Status::Ok();
}

}  // namespace attune::jobwrap
