#include "log_parser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "attune/support/log_lines.h"

namespace attune::slime {
namespace {

class DictReader {
 public:
  explicit DictReader(std::string_view s) : s_(s) {}

  Result<std::map<std::string, double>> Read() {
    std::map<std::string, double> out;
    Skip();
    if (!Eat('{')) return Error("expected '{'");
    Skip();
    if (Eat('}')) return out;
    while (true) {
      Skip();
      auto key = String();
      if (!key) return Error("expected a quoted key");
      Skip();
      if (!Eat(':')) return Error("expected ':' after key '" + *key + "'");
      Skip();
      auto value = Value();
      if (!value.ok()) return value.status();
      if (*value) out[*key] = **value;
      Skip();
      if (Eat('}')) return out;
      if (!Eat(',')) return Error("expected ',' or '}'");
      Skip();
      if (Eat('}')) return out;  // trailing comma
    }
  }

 private:
  Status Error(const std::string& what) const {
    return Status::InvalidArgument("python dict at offset " + std::to_string(pos_) + ": " + what);
  }
  void Skip() { while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_; }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  std::optional<std::string> String() {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return std::nullopt;
    char quote = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) return std::nullopt;
    ++pos_;
    return out;
  }
  // Skips a bracketed value ([..], (..), {..}) with nesting and quotes.
  bool SkipNested() {
    int depth = 0;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\'' || c == '"') { if (!String()) return false; continue; }
      if (c == '[' || c == '(' || c == '{') ++depth;
      if (c == ']' || c == ')' || c == '}') --depth;
      ++pos_;
      if (depth == 0) return true;
    }
    return false;
  }
  Result<std::optional<double>> Value() {
    if (pos_ >= s_.size()) return Error("expected a value");
    char c = s_[pos_];
    if (c == '\'' || c == '"') {
      if (!String()) return Error("unterminated string");
      return std::optional<double>();
    }
    if (c == '[' || c == '(' || c == '{') {
      if (!SkipNested()) return Error("unterminated bracket");
      return std::optional<double>();
    }
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                std::string_view("._+-").find(s_[pos_]) != std::string_view::npos)) {
      ++pos_;
    }
    std::string word(s_.substr(start, pos_ - start));
    if (word.empty()) return Error("expected a value");
    if (pos_ < s_.size() && s_[pos_] == '(') {  // np.float64(2.5), tensor(3.0)
      ++pos_;
      Skip();
      auto inner = Value();
      if (!inner.ok()) return inner;
      Skip();
      while (pos_ < s_.size() && s_[pos_] != ')') {  // tensor(1.0, device='cuda:0')
        if (s_[pos_] == '\'' || s_[pos_] == '"') { if (!String()) return Error("unterminated string"); continue; }
        ++pos_;
      }
      if (!Eat(')')) return Error("unterminated call in value");
      return inner;
    }
    if (word == "True") return std::optional<double>(1.0);
    if (word == "False") return std::optional<double>(0.0);
    if (word == "None") return std::optional<double>();
    if (word == "nan" || word == "-nan") return std::optional<double>(std::numeric_limits<double>::quiet_NaN());
    if (word == "inf") return std::optional<double>(std::numeric_limits<double>::infinity());
    if (word == "-inf") return std::optional<double>(-std::numeric_limits<double>::infinity());
    char* end = nullptr;
    double v = std::strtod(word.c_str(), &end);
    if (end == word.c_str() || *end != '\0') return Error("not a number: '" + word + "'");
    return std::optional<double>(v);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

// "perf 3: {...}", "step 12: {...}" anywhere in the cleaned line (after "model.py:649 - "), the
// leftmost one: its kind, id and the dict up to the line's last '}'. Read without std::regex: a
// dict of every metric can be tens of kilobytes (support/log_lines.h, kRegexWindow).
struct RecordAt {
  std::string kind, id, dict;
};

std::optional<RecordAt> FindRecord(const std::string& text) {
  std::optional<RecordAt> best;
  size_t best_at = std::string::npos;
  for (const char* kind : {"perf ", "step "}) {
    for (size_t at = text.find(kind); at != std::string::npos && at < best_at; at = text.find(kind, at + 1)) {
      if (at > 0 && !std::isspace(static_cast<unsigned char>(text[at - 1])) && text[at - 1] != '-') continue;
      size_t i = at + 5, digits = i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - digits < 18) ++i;
      if (i == digits || text.compare(i, 3, ": {") != 0) continue;
      size_t close = text.rfind('}');
      if (close == std::string::npos || close < i + 2) continue;
      best = RecordAt{std::string(kind, 4), text.substr(digits, i - digits), text.substr(i + 2, close - i - 1)};
      best_at = at;
      break;
    }
  }
  return best;
}

bool IsTrainerPerf(const std::map<std::string, double>& d) {
  return d.count("perf/step_time") || d.count("perf/actor_train_time") || d.count("perf/train_time");
}

class Parser {
 public:
  LogParse Run(const std::vector<support::LogLine>& lines) {
    for (const auto& line : lines) Line(line);
    return std::move(out_);
  }

 private:
  void Line(const support::LogLine& line) {
    if (line.text.find(": {") == std::string::npos) return;
    auto record = FindRecord(line.text);  // the normaliser removed Ray's "[repeated Nx …]"
    if (!record) return;
    auto dict = ParsePythonDict(record->dict);
    if (!dict.ok()) {
      out_.warnings.push_back("line " + std::to_string(line.number) + ": " + record->kind + " record: " +
                              dict.status().message());
      return;
    }
    int64_t id = std::stoll(record->id);
    if (record->kind == "step") Step(id, *dict, line.number);
    else Perf(id, *dict, line.number);
  }

  void Step(int64_t id, const std::map<std::string, double>& d, int number) {
    if (!steps_seen_.insert(id).second) return;  // Ray repeats, duplicated ranks
    IterationSample s;
    s.iteration = id;
    s.line = number;
    s.extra["slime/train_step"] = 1;
    for (const auto& [k, v] : d) {
      if (k == "train/loss") { if (std::isfinite(v)) s.loss = v; else ++s.nan_iterations; }
      else if (k == "train/grad_norm") { if (std::isfinite(v)) s.grad_norm = v; }
      else if (k == "train/global_batch_size") s.global_batch_size = static_cast<int64_t>(v);
      else if (std::isfinite(v)) s.extra[k] = v;
    }
    out_.training_started = true;
    out_.iterations.push_back(std::move(s));
  }

  void Perf(int64_t id, const std::map<std::string, double>& d, int number) {
    auto it = rollout_index_.find(id);
    if (it == rollout_index_.end()) {
      IterationSample s;
      s.iteration = id;
      it = rollout_index_.emplace(id, out_.iterations.size()).first;
      out_.iterations.push_back(std::move(s));
    }
    IterationSample& s = out_.iterations[it->second];
    bool trainer = IsTrainerPerf(d);
    if (trainer && s.extra.count("slime/trainer_perf")) return;  // repeated
    for (const auto& [k, v] : d) {
      if (std::isfinite(v)) s.extra[k] = v;
    }
    if (trainer) {
      s.extra["slime/trainer_perf"] = 1;
      out_.training_started = true;
    }
    if (auto t = d.find("perf/actor_train_tflops"); t != d.end() && std::isfinite(t->second)) {
      s.tflops_per_gpu = t->second;
    }
    s.step_time_ms = RolloutStepSeconds(s.extra).value_or(0) * 1000.0;
    s.line = std::max(s.line, number);
  }

  LogParse out_;
  std::map<int64_t, size_t> rollout_index_;
  std::set<int64_t> steps_seen_;
};

double Get(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0.0 : it->second;
}

bool IsRollout(const IterationSample& s) { return !s.extra.count("slime/train_step"); }

}  // namespace

Result<std::map<std::string, double>> ParsePythonDict(std::string_view text) {
  return DictReader(text).Read();
}

LogParse ParseSlimeLog(std::string_view log) { return Parser().Run(support::SplitLogLines(log)); }

LogParse ParseSlimeLines(const std::vector<support::LogLine>& lines) { return Parser().Run(lines); }

std::optional<double> RolloutStepSeconds(const std::map<std::string, double>& perf) {
  double update = Get(perf, "perf/update_weights_time");
  if (perf.count("perf/step_time")) return Get(perf, "perf/step_time") + update;
  // Without step_time: generation, then the trainer's `train` timer, which holds the
  // log-probability passes (ref_log_probs, log_probs) as well as actor_train.
  if (perf.count("perf/rollout_time") && perf.count("perf/train_time")) {
    return Get(perf, "perf/rollout_time") + Get(perf, "perf/train_time") + update;
  }
  if (perf.count("perf/rollout_time") && perf.count("perf/actor_train_time")) {
    return Get(perf, "perf/rollout_time") + Get(perf, "perf/actor_train_time") +
           Get(perf, "perf/log_probs_time") + Get(perf, "perf/ref_log_probs_time") + update;
  }
  return std::nullopt;
}

int TotalGpus(const Recipe& recipe) {
  int actors = recipe.topology.WorldSize();
  int rollout = 0;
  if (auto r = GetValue(recipe, "--rollout-num-gpus")) {
    try { rollout = std::stoi(*r); } catch (const std::exception&) { rollout = 0; }
  }
  if (GetValue(recipe, "--colocate")) return std::max(actors, rollout);
  return actors + std::max(rollout, 0);
}

Result<Measurement> MeasureSlime(const LogParse& parse, const Recipe& recipe) {
  Measurement m;
  std::vector<const IterationSample*> rollouts;
  for (const auto& s : parse.iterations) {
    if (!IsRollout(s)) {
      if (s.loss && m.first_losses.size() < 8) m.first_losses.push_back(*s.loss);
      continue;
    }
    if (s.step_time_ms > 0 && s.extra.count("perf/actor_train_tok_per_s")) rollouts.push_back(&s);
  }
  m.iterations_logged = static_cast<int>(rollouts.size());
  if (rollouts.empty()) {
    return Status::InvalidArgument(
        "slime: no complete rollout record in the log (a trainer 'perf N: {...}' line with "
        "perf/step_time or perf/rollout_time + perf/actor_train_time, and perf/actor_train_tok_per_s); "
        "let the job run at least one rollout past the first");
  }
  size_t skip = rollouts.size() >= 3 ? 1 : 0;
  int gpus = std::max(1, TotalGpus(recipe));
  std::vector<double> times, tokens, tflops;
  for (size_t i = skip; i < rollouts.size(); ++i) {
    const auto& e = rollouts[i]->extra;
    double seconds = rollouts[i]->step_time_ms / 1000.0;
    double trained = Get(e, "perf/actor_train_tok_per_s") * Get(e, "perf/actor_train_time");
    times.push_back(seconds);
    tokens.push_back(trained / seconds / gpus);
    if (rollouts[i]->tflops_per_gpu) tflops.push_back(*rollouts[i]->tflops_per_gpu);
  }
  m.iterations_used = static_cast<int>(times.size());
  m.step_time_s = Median(times);
  m.tokens_per_s_per_gpu = Median(tokens);
  m.cv = CoefficientOfVariation(times);
  if (!tflops.empty()) m.tflops_per_gpu = Median(tflops);
  return m;
}

}  // namespace attune::slime
