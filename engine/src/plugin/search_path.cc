// Where plugins and data are found, and name suggestions.
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "plugin/plugin_host.h"

namespace attune {

namespace fs = std::filesystem;

namespace {

std::string ExecutableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

bool IsUnder(const std::string& path, const std::string& root) {
  if (path.empty() || root.empty()) return false;
  std::error_code ec;
  std::string p = fs::weakly_canonical(path, ec).string();
  std::string r = fs::weakly_canonical(root, ec).string();
  return p == r || p.rfind(r + "/", 0) == 0;
}

void AddUnique(std::vector<std::string>* out, const std::string& dir) {
  if (dir.empty()) return;
  for (const auto& d : *out) {
    if (d == dir) return;
  }
  out->push_back(dir);
}

}  // namespace

std::vector<std::string> PluginHost::DefaultSearchPath(const std::vector<std::string>& cli_paths) {
  std::vector<std::string> path;
  for (const auto& p : cli_paths) AddUnique(&path, p);
  if (const char* env = std::getenv("ATTUNE_PLUGIN_PATH")) {
    std::stringstream in(env);
    for (std::string dir; std::getline(in, dir, ':');) AddUnique(&path, dir);
  }
  std::string exe_dir = ExecutableDir();
  // The build tree's plugins only for binaries of that build tree, and the install directory
  // only for installed binaries, so no plugin is ever found twice (a duplicate-name error).
  if (IsUnder(exe_dir, ATTUNE_BUILD_DIR)) {
    AddUnique(&path, std::string(ATTUNE_BUILD_DIR) + "/plugins");
  } else if (!exe_dir.empty()) {
    AddUnique(&path, (fs::path(exe_dir).parent_path() / "lib/attune/plugins").string());
  }
  return path;
}

std::string DefaultDataDir() {
  if (const char* env = std::getenv("ATTUNE_DATA_DIR"); env && *env) return env;
  std::string exe_dir = ExecutableDir();
  // As for plugins: the source tree's data only for binaries of the build tree, and the installed
  // data (cmake/AttuneInstall.cmake) for installed binaries, even where the source tree still
  // exists, so that an installation runs on what it installed.
  std::error_code ec;
  if (IsUnder(exe_dir, ATTUNE_BUILD_DIR) &&
      fs::is_directory(fs::path(ATTUNE_SOURCE_TREE_DIR) / "stacks", ec)) {
    return ATTUNE_SOURCE_TREE_DIR;
  }
  return exe_dir.empty() ? "" : (fs::path(exe_dir).parent_path() / "share/attune").string();
}

}  // namespace attune
