// Copyright attune authors.
//
// The built module exports the local launcher through the plugin ABI.

#include <memory>
#include <string>

#include <boost/dll/import.hpp>
#include <boost/dll/shared_library.hpp>
#include <catch2/catch.hpp>

#include "attune/launcher.h"
#include "attune/plugin.h"

namespace {

TEST_CASE("the local launcher module exports a working 'local' launcher", "[local][plugin]") {
  const std::string path = std::string(ATTUNE_PLUGIN_DIR) + "/attune_launcher_local.so";
  auto describe = boost::dll::import_alias<const attune::PluginDescriptor*()>(
      boost::dll::fs::path(path), ATTUNE_PLUGIN_SYMBOL, boost::dll::load_mode::rtld_now);
  const attune::PluginDescriptor* descriptor = describe();
  REQUIRE(descriptor != nullptr);
  CHECK(descriptor->abi_version == attune::kAbiVersion);
  CHECK(descriptor->kind == attune::PluginKind::kLauncher);
  CHECK(std::string(descriptor->name) == "local");

  attune::PluginContext context;
  context.config = {{"state_dir", "/tmp/attune-local-plugin-load-test"}};
  auto created = descriptor->create(context);
  REQUIRE(created.ok());
  // static_cast: the kind says what it is (RTTI is not shared across hidden-visibility modules).
  auto* launcher = static_cast<attune::Launcher*>(created->get());
  REQUIRE(launcher != nullptr);
  CHECK(launcher->Name() == "local");
  CHECK(launcher->Poll("c1-nothing-0")->state == attune::JobState::kUnknown);
}

}  // namespace
