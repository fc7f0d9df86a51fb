#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "report/report.h"

namespace attune {

Status WriteFileAtomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError("cannot create " + tmp + ": " + std::strerror(errno) +
                           "; check that the campaign directory is writable");
  }
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = std::strerror(errno);
      ::close(fd);
      return Status::IoError("cannot write " + tmp + ": " + err);
    }
    done += static_cast<size_t>(n);
  }
  // fsync before rename so a crash leaves either the old file or the complete new one.
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return Status::IoError("cannot sync " + tmp + ": " + std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IoError("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace attune
