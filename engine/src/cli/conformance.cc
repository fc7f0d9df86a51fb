// Copyright attune authors.
#include "cli/conformance.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <ostream>

#include <nlohmann/json.hpp>

namespace attune::cli {

namespace {
constexpr char kFailTag[] = "FAIL: ";
constexpr char kSkipTag[] = "SKIP: ";
bool Strip(std::string* s, const char* tag) {
  const std::string t(tag);
  if (s->rfind(t, 0) != 0) return false;
  s->erase(0, t.size());
  return true;
}
}  // namespace

std::string Fail(const std::string& why) { return kFailTag + why; }
bool IsFail(const std::string& detail) { return detail.rfind(kFailTag, 0) == 0; }
std::string Skip(const std::string& why) { return kSkipTag + why; }

void ConformanceSuite::Run(const std::string& id, const std::function<std::string()>& body) {
  ClauseResult r{id, Verdict::kPass, ""};
  try {
    r.detail = body();
    if (Strip(&r.detail, kFailTag)) r.verdict = Verdict::kFail;
    else if (Strip(&r.detail, kSkipTag)) r.verdict = Verdict::kSkip;
  } catch (const std::exception& e) {
    r.verdict = Verdict::kFail;
    r.detail = std::string("the plugin threw: ") + e.what();
  }
  results_.push_back(std::move(r));
}

bool ConformanceSuite::Passed() const {
  for (const auto& r : results_) {
    if (r.verdict == Verdict::kFail) return false;
  }
  return true;
}

int ReportSuite(Env& env, const std::string& kind, const std::string& name, const ConformanceSuite& suite,
                bool json) {
  const bool all = suite.Passed();
  nlohmann::json clauses = nlohmann::json::array();
  for (const auto& r : suite.results()) {
    clauses.push_back({{"clause", r.id},
                       {"pass", r.verdict != Verdict::kFail},
                       {"skipped", r.verdict == Verdict::kSkip},
                       {"detail", r.detail}});
    if (!json) {
      const char* tag = r.verdict == Verdict::kFail ? "FAIL  " : r.verdict == Verdict::kSkip ? "skip  " : "ok    ";
      *env.out << tag << r.id << ": " << r.detail << "\n";
    }
  }
  if (json) {
    *env.out << nlohmann::json{{kind, name}, {"pass", all}, {"clauses", clauses}}.dump(
                    2, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
  } else {
    *env.out << kind << " " << name << (all ? " keeps the contract\n" : " breaks the contract (FAIL lines above)\n");
  }
  return all ? kExitOk : 1;
}

ClusterInfo ClusterForRecipe(const Recipe& r) {
  ClusterInfo c;
  c.devices_per_node = r.topology.gpus_per_node;
  c.max_nodes = r.topology.nodes;
  if (r.topology.gpu_type == "cpu") {
    c.device_type = "cpu";
    return c;
  }
  c.device_type = r.topology.gpu_type.empty() ? "H100" : r.topology.gpu_type;
  c.device_memory_gib = 80;
  c.peak_tflops = 989;
  c.compute_capability_major = 9;
  return c;
}

Result<nlohmann::json> ReadWithOption(const std::string& text, const std::string& block) {
  std::string body = text;
  if (!body.empty() && body[0] == '@') {
    ATTUNE_ASSIGN_OR_RETURN(body, ReadTextFile(body.substr(1)));
  }
  auto parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Status::InvalidArgument("--with: expected a JSON object (the workflow's " + block +
                                   ".with), or @FILE holding one; got '" + text.substr(0, 80) + "'");
  }
  return parsed;
}

Result<std::unique_ptr<CheckDir>> CheckDir::Make(const std::string& given, const std::string& kind) {
  if (given.empty()) {
    std::string pattern = "/tmp/attune-" + kind + "-check-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Status::IoError("cannot create a temporary folder in /tmp: " + std::string(std::strerror(errno)));
    }
    return std::unique_ptr<CheckDir>(new CheckDir(pattern, true));
  }
  std::string path = std::filesystem::absolute(given).string();
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Status::IoError("cannot create " + path + ": " + ec.message());
  return std::unique_ptr<CheckDir>(new CheckDir(path, false));
}

CheckDir::~CheckDir() {
  if (!temporary_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace attune::cli
