#include "recipe_import.h"

#include <stdexcept>
#include <utility>

#include "launch.h"

namespace attune::slime {
namespace {

std::string Base(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status CheckSlimeEntry(const Recipe& recipe) {
  std::string script = recipe.entry.empty() ? "" : Base(recipe.entry.back());
  if (script == "train.py" || script == "train_async.py") return Status::Ok();
  return Status::InvalidArgument(
      "slime: the launch runs '" + (recipe.entry.empty() ? std::string("(nothing)") : recipe.entry.back()) +
      "', expected slime's train.py or train_async.py (ray job submit ... -- python3 train.py ...); "
      "use --stack megatron for other Megatron entry points");
}

// The training actors' placement is the recipe's topology, whatever launched train.py.
Status ActorTopology(Recipe* recipe) {
  for (auto [flag, field] : {std::pair{"--actor-num-nodes", &recipe->topology.nodes},
                             std::pair{"--actor-num-gpus-per-node", &recipe->topology.gpus_per_node}}) {
    auto value = GetValue(*recipe, flag);
    if (!value) continue;
    try {
      size_t used = 0;
      int n = std::stoi(*value, &used);
      if (used != value->size() || n < 1) throw std::invalid_argument(*value);
      *field = n;
    } catch (const std::exception&) {
      return Status::InvalidArgument(std::string("slime: ") + flag + " '" + *value +
                                     "' is not a positive integer; give the number of " +
                                     (std::string(flag) == "--actor-num-nodes" ? "nodes" : "GPUs per node") +
                                     " for the training actors");
    }
  }
  return Status::Ok();
}

Result<Recipe> Finish(Result<Recipe> recipe) {
  if (!recipe.ok()) return Status::InvalidArgument("slime: " + recipe.status().message());
  ATTUNE_RETURN_IF_ERROR(CheckSlimeEntry(*recipe));
  ATTUNE_RETURN_IF_ERROR(ActorTopology(&*recipe));
  recipe->stack = "slime";
  return recipe;
}

}  // namespace

Result<Recipe> ImportRecordedCall(const RecordedCall& call, std::vector<std::string>* unknown) {
  if (call.argv.empty()) return Status::InvalidArgument("slime: the recorded call has no argv");
  // The Megatron stack's launch reader does the flag and topology work; the call is handed to it
  // as one quoted command line preceded by its environment.
  std::string script;
  for (const auto& [name, value] : call.env) script += "export " + name + "=" + ShellQuote(value) + "\n";
  for (size_t i = 0; i < call.argv.size(); ++i) {
    if (i) script += ' ';
    script += ShellQuote(call.argv[i]);
  }
  script += "\n";
  return Finish(megatron::ImportLaunchScript(script, unknown));
}

Result<Recipe> ImportSlimeScript(std::string_view script, std::vector<std::string>* unknown) {
  auto recipe = Finish(megatron::ImportLaunchScript(script, unknown));
  if (!recipe.ok()) return recipe;
  // The static reader does not follow `source FILE` / `. FILE`: the arrays that file defines
  // (MODEL_ARGS, ...) are missing from the recipe. Say so instead of losing them silently.
  size_t start = 0;
  int number = 0;
  while (start <= script.size()) {
    size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    ++number;
    std::string_view line = script.substr(start, end - start);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos) {
      line = line.substr(first);
      if (line.rfind("source ", 0) == 0 || line.rfind(". ", 0) == 0) {
        unknown->push_back("line " + std::to_string(number) + ": '" + std::string(line) +
                           "' was not followed (static import): arguments defined there are missing; "
                           "paste that file's arrays into the script");
      }
    }
    start = end + 1;
  }
  return recipe;
}

}  // namespace attune::slime
