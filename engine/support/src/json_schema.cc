// The JSON Schema subset: a compiler from the schema's JSON to a Node tree, and a validator that
// walks a value against it and stops at the first violation.
#include "attune/support/json_schema.h"

#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "attune/support/names.h"

namespace attune::support {

using nlohmann::json;

enum TypeBit : unsigned {
  kObject = 1,
  kArray = 2,
  kString = 4,
  kInteger = 8,
  kNumber = 16,  // any number, integers included
  kBoolean = 32,
  kNull = 64,
};

struct JsonSchema::Node {
  unsigned types = 0;  // 0: any type
  std::map<std::string, std::shared_ptr<const Node>> properties;
  std::vector<std::string> required;
  bool additional_allowed = true;
  std::shared_ptr<const Node> additional;  // a schema for other keys, when given
  std::optional<size_t> min_properties;
  std::shared_ptr<const Node> property_names;  // a schema every key must match, when given
  std::shared_ptr<const Node> items;
  std::optional<size_t> min_items, max_items;
  std::optional<double> minimum, maximum, exclusive_minimum, exclusive_maximum;
  std::optional<std::vector<json>> enum_values;
  std::optional<size_t> min_length;
  std::optional<std::regex> pattern;
  std::string pattern_text;
  std::string description;
  std::optional<json> default_value;
};

namespace {

using Node = JsonSchema::Node;

const std::map<std::string, unsigned>& TypeNames() {
  static const auto* names = new std::map<std::string, unsigned>{
      {"object", kObject}, {"array", kArray},     {"string", kString}, {"integer", kInteger},
      {"number", kNumber}, {"boolean", kBoolean}, {"null", kNull}};
  return *names;
}

const std::set<std::string>& Keywords() {
  static const auto* keywords = new std::set<std::string>{
      "type",     "properties", "required",  "additionalProperties", "minProperties",
      "propertyNames",
      "items",    "minItems",   "maxItems",  "minimum",              "maximum",
      "exclusiveMinimum",       "exclusiveMaximum",                  "enum",
      "minLength", "pattern",   "description", "title", "default",   "examples"};
  return *keywords;
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// --- compiling -------------------------------------------------------------------------------

class Compiler {
 public:
  Result<std::shared_ptr<const Node>> Compile(const json& s, const std::string& where);

 private:
  Status Bad(const std::string& where, const std::string& what) {
    return Status::InvalidArgument("option schema: " + (where.empty() ? "" : where + ": ") + what);
  }
  Status CheckKeywords(const json& s, const std::string& where);
  Status Types(const json& s, const std::string& where, Node* n);
  Status Objects(const json& s, const std::string& where, Node* n);
  Status Arrays(const json& s, const std::string& where, Node* n);
  Status Numbers(const json& s, const std::string& where, Node* n);
  Status Strings(const json& s, const std::string& where, Node* n);
  Status Annotations(const json& s, const std::string& where, Node* n);
  Result<size_t> Count(const json& s, const char* key, const std::string& where);
  Result<std::optional<double>> Bound(const json& s, const char* key, const std::string& where);
};

std::string Sub(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

Status Compiler::CheckKeywords(const json& s, const std::string& where) {
  if (!s.is_object()) return Bad(where, "a schema must be a JSON object, found " + s.dump());
  std::vector<std::string> known(Keywords().begin(), Keywords().end());
  for (const auto& [key, value] : s.items()) {
    if (Keywords().count(key)) continue;
    std::string nearest = NearestName(key, known);
    return Bad(Sub(where, key), "unsupported keyword '" + key + "'" +
                                    (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                                    "; the subset is: " + Join(known));
  }
  return Status::Ok();
}

Status Compiler::Types(const json& s, const std::string& where, Node* n) {
  if (!s.contains("type")) return Status::Ok();
  json list = s["type"].is_array() ? s["type"] : json::array({s["type"]});
  for (const auto& t : list) {
    auto it = t.is_string() ? TypeNames().find(t.get<std::string>()) : TypeNames().end();
    if (it == TypeNames().end()) {
      return Bad(Sub(where, "type"), "unknown type " + t.dump() +
                                         " (object, array, string, integer, number, boolean, "
                                         "null)");
    }
    n->types |= it->second;
  }
  return Status::Ok();
}

Result<size_t> Compiler::Count(const json& s, const char* key, const std::string& where) {
  const json& v = s[key];
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    return Bad(Sub(where, key), "expected a non-negative integer, found " + v.dump());
  }
  return v.get<size_t>();
}

Result<std::optional<double>> Compiler::Bound(const json& s, const char* key,
                                              const std::string& where) {
  if (!s.contains(key)) return std::optional<double>();
  const json& v = s[key];
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    return Bad(Sub(where, key), "expected a finite number, found " + v.dump());
  }
  return std::optional<double>(v.get<double>());
}

Status Compiler::Objects(const json& s, const std::string& where, Node* n) {
  if (s.contains("properties")) {
    if (!s["properties"].is_object()) return Bad(Sub(where, "properties"), "expected an object");
    for (const auto& [name, sub] : s["properties"].items()) {
      ATTUNE_ASSIGN_OR_RETURN(n->properties[name],
                              Compile(sub, Sub(where, "properties." + name)));
    }
  }
  if (s.contains("required")) {
    if (!s["required"].is_array()) return Bad(Sub(where, "required"), "expected a list of names");
    for (const auto& r : s["required"]) {
      if (!r.is_string()) return Bad(Sub(where, "required"), "expected names, found " + r.dump());
      n->required.push_back(r.get<std::string>());
    }
  }
  if (s.contains("additionalProperties")) {
    const json& a = s["additionalProperties"];
    if (a.is_boolean()) {
      n->additional_allowed = a.get<bool>();
    } else {
      ATTUNE_ASSIGN_OR_RETURN(n->additional, Compile(a, Sub(where, "additionalProperties")));
    }
  }
  if (s.contains("minProperties")) {
    ATTUNE_ASSIGN_OR_RETURN(n->min_properties, Count(s, "minProperties", where));
  }
  if (s.contains("propertyNames")) {
    ATTUNE_ASSIGN_OR_RETURN(n->property_names,
                            Compile(s["propertyNames"], Sub(where, "propertyNames")));
  }
  return Status::Ok();
}

Status Compiler::Arrays(const json& s, const std::string& where, Node* n) {
  if (s.contains("items")) {
    ATTUNE_ASSIGN_OR_RETURN(n->items, Compile(s["items"], Sub(where, "items")));
  }
  if (s.contains("minItems")) {
    ATTUNE_ASSIGN_OR_RETURN(n->min_items, Count(s, "minItems", where));
  }
  if (s.contains("maxItems")) {
    ATTUNE_ASSIGN_OR_RETURN(n->max_items, Count(s, "maxItems", where));
  }
  return Status::Ok();
}

Status Compiler::Numbers(const json& s, const std::string& where, Node* n) {
  ATTUNE_ASSIGN_OR_RETURN(n->minimum, Bound(s, "minimum", where));
  ATTUNE_ASSIGN_OR_RETURN(n->maximum, Bound(s, "maximum", where));
  ATTUNE_ASSIGN_OR_RETURN(n->exclusive_minimum, Bound(s, "exclusiveMinimum", where));
  ATTUNE_ASSIGN_OR_RETURN(n->exclusive_maximum, Bound(s, "exclusiveMaximum", where));
  return Status::Ok();
}

Status Compiler::Strings(const json& s, const std::string& where, Node* n) {
  if (s.contains("minLength")) {
    ATTUNE_ASSIGN_OR_RETURN(n->min_length, Count(s, "minLength", where));
  }
  if (s.contains("pattern")) {
    if (!s["pattern"].is_string()) return Bad(Sub(where, "pattern"), "expected a string");
    n->pattern_text = s["pattern"].get<std::string>();
    try {
      n->pattern = std::regex(n->pattern_text, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      // std::regex reports a malformed expression by throwing.
      return Bad(Sub(where, "pattern"), "not a valid regular expression: " + std::string(e.what()));
    }
  }
  return Status::Ok();
}

Status Compiler::Annotations(const json& s, const std::string& where, Node* n) {
  if (s.contains("enum")) {
    if (!s["enum"].is_array() || s["enum"].empty()) {
      return Bad(Sub(where, "enum"), "expected a non-empty list of values");
    }
    n->enum_values = s["enum"].get<std::vector<json>>();
  }
  if (s.contains("description")) {
    if (!s["description"].is_string()) return Bad(Sub(where, "description"), "expected a string");
    n->description = s["description"].get<std::string>();
  }
  return Status::Ok();
}

// --- describing ------------------------------------------------------------------------------

std::string NumberText(double d) {
  json j = d;
  if (d == std::floor(d) && std::fabs(d) < 1e15) j = static_cast<int64_t>(d);
  return j.dump();
}

std::string Plural(unsigned types) {
  if (types == kString) return "strings";
  if (types == kInteger) return "integers";
  if (types == kNumber || types == (kNumber | kInteger)) return "numbers";
  if (types == kObject) return "mappings";
  if (types == kBoolean) return "true/false values";
  return "values";
}

std::string RangeText(const Node& n) {
  std::optional<double> lo = n.minimum, hi = n.maximum;
  bool lo_open = false, hi_open = false;
  if (n.exclusive_minimum) lo = n.exclusive_minimum, lo_open = true;
  if (n.exclusive_maximum) hi = n.exclusive_maximum, hi_open = true;
  if (lo && hi) {
    return std::string(" in ") + (lo_open ? "(" : "[") + NumberText(*lo) + ", " + NumberText(*hi) +
           (hi_open ? ")" : "]");
  }
  if (lo) return std::string(lo_open ? " > " : " >= ") + NumberText(*lo);
  if (hi) return std::string(hi_open ? " < " : " <= ") + NumberText(*hi);
  return "";
}

std::string Expected(const Node& n);

std::string OneType(unsigned bit, const Node& n) {
  switch (bit) {
    case kObject: return "a mapping";
    case kArray: return n.items ? "a list of " + Plural(n.items->types) : "a list";
    case kString: return n.min_length && *n.min_length > 0 ? "a non-empty string" : "a string";
    case kInteger: return "an integer" + RangeText(n);
    case kNumber: return "a number" + RangeText(n);
    case kBoolean: return "true or false";
    case kNull: return "null";
  }
  return "a value";
}

std::string Expected(const Node& n) {
  if (n.enum_values) {
    std::vector<std::string> shown;
    for (const auto& v : *n.enum_values) shown.push_back(DescribeJsonValue(v));
    return "one of " + Join(shown);
  }
  unsigned types = n.types;
  if (types & kNumber) types &= ~kInteger;  // "a number" covers integers
  std::vector<std::string> parts;
  for (unsigned bit : {kObject, kArray, kString, kInteger, kNumber, kBoolean, kNull}) {
    if (types & bit) parts.push_back(OneType(bit, n));
  }
  if (parts.empty()) return "a value" + RangeText(n);
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    out += (i + 1 == parts.size() ? " or " : ", ") + parts[i];
  }
  return out;
}

// --- validating ------------------------------------------------------------------------------

class Checker {
 public:
  std::optional<SchemaViolation> Visit(const Node& n, const json& v, JsonPath& path);

 private:
  static SchemaViolation At(const JsonPath& path, std::string message) {
    return SchemaViolation{path, false, false, std::move(message)};
  }
  static SchemaViolation Mismatch(const Node& n, const json& v, const JsonPath& path,
                                  const std::string& hint = "") {
    return At(path, "expected " + Expected(n) + ", found " + DescribeJsonValue(v) + hint);
  }
  static bool TypeMatches(unsigned types, const json& v);
  std::optional<SchemaViolation> Enum(const Node& n, const json& v, const JsonPath& path);
  std::optional<SchemaViolation> Number(const Node& n, const json& v, const JsonPath& path);
  std::optional<SchemaViolation> String(const Node& n, const json& v, const JsonPath& path);
  std::optional<SchemaViolation> Array(const Node& n, const json& v, JsonPath& path);
  std::optional<SchemaViolation> Object(const Node& n, const json& v, JsonPath& path);
  std::optional<SchemaViolation> Entry(const Node& n, const std::string& key, const json& value,
                                       JsonPath& path);
  std::optional<SchemaViolation> UnknownKey(const Node& n, const std::string& key,
                                            const JsonPath& path);
};

bool Checker::TypeMatches(unsigned types, const json& v) {
  if (types == 0) return true;
  if (v.is_object()) return types & kObject;
  if (v.is_array()) return types & kArray;
  if (v.is_string()) return types & kString;
  if (v.is_boolean()) return types & kBoolean;
  if (v.is_null()) return types & kNull;
  if (v.is_number_integer()) return types & (kInteger | kNumber);
  if (v.is_number_float()) return types & kNumber;
  return false;
}

std::optional<SchemaViolation> Checker::Visit(const Node& n, const json& v, JsonPath& path) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    return At(path, "expected a finite number, found " + DescribeJsonValue(v));
  }
  if (!TypeMatches(n.types, v)) return Mismatch(n, v, path);
  if (n.enum_values) return Enum(n, v, path);
  if (v.is_number()) return Number(n, v, path);
  if (v.is_string()) return String(n, v, path);
  if (v.is_array()) return Array(n, v, path);
  if (v.is_object()) return Object(n, v, path);
  return std::nullopt;
}

std::optional<SchemaViolation> Checker::Enum(const Node& n, const json& v, const JsonPath& path) {
  std::vector<std::string> names;
  for (const auto& allowed : *n.enum_values) {
    if (allowed == v) return std::nullopt;
    if (allowed.is_string()) names.push_back(allowed.get<std::string>());
  }
  std::string nearest = v.is_string() ? NearestName(v.get<std::string>(), names) : "";
  return Mismatch(n, v, path, nearest.empty() ? "" : " (did you mean '" + nearest + "'?)");
}

std::optional<SchemaViolation> Checker::Number(const Node& n, const json& v, const JsonPath& path) {
  const double d = v.get<double>();
  bool ok = (!n.minimum || d >= *n.minimum) && (!n.maximum || d <= *n.maximum) &&
            (!n.exclusive_minimum || d > *n.exclusive_minimum) &&
            (!n.exclusive_maximum || d < *n.exclusive_maximum);
  if (ok) return std::nullopt;
  return Mismatch(n, v, path);
}

std::optional<SchemaViolation> Checker::String(const Node& n, const json& v, const JsonPath& path) {
  const std::string& s = v.get_ref<const std::string&>();
  if (n.min_length && s.size() < *n.min_length) return Mismatch(n, v, path);
  if (n.pattern && !std::regex_search(s, *n.pattern)) {
    return At(path, "expected a string matching /" + n.pattern_text + "/, found " +
                        DescribeJsonValue(v));
  }
  return std::nullopt;
}

std::optional<SchemaViolation> Checker::Array(const Node& n, const json& v, JsonPath& path) {
  if (n.min_items && v.size() < *n.min_items) {
    return At(path, "expected at least " + std::to_string(*n.min_items) + " item(s), found " +
                        std::to_string(v.size()));
  }
  if (n.max_items && v.size() > *n.max_items) {
    return At(path, "expected at most " + std::to_string(*n.max_items) + " item(s), found " +
                        std::to_string(v.size()));
  }
  if (!n.items) return std::nullopt;
  for (size_t i = 0; i < v.size(); ++i) {
    path.push_back(JsonPathStep{true, "", i});
    auto bad = Visit(*n.items, v[i], path);
    path.pop_back();
    if (bad) return bad;
  }
  return std::nullopt;
}

std::optional<SchemaViolation> Checker::UnknownKey(const Node& n, const std::string& key,
                                                   const JsonPath& path) {
  std::vector<std::string> names;
  for (const auto& [name, sub] : n.properties) names.push_back(name);
  std::string nearest = NearestName(key, names);
  SchemaViolation bad = At(path, "unknown key '" + key + "'" +
                                     (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                                     "; expected one of: " + (names.empty() ? "(none)" : Join(names)));
  bad.at_key = true;
  return bad;
}

std::optional<SchemaViolation> Checker::Entry(const Node& n, const std::string& key,
                                              const json& value, JsonPath& path) {
  if (n.property_names) {
    if (auto bad = Visit(*n.property_names, json(key), path)) {
      bad->at_key = true;
      bad->message = "key " + DescribeJsonValue(json(key)) + ": " + bad->message;
      return bad;
    }
  }
  auto it = n.properties.find(key);
  if (it != n.properties.end()) return Visit(*it->second, value, path);
  if (n.additional) return Visit(*n.additional, value, path);
  if (!n.additional_allowed) return UnknownKey(n, key, path);
  return std::nullopt;
}

std::optional<SchemaViolation> Checker::Object(const Node& n, const json& v, JsonPath& path) {
  for (const auto& name : n.required) {
    if (v.contains(name)) continue;
    path.push_back(JsonPathStep{false, name, 0});
    auto it = n.properties.find(name);
    std::string about = it != n.properties.end() && !it->second->description.empty()
                            ? " (" + it->second->description + ")"
                            : "";
    SchemaViolation bad = At(path, "required key is missing" + about);
    bad.missing = true;
    path.pop_back();
    return bad;
  }
  if (n.min_properties && v.size() < *n.min_properties) {
    return At(path, "expected at least " + std::to_string(*n.min_properties) + " key(s), found " +
                        std::to_string(v.size()));
  }
  for (const auto& [key, value] : v.items()) {
    path.push_back(JsonPathStep{false, key, 0});
    auto bad = Entry(n, key, value, path);
    path.pop_back();
    if (bad) return bad;
  }
  return std::nullopt;
}

// The first NaN or infinity anywhere in `v`, also where the schema says nothing about the value.
std::optional<SchemaViolation> FindNonFinite(const json& v, JsonPath& path) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    return SchemaViolation{path, false, false,
                           "expected a finite number, found " + DescribeJsonValue(v)};
  }
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      path.push_back(JsonPathStep{true, "", i});
      auto bad = FindNonFinite(v[i], path);
      path.pop_back();
      if (bad) return bad;
    }
  }
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) {
      path.push_back(JsonPathStep{false, key, 0});
      auto bad = FindNonFinite(value, path);
      path.pop_back();
      if (bad) return bad;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::shared_ptr<const Node>> Compiler::Compile(const json& s, const std::string& where) {
  ATTUNE_RETURN_IF_ERROR(CheckKeywords(s, where));
  auto n = std::make_shared<Node>();
  ATTUNE_RETURN_IF_ERROR(Types(s, where, n.get()));
  ATTUNE_RETURN_IF_ERROR(Objects(s, where, n.get()));
  ATTUNE_RETURN_IF_ERROR(Arrays(s, where, n.get()));
  ATTUNE_RETURN_IF_ERROR(Numbers(s, where, n.get()));
  ATTUNE_RETURN_IF_ERROR(Strings(s, where, n.get()));
  ATTUNE_RETURN_IF_ERROR(Annotations(s, where, n.get()));
  if (s.contains("default")) {
    JsonPath path;
    if (auto bad = Checker().Visit(*n, s["default"], path)) {
      return Bad(Sub(where, "default"), "the default is not valid here: " + bad->message);
    }
    n->default_value = s["default"];
  }
  return std::shared_ptr<const Node>(std::move(n));
}

std::string JoinJsonPath(const std::string& prefix, const JsonPath& path) {
  std::string out = prefix;
  // Appended piece by piece: no temporaries, and GCC 12 sees no overlapping copy in
  // `"[" + std::string&&` (its -Wrestrict false positive, GCC bug 105329).
  for (const auto& step : path) {
    if (step.is_index) {
      out += '[';
      out += std::to_string(step.index);
      out += ']';
    } else {
      if (!out.empty()) out += '.';
      out += step.key;
    }
  }
  return out;
}

std::string DescribeJsonValue(const json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    constexpr size_t kShown = 60;
    return "'" + (s.size() <= kShown ? s : s.substr(0, kShown) + "...") + "'";
  }
  if (v.is_object()) return v.empty() ? "an empty mapping" : "a mapping";
  if (v.is_array()) return v.empty() ? "an empty list" : "a list";
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  }
  return v.dump();
}

Result<JsonSchema> JsonSchema::Parse(std::string_view json_text) {
  json parsed = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (parsed.is_discarded()) {
    return Status::InvalidArgument("option schema: not valid JSON text");
  }
  return FromJson(parsed);
}

Result<JsonSchema> JsonSchema::FromJson(const json& schema) {
  ATTUNE_ASSIGN_OR_RETURN(std::shared_ptr<const Node> root, Compiler().Compile(schema, ""));
  return JsonSchema(std::move(root), schema);
}

std::optional<SchemaViolation> JsonSchema::Check(const json& value) const {
  JsonPath path;
  if (auto bad = FindNonFinite(value, path)) return bad;
  return Checker().Visit(*root_, value, path);
}

Status JsonSchema::Validate(const json& value, const std::string& prefix) const {
  auto bad = Check(value);
  if (!bad) return Status::Ok();
  std::string where = JoinJsonPath(prefix, bad->path);
  return Status::InvalidArgument((where.empty() ? "" : where + ": ") + bad->message);
}

const json* JsonSchema::DefaultOf(const std::string& property) const {
  auto it = root_->properties.find(property);
  if (it == root_->properties.end() || !it->second->default_value) return nullptr;
  return &*it->second->default_value;
}

std::vector<std::string> JsonSchema::PropertyNames() const {
  std::vector<std::string> names;
  for (const auto& [name, sub] : root_->properties) names.push_back(name);
  return names;
}

const json& JsonSchema::AsJson() const { return source_; }

Status ValidateOptions(const char* schema_text, const json& options, const std::string& who) {
  if (schema_text == nullptr) return Status::Ok();
  auto schema = JsonSchema::Parse(schema_text);
  if (!schema.ok()) {
    return Status::Internal(who + " declares an invalid " + schema.status().message() +
                            " (a plugin bug)");
  }
  const json& value = options.is_null() ? json::object() : options;
  Status s = schema->Validate(value, "with");
  if (s.ok()) return s;
  return Status::InvalidArgument(who + ": " + s.message());
}

}  // namespace attune::support
