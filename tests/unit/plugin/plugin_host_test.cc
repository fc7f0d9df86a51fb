// The plugin host: every failure path of loading, pinned by message substring, and the good path.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "plugin/plugin_host.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

std::string TestPlugin(const std::string& dir, const std::string& file) {
  return std::string(ATTUNE_TEST_PLUGIN_DIR) + "/" + dir + "/" + file + ".so";
}

const std::string kGood = TestPlugin("good", "attune_agent_testgood");

void RequireError(const Result<const LoadedPlugin*>& r, StatusCode code,
                  const std::string& substring) {
  INFO(r.status().ToString());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == code);
  CHECK_THAT(r.status().message(), Catch::Contains(substring));
}

TEST_CASE("the good test plugin loads and creates an agent", "[plugin]") {
  PluginHost host({});
  auto loaded = host.LoadFile(kGood);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK((*loaded)->name == "testgood");
  CHECK((*loaded)->version == "1.2.3");
  CHECK((*loaded)->kind == PluginKind::kAgent);
  CHECK((*loaded)->sha256.size() == 64);
  auto agent = host.CreateAgent("testgood", PluginContext{});
  REQUIRE(agent.ok());
  CHECK((*agent)->Name() == "testgood");
  CampaignView view;
  view.campaign_id = "c";
  auto proposal = (*agent)->Propose(view);
  REQUIRE(proposal.ok());
  CHECK(proposal->done);
  std::ostringstream out, err;
  CHECK((*agent)->RunCommand("echo", {"a", "b"}, out, err) == 0);
  CHECK(out.str() == "a\nb\n");
}

TEST_CASE("a plugin's options schema is read without creating the plugin", "[plugin][options]") {
  PluginHost host({});
  auto loaded = host.LoadFile(TestPlugin("options", "attune_agent_testoptions"));
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  REQUIRE((*loaded)->options_schema.has_value());
  CHECK((*loaded)->options_schema->PropertyNames() == std::vector<std::string>{"mode", "repeats"});
  CHECK(*(*loaded)->options_schema->DefaultOf("repeats") == 2);
  CHECK_FALSE((*host.LoadFile(kGood))->options_schema.has_value());
}

TEST_CASE("creating a plugin validates its options against its schema first", "[plugin][options]") {
  PluginHost host({});
  REQUIRE(host.LoadFile(TestPlugin("options", "attune_agent_testoptions")).ok());
  PluginContext ctx;
  ctx.config = {{"mode", "fastt"}};
  auto refused = host.CreateAgent("testoptions", ctx);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.status().message(),
             Catch::Contains("plugin 'testoptions': with.mode: expected one of 'fast', 'slow', "
                             "found 'fastt' (did you mean 'fast'?)"));
  ctx.config = {{"repeats", 0}};
  CHECK_THAT(host.CreateAgent("testoptions", ctx).status().message(),
             Catch::Contains("with.repeats: expected an integer >= 1, found 0"));
  ctx.config = {{"mode", "slow"}, {"repeats", 4}};
  CHECK(host.CreateAgent("testoptions", ctx).ok());
  ctx.config = nullptr;
  CHECK(host.CreateAgent("testoptions", ctx).ok());
}

TEST_CASE("a library whose options schema does not compile is refused at load", "[plugin][options]") {
  PluginHost host({});
  RequireError(host.LoadFile(TestPlugin("badschema", "attune_agent_badschema")),
               StatusCode::kInvalidArgument,
               "plugin 'badschema' declares an invalid option schema: "
               "properties.n.minimun: unsupported keyword 'minimun' (did you mean 'minimum'?)");
}

TEST_CASE("loading the same file twice gives the same plugin, not a duplicate", "[plugin]") {
  PluginHost host({});
  auto a = host.LoadFile(kGood);
  auto b = host.LoadFile(kGood);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
}

TEST_CASE("a missing library file is not found", "[plugin]") {
  PluginHost host({});
  RequireError(host.LoadFile("/nonexistent/attune_agent_x.so"), StatusCode::kNotFound,
               "/nonexistent/attune_agent_x.so does not exist");
}

TEST_CASE("a file that is not a shared object is refused", "[plugin]") {
  std::string path = (fs::temp_directory_path() / "attune_agent_text.so").string();
  std::ofstream(path) << "not an ELF file\n";
  PluginHost host({});
  RequireError(host.LoadFile(path), StatusCode::kInvalidArgument, "is not a shared object");
  fs::remove(path);
}

TEST_CASE("a library without the attune_plugin symbol is refused", "[plugin]") {
  PluginHost host({});
  RequireError(host.LoadFile(TestPlugin("nosymbol", "attune_agent_nosymbol")),
               StatusCode::kInvalidArgument,
               "does not export the attune plugin entry point 'attune_plugin'");
}

TEST_CASE("a library with an unresolved symbol is refused at load with dlerror's text",
          "[plugin]") {
  PluginHost host({});
  RequireError(host.LoadFile(TestPlugin("unresolved", "attune_agent_unresolved")),
               StatusCode::kInvalidArgument, "attune_test_symbol_that_does_not_exist");
}

TEST_CASE("an ABI mismatch is refused naming both versions", "[plugin]") {
  PluginHost host({});
  std::string expected = "was built for attune plugin ABI " + std::to_string(kAbiVersion + 998) +
                         " but this attune uses ABI " + std::to_string(kAbiVersion) +
                         "; rebuild the plugin";
  RequireError(host.LoadFile(TestPlugin("abi", "attune_agent_abimismatch")),
               StatusCode::kFailedPrecondition, expected);
}

TEST_CASE("a duplicate plugin name is refused naming both files", "[plugin]") {
  PluginHost host({});
  REQUIRE(host.LoadFile(kGood).ok());
  std::string dup = TestPlugin("duplicate", "attune_agent_duplicate");
  RequireError(host.LoadFile(dup), StatusCode::kAlreadyExists,
               "plugin name 'testgood' is provided by both");
  CHECK_THAT(host.LoadFile(dup).status().message(), Catch::Contains("attune_agent_testgood.so"));
}

TEST_CASE("a throwing factory becomes an error naming the plugin", "[plugin]") {
  PluginHost host({});
  REQUIRE(host.LoadFile(TestPlugin("throwing", "attune_agent_throwing")).ok());
  auto agent = host.CreateAgent("throwing", PluginContext{});
  REQUIRE_FALSE(agent.ok());
  CHECK(agent.status().code() == StatusCode::kInternal);
  CHECK_THAT(agent.status().message(), Catch::Contains("boom from the throwing test plugin"));
  CHECK_THAT(agent.status().message(), Catch::Contains("plugin 'throwing'"));
}

TEST_CASE("a factory error is passed on with the plugin's name and file", "[plugin]") {
  PluginHost host({});
  REQUIRE(host.LoadFile(TestPlugin("failing", "attune_agent_failing")).ok());
  auto agent = host.CreateAgent("failing", PluginContext{});
  REQUIRE_FALSE(agent.ok());
  CHECK(agent.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(agent.status().message(), Catch::Contains("failed to start: with.api_key"));
  CHECK_THAT(agent.status().message(), Catch::Contains("attune_agent_failing.so"));
}

TEST_CASE("asking for a plugin of the wrong kind says what it is", "[plugin]") {
  PluginHost host({});
  REQUIRE(host.LoadFile(kGood).ok());
  auto stack = host.CreateStack("testgood", PluginContext{});
  REQUIRE_FALSE(stack.ok());
  CHECK_THAT(stack.status().message(), Catch::Contains("is a agent, not a stack"));
}

TEST_CASE("an unknown plugin name suggests the nearest and lists the search path", "[plugin]") {
  PluginHost host({std::string(ATTUNE_TEST_PLUGIN_DIR) + "/good"});
  REQUIRE(host.DiscoverAll().ok());
  auto found = host.Find(PluginKind::kAgent, "testgod");
  REQUIRE_FALSE(found.ok());
  CHECK(found.status().code() == StatusCode::kNotFound);
  CHECK_THAT(found.status().message(), Catch::Contains("did you mean 'testgood'?"));
  CHECK_THAT(found.status().message(), Catch::Contains("searched: " +
                                                       std::string(ATTUNE_TEST_PLUGIN_DIR)));
}

TEST_CASE("discovery stops at the first broken library instead of skipping it", "[plugin]") {
  PluginHost host({std::string(ATTUNE_TEST_PLUGIN_DIR) + "/good",
                   std::string(ATTUNE_TEST_PLUGIN_DIR) + "/abi"});
  Status s = host.DiscoverAll();
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(s.message(), Catch::Contains("attune_agent_abimismatch.so"));
}

TEST_CASE("the search path puts --plugin-path before ATTUNE_PLUGIN_PATH", "[plugin]") {
  setenv("ATTUNE_PLUGIN_PATH", "/env/a:/env/b", 1);
  auto path = PluginHost::DefaultSearchPath({"/cli/x"});
  REQUIRE(path.size() >= 3);
  CHECK(path[0] == "/cli/x");
  CHECK(path[1] == "/env/a");
  CHECK(path[2] == "/env/b");
  CHECK(path.back().find("plugins") != std::string::npos);
  unsetenv("ATTUNE_PLUGIN_PATH");
}

TEST_CASE("test registrations share the name registry", "[plugin]") {
  PluginHost host({});
  static const PluginDescriptor kDesc{kAbiVersion, PluginKind::kAgent, "testgood", "0",
                                      [](const PluginContext&) -> Result<std::unique_ptr<Plugin>> {
                                        return Status::Unimplemented("x");
                                      }};
  REQUIRE(host.RegisterForTesting(&kDesc).ok());
  CHECK(host.RegisterForTesting(&kDesc).code() == StatusCode::kAlreadyExists);
  CHECK(host.LoadFile(kGood).status().code() == StatusCode::kAlreadyExists);
}

TEST_CASE("NearestName suggests only close names", "[plugin]") {
  CHECK(NearestName("benchmrk", {"benchmark", "tune", "report"}) == "benchmark");
  CHECK(NearestName("zzz", {"benchmark", "tune"}).empty());
}

}  // namespace
}  // namespace attune
