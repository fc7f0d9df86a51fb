// Copyright attune authors.
//
// JsonSchema: a subset of JSON Schema for the options people write in YAML (a plugin's `with:`
// block, a step's `with:` block), and the one validator for it. Plugins declare their schema as
// JSON text in their descriptor (attune/plugin.h), the step registry declares one per step kind,
// and the same code checks both, at `attune validate` time and again when the object is created.
//
// The subset (docs/plugins.md "Options"). A keyword outside it is an error in the schema, so a
// typo in a schema can never quietly loosen it:
//   type                 "object" | "array" | "string" | "integer" | "number" | "boolean" | "null"
//                        or a list of them. "integer" is a JSON integer (3), not 3.0.
//   properties           {name: schema, ...}                       objects
//   required             [name, ...]                               objects
//   additionalProperties false | true | schema (default true)      objects
//   minProperties        N                                         objects
//   propertyNames        schema every key must match (as a string) objects
//   items                schema                                    arrays
//   minItems, maxItems   N                                         arrays
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum   number  numbers
//   enum                 [value, ...]                              any type
//   minLength            N                                         strings
//   pattern              ECMAScript regular expression (searched)  strings
//   description, title, default, examples                          informative; a default must
//                                                                  itself be valid
// Numbers are always finite: NaN and infinities are refused whatever the schema says.
//
// A JsonSchema is an immutable value (copies share the compiled form); thread-safe to share.
#ifndef ATTUNE_SUPPORT_JSON_SCHEMA_H_
#define ATTUNE_SUPPORT_JSON_SCHEMA_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune::support {

// One step of a path into a JSON value: an object key or an array index.
struct JsonPathStep {
  bool is_index = false;
  std::string key;   // when !is_index
  size_t index = 0;  // when is_index
};
using JsonPath = std::vector<JsonPathStep>;

// "steps[1].with" + [repeats] -> "steps[1].with.repeats"; "" + [a, 0] -> "a[0]".
std::string JoinJsonPath(const std::string& prefix, const JsonPath& path);

// What is wrong with a value, and where.
struct SchemaViolation {
  JsonPath path;         // the offending value; for a missing key, the key that is missing
  bool at_key = false;   // the key itself is the problem (an unknown key)
  bool missing = false;  // the last path step names a required key that is absent
  std::string message;   // "expected an integer >= 1, found 'three'"
};

class JsonSchema {
 public:
  // Compiles a schema. Errors are kInvalidArgument naming the schema path ("properties.x.type:
  // unknown type 'int'").
  static Result<JsonSchema> Parse(std::string_view json_text);
  static Result<JsonSchema> FromJson(const nlohmann::json& schema);

  // The first violation in document order (object keys in sorted order), or nullopt when valid.
  std::optional<SchemaViolation> Check(const nlohmann::json& value) const;

  // Check() as a Status: kInvalidArgument "<prefix>.<path>: <message>" (prefix may be "").
  Status Validate(const nlohmann::json& value, const std::string& prefix) const;

  // The declared default of a top-level property, or nullptr.
  const nlohmann::json* DefaultOf(const std::string& property) const;
  // The names of the top-level properties (sorted).
  std::vector<std::string> PropertyNames() const;
  // The schema as JSON (for `attune plugins --json` and documentation).
  const nlohmann::json& AsJson() const;

  struct Node;  // the compiled form (json_schema.cc)

 private:
  JsonSchema(std::shared_ptr<const Node> root, nlohmann::json source)
      : root_(std::move(root)), source_(std::move(source)) {}
  std::shared_ptr<const Node> root_;
  nlohmann::json source_;
};

// Validates a plugin's options (`with:`) against the schema text the plugin declares, for use in
// the plugin's own factory so that the factory and `attune validate` agree. A null `options` is
// an empty mapping. Errors: kInvalidArgument "<who>: with.<path>: <message>". A schema that does
// not parse is kInternal (a plugin bug).
Status ValidateOptions(const char* schema_text, const nlohmann::json& options,
                       const std::string& who);

// How a value is quoted in messages: 'text' for strings (shortened), 3.5, true, null, "a mapping",
// "a list".
std::string DescribeJsonValue(const nlohmann::json& value);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_JSON_SCHEMA_H_
