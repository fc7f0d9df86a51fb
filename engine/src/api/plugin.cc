#include "attune/plugin.h"

#include <ostream>

namespace attune {

const char* PluginKindName(PluginKind kind) {
  switch (kind) {
    case PluginKind::kStack: return "stack";
    case PluginKind::kLauncher: return "launcher";
    case PluginKind::kAgent: return "agent";
  }
  return "unknown";
}

int Plugin::RunCommand(const std::string& command, const std::vector<std::string>& /*args*/,
                       std::ostream& /*out*/, std::ostream& err) {
  err << "plugin '" << Name() << "' has no command '" << command << "'\n";
  return 2;
}

}  // namespace attune
