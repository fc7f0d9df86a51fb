// Recipe files: YAML in, YAML out. Errors carry file:line:col.
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "attune/recipe.h"
#include "utf8.h"
#include "yaml_load.h"

namespace attune {
namespace {

std::string Where(const std::string& source, const YAML::Node& node) {
  auto mark = node.Mark();
  if (mark.line < 0) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

Status Bad(const std::string& source, const YAML::Node& node, const std::string& path,
           const std::string& what) {
  return Status::InvalidArgument(Where(source, node) + ": " + path + ": " + what);
}

std::vector<std::string> SplitOnSpaces(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

Status ParseArgs(const std::string& source, const YAML::Node& args, Recipe* recipe) {
  if (!args.IsSequence()) return Bad(source, args, "args", "expected a list");
  std::map<std::string, std::string> seen;  // flag -> where it was first given
  for (size_t i = 0; i < args.size(); ++i) {
    const YAML::Node& item = args[i];
    std::string path = "args[" + std::to_string(i) + "]";
    std::vector<std::string> words;
    if (item.IsScalar()) {
      words = SplitOnSpaces(item.Scalar());
    } else if (item.IsSequence()) {
      for (const auto& w : item) {
        if (!w.IsScalar()) return Bad(source, w, path, "expected a string");
        words.push_back(w.Scalar());
      }
    } else {
      return Bad(source, item, path, "expected \"--flag value\" or [--flag, value...]");
    }
    if (words.empty() || words[0].rfind("--", 0) != 0) {
      return Bad(source, item, path,
                 "expected an argument starting with '--', found '" +
                     (words.empty() ? std::string() : words[0]) + "'");
    }
    // "--flag=value" is the flag and its value, as argparse reads it.
    if (size_t eq = words[0].find('='); eq != std::string::npos) {
      words.insert(words.begin() + 1, words[0].substr(eq + 1));
      words[0].resize(eq);
    }
    // argparse keeps a repeated flag's last value, and every reader of a recipe its first: the
    // tuner, the gate and a dry run would see one value and the job run with another.
    if (auto first = seen.find(words[0]); first != seen.end()) {
      return Bad(source, item, path,
                 words[0] + " is given again (first at " + first->second +
                     "); the training script would keep this last value and attune would read "
                     "the first: keep one");
    }
    seen.emplace(words[0], Where(source, item));
    recipe->args.push_back(Arg{words[0], std::vector<std::string>(words.begin() + 1, words.end())});
  }
  return Status::Ok();
}

Status ParseTopology(const std::string& source, const YAML::Node& t, Recipe* recipe) {
  if (!t.IsMap())
    return Bad(source, t, "topology", "expected a map {nodes, gpus_per_node, gpu_type}");
  static const std::set<std::string> kKeys = {"nodes", "gpus_per_node", "gpu_type"};
  for (const auto& kv : t) {
    std::string key = kv.first.as<std::string>();
    if (!kKeys.count(key)) {
      return Bad(source, kv.first, "topology." + key,
                 "unknown key (expected nodes, gpus_per_node or gpu_type)");
    }
  }
  try {
    if (t["nodes"]) recipe->topology.nodes = t["nodes"].as<int>();
    if (t["gpus_per_node"]) recipe->topology.gpus_per_node = t["gpus_per_node"].as<int>();
    if (t["gpu_type"]) recipe->topology.gpu_type = t["gpu_type"].as<std::string>();
  } catch (const YAML::Exception& e) {
    return Bad(source, t, "topology", std::string("expected integers: ") + e.what());
  }
  if (recipe->topology.nodes < 1 || recipe->topology.gpus_per_node < 1) {
    return Bad(source, t, "topology", "nodes and gpus_per_node must be at least 1");
  }
  return Status::Ok();
}

Status ParseRoot(const std::string& source, const YAML::Node& root, Recipe* recipe) {
  if (!root.IsMap()) return Bad(source, root, "(root)", "a recipe must be a YAML map");
  static const std::set<std::string> kKeys = {"stack",  "entry", "args",     "env",
                                              "config", "data",  "topology", "launcher_hint"};
  for (const auto& kv : root) {
    std::string key = kv.first.as<std::string>();
    if (!kKeys.count(key)) {
      return Bad(source, kv.first, key,
                 "unknown key (expected stack, entry, args, env, config, topology)");
    }
  }
  if (!root["stack"]) return Bad(source, root, "stack", "missing (e.g. 'stack: megatron')");
  recipe->stack = root["stack"].as<std::string>();
  if (!root["entry"])
    return Bad(source, root, "entry", "missing (e.g. 'entry: [python3, pretrain_gpt.py]')");
  const YAML::Node& entry = root["entry"];
  if (entry.IsScalar()) {
    recipe->entry = SplitOnSpaces(entry.Scalar());
  } else if (entry.IsSequence()) {
    for (const auto& w : entry) recipe->entry.push_back(w.as<std::string>());
  } else {
    return Bad(source, entry, "entry", "expected a list of words");
  }
  if (root["args"]) ATTUNE_RETURN_IF_ERROR(ParseArgs(source, root["args"], recipe));
  if (root["env"]) {
    if (!root["env"].IsMap()) return Bad(source, root["env"], "env", "expected a map NAME: value");
    for (const auto& kv : root["env"]) {
      recipe->env.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
    }
  }
  if (root["config"]) {
    ATTUNE_ASSIGN_OR_RETURN(recipe->config, YamlToJson(root["config"], source));
  }
  if (root["data"]) {
    if (!root["data"].IsMap()) {
      return Bad(source, root["data"], "data", "expected a map of declarations, e.g. {fixed_length: true, loss_mask: none}");
    }
    for (const auto& kv : root["data"]) {
      if (!kv.second.IsScalar()) {
        return Bad(source, kv.second, "data." + kv.first.as<std::string>(), "expected a plain value (true, none, ...)");
      }
      recipe->data[kv.first.as<std::string>()] = kv.second.Scalar();
    }
  }
  if (root["topology"]) ATTUNE_RETURN_IF_ERROR(ParseTopology(source, root["topology"], recipe));
  if (root["launcher_hint"]) recipe->launcher_hint = root["launcher_hint"].as<std::string>();
  return Status::Ok();
}

// Whether `text`, written plain, reads back as the same text: not as a number, a boolean or null
// for attune's loader, nor (for YAML 1.1 readers such as PyYAML, which AutoModel uses) as yes/no/
// on/off or a sexagesimal number like 00:30:00. A string that would not is written quoted.
bool ReadsBackAsText(const std::string& text) {
  if (text.empty()) return false;
  auto typed = YamlToJson(YAML::Node(text), "");
  if (!typed.ok() || !typed->is_string() || typed->get<std::string>() != text) return false;
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"yes", "no", "on", "off", "y", "n", "~", "null", "true", "false"}) {
    if (lower == word) return false;
  }
  return text.find_first_not_of("0123456789:._+-eE") != std::string::npos;
}

void EmitJson(YAML::Emitter& out, const nlohmann::json& j) {
  if (j.is_object()) {
    out << YAML::BeginMap;
    for (auto it = j.begin(); it != j.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      EmitJson(out, it.value());
    }
    out << YAML::EndMap;
  } else if (j.is_array()) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const auto& item : j) EmitJson(out, item);
    out << YAML::EndSeq;
  } else if (j.is_string()) {
    const std::string& text = j.get_ref<const std::string&>();
    if (ReadsBackAsText(text)) {
      out << text;
    } else {
      out << YAML::DoubleQuoted << text;
    }
  } else if (j.is_null()) {
    out << YAML::Null;
  } else {
    out << j.dump();
  }
}

bool JsonIsPrintable(const nlohmann::json& j) {
  if (j.is_string()) return IsPrintableText(j.get_ref<const std::string&>());
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!IsPrintableText(it.key()) || !JsonIsPrintable(it.value())) return false;
    }
  }
  if (j.is_array()) {
    for (const auto& item : j) {
      if (!JsonIsPrintable(item)) return false;
    }
  }
  return true;
}

// Every string of the recipe must be printable UTF-8 text (api/utf8.h): escape sequences can
// produce bytes the file itself does not hold, and such a recipe would neither serialize to JSON
// (events, its id) nor survive its own YAML form.
Status CheckRecipeValues(const Recipe& r, const std::string& source) {
  std::vector<std::pair<std::string, const std::string*>> fields = {
      {"stack", &r.stack},
      {"launcher_hint", &r.launcher_hint},
      {"topology.gpu_type", &r.topology.gpu_type}};
  for (size_t i = 0; i < r.entry.size(); ++i)
    fields.push_back({"entry[" + std::to_string(i) + "]", &r.entry[i]});
  for (const Arg& a : r.args) {
    fields.push_back({"args: a flag", &a.flag});
    for (const auto& v : a.values) fields.push_back({"args: " + a.flag, &v});
  }
  for (const auto& [k, v] : r.env) {
    fields.push_back({"env: a name", &k});
    fields.push_back({"env: " + k, &v});
  }
  for (const auto& [k, v] : r.data) {
    fields.push_back({"data: a name", &k});
    fields.push_back({"data: " + k, &v});
  }
  for (const auto& [field, value] : fields) {
    if (IsPrintableText(*value)) continue;
    std::string shown = IsPrintableText(field) ? field : "a value";
    return Status::InvalidArgument(source + ": " + shown +
                                   " holds a control character or a byte "
                                   "that is not UTF-8 (written with an escape sequence such as "
                                   "\\0 or \\x..); recipe values must be printable UTF-8 text");
  }
  if (!JsonIsPrintable(r.config)) {
    return Status::InvalidArgument(source +
                                   ": config holds a control character or a byte that "
                                   "is not UTF-8; recipe values must be printable UTF-8 text");
  }
  return Status::Ok();
}

}  // namespace

Result<Recipe> ParseRecipeYaml(const std::string& text, const std::string& source_name) {
  ATTUNE_ASSIGN_OR_RETURN(YAML::Node root, LoadYamlDocument(text, source_name, "a recipe file"));
  Recipe recipe;
  try {
    ATTUNE_RETURN_IF_ERROR(ParseRoot(source_name, root, &recipe));
    ATTUNE_RETURN_IF_ERROR(CheckRecipeValues(recipe, source_name));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                                   std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return recipe;
}

Result<nlohmann::json> YamlToJsonValue(const std::string& text, const std::string& source_name) {
  try {
    ATTUNE_ASSIGN_OR_RETURN(YAML::Node root, LoadYamlDocument(text, source_name, "a YAML file"));
    return YamlToJson(root, source_name);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                                   std::to_string(e.mark.column + 1) + ": YAML: " + e.msg);
  }
}

Result<Recipe> LoadRecipeFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound("recipe file '" + path +
                            "' cannot be read; check the path (relative "
                            "paths are resolved against the workflow's folder)");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseRecipeYaml(buffer.str(), path);
}

std::string RecipeToYaml(const Recipe& recipe) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "stack" << YAML::Value << recipe.stack;
  out << YAML::Key << "entry" << YAML::Value << YAML::Flow << recipe.entry;
  out << YAML::Key << "args" << YAML::Value << YAML::BeginSeq;
  for (const auto& arg : recipe.args) {
    std::vector<std::string> words{arg.flag};
    words.insert(words.end(), arg.values.begin(), arg.values.end());
    out << YAML::Flow << words;
  }
  out << YAML::EndSeq;
  if (!recipe.env.empty()) {
    out << YAML::Key << "env" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : recipe.env) {
      out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
    }
    out << YAML::EndMap;
  }
  if (recipe.config.is_object() && !recipe.config.empty()) {
    out << YAML::Key << "config" << YAML::Value;
    EmitJson(out, recipe.config);
  }
  if (!recipe.data.empty()) {
    out << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : recipe.data) out << YAML::Key << k << YAML::Value << v;
    out << YAML::EndMap;
  }
  out << YAML::Key << "topology" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nodes" << YAML::Value << recipe.topology.nodes;
  out << YAML::Key << "gpus_per_node" << YAML::Value << recipe.topology.gpus_per_node;
  if (!recipe.topology.gpu_type.empty()) {
    out << YAML::Key << "gpu_type" << YAML::Value << recipe.topology.gpu_type;
  }
  out << YAML::EndMap;
  if (!recipe.launcher_hint.empty()) {
    out << YAML::Key << "launcher_hint" << YAML::Value << recipe.launcher_hint;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace attune
