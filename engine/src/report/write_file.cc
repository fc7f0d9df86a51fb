#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "report/report.h"

#include "attune/support/atomic_file.h"

namespace attune {

Status WriteFileAtomic(const std::string& path, const std::string& content) {
  Status written = support::WriteFileAtomically(path, content);
  if (written.ok()) return written;
  return Status(written.code(), written.message() + "; check that the campaign directory is writable");
}

}  // namespace attune
