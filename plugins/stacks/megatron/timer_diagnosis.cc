// What Megatron's timers say: exposed gradient communication and pipeline waits (timers.h).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

#include "log_parser.h"
#include "timers.h"

namespace attune::megatron {
namespace {

constexpr double kMinShare = 0.05;

// Gradient/parameter communication that the step waits for after the backward pass.
const std::set<std::string>& GradientCommTimers() {
  static const std::set<std::string> kNames = {
      "all-grads-sync", "params-all-gather", "embedding-grads-all-reduce",
      "layernorm-grads-all-reduce", "backward-params-all-reduce",
      "backward-embedding-all-reduce", "backward-layernorm-all-reduce"};
  return kNames;
}

// Pipeline point-to-point timers (schedules.py / p2p_communication.py names).
bool IsPipelineTimer(const std::string& name) {
  static const std::set<std::string> kNames = {
      "forward-recv", "forward-send", "backward-recv", "backward-send",
      "forward-send-forward-recv", "forward-send-backward-recv", "backward-send-forward-recv",
      "backward-send-backward-recv", "forward-backward-send-forward-backward-recv"};
  return kNames.count(name) > 0;
}

std::string Ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f%%", 100 * share);
  return buf;
}

std::string Parts(const std::map<std::string, double>& parts) {
  std::vector<std::pair<std::string, double>> sorted(parts.begin(), parts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, ms] : sorted) out += (out.empty() ? "" : ", ") + name + " " + Ms(ms);
  return out;
}

std::vector<TimerBreakdown> Breakdowns(const LogParse& parse) {
  std::vector<TimerBreakdown> out;
  for (const IterationSample& s : parse.iterations) {
    if (auto b = BreakdownOf(s)) out.push_back(std::move(*b));
  }
  // The first record with timers includes start-up (compilation, NCCL set-up): drop it when
  // enough others remain.
  if (out.size() >= 3) out.erase(out.begin());
  return out;
}

std::string SpreadNote(const TimerBreakdown& b) {
  if (!b.forward_backward_spread || *b.forward_backward_spread < 1.1) return "";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "; forward-backward differs %.2fx across ranks", *b.forward_backward_spread);
  return buf;
}

}  // namespace

std::optional<TimerBreakdown> BreakdownOf(const IterationSample& sample) {
  TimerBreakdown b;
  b.iteration = sample.iteration;
  b.step_ms = sample.step_time_ms;
  bool any = false;
  std::optional<double> fb_min, fb_max;
  for (const auto& [key, value] : sample.extra) {
    if (key.rfind(kTimerMinPrefix, 0) == 0) {
      if (key.substr(std::string(kTimerMinPrefix).size()) == "forward-backward") fb_min = value;
      continue;
    }
    if (key.rfind(kTimerMaxPrefix, 0) != 0) continue;
    any = true;
    std::string name = key.substr(std::string(kTimerMaxPrefix).size());
    if (name == "forward-backward") fb_max = value;
    if (GradientCommTimers().count(name)) {
      b.gradient_comm[name] = value;
      b.gradient_comm_ms += value;
    } else if (IsPipelineTimer(name)) {
      b.pipeline_wait[name] = value;
      b.pipeline_wait_ms += value;
    }
  }
  if (!any || b.step_ms <= 0) return std::nullopt;
  if (fb_min && fb_max && *fb_min > 0) b.forward_backward_spread = *fb_max / *fb_min;
  return b;
}

TimerDiagnosis DiagnoseTimers(const LogParse& parse) {
  TimerDiagnosis out;
  std::vector<TimerBreakdown> all = Breakdowns(parse);
  if (all.empty()) return out;
  out.have_timers = true;
  std::vector<double> comm, pipe;
  for (const TimerBreakdown& b : all) {
    comm.push_back(std::min(1.0, b.gradient_comm_ms / b.step_ms));
    pipe.push_back(std::min(1.0, b.pipeline_wait_ms / b.step_ms));
    out.have_pipeline_timers = out.have_pipeline_timers || !b.pipeline_wait.empty();
  }
  const TimerBreakdown& last = all.back();
  std::string per = " ms per iteration (the slowest rank where the log has several; median "
                    "share over " +
                    std::to_string(all.size()) + " logged intervals, last at iteration " +
                    std::to_string(last.iteration) + ")";
  double comm_share = Median(comm);
  if (comm_share >= kMinShare) {
    out.diagnoses.push_back(
        {"communication", comm_share,
         "exposed gradient communication timers take " + Percent(comm_share) + " of the step: " +
             Parts(last.gradient_comm) + " of " + Ms(last.step_ms) + per});
  }
  double pipe_share = Median(pipe);
  if (pipe_share >= kMinShare) {
    out.diagnoses.push_back(
        {"pipeline_bubble", pipe_share,
         "pipeline send/recv waits take " + Percent(pipe_share) + " of the step: " +
             Parts(last.pipeline_wait) + " of " + Ms(last.step_ms) + per + SpreadNote(last)});
  }
  return out;
}

namespace {

nlohmann::json BreakdownJson(const TimerBreakdown& b) {
  return {{"iteration", b.iteration},
          {"step_ms", b.step_ms},
          {"gradient_comm_ms", b.gradient_comm_ms},
          {"gradient_comm", b.gradient_comm},
          {"pipeline_wait_ms", b.pipeline_wait_ms},
          {"pipeline_wait", b.pipeline_wait},
          {"forward_backward_spread",
           b.forward_backward_spread ? nlohmann::json(*b.forward_backward_spread) : nlohmann::json()}};
}

}  // namespace

int RunTimersCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string path;
  bool json = false;
  for (const std::string& a : args) {
    if (a == "--json") {
      json = true;
    } else if (a == "--help" || a == "-h") {
      out << "usage: attune megatron timers LOG [--json]\n"
             "Reads Megatron's timer blocks (--timing-log-level 1 or 2; any --timing-log-option) "
             "from a training log: per logged iteration, the exposed gradient communication and "
             "the pipeline send/recv waits, and the diagnosis they support.\n";
      return 0;
    } else if (path.empty() && (a.empty() || a[0] != '-')) {
      path = a;
    } else {
      err << "usage: attune megatron timers LOG [--json] (unexpected argument '" << a << "')\n";
      return 2;
    }
  }
  if (path.empty()) {
    err << "usage: attune megatron timers LOG [--json] (LOG is required)\n";
    return 2;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "attune megatron timers: cannot read '" << path << "' (check the path)\n";
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  LogParse parse = ParseMegatronLog(text.str());
  std::vector<TimerBlock> blocks = ParseTimerBlocks(text.str());
  AttachTimerBlocks(blocks, &parse);
  TimerDiagnosis diagnosis = DiagnoseTimers(parse);
  nlohmann::json iterations = nlohmann::json::array();
  for (const IterationSample& s : parse.iterations) {
    if (auto b = BreakdownOf(s)) iterations.push_back(BreakdownJson(*b));
  }
  if (json) {
    nlohmann::json diagnoses = nlohmann::json::array();
    for (const Diagnosis& d : diagnosis.diagnoses) diagnoses.push_back(DiagnosisToJson(d));
    out << nlohmann::json{{"format", blocks.empty() ? "" : TimerFormatName(blocks.back().format)},
                          {"iterations", iterations},
                          {"diagnoses", diagnoses}}.dump(2)
        << "\n";
    return 0;
  }
  if (iterations.empty()) {
    out << "no timers in " << path << " (Megatron prints them with --timing-log-level 1 or 2)\n";
    return 0;
  }
  out << iterations.size() << " logged iterations with timers";
  if (!blocks.empty()) out << " (" << TimerFormatName(blocks.back().format) << " format)";
  out << "\n";
  out << "iteration   step ms   gradient comm ms   pipeline wait ms\n";
  for (const auto& it : iterations) {
    char line[128];
    std::snprintf(line, sizeof(line), "%9lld %9.1f %18.1f %18.1f\n",
                  static_cast<long long>(it["iteration"].get<int64_t>()), it["step_ms"].get<double>(),
                  it["gradient_comm_ms"].get<double>(), it["pipeline_wait_ms"].get<double>());
    out << line;
  }
  out << "diagnosis:\n";
  if (diagnosis.diagnoses.empty()) out << "  nothing stands out in the timers\n";
  for (const Diagnosis& d : diagnosis.diagnoses) out << "  " << d.kind << ": " << d.evidence << "\n";
  return 0;
}

}  // namespace attune::megatron
