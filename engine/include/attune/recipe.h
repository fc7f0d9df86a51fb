// Copyright attune authors.
//
// Recipe: what a stack launches, in a canonical, hashable form; Change: one key moved from one
// value to another. These are plain values shared by the engine and every plugin.
#ifndef ATTUNE_RECIPE_H_
#define ATTUNE_RECIPE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune {

// Where a recipe runs. World size = nodes × gpus_per_node.
struct Topology {
  int nodes = 1;
  int gpus_per_node = 1;
  std::string gpu_type;  // "H100", "A100", "cpu", ...; empty when the launcher decides

  int WorldSize() const { return nodes * gpus_per_node; }
  friend bool operator==(const Topology&, const Topology&) = default;
};

// One command-line argument. `values` is empty for a bare switch (`--bf16`) and has several
// entries for flags that take a list (`--cp-comm-type p2p a2a`).
struct Arg {
  std::string flag;  // with its dashes: "--micro-batch-size"
  std::vector<std::string> values;
  friend bool operator==(const Arg&, const Arg&) = default;
};

// A recipe: entry point, ordered arguments, environment, structured config and topology.
//
// Keys. Every setting of a recipe is addressed by one key string:
//   "--flag"          an argument (its value is its values joined by one space; "" for a switch)
//   "env:NAME"        an environment variable
//   "config:a.b.c"    a value inside `config` (stacks whose recipes are YAML configs, e.g. AutoModel)
//   "topology:nodes", "topology:gpus_per_node"
// A key's value is std::nullopt when the setting is absent.
struct Recipe {
  std::string stack;                     // the stack plugin that understands it: "megatron"
  std::vector<std::string> entry;        // program and script: {"python3", "pretrain_gpt.py"}
  std::vector<Arg> args;                 // in the order the user wrote them
  std::vector<std::pair<std::string, std::string>> env;  // in the order the user wrote them
  nlohmann::json config = nlohmann::json::object();       // stack-specific structured config
  // What the recipe declares about its data, which the flags cannot show (`data: {fixed_length:
  // true, loss_mask: none}`): names and values as written; the stack validates and uses them.
  std::map<std::string, std::string> data;
  Topology topology;
  std::string launcher_hint;  // how the user launched it ("torchrun", "ray", "python"); informative

  friend bool operator==(const Recipe&, const Recipe&) = default;
};

// One key from one value to another. `from`/`to` are std::nullopt for "absent".
struct Change {
  std::string key;
  std::optional<std::string> from;
  std::optional<std::string> to;
  friend bool operator==(const Change&, const Change&) = default;
};

// "--micro-batch-size: 1 -> 2", "--sequence-parallel: (absent) -> (set)".
std::string DescribeChange(const Change& change);
std::string DescribeChanges(const std::vector<Change>& changes);

// The value of `key` in `recipe`, or std::nullopt when absent.
std::optional<std::string> GetValue(const Recipe& recipe, const std::string& key);

// Sets `key` to `value` (std::nullopt removes it). A new argument is appended at the end; an
// existing one keeps its position. Fails on a malformed key.
Status SetValue(Recipe* recipe, const std::string& key, const std::optional<std::string>& value);

// Applies each change in order. Fails when a change's `from` does not match the current value
// (the change was made against another recipe) or its key is malformed.
Status ApplyChanges(Recipe* recipe, const std::vector<Change>& changes);

// The changes that turn `base` into `candidate`, sorted by key. Argument order is not a change.
std::vector<Change> Diff(const Recipe& base, const Recipe& candidate);

// Every key that is set in `recipe`.
std::vector<std::string> Keys(const Recipe& recipe);

// JSON form (also the event-log form). FromJson validates field types and names the bad field.
nlohmann::json RecipeToJson(const Recipe& recipe);
Result<Recipe> RecipeFromJson(const nlohmann::json& json);
nlohmann::json ChangeToJson(const Change& change);
Result<Change> ChangeFromJson(const nlohmann::json& json);
nlohmann::json ChangesToJson(const std::vector<Change>& changes);
Result<std::vector<Change>> ChangesFromJson(const nlohmann::json& json);

// A short content hash of the canonical form (12 hex digits of SHA-256). Argument order does not
// change the id; any value does.
std::string RecipeId(const Recipe& recipe);

// Recipe files (YAML). The format is in docs/recipes.md:
//   stack: megatron
//   entry: [python3, pretrain_gpt.py]
//   args: [[--num-layers, 32], [--bf16], [--cp-comm-type, p2p, a2a]]   (or a list of "--k v" strings)
//   env: {CUDA_DEVICE_MAX_CONNECTIONS: "1"}
//   config: {...}                (optional)
//   topology: {nodes: 2, gpus_per_node: 8, gpu_type: H100}
// Errors name the file, line and column.
Result<Recipe> LoadRecipeFile(const std::string& path);
Result<Recipe> ParseRecipeYaml(const std::string& text, const std::string& source_name);
std::string RecipeToYaml(const Recipe& recipe);

// Any YAML document as JSON (scalars typed: numbers, booleans; quoted scalars stay strings), for
// stacks whose recipes carry a YAML config. Errors name source:line:col.
Result<nlohmann::json> YamlToJsonValue(const std::string& text, const std::string& source_name);

// Splits a shell command line into words the way a POSIX shell would for simple commands: single
// and double quotes, backslash escapes, backslash-newline continuations. No expansion is done
// ($VAR stays literal). Unterminated quotes are an error naming the offset.
Result<std::vector<std::string>> SplitShellWords(std::string_view text);

// Renders a shell command line with safe quoting: "ENV=1 python3 train.py --a 1".
std::string ShellQuote(const std::string& word);
std::string ShellCommand(const std::vector<std::pair<std::string, std::string>>& env,
                         const std::vector<std::string>& argv);

}  // namespace attune

#endif  // ATTUNE_RECIPE_H_
