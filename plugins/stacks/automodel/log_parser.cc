#include "log_parser.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "attune/support/log_lines.h"

namespace attune::automodel {
namespace {

std::optional<double> Number(const std::string& s) {
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    return v;
  } catch (...) {
    return std::nullopt;  // "nan" parses; anything else that is not a number is not a value
  }
}

// One "name value" field of the step line ("loss 1.5514", "mem: 11.66 GiB", "tps 1(2/gpu)").
void ReadField(const std::string& field, IterationSample* s) {
  std::istringstream in(field);
  std::string name, value;
  in >> name >> value;
  if (!name.empty() && name.back() == ':') name.pop_back();
  if (name == "loss") {
    auto v = Number(value);
    if (v && *v == *v) s->loss = *v;  // NaN reads as missing
  } else if (name == "grad_norm") {
    s->grad_norm = Number(value);
  } else if (name == "lr") {
    if (auto v = Number(value)) s->extra["lr"] = *v;
  } else if (name == "mem") {
    if (auto v = Number(value)) s->extra["mem_gib"] = *v;
  } else if (name == "num_label_tokens") {
    if (auto v = Number(value)) s->extra["num_label_tokens"] = *v;
  } else if (name == "tps") {
    size_t open = value.find('(');
    if (value.find("/gpu") != std::string::npos && open == std::string::npos) {
      if (auto v = Number(value)) s->extra["tps_per_gpu"] = *v;
    } else {
      if (auto v = Number(value.substr(0, open))) s->extra["tps"] = *v;
      if (open != std::string::npos) {
        if (auto v = Number(value.substr(open + 1))) s->extra["tps_per_gpu"] = *v;
      }
    }
  }
}

bool ParseStepLine(const std::string& line, IterationSample* s) {
  static const std::regex kStep(R"((?:^|[\s:|])step\s+(\d{1,15})\s*\|\s*epoch\s+(\d{1,15})\s*\|)");
  if (line.find("[val]") != std::string::npos) return false;
  // The head is found within the regex window (support/log_lines.h); the fields after it are
  // read to the line's end without a regex.
  auto window_end = line.begin() + static_cast<long>(std::min(line.size(), support::kRegexWindow));
  std::smatch m;
  if (!std::regex_search(line.begin(), window_end, m, kStep)) return false;
  s->iteration = std::stoll(m[1].str());
  s->extra["epoch"] = std::stod(m[2].str());
  std::string rest(m[0].second, line.end());
  size_t start = 0;
  while (start < rest.size()) {
    size_t bar = rest.find('|', start);
    if (bar == std::string::npos) bar = rest.size();
    ReadField(rest.substr(start, bar - start), s);
    start = bar + 1;
  }
  return true;
}

bool ParseJsonlRecord(const std::string& line, IterationSample* s) {
  size_t brace = line.find('{');
  if (brace == std::string::npos || line.find("\"tps\"") == std::string::npos) return false;
  auto j = nlohmann::json::parse(line.substr(brace), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("step")) return false;
  s->iteration = j.value("step", 0LL);
  if (j.contains("loss") && j["loss"].is_number()) s->loss = j["loss"].get<double>();
  if (j.contains("grad_norm") && j["grad_norm"].is_number()) s->grad_norm = j["grad_norm"].get<double>();
  for (const char* key : {"lr", "tps", "tps_per_gpu", "num_label_tokens", "epoch"}) {
    if (j.contains(key) && j[key].is_number()) s->extra[key] = j[key].get<double>();
  }
  if (j.contains("mem") && j["mem"].is_number()) s->extra["mem_gib"] = j["mem"].get<double>();
  if (j.contains("mfu") && j["mfu"].is_number()) s->extra["mfu"] = j["mfu"].get<double>();
  return true;
}

// The "name=value" and "name: value" fields of a line, split at ',' and '|' ("epoch=0 step=10
// loss=2.3", "global_step: 17 | reduced_train_loss: 11.03", "…, train_step_timing in s=2.01]").
std::map<std::string, double> NamedFields(const std::string& full_line) {
  std::map<std::string, double> out;
  const std::string line = full_line.substr(0, support::kRegexWindow);
  // name, separator, number, an optional unit ("1.234s", "12.5GB"); the first occurrence wins.
  static const std::regex kField(
      R"(([A-Za-z_][A-Za-z0-9_/ ]*?)\s*(=|: )\s*([-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|nan|inf))(ms|s|GiB|GB)?(?![A-Za-z0-9_.]))");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), kField); it != std::sregex_iterator(); ++it) {
    std::string name = support::Trim((*it)[1].str());
    if (name.empty()) continue;
    auto v = Number((*it)[3].str());
    if (!v) continue;
    if ((*it)[4].str() == "ms") *v /= 1000.0;  // times are kept in seconds
    out.emplace(name, *v);
  }
  return out;
}

std::optional<double> Field(const std::map<std::string, double>& f, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (auto it = f.find(n); it != f.end()) return it->second;
  }
  return std::nullopt;
}

// NeMo 2.x progress lines (Lightning's bar and NeMo's progress printer): global_step with the
// reduced train loss; the step time is "train_step_timing in s" when printed.
bool ParseNemoProgress(const std::string& line, IterationSample* s) {
  if (line.find("global_step") == std::string::npos) return false;
  auto f = NamedFields(line);
  auto step = Field(f, {"global_step"});
  auto loss = Field(f, {"reduced_train_loss", "train_loss", "loss"});
  auto timing = Field(f, {"train_step_timing in s", "train_step_timing"});
  if (!step || (!loss && !timing)) return false;
  s->iteration = static_cast<int64_t>(*step);
  if (loss && *loss == *loss) s->loss = *loss;
  if (timing) s->step_time_ms = *timing * 1000.0;
  if (auto v = Field(f, {"lr"})) s->extra["lr"] = *v;
  if (auto v = Field(f, {"tps"})) s->extra["tps"] = *v;
  if (auto v = Field(f, {"grad_norm"})) s->grad_norm = *v;
  if (auto v = Field(f, {"consumed_samples"})) s->extra["consumed_samples"] = *v;
  if (auto v = Field(f, {"global_batch_size"})) s->extra["global_batch_size"] = *v;
  if (auto v = Field(f, {"epoch"})) s->extra["epoch"] = *v;
  s->extra["format"] = 2;
  return true;
}

// Recipes that log "key=value" pairs: the speculative-decoding recipes ("epoch=0 step=3160
// loss=2.4690 acc=0.3527 lr=4.78e-06 grad_norm=0.15", "… train_loss=8.284101 …"), the diffusion
// recipe ("[TRAIN] step=5 epoch=0 loss=0.12 … step_time=1.234s …"). A step number and a training
// loss are both required, so "decode_eval: step=… accept_length=…" and val_loss lines are not
// steps. The step time comes from "step_time"/"iter_time" when printed, else from the timestamps.
bool ParseKeyValueLine(const std::string& line, IterationSample* s) {
  if (line.find("step=") == std::string::npos) return false;
  auto f = NamedFields(line);
  auto step = Field(f, {"step", "global_step", "train_step"});
  auto loss = Field(f, {"loss", "train_loss", "train/loss"});
  if (!step || !loss) return false;
  s->iteration = static_cast<int64_t>(*step);
  if (*loss == *loss) s->loss = *loss;
  if (auto v = Field(f, {"grad_norm", "train/grad_norm"})) s->grad_norm = *v;
  if (auto v = Field(f, {"lr", "learning_rate"})) s->extra["lr"] = *v;
  if (auto v = Field(f, {"epoch"})) s->extra["epoch"] = *v;
  if (auto v = Field(f, {"tps", "tokens_per_sec", "tokens_per_second"})) s->extra["tps"] = *v;
  if (auto v = Field(f, {"tps_per_gpu"})) s->extra["tps_per_gpu"] = *v;
  if (auto v = Field(f, {"mem", "mem_gib"})) s->extra["mem_gib"] = *v;
  if (auto v = Field(f, {"num_label_tokens"})) s->extra["num_label_tokens"] = *v;
  if (auto v = Field(f, {"step_time", "iter_time", "time_per_step"})) s->step_time_ms = *v * 1000.0;
  s->extra["format"] = 3;
  return true;
}

bool MarksContamination(const std::string& line) {
  return line.find("[val]") != std::string::npos ||
         line.find("Saving checkpoint") != std::string::npos ||
         line.find("validation loss") != std::string::npos;
}

bool HasOwnTime(const IterationSample& s) {
  return s.step_time_ms > 0 || s.extra.count("tps") || s.extra.count("tps_per_gpu");
}

// Step times from the lines' timestamps: the time since the previous record over the steps
// between them. A record that prints none takes it as its step time; one with a throughput figure
// of its own keeps it aside ("timestamp_step_s") for triage, which judges progress by time.
void TimesFromTimestamps(const std::vector<double>& stamps, LogParse* parse) {
  for (size_t i = 1; i < parse->iterations.size(); ++i) {
    IterationSample& s = parse->iterations[i];
    const IterationSample& prev = parse->iterations[i - 1];
    if (stamps[i] < 0 || stamps[i - 1] < 0 || s.iteration <= prev.iteration) continue;
    double seconds = stamps[i] - stamps[i - 1];
    if (seconds <= 0) continue;
    seconds /= static_cast<double>(s.iteration - prev.iteration);
    if (HasOwnTime(s)) {
      s.extra["timestamp_step_s"] = seconds;
      continue;
    }
    s.step_time_ms = seconds * 1000.0;
    s.extra["time_from_timestamps"] = 1;
  }
}

}  // namespace

LogParse ParseAutoModelLog(std::string_view log) { return ParseAutoModelLines(support::SplitLogLines(log)); }

LogParse ParseAutoModelLines(const std::vector<support::LogLine>& lines) {
  LogParse parse;
  bool contaminated = false;
  std::set<int64_t> seen;
  std::vector<double> stamps;  // each record's timestamp, -1 when its line has none
  for (const auto& line : lines) {
    const std::string& text = line.text;
    IterationSample s;
    if (ParseStepLine(text, &s) || ParseJsonlRecord(text, &s) || ParseNemoProgress(text, &s) ||
        ParseKeyValueLine(text, &s)) {
      // Several ranks (or a progress bar's redraws within one optimizer step) print the same
      // step: the first is kept.
      if (!seen.insert(s.iteration).second) continue;
      s.line = line.number;
      // AutoModel's own step line prints the step's tokens and tokens per second, not its time:
      // the one follows from the other two (triage judges silence and unexplained run time by it).
      auto tps = s.extra.find("tps");
      auto tokens = s.extra.find("num_label_tokens");
      if (s.step_time_ms <= 0 && tps != s.extra.end() && tokens != s.extra.end() &&
          tps->second > 0 && tokens->second > 0) {
        s.step_time_ms = tokens->second / tps->second * 1000.0;
      }
      if (contaminated) s.extra["contaminated"] = 1;
      contaminated = false;
      if (auto mem = s.extra.find("mem_gib"); mem != s.extra.end()) {
        parse.memory.push_back(MemorySample{0, s.iteration, 0, mem->second * 1024, 0, 0});
      }
      stamps.push_back(line.timestamp_s.value_or(-1));
      parse.iterations.push_back(std::move(s));
      parse.training_started = true;
    } else if (MarksContamination(text)) {
      contaminated = true;
    }
  }
  TimesFromTimestamps(stamps, &parse);
  return parse;
}

Result<Measurement> MeasureAutoModel(const LogParse& parse, long long dp_cp, long long world,
                                     double tokens_per_step) {
  Measurement m;
  m.iterations_logged = static_cast<int>(parse.iterations.size());
  std::vector<double> per_gpu, step_times;
  for (size_t i = 0; i < parse.iterations.size(); ++i) {
    const auto& s = parse.iterations[i];
    if (s.loss && m.first_losses.size() < 10) m.first_losses.push_back(*s.loss);
    if (i == 0 || s.extra.count("contaminated")) continue;  // warm-up, or includes val/ckpt time
    // The job's total: printed, or a printed per-replica figure times the replicas (which needs
    // the mesh), or the tokens of a step over its time.
    const auto printed = s.extra.find("tps_per_gpu");
    const bool has_printed = printed != s.extra.end();
    double total = s.extra.count("tps") ? s.extra.at("tps") : 0;
    if (total <= 0 && has_printed && world > 0) {
      total = printed->second * static_cast<double>(dp_cp);
    }
    if (total <= 0 && s.step_time_ms > 0 && tokens_per_step > 0) {
      total = tokens_per_step / (s.step_time_ms / 1000.0);  // a step time without a tps figure
    }
    double tokens =
        s.extra.count("num_label_tokens") ? s.extra.at("num_label_tokens") : tokens_per_step;
    // Per GPU: the total over the GPUs; with the mesh unknown, the per-replica figure as printed.
    double rate = world > 0     ? total / static_cast<double>(world)
                  : has_printed ? printed->second
                                : 0;
    if (rate <= 0) continue;
    per_gpu.push_back(rate);
    if (s.step_time_ms > 0) {
      step_times.push_back(s.step_time_ms / 1000.0);
    } else if (tokens > 0 && total > 0) {
      step_times.push_back(tokens / total);
    }
  }
  if (per_gpu.empty() && world <= 0) {
    return Status::FailedPrecondition(
        "the log's step lines print no per-GPU throughput (\"tps T(T/gpu)\"), and without the "
        "recipe its mesh is unknown: pass the recipe (attune log parse --recipe R) for "
        "tokens/s/GPU");
  }
  if (per_gpu.empty()) {
    return Status::FailedPrecondition("the log has " + std::to_string(m.iterations_logged) +
                                      " step lines but none left after dropping the first step and "
                                      "steps after validation/checkpoints; run more steps");
  }
  m.iterations_used = static_cast<int>(per_gpu.size());
  m.tokens_per_s_per_gpu = Median(per_gpu);
  m.step_time_s = Median(step_times);
  m.cv = CoefficientOfVariation(per_gpu);
  for (const auto& mem : parse.memory) {
    double gib = mem.max_allocated_mb / 1024;
    if (!m.peak_memory_gib || gib > *m.peak_memory_gib) m.peak_memory_gib = gib;
  }
  return m;
}

Failure TriageAutoModel(std::string_view log, const JobEnd& end, const Knowledge& knowledge) {
  auto lines = support::SplitLogLines(log);
  LogParse parse = ParseAutoModelLines(lines);
  support::TriageInput input;
  // A record without a time of its own (the 2026 form prints tokens per second per GPU, whose
  // step time needs the world size) is timed by its timestamp (TimesFromTimestamps), so that a
  // job that ran to its time limit while stepping is not taken for a hang.
  for (const auto& s : parse.iterations) {
    auto stamped = s.extra.find("timestamp_step_s");
    double seconds = s.step_time_ms > 0 ? s.step_time_ms / 1000.0
                     : stamped != s.extra.end() ? stamped->second
                                                : 0.0;
    input.progress.push_back({s.line, s.iteration, 0, seconds, ""});
  }
  // Training starts at the first step line's record.
  auto first = parse.iterations.empty()
                   ? lines.end()
                   : std::find_if(lines.begin(), lines.end(), [&](const support::LogLine& l) {
                       return l.number == parse.iterations.front().line;
                     });
  input.training_start = static_cast<size_t>(first - lines.begin());
  // AutoModel prints no "training finished" marker; a clean exit is judged by its exit code and
  // the signatures (an exit code alone is not enough: `cmd | tee log` exits 0 when cmd fails).
  return support::TriageLines(knowledge.triage, lines, input, end);
}

}  // namespace attune::automodel
