#include "log/resource_advice.h"

namespace attune::log {
namespace {

constexpr char kDiskFullAdvice[] =
    " is full; every acknowledged event is intact: free space on it, then run the same `attune "
    "run` again to resume";
constexpr char kReadOnlyAdvice[] =
    " is on a read-only file system; nothing was lost: remount it read-write (or copy the "
    "directory to a writable place) and run the same `attune run` again";

}  // namespace

Status WithResourceAdvice(Status s, const std::string& dir, const std::string& otherwise) {
  if (s.ok() || s.code() == StatusCode::kCorruption) return s;
  const std::string& text = s.message();
  bool advised = text.find(kDiskFullAdvice) != std::string::npos ||
                 text.find(kReadOnlyAdvice) != std::string::npos;
  if (advised) return s;
  if (text.find("No space left on device") != std::string::npos) {
    return Status(s.code(), text + ". The disk holding " + dir + kDiskFullAdvice);
  }
  if (text.find("Read-only file system") != std::string::npos) {
    return Status(s.code(), text + ". " + dir + kReadOnlyAdvice);
  }
  if (otherwise.empty()) return s;
  return Status(s.code(), text + "; " + otherwise);
}

}  // namespace attune::log
