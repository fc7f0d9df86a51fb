// Copyright attune authors.
//
// Reading an AutoModel recipe's effective settings, and its validity rules.
//
// An AutoModel recipe keeps the YAML config in Recipe::config and the user's dotted command-line
// overrides in Recipe::args ("--distributed.tp_size" ["2"]). The effective value of a dotted key
// is the override when present (a bare flag means "true"), else the config's value, else
// AutoModel's default as given by the lever catalog.
#ifndef ATTUNE_PLUGINS_STACKS_AUTOMODEL_CONFIG_VIEW_H_
#define ATTUNE_PLUGINS_STACKS_AUTOMODEL_CONFIG_VIEW_H_

#include <optional>
#include <string>

#include "attune/cluster.h"
#include "attune/recipe.h"
#include "attune/status.h"
#include "knowledge.h"

namespace attune::automodel {

class ConfigView {
 public:
  ConfigView(const Recipe& recipe, const Knowledge& knowledge)
      : recipe_(recipe), knowledge_(knowledge) {}

  // The effective value, or std::nullopt when neither set nor defaulted.
  std::optional<std::string> Get(const std::string& dotted) const;
  // True when the override or the config sets the key (or anything under it, for a section).
  bool IsSet(const std::string& dotted) const;
  long long GetInt(const std::string& dotted, long long fallback) const;
  bool GetBool(const std::string& dotted, bool fallback) const;

 private:
  const Recipe& recipe_;
  const Knowledge& knowledge_;
};

// The parallel layout the effective settings describe.
struct Mesh {
  std::string strategy;  // fsdp2, megatron_fsdp, ddp (aliases normalised)
  long long world = 1, tp = 1, cp = 1, pp = 1, ep = 1, dp = 1, dp_replicate = 1;
};
Mesh ReadMesh(const ConfigView& view, const Topology& topology);

// Rule config.sections: a top-level config key (or a dotted override's first part) that no
// AutoModel release reads but that is within a typo of a section one does (config_sections.txt)
// and not declared extra. AutoModel would ignore it without a word. Rule config.keys: a key of a
// closed section (step_scheduler) that no release takes.
Status CheckSections(const Recipe& recipe, const Knowledge& knowledge);

// Every validity rule of AutoModel's mesh, batch and schedule. A violation is kInvalidArgument
// "[rule.id] what, with the values; what to do".
Status ValidateRecipe(const Recipe& recipe, const Knowledge& knowledge);

}  // namespace attune::automodel

#endif  // ATTUNE_PLUGINS_STACKS_AUTOMODEL_CONFIG_VIEW_H_
