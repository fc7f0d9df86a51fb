// `attune profile analyze TRACE... [--json]`: what PyTorch profiler traces say about a run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "cli/args.h"

#include "profile/breakdown_chart.h"
#include "profile/profile.h"

namespace attune::cli {

namespace {

namespace fs = std::filesystem;

bool LooksLikeTrace(const fs::path& p) {
  std::string name = p.filename().string();
  auto ends = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".json") || ends(".json.gz");
}

// Files stay as given; a directory stands for the traces directly inside it, in name order
// (tensorboard_trace_handler writes one file per rank and cycle into one directory).
Result<std::vector<std::string>> ExpandTraces(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) {
      files.push_back(arg);
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& entry : fs::directory_iterator(arg, ec)) {
      if (entry.is_regular_file() && LooksLikeTrace(entry.path())) inside.push_back(entry.path().string());
    }
    if (ec) return Status::IoError(arg + ": cannot list the directory: " + ec.message());
    if (inside.empty()) {
      return Status::NotFound(arg + ": no *.json or *.json.gz trace files in this directory");
    }
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError(path + ": cannot write (check the directory and free space)");
  return Status::Ok();
}

}  // namespace

int RunProfileAnalyze(const std::vector<std::string>& args, Env& env) {
  ArgParser p("profile analyze TRACE... [--json] [--top N] [--pipeline-parallel N] [--svg F] [--markdown F]",
              "Reads PyTorch profiler (Kineto) chrome traces, one per rank (plain or .gz; a "
              "directory stands for the traces in it), and reports per rank: GPU window, busy, "
              "idle, compute, communication, memory and exposed communication, per-step figures, "
              "top kernels, NCCL collectives by type and size, kernel-launch overhead and "
              "pipeline wait; across ranks: clock alignment and the straggler; then the "
              "diagnosis. Definitions: docs/profile.md.");
  p.Options()("json", "machine-readable report")(
      "top", po::value<int>()->default_value(10), "how many kernels to list per rank")(
      "pipeline-parallel", po::value<int>(),
      "the run's pipeline-parallel size: tells whether SendRecv kernels are pipeline transfers")(
      "svg", po::value<std::string>(), "also write the per-rank breakdown as a stacked-bar SVG")(
      "markdown", po::value<std::string>(), "also write the per-rank breakdown as a Markdown table");
  p.Positional("traces", -1);
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  if (!p.Has("traces")) {
    return ReportError(env, "profile analyze",
                       Status::InvalidArgument("give at least one trace file (see --help)"), json);
  }
  int top = p.vm()["top"].as<int>();
  if (top < 0) {
    return ReportError(env, "profile analyze",
                       Status::InvalidArgument("--top must be 0 or more, got " + std::to_string(top)),
                       json);
  }
  auto files = ExpandTraces(p.GetList("traces"));
  if (!files.ok()) return ReportError(env, "profile analyze", files.status(), json);
  profile::AnalyzeOptions options;
  options.top_kernels = static_cast<size_t>(top);
  if (p.Has("pipeline-parallel")) {
    int pp = p.vm()["pipeline-parallel"].as<int>();
    if (pp < 1) {
      return ReportError(env, "profile analyze",
                         Status::InvalidArgument("--pipeline-parallel must be 1 or more, got " +
                                                 std::to_string(pp)),
                         json);
    }
    options.pipeline_parallel = pp;
  }
  auto report = profile::AnalyzeTraces(*files, options);
  if (!report.ok()) return ReportError(env, "profile analyze", report.status(), json);
  std::vector<profile::RankBar> bars = profile::BarsOf(*report);
  for (const auto& [option, text] :
       {std::pair{"svg", profile::RenderBreakdownSvg(bars)},
        std::pair{"markdown", profile::RenderBreakdownMarkdown(bars)}}) {
    if (!p.Has(option)) continue;
    Status written = WriteText(p.Get(option), text);
    if (!written.ok()) return ReportError(env, "profile analyze", written, json);
  }
  if (json) {
    *env.out << profile::ReportToJson(*report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    profile::PrintReport(*report, *env.out);
  }
  return kExitOk;
}

}  // namespace attune::cli
