// The sim launcher's Boost.DLL entry point.
#include "attune/plugin.h"
#include "options_schema.h"
#include "sim_launcher.h"

namespace {

attune::Result<std::unique_ptr<attune::Plugin>> CreateSim(const attune::PluginContext& context) {
  auto launcher = attune::sim::SimLauncher::Create(context);
  if (!launcher.ok()) return launcher.status();
  return std::unique_ptr<attune::Plugin>(std::move(launcher).value());
}

}  // namespace

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kLauncher, "sim", "0.1.0", CreateSim,
                           attune::sim::kOptionsSchema)
