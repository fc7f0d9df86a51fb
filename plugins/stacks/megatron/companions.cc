// Copyright attune authors.
#include "companions.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "recipe_view.h"
#include "sim_mapping.h"
#include "validate.h"

namespace attune::megatron {

// A change of `key` to `to` on `recipe`, recorded against the current value; no-op when equal.
void AddChange(Recipe* recipe, std::vector<Change>* changes, const std::string& key,
               const std::optional<std::string>& to) {
  auto from = GetValue(*recipe, key);
  if (from == to) return;
  changes->push_back(Change{key, from, to});
  // Keys here are well-formed lever keys, so SetValue cannot fail.
  (void)SetValue(recipe, key, to);
}

void RemoveIfSet(Recipe* r, std::vector<Change>* ch, const std::string& key) {
  if (GetValue(*r, key)) AddChange(r, ch, key, std::nullopt);
}

namespace {

// The divisor of `n` nearest to `want` among those giving at least two virtual stages per rank
// (n / d >= 2 for layers per stage, d >= 2 for stages per rank); the larger on a tie, which means
// fewer pipeline messages. 0 when none does.
long NearestVirtualDivisor(long n, long want, bool counts_layers) {
  long best = 0;
  for (long d = 1; d <= n; ++d) {
    if (n % d != 0 || (counts_layers ? n / d < 2 : d < 2)) continue;
    if (best == 0 || std::labs(d - want) <= std::labs(best - want)) best = d;
  }
  return best;
}

// A pipeline move keeps the recipe's interleaved schedule in the recipe's own spelling: when the
// new PP leaves a rank a layer count the virtual-pipeline value no longer divides (80 layers,
// 4 layers per virtual stage, PP 4 -> 8 leaves 10 a rank), the value moves to the nearest one that
// divides and still gives two virtual stages; the flag goes only when no value does. Without this a
// recipe that sets a virtual pipeline could not change PP at all.
void FitVirtualPipeline(const RecipeView& v, Recipe* r, std::vector<Change>* ch) {
  auto counts = PipelineRankLayers(*r, v);
  if (!counts || counts->empty()) return;  // validation says why the split does not divide
  long common = 0;  // stages per rank must divide every stage's layers
  for (long n : *counts) common = std::gcd(common, n);
  if (v.vpp_stages && *v.vpp_stages >= 1 && common % *v.vpp_stages != 0) {
    long to = NearestVirtualDivisor(common, *v.vpp_stages, false);
    if (to > 0) {
      AddChange(r, ch, "--num-virtual-stages-per-pipeline-rank", std::to_string(to));
    } else {
      RemoveIfSet(r, ch, "--num-virtual-stages-per-pipeline-rank");
    }
  }
  if (v.vpp_layers && *v.vpp_layers >= 1 && counts->size() == 1) {
    long per_rank = counts->front();
    if (per_rank % *v.vpp_layers == 0 && per_rank / *v.vpp_layers >= 2) return;
    long to = NearestVirtualDivisor(per_rank, *v.vpp_layers, true);
    if (to > 0) {
      AddChange(r, ch, "--num-layers-per-virtual-pipeline-stage", std::to_string(to));
    } else {
      RemoveIfSet(r, ch, "--num-layers-per-virtual-pipeline-stage");
    }
  }
}

constexpr const char* kFirstStage = "--decoder-first-pipeline-num-layers";
constexpr const char* kLastStage = "--decoder-last-pipeline-num-layers";

// The layers of a middle stage less those of the first and of the last stage, when `recipe` has
// an uneven split with at least one middle stage.
struct EndDeficits {
  long first = 0, last = 0;
};
std::optional<EndDeficits> ReadEndDeficits(const Recipe& recipe) {
  RecipeView v = ReadView(recipe);
  auto first = IntArg(recipe, kFirstStage), last = IntArg(recipe, kLastStage);
  auto counts = PipelineRankLayers(recipe, v);
  long middle_stages = v.pp - (first ? 1 : 0) - (last ? 1 : 0);
  if ((!first && !last) || !counts || middle_stages < 1) return std::nullopt;
  long middle = (*counts)[first ? 1 : 0];
  return EndDeficits{first ? middle - *first : 0, last ? middle - *last : 0};
}

struct EndSplit {
  long first = 0, last = 0;
};

// The decoder layers of the first and the last stage that make the busiest stage lightest,
// counting each end's deficit as work it also does, then keep the deficits closest. The `middle`
// stages share the rest: evenly when `even` (the rest must divide), else as evenly as they can.
// An end stage not `given` holds no layers of its own; a given one holds at least `min_end`.
std::optional<EndSplit> BestEndSplit(long layers, long middle, bool first_given, bool last_given,
                                     const EndDeficits& deficit, bool even, long min_end) {
  std::optional<std::pair<long, long>> best;  // (busiest stage, squared deficit error)
  EndSplit split;
  for (long f = first_given ? min_end : 0; f <= (first_given ? layers : 0); ++f) {
    for (long l = last_given ? min_end : 0; f + l <= (last_given ? layers : f); ++l) {
      const long rest = layers - f - l;
      if (middle == 0 ? rest != 0 : rest < middle || (even && rest % middle != 0)) continue;
      const long m = middle == 0 ? 0 : (rest + middle - 1) / middle;
      const long df = first_given ? m - f - deficit.first : 0, dl = last_given ? m - l - deficit.last : 0;
      const long busiest =
          std::max({m, first_given ? f + deficit.first : 0, last_given ? l + deficit.last : 0});
      std::pair<long, long> cost{busiest, df * df + dl * dl};
      if (!best || cost < *best) {
        best = cost;
        split = EndSplit{f, l};
      }
    }
  }
  if (!best) return std::nullopt;
  return split;
}

// A pipeline move keeps an uneven split's intent. Its first and last stages hold fewer decoder
// layers than a middle one because they also run the embedding and the loss, work that does not
// change with PP: an end stage's deficit against a middle stage measures that work. The new split
// minimises the busiest stage, counting each end's work so (126 layers as 7 + 8×14 + 7 at PP 16
// become 15 + 16×6 + 15 at PP 8), and then keeps the deficits closest. PP 1 drops the split, which
// Megatron refuses there; a recipe without a middle stage keeps its values.
void FitUnevenSplit(const Recipe& before, Recipe* r, std::vector<Change>* ch) {
  auto first = IntArg(*r, kFirstStage), last = IntArg(*r, kLastStage);
  RecipeView v = ReadView(*r);
  if ((!first && !last) || !v.layers) return;
  if (v.pp <= 1) {
    RemoveIfSet(r, ch, kFirstStage);
    RemoveIfSet(r, ch, kLastStage);
    return;
  }
  std::optional<EndDeficits> want = ReadEndDeficits(before);
  long middle_stages = v.pp - (first ? 1 : 0) - (last ? 1 : 0);
  if (!want || middle_stages < 1) return;  // validation says whether the values still divide
  auto split = BestEndSplit(*v.layers, middle_stages, first.has_value(), last.has_value(), *want, true, 1);
  if (!split) return;
  if (first) AddChange(r, ch, kFirstStage, std::to_string(split->first));
  if (last) AddChange(r, ch, kLastStage, std::to_string(split->last));
}

constexpr const char* kLayout = "--pipeline-model-parallel-layout";

// A layout written back: '|' between stages, "t*n" for n decoder layers, and a run of equal middle
// stages as "(stage|)*k", the shape Megatron's examples use.
std::string WriteLayout(const std::vector<std::string>& stages) {
  auto stage_text = [](const std::string& stage) {
    std::string out;
    for (size_t i = 0; i < stage.size();) {
      size_t j = i;
      while (j < stage.size() && stage[j] == stage[i]) ++j;
      out += stage[i];
      if (j - i > 1) {
        out += '*';
        out += std::to_string(j - i);
      }
      i = j;
    }
    return out;
  };
  // first|(middle|)*k ...last: each middle stage, or group of them, carries the '|' after it.
  std::string out = stage_text(stages.front());
  out += '|';
  for (size_t i = 1; i + 1 < stages.size();) {
    size_t j = i;
    while (j + 1 < stages.size() && stages[j] == stages[i]) ++j;
    if (j - i > 1) {
      out += '(';
      out += stage_text(stages[i]);
      out += "|)*";
      out += std::to_string(j - i);
    } else {
      out += stage_text(stages[i]);
      out += '|';
    }
    i = j;
  }
  out += stage_text(stages.back());
  return out;
}

// A pipeline move keeps a layout's shape: its virtual stages per rank (stages / PP), the embedding
// in the first stage, the MTP depths and the loss in the last, and each end stage's deficit
// against the busiest middle one (the work its embedding or loss stands for). The decoder layers
// are spread again over the new number of stages, the busiest stage as light as it can be. PP 1
// drops the layout. A layout with anything but decoder layers in a middle stage is left alone.
void FitLayout(const Recipe& before, Recipe* r, std::vector<Change>* ch) {
  auto text = GetValue(*r, kLayout);
  if (!text) return;
  const long old_pp = ReadView(before).pp, new_pp = ReadView(*r).pp;
  auto stages = UnrollPipelineLayout(*text);
  if (!stages || old_pp < 1 || stages->size() % static_cast<size_t>(old_pp) != 0 || new_pp == old_pp) return;
  if (new_pp <= 1) {
    RemoveIfSet(r, ch, kLayout);
    return;
  }
  const long per_rank = static_cast<long>(stages->size()) / old_pp;
  const long count = new_pp * per_rank;
  auto decoders = [](const std::string& s) { return static_cast<long>(std::count(s.begin(), s.end(), 't')); };
  auto others = [](const std::string& s) {
    std::string out;
    for (char c : s) out += c == 't' ? "" : std::string(1, c);
    return out;
  };
  long total = 0, busiest_middle = 0;
  for (size_t i = 0; i < stages->size(); ++i) {
    total += decoders((*stages)[i]);
    if (i == 0 || i + 1 == stages->size()) continue;
    if (!others((*stages)[i]).empty()) return;
    busiest_middle = std::max(busiest_middle, decoders((*stages)[i]));
  }
  const bool has_middle = stages->size() > 2;
  const long first_deficit = has_middle ? busiest_middle - decoders(stages->front()) : 0;
  const long last_deficit = has_middle ? busiest_middle - decoders(stages->back()) : 0;
  const long middle = count - 2;
  auto split = BestEndSplit(total, middle, true, true, EndDeficits{first_deficit, last_deficit}, false, 0);
  if (!split) return;
  std::vector<std::string> out;
  out.push_back(others(stages->front()) + std::string(static_cast<size_t>(split->first), 't'));
  const long rest = total - split->first - split->last;
  for (long i = 0; i < middle; ++i) {
    // The heavier middle stages last, next to the lighter last stage.
    const long layers = rest / middle + (i >= middle - rest % middle ? 1 : 0);
    out.push_back(std::string(static_cast<size_t>(layers), 't'));
  }
  out.push_back(std::string(static_cast<size_t>(split->last), 't') + others(stages->back()));
  AddChange(r, ch, kLayout, WriteLayout(out));
}

}  // namespace

void ApplyCompanion(const std::string& name, const ClusterInfo& cluster, const Recipe& before, Recipe* r,
                    std::vector<Change>* ch) {
  RecipeView v = ReadView(*r);
  if (name == "cuda_device_max_connections") {
    if (NeedsMaxConnectionsOne(*r, cluster)) AddChange(r, ch, "env:CUDA_DEVICE_MAX_CONNECTIONS", "1");
  } else if (name == "sequence_parallel_follows_tp") {
    if (v.tp <= 1) {
      RemoveIfSet(r, ch, "--tp-comm-overlap");
      RemoveIfSet(r, ch, "--sequence-parallel");
    }
  } else if (name == "virtual_pipeline_follows_pp") {
    if (v.pp <= 1) {
      RemoveIfSet(r, ch, "--num-virtual-stages-per-pipeline-rank");
      RemoveIfSet(r, ch, "--num-layers-per-virtual-pipeline-stage");
    } else {
      FitVirtualPipeline(v, r, ch);
    }
  } else if (name == "uneven_split_follows_pp") {
    FitUnevenSplit(before, r, ch);
  } else if (name == "layout_follows_pp") {
    FitLayout(before, r, ch);
  } else if (name == "tp_comm_overlap_follows_sp") {
    if (!v.sp) RemoveIfSet(r, ch, "--tp-comm-overlap");
  } else if (name == "param_gather_follows_prerequisites") {
    if (!v.dist_opt || !v.overlap_grad) RemoveIfSet(r, ch, "--overlap-param-gather");
  } else if (name == "ep_overlap_follows_ep") {
    // At EP 1 there is no dispatch left to overlap (and Megatron refuses the flag there).
    if (v.ep <= 1) RemoveIfSet(r, ch, "--overlap-moe-expert-parallel-comm");
  }
}

}  // namespace attune::megatron
