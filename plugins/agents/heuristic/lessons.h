// Copyright attune authors.
//
// Reads lever effects out of past campaigns' lessons (CampaignView::lessons, the text of
// skill/past_tuning_projects/). The reader is tolerant: anything it does not recognise is
// ignored, and empty text gives no priors.
//
// Recognised forms (case-insensitive keys; the effect is a relative speed change):
//   lever: micro_batch_size effect: +12%          one line
//   - lever: micro_batch_size                    YAML-like: `effect:` on one of the next lines
//     effect: 0.12                                (before the next `lever:`)
//   | lever | effect |                            a markdown table whose header has a `lever`
//   |-------|--------|                            column and an `effect`, `speedup` or `gain`
//   | micro_batch_size | +12% |                   column
// Numbers: "+12%", "-3 %", "12%" are percent; "0.12" or "-0.03" without % are fractions;
// "1.12x" is a speedup ratio (+12%). Several entries for one lever are averaged.
//
// An effect is that of the move the entry made, and a lever moves both ways (recompute full ->
// none is +39%; none -> selective is a slowdown). Where the entry says its move
// (`change: \`--recompute-granularity: full -> (absent), ...\`` on its line, as the report step
// writes it) and a DirectionOf is given, an effect measured in the reverse direction is turned
// into the forward one: 1 / (1 + effect) - 1. Entries that do not say their move count as forward.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_LESSONS_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_LESSONS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/recipe.h"

namespace attune::agents {

struct LessonPrior {
  double effect = 0;  // mean relative speed change of the forward move (+0.12 = 12% faster)
  int count = 0;      // how many entries it averages
};

// The direction of a move of `lever` made of `changes`: +1 forward (more of the lever's
// feature), -1 reverse.
using DirectionOf = std::function<int(const std::string& lever, const std::vector<Change>& changes)>;

// lever id -> prior.
std::map<std::string, LessonPrior> ParseLessons(std::string_view text,
                                                const DirectionOf& direction_of = nullptr);

// The lessons of `text` that apply to `stack`: the engine joins the files of
// skill/past_tuning_projects/, each after a "<!-- file name -->" line; a file whose header says
// `stack: <other>` is left out (its lever ids are another stack's). Text without those lines is
// one file.
std::string LessonsForStack(std::string_view text, std::string_view stack);

// "--micro-batch-size: 1 -> 2, --sequence-parallel: (absent) -> (set)" -> its changes ("(absent)"
// is no value); empty when the text is not in that form.
std::vector<Change> ParseChangeList(std::string_view text);

// "+12%" -> 0.12, "0.12" -> 0.12, "1.12x" -> 0.12; std::nullopt when not a number.
std::optional<double> ParseEffect(std::string_view text);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_LESSONS_H_
