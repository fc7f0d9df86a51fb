// Every in-tree plugin declares its `with:` options, and its factory agrees with the declaration:
// what the schema refuses, the factory refuses too (called directly, without the host's check),
// and the schema's defaults are accepted.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <set>

#include "plugin/plugin_host.h"

namespace attune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class InTreePlugins {
 public:
  InTreePlugins() : host_({ATTUNE_PLUGIN_DIR}) {
    Status s = host_.DiscoverAll();
    INFO(s.ToString());
    REQUIRE(s.ok());
    scratch_ = fs::temp_directory_path() / ("attune-options-" + std::to_string(getpid()));
    fs::create_directories(scratch_);
  }
  ~InTreePlugins() { fs::remove_all(scratch_); }

  std::vector<const LoadedPlugin*> All() const { return host_.List(); }

  // Calls the plugin's own factory, bypassing the host's schema check.
  Status CreateDirectly(const LoadedPlugin& p, const json& config) const {
    PluginContext ctx;
    ctx.config = config;
    ctx.data_dir = ATTUNE_SOURCE_DIR;
    ctx.campaign_dir = scratch_.string();
    ctx.log = [](LogLevel, const std::string&) {};
    return p.descriptor->create(ctx).status();
  }

 private:
  PluginHost host_;
  fs::path scratch_;
};

// A value of the wrong type for a property schema.
json WrongTypeFor(const json& property) {
  json types = property.value("type", json());
  if (types.is_string()) types = json::array({types});
  bool takes_object = types.is_array() && std::find(types.begin(), types.end(), "object") != types.end();
  return takes_object ? json(5) : json{{"not", "this"}};
}

// Options every factory needs besides the one under test.
json Baseline(const LoadedPlugin& p) {
  if (p.name == "grid") return {{"space", {{"--micro-batch-size", {"1", "2"}}}}};
  if (p.name == "kuberay") return {{"namespace", "team-a"}, {"image", "rayproject/ray:2.9.0"}};
  return json::object();
}

const std::vector<std::string> kInTree = {"megatron", "automodel", "local", "slurm", "sim",
                                          "heuristic", "random", "grid", "optuna", "claude-code",
                                          "codex", "gemini", "kuberay"};

TEST_CASE("every in-tree plugin declares an options schema that refuses unknown keys",
          "[plugin][options]") {
  InTreePlugins plugins;
  std::set<std::string> seen;
  for (const LoadedPlugin* p : plugins.All()) {
    INFO(p->name);
    seen.insert(p->name);
    REQUIRE(p->options_schema.has_value());
    CHECK(p->options_schema->AsJson().value("additionalProperties", true) == false);
  }
  for (const auto& name : kInTree) CHECK(seen.count(name) == 1);
}

TEST_CASE("each in-tree factory refuses what its schema refuses", "[plugin][options]") {
  InTreePlugins plugins;
  for (const LoadedPlugin* p : plugins.All()) {
    json unknown = Baseline(*p);
    unknown["no_such_option"] = 1;
    Status s = plugins.CreateDirectly(*p, unknown);
    INFO(p->name << ": " << s.ToString());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("with.no_such_option: unknown key"));
    const json& properties = p->options_schema->AsJson().value("properties", json::object());
    for (const auto& [key, property] : properties.items()) {
      json config = Baseline(*p);
      config[key] = WrongTypeFor(property);
      CHECK(p->options_schema->Check(config).has_value());
      Status wrong = plugins.CreateDirectly(*p, config);
      INFO(p->name << "." << key << ": " << wrong.ToString());
      CHECK(wrong.code() == StatusCode::kInvalidArgument);
      CHECK_THAT(wrong.message(), Catch::Contains("with." + key));
    }
  }
}

TEST_CASE("each in-tree factory accepts its schema's declared defaults", "[plugin][options]") {
  InTreePlugins plugins;
  for (const LoadedPlugin* p : plugins.All()) {
    json config = Baseline(*p);
    for (const auto& key : p->options_schema->PropertyNames()) {
      if (const json* d = p->options_schema->DefaultOf(key)) config[key] = *d;
    }
    REQUIRE_FALSE(p->options_schema->Check(config).has_value());
    Status s = plugins.CreateDirectly(*p, config);
    INFO(p->name << " with " << config.dump() << ": " << s.ToString());
    CHECK(s.ok());
  }
}

}  // namespace
}  // namespace attune
