#include "attune/recipe.h"

#include <algorithm>
#include <map>
#include <set>

#include "attune/hash.h"

namespace attune {
namespace {

constexpr std::string_view kEnvPrefix = "env:";
constexpr std::string_view kConfigPrefix = "config:";
constexpr std::string_view kDataPrefix = "data:";
constexpr std::string_view kTopologyPrefix = "topology:";

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += ' ';
    out += words[i];
  }
  return out;
}

std::vector<std::string> SplitWords(const std::string& value) {
  std::vector<std::string> words;
  std::string current;
  for (char c : value) {
    if (c == ' ') {
      if (!current.empty()) words.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) words.push_back(current);
  return words;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The JSON pointer for "a.b.c".
nlohmann::json::json_pointer ConfigPointer(std::string_view dotted) {
  std::string pointer;
  size_t start = 0;
  while (start <= dotted.size()) {
    size_t dot = dotted.find('.', start);
    if (dot == std::string_view::npos) dot = dotted.size();
    pointer += "/";
    pointer += std::string(dotted.substr(start, dot - start));
    start = dot + 1;
  }
  return nlohmann::json::json_pointer(pointer);
}

std::string ScalarToString(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

// Config values are written back typed: numbers and booleans stay numbers and booleans.
nlohmann::json StringToScalar(const std::string& s) {
  if (s == "true") return true;
  if (s == "false") return false;
  if (s == "null") return nullptr;
  try {
    size_t used = 0;
    long long i = std::stoll(s, &used);
    if (used == s.size()) return i;
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (...) {
    // Not a number: a string. (std::sto* signal "not a number" only by throwing.)
  }
  return s;
}

void CollectConfigKeys(const nlohmann::json& j, const std::string& prefix,
                       std::vector<std::string>* keys) {
  if (!j.is_object()) {
    keys->push_back(std::string(kConfigPrefix) + prefix);
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    CollectConfigKeys(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), keys);
  }
}

Status MalformedKey(const std::string& key) {
  return Status::InvalidArgument("malformed recipe key '" + key +
                                 "': expected '--flag', 'env:NAME', 'config:a.b', 'data:NAME' "
                                 "or 'topology:nodes|gpus_per_node'");
}

}  // namespace

std::string DescribeChange(const Change& change) {
  auto show = [](const std::optional<std::string>& v) {
    if (!v) return std::string("(absent)");
    if (v->empty()) return std::string("(set)");
    return *v;
  };
  return change.key + ": " + show(change.from) + " -> " + show(change.to);
}

std::string DescribeChanges(const std::vector<Change>& changes) {
  std::string out;
  for (const auto& c : changes) {
    if (!out.empty()) out += ", ";
    out += DescribeChange(c);
  }
  return out.empty() ? "(no change)" : out;
}

std::optional<std::string> GetValue(const Recipe& recipe, const std::string& key) {
  if (StartsWith(key, "--")) {
    for (const auto& arg : recipe.args) {
      if (arg.flag == key) return Join(arg.values);
    }
    return std::nullopt;
  }
  if (StartsWith(key, kEnvPrefix)) {
    std::string name = key.substr(kEnvPrefix.size());
    for (const auto& [k, v] : recipe.env) {
      if (k == name) return v;
    }
    return std::nullopt;
  }
  if (StartsWith(key, kConfigPrefix)) {
    auto pointer = ConfigPointer(std::string_view(key).substr(kConfigPrefix.size()));
    if (!recipe.config.contains(pointer)) return std::nullopt;
    return ScalarToString(recipe.config.at(pointer));
  }
  if (StartsWith(key, kDataPrefix)) {
    auto it = recipe.data.find(key.substr(kDataPrefix.size()));
    if (it == recipe.data.end()) return std::nullopt;
    return it->second;
  }
  if (key == "topology:nodes") return std::to_string(recipe.topology.nodes);
  if (key == "topology:gpus_per_node") return std::to_string(recipe.topology.gpus_per_node);
  return std::nullopt;
}

Status SetValue(Recipe* recipe, const std::string& key, const std::optional<std::string>& value) {
  if (StartsWith(key, "--") && key.size() > 2) {
    auto it = std::find_if(recipe->args.begin(), recipe->args.end(),
                           [&](const Arg& a) { return a.flag == key; });
    if (!value) {
      if (it != recipe->args.end()) recipe->args.erase(it);
      return Status::Ok();
    }
    if (it == recipe->args.end()) {
      recipe->args.push_back(Arg{key, SplitWords(*value)});
    } else {
      it->values = SplitWords(*value);
    }
    return Status::Ok();
  }
  if (StartsWith(key, kEnvPrefix) && key.size() > kEnvPrefix.size()) {
    std::string name = key.substr(kEnvPrefix.size());
    auto it = std::find_if(recipe->env.begin(), recipe->env.end(),
                           [&](const auto& kv) { return kv.first == name; });
    if (!value) {
      if (it != recipe->env.end()) recipe->env.erase(it);
    } else if (it == recipe->env.end()) {
      recipe->env.emplace_back(name, *value);
    } else {
      it->second = *value;
    }
    return Status::Ok();
  }
  if (StartsWith(key, kConfigPrefix) && key.size() > kConfigPrefix.size()) {
    auto pointer = ConfigPointer(std::string_view(key).substr(kConfigPrefix.size()));
    if (!value) {
      if (recipe->config.contains(pointer)) {
        recipe->config.at(pointer.parent_pointer()).erase(pointer.back());
      }
      return Status::Ok();
    }
    recipe->config[pointer] = StringToScalar(*value);
    return Status::Ok();
  }
  if (StartsWith(key, kDataPrefix) && key.size() > kDataPrefix.size()) {
    std::string name = key.substr(kDataPrefix.size());
    if (!value) {
      recipe->data.erase(name);
    } else {
      recipe->data[name] = *value;
    }
    return Status::Ok();
  }
  if (StartsWith(key, kTopologyPrefix)) {
    int* field = key == "topology:nodes"           ? &recipe->topology.nodes
                 : key == "topology:gpus_per_node" ? &recipe->topology.gpus_per_node
                                                   : nullptr;
    if (!field) return MalformedKey(key);
    if (!value) return Status::InvalidArgument("topology key '" + key + "' cannot be removed");
    try {
      *field = std::stoi(*value);
    } catch (...) {
      return Status::InvalidArgument("topology key '" + key + "' needs an integer, got '" +
                                     *value + "'");
    }
    return Status::Ok();
  }
  return MalformedKey(key);
}

Status ApplyChanges(Recipe* recipe, const std::vector<Change>& changes) {
  for (const auto& change : changes) {
    auto current = GetValue(*recipe, change.key);
    if (current != change.from) {
      return Status::FailedPrecondition(
          "change '" + DescribeChange(change) + "' does not apply: the recipe has " +
          (current ? "'" + *current + "'" : std::string("(absent)")) + " for " + change.key +
          "; the change was made against another recipe");
    }
    ATTUNE_RETURN_IF_ERROR(SetValue(recipe, change.key, change.to));
  }
  return Status::Ok();
}

std::vector<std::string> Keys(const Recipe& recipe) {
  std::vector<std::string> keys;
  for (const auto& arg : recipe.args) keys.push_back(arg.flag);
  for (const auto& [name, value] : recipe.env) keys.push_back(std::string(kEnvPrefix) + name);
  if (recipe.config.is_object()) CollectConfigKeys(recipe.config, "", &keys);
  for (const auto& [name, value] : recipe.data) keys.push_back(std::string(kDataPrefix) + name);
  keys.push_back("topology:nodes");
  keys.push_back("topology:gpus_per_node");
  return keys;
}

std::vector<Change> Diff(const Recipe& base, const Recipe& candidate) {
  std::set<std::string> keys;
  for (auto& k : Keys(base)) keys.insert(k);
  for (auto& k : Keys(candidate)) keys.insert(k);
  std::vector<Change> changes;
  for (const auto& key : keys) {
    auto from = GetValue(base, key);
    auto to = GetValue(candidate, key);
    if (from != to) changes.push_back(Change{key, from, to});
  }
  return changes;
}

std::string RecipeId(const Recipe& recipe) {
  // Canonical: sorted keys with values, plus entry and stack. Argument order is not identity.
  std::map<std::string, std::optional<std::string>> canonical;
  for (const auto& key : Keys(recipe)) canonical[key] = GetValue(recipe, key);
  nlohmann::json j;
  j["stack"] = recipe.stack;
  j["entry"] = recipe.entry;
  j["gpu_type"] = recipe.topology.gpu_type;
  for (const auto& [k, v] : canonical) j["keys"][k] = v ? nlohmann::json(*v) : nlohmann::json();
  // Parsers refuse text that is not UTF-8 (api/utf8.h); a recipe built in code that still holds
  // such bytes gets an id instead of an exception (U+FFFD for them; ids of UTF-8 recipes are
  // unchanged).
  return Sha256Hex(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).substr(0, 12);
}

std::string ShellQuote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./=:,+@%") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

std::string ShellCommand(const std::vector<std::pair<std::string, std::string>>& env,
                         const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& [k, v] : env) out += k + "=" + ShellQuote(v) + " ";
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    out += ShellQuote(argv[i]);
  }
  return out;
}

}  // namespace attune

namespace attune {
namespace {

// One step of the word splitter: consumes a quoted or escaped span starting at text[*i].
Status ConsumeQuoted(std::string_view text, size_t* i, std::string* word) {
  char quote = text[*i];
  size_t start = *i;
  ++*i;
  while (*i < text.size() && text[*i] != quote) {
    if (quote == '"' && text[*i] == '\\' && *i + 1 < text.size() &&
        std::string_view("\"\\$`\n").find(text[*i + 1]) != std::string_view::npos) {
      ++*i;
      if (text[*i] != '\n') word->push_back(text[*i]);
    } else {
      word->push_back(text[*i]);
    }
    ++*i;
  }
  if (*i >= text.size()) {
    return Status::InvalidArgument(std::string("unterminated ") + quote + " quote starting at offset " +
                                   std::to_string(start));
  }
  ++*i;  // the closing quote
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> SplitShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] != '\n') {
        word.push_back(text[i + 1]);
        in_word = true;
      }
      i += 2;
    } else if (c == '\'' || c == '"') {
      ATTUNE_RETURN_IF_ERROR(ConsumeQuoted(text, &i, &word));
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      ++i;
    } else {
      word.push_back(c);
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace attune
