#include "log_parser.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>

namespace attune::automodel {
namespace {

// Removes ANSI colour codes and a trailing CR.
std::string Clean(std::string line) {
  static const std::regex kAnsi("\x1b\\[[0-9;]*m");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find('\x1b') != std::string::npos) line = std::regex_replace(line, kAnsi, "");
  return line;
}

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
  static const std::regex kStep(R"((?:^|[\s:|])step\s+(\d+)\s*\|\s*epoch\s+(\d+)\s*\|(.*)$)");
  std::smatch m;
  if (line.find("[val]") != std::string::npos || !std::regex_search(line, m, kStep)) return false;
  s->iteration = std::stoll(m[1].str());
  s->extra["epoch"] = std::stod(m[2].str());
  std::string rest = m[3].str();
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

bool MarksContamination(const std::string& line) {
  return line.find("[val]") != std::string::npos ||
         line.find("Saving checkpoint") != std::string::npos ||
         line.find("validation loss") != std::string::npos;
}

}  // namespace

LogParse ParseAutoModelLog(std::string_view log) {
  LogParse parse;
  std::istringstream in{std::string(log)};
  std::string raw;
  int line_no = 0;
  bool contaminated = false;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string line = Clean(raw);
    IterationSample s;
    if (ParseStepLine(line, &s) || ParseJsonlRecord(line, &s)) {
      s.line = line_no;
      if (contaminated) s.extra["contaminated"] = 1;
      contaminated = false;
      if (auto mem = s.extra.find("mem_gib"); mem != s.extra.end()) {
        parse.memory.push_back(MemorySample{0, s.iteration, 0, mem->second * 1024, 0, 0});
      }
      parse.iterations.push_back(std::move(s));
      parse.training_started = true;
    } else if (MarksContamination(line)) {
      contaminated = true;
    }
  }
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
    double total = s.extra.count("tps") ? s.extra.at("tps")
                   : s.extra.count("tps_per_gpu") ? s.extra.at("tps_per_gpu") * dp_cp : 0;
    if (total <= 0) continue;
    per_gpu.push_back(total / std::max(1LL, world));
    double tokens = s.extra.count("num_label_tokens") ? s.extra.at("num_label_tokens") : tokens_per_step;
    if (tokens > 0) step_times.push_back(tokens / total);
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

namespace {

std::optional<Failure> MatchSignatures(std::string_view log, const Knowledge& knowledge) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(log)};
  for (std::string raw; std::getline(in, raw);) lines.push_back(Clean(raw));
  for (const auto& sig : knowledge.triage) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (std::regex_search(lines[i], sig.regex)) {
        return Failure{sig.kind, sig.id, lines[i], static_cast<int>(i + 1), sig.hint,
                       sig.infrastructure};
      }
    }
  }
  return std::nullopt;
}

std::string LastLine(std::string_view log, int* line_no) {
  std::istringstream in{std::string(log)};
  std::string last;
  int n = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++n;
    std::string line = Clean(raw);
    if (line.find_first_not_of(" \t") != std::string::npos) {
      last = line;
      *line_no = n;
    }
  }
  return last;
}

}  // namespace

Failure TriageAutoModel(std::string_view log, const JobEnd& end, const Knowledge& knowledge) {
  if (auto matched = MatchSignatures(log, knowledge)) return *matched;
  Failure f;
  f.evidence = LastLine(log, &f.line);
  if (end.launcher_state == "cancelled") {
    f.kind = FailureKind::kCancelled;
    f.hint = "the job was cancelled";
  } else if (end.launcher_state == "node_failure" || end.launcher_state == "preempted") {
    f.kind = FailureKind::kNodeFailure;
    f.infrastructure = true;
    f.hint = "the infrastructure failed; retrying the same recipe may pass";
  } else if (end.launcher_state == "timed_out") {
    bool progressed = ParseAutoModelLog(log).iterations.size() >= 2;
    f.kind = progressed ? FailureKind::kTimeLimit : FailureKind::kHang;
    f.hint = progressed ? "the job ran past its time limit; run fewer steps or raise the limit"
                        : "no step finished before the time limit: the job hung (check NCCL and data loading)";
  } else if (end.exit_code != 0) {
    f.kind = FailureKind::kUnknown;
    f.hint = "the job exited with code " + std::to_string(end.exit_code) +
             " and no known signature matched; read the log's last lines";
  }
  return f;
}

}  // namespace attune::automodel
