// Copyright attune authors.
#include "attune/support/module_path.h"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

namespace attune::support {

std::string ThisModulePath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ThisModulePath), &info) == 0 || info.dli_fname == nullptr ||
      *info.dli_fname == '\0') {
    return "";
  }
  std::error_code ec;
  std::filesystem::path path(info.dli_fname);
  // The main program may be reported by the name it was started with; /proc/self/exe is exact.
  if (path.is_relative() || !std::filesystem::exists(path, ec)) {
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec && path.filename() == exe.filename()) return exe.string();
  }
  auto canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path.string() : canonical.string();
}

std::string ThisModuleDir() {
  std::string path = ThisModulePath();
  return path.empty() ? "" : std::filesystem::path(path).parent_path().string();
}

}  // namespace attune::support
