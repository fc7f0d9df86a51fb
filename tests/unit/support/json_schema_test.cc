// The JSON Schema subset: what it accepts, what it refuses, and the messages people see.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "attune/support/json_schema.h"

namespace attune::support {
namespace {

using nlohmann::json;

JsonSchema Compile(const char* text) {
  auto schema = JsonSchema::Parse(text);
  INFO(schema.status().ToString());
  REQUIRE(schema.ok());
  return *schema;
}

const char* kOptions = R"({
  "type": "object", "additionalProperties": false, "required": ["space"],
  "properties": {
    "repeats": {"type": "integer", "minimum": 1, "default": 3},
    "band": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
    "startup_s": {"type": "number", "minimum": 0},
    "device_type": {"enum": ["cpu", "gpu"]},
    "tags": {"type": ["string", "array"], "items": {"type": "string"}},
    "space": {"type": "object", "minProperties": 1,
              "additionalProperties": {"type": "array", "minItems": 1}},
    "env": {"type": "object", "propertyNames": {"pattern": "^[A-Z_]+$"}}
  }})";

std::string Message(const JsonSchema& s, const json& v) {
  auto bad = s.Check(v);
  REQUIRE(bad.has_value());
  return JoinJsonPath("with", bad->path) + ": " + bad->message;
}

TEST_CASE("a value that fits the schema passes", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  CHECK_FALSE(s.Check(json::parse(R"({"repeats": 2, "band": 0.5, "tags": "a",
                                      "space": {"x": [1]}, "env": {"A_B": 1}})")));
  CHECK_FALSE(s.Check(json::parse(R"({"space": {"x": [1]}, "tags": ["a", "b"]})")));
}

TEST_CASE("a wrong type says what was expected and what was found", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  CHECK(Message(s, {{"space", {{"x", {1}}}}, {"repeats", "three"}}) ==
        "with.repeats: expected an integer >= 1, found 'three'");
  CHECK(Message(s, {{"space", {{"x", {1}}}}, {"repeats", 2.5}}) ==
        "with.repeats: expected an integer >= 1, found 2.5");
  CHECK(Message(s, {{"space", {{"x", {1}}}}, {"tags", 3}}) ==
        "with.tags: expected a list of strings or a string, found 3");
  CHECK(Message(s, {{"space", {{"x", {1}}}}, {"tags", {"a", 1}}}) ==
        "with.tags[1]: expected a string, found 1");
}

TEST_CASE("ranges are checked with the bound in the message", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  CHECK(Message(s, {{"space", {{"x", {1}}}}, {"repeats", 0}}) ==
        "with.repeats: expected an integer >= 1, found 0");
  CHECK(Message(s, {{"space", {{"x", {1}}}}, {"band", 1}}) ==
        "with.band: expected a number in [0, 1), found 1");
  CHECK(Message(s, {{"space", {{"x", {1}}}}, {"startup_s", -1}}) ==
        "with.startup_s: expected a number >= 0, found -1");
}

TEST_CASE("non-finite numbers are refused whatever the schema says", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  JsonSchema any = Compile("{}");
  for (double bad : {std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    CHECK_THAT(Message(s, {{"space", {{"x", {1}}}}, {"startup_s", bad}}),
               Catch::Contains("with.startup_s: expected a finite number, found"));
    CHECK(any.Check(json::array({1, bad})).has_value());
  }
}

TEST_CASE("an unknown key suggests the nearest and lists the known ones", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  auto bad = s.Check({{"space", {{"x", {1}}}}, {"startup_sec", 5}});
  REQUIRE(bad);
  CHECK(bad->at_key);
  CHECK_THAT(bad->message, Catch::StartsWith("unknown key 'startup_sec' (did you mean "
                                             "'startup_s'?); expected one of: band, "));
}

TEST_CASE("a missing required key names it and points at its parent", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  auto bad = s.Check(json::object());
  REQUIRE(bad);
  CHECK(bad->missing);
  CHECK(JoinJsonPath("with", bad->path) == "with.space");
  CHECK(bad->message == "required key is missing");
}

TEST_CASE("enums suggest the nearest value", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  CHECK(Message(s, {{"space", {{"x", {1}}}}, {"device_type", "gpuu"}}) ==
        "with.device_type: expected one of 'cpu', 'gpu', found 'gpuu' (did you mean 'gpu'?)");
}

TEST_CASE("sizes, additionalProperties schemas and propertyNames", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  CHECK(Message(s, {{"space", json::object()}}) == "with.space: expected at least 1 key(s), found 0");
  CHECK(Message(s, {{"space", {{"x", json::array()}}}}) ==
        "with.space.x: expected at least 1 item(s), found 0");
  auto bad = s.Check({{"space", {{"x", {1}}}}, {"env", {{"lower", 1}}}});
  REQUIRE(bad);
  CHECK(bad->at_key);
  CHECK_THAT(bad->message, Catch::Contains("key 'lower': expected a string matching"));
}

TEST_CASE("defaults are readable and must themselves be valid", "[support][schema]") {
  JsonSchema s = Compile(kOptions);
  REQUIRE(s.DefaultOf("repeats") != nullptr);
  CHECK(*s.DefaultOf("repeats") == 3);
  CHECK(s.DefaultOf("band") == nullptr);
  auto bad = JsonSchema::Parse(R"({"properties": {"n": {"type": "integer", "default": "x"}}})");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("properties.n.default"));
}

TEST_CASE("a schema with a keyword outside the subset does not compile", "[support][schema]") {
  auto bad = JsonSchema::Parse(R"({"type": "object", "additionalProperty": false})");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(),
             Catch::Contains("unsupported keyword 'additionalProperty' (did you mean "
                             "'additionalProperties'?)"));
  CHECK_FALSE(JsonSchema::Parse(R"({"type": "int"})").ok());
  CHECK_FALSE(JsonSchema::Parse(R"({"pattern": "("})").ok());
  CHECK_FALSE(JsonSchema::Parse("not json").ok());
  CHECK_FALSE(JsonSchema::Parse(R"({"minimum": "1"})").ok());
}

TEST_CASE("integers are JSON integers, numbers include them", "[support][schema]") {
  JsonSchema ints = Compile(R"({"type": "integer"})");
  JsonSchema nums = Compile(R"({"type": "number"})");
  CHECK_FALSE(ints.Check(3));
  CHECK(ints.Check(3.0).has_value());
  CHECK_FALSE(nums.Check(3));
  CHECK_FALSE(nums.Check(3.5));
  CHECK(nums.Check("3").has_value());
}

TEST_CASE("ValidateOptions formats a plugin's own error and treats null as {}",
          "[support][schema]") {
  const char* schema = R"({"type": "object", "additionalProperties": false,
                           "properties": {"startup_s": {"type": "number"}}})";
  CHECK(ValidateOptions(schema, json(), "sim launcher").ok());
  Status s = ValidateOptions(schema, {{"startup_sec", 1}}, "sim launcher");
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::StartsWith("sim launcher: with.startup_sec: unknown key "
                                            "'startup_sec' (did you mean 'startup_s'?)"));
  CHECK(ValidateOptions("{", json::object(), "x").code() == StatusCode::kInternal);
  CHECK(ValidateOptions(nullptr, {{"anything", 1}}, "x").ok());
}

}  // namespace
}  // namespace attune::support
