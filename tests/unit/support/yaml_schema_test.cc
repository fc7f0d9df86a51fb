// Copyright attune authors.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "attune/support/yaml_schema.h"

using attune::support::yaml::LeverOrder;
using attune::support::yaml::SchemaError;

namespace {

// The message LeverOrder throws for `text` (as the `order:` node of a lever with `keys`), or "".
std::string OrderError(const std::string& text, const std::vector<std::string>& keys) {
  try {
    LeverOrder("levers.yaml", YAML::Load(text), "levers[3].order", keys);
  } catch (const SchemaError& e) {
    return e.message;
  }
  return "";
}

}  // namespace

TEST_CASE("a lever's order reads as a list or a mapping of its keys", "[support][yaml]") {
  auto one = LeverOrder("f", YAML::Load("[none, local, transformer_engine]"), "o", {"--cuda-graph-impl"});
  CHECK(one.at("--cuda-graph-impl") == std::vector<std::string>{"none", "local", "transformer_engine"});
  auto several = LeverOrder("f", YAML::Load(R"({--recompute-granularity: ["", selective, full]})"),
                            "o", {"--recompute-granularity", "--recompute-method"});
  CHECK(several.at("--recompute-granularity") == std::vector<std::string>{"", "selective", "full"});
  CHECK(several.count("--recompute-method") == 0);
  CHECK(LeverOrder("f", YAML::Node(), "o", {"--x"}).empty());
}

TEST_CASE("a wrong order says where and what is expected", "[support][yaml]") {
  CHECK(OrderError("[a]", {"--x"}).find("two or more values") != std::string::npos);
  CHECK(OrderError("[a, b, a]", {"--x"}).find("'a' is listed twice") != std::string::npos);
  CHECK(OrderError("[a, b]", {"--x", "--y"}).find("give the order as a mapping") != std::string::npos);
  std::string stranger = OrderError("{--z: [a, b]}", {"--x", "--y"});
  CHECK(stranger.find("'--z' is not one of the lever's keys") != std::string::npos);
  CHECK(stranger.find("levers.yaml:1:") != std::string::npos);
  CHECK(stranger.find("levers[3].order.--z") != std::string::npos);
  CHECK(OrderError("3", {"--x"}).find("expected a list of values") != std::string::npos);
}
