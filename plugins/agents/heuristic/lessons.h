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
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_LESSONS_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_LESSONS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace attune::agents {

struct LessonPrior {
  double effect = 0;  // mean relative speed change (+0.12 = 12% faster)
  int count = 0;      // how many entries it averages
};

// lever id -> prior.
std::map<std::string, LessonPrior> ParseLessons(std::string_view text);

// "+12%" -> 0.12, "0.12" -> 0.12, "1.12x" -> 0.12; std::nullopt when not a number.
std::optional<double> ParseEffect(std::string_view text);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_LESSONS_H_
