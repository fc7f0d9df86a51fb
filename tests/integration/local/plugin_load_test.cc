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
#include "local_test_util.h"
#include "test_files.h"

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

// The default wrapper is the plugin's own command run by the real attune executable, told where the
// plugin is (`attune --plugin-path <module dir> local job-exec`), whatever search path the test has.
TEST_CASE("jobs run under `attune local job-exec` by default", "[local][plugin]") {
  const std::string path = std::string(ATTUNE_PLUGIN_DIR) + "/attune_launcher_local.so";
  auto describe = boost::dll::import_alias<const attune::PluginDescriptor*()>(
      boost::dll::fs::path(path), ATTUNE_PLUGIN_SYMBOL, boost::dll::load_mode::rtld_now);
  attune::local::testing::ScratchDir dir;
  attune::PluginContext context;
  context.attune_binary = attune::testing::AttuneBinaryPath();
  context.config = {{"state_dir", dir.File("state")}, {"devices_per_node", 1}};
  auto created = describe()->create(context);
  REQUIRE(created.ok());
  auto* launcher = static_cast<attune::Launcher*>(created->get());

  attune::JobSpec job = attune::local::testing::ShellJob(dir, "c1-default-0", "echo ran-$ATTUNE_DEVICES; tr '\\0' ' ' < /proc/$PPID/cmdline");
  auto submitted = launcher->Submit(job);
  REQUIRE(submitted.ok());
  attune::JobStatus done = attune::local::testing::WaitTerminal(*launcher, job.name);
  CHECK(done.state == attune::JobState::kSucceeded);
  CHECK(attune::local::testing::ReadText(job.log_path).find("ran-1") != std::string::npos);
  // The job's parent is the wrapper: the real attune, running this plugin's command.
  std::string log = attune::local::testing::ReadText(job.log_path);
  CHECK(log.find(context.attune_binary + " --plugin-path ") != std::string::npos);
  CHECK(log.find(" local job-exec --record ") != std::string::npos);
}

}  // namespace
