// The built MODULE exports the descriptor through the Boost.DLL alias and creates a working stack.
#include <catch2/catch.hpp>

#include <boost/dll/shared_library.hpp>

#include "attune/plugin.h"
#include "attune/stack.h"

namespace attune::megatron {
namespace {

TEST_CASE("the megatron module loads through its alias and creates the stack", "[megatron][module]") {
  boost::dll::shared_library lib(std::string(ATTUNE_PLUGIN_DIR) + "/attune_stack_megatron.so");
  auto descriptor = lib.get_alias<const PluginDescriptor*()>(ATTUNE_PLUGIN_SYMBOL)();
  REQUIRE(descriptor != nullptr);
  CHECK(descriptor->abi_version == kAbiVersion);
  CHECK(descriptor->kind == PluginKind::kStack);
  CHECK(std::string(descriptor->name) == "megatron");
  PluginContext context;
  context.data_dir = ATTUNE_SOURCE_DIR;
  auto plugin = descriptor->create(context);
  REQUIRE(plugin.ok());
  auto* stack = dynamic_cast<Stack*>(plugin->get());
  REQUIRE(stack != nullptr);
  CHECK(stack->Name() == "megatron");
  CHECK(stack->Levers().size() >= 30);
  context.data_dir = "/nonexistent";
  auto missing = descriptor->create(context);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("/nonexistent/stacks/megatron/levers.yaml"));
}

}  // namespace
}  // namespace attune::megatron
