// A small stack plugin, "teststack", with one contract defect chosen by ATTUNE_TESTSTACK_DEFECT,
// for the conformance suite's own test: `attune stack check` must pass it with no defect and name
// the broken clause for each defect (tests/integration/conformance/conformance_test.py).
//
// The stack: recipe args are --a, --b (levers, run-control-free) and --lr (objective); the log's
// step lines are "step N time T".
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include "attune/plugin.h"
#include "attune/stack.h"

namespace {

using namespace attune;

std::string Defect() {
  const char* d = std::getenv("ATTUNE_TESTSTACK_DEFECT");
  return d ? d : "";
}

class TestStack : public Stack {
 public:
  TestStack() : defect_(Defect()) {
    if (defect_ != "no_levers") {
      levers_.push_back(Lever{"a", "lever a", {"--a"}, {}});
      levers_.push_back(Lever{"b", "lever b", {"--b"}, {}});
    }
  }
  std::string Name() const override { return "teststack"; }
  const std::vector<Lever>& Levers() const override { return levers_; }
  Result<Recipe> ImportLaunch(std::string_view, std::vector<std::string>*) const override {
    return Status::Unimplemented("teststack imports nothing");
  }
  Status Validate(const Recipe& r, const ClusterInfo&) const override {
    if (defect_ == "validate_moved" && GetValue(r, "--a") == std::optional<std::string>("2")) {
      return Status::InvalidArgument("--a 2 is not valid");
    }
    return Status::Ok();
  }
  std::vector<Move> LegalMoves(const Recipe& r, const ClusterInfo&) const override {
    std::vector<Move> moves;
    moves.push_back(Move{"a", {Change{"--a", GetValue(r, "--a"), "2"}}, "a -> 2", {}, {}});
    if (defect_ == "foreign_lever")
      moves.push_back(Move{"zz", {Change{"--b", GetValue(r, "--b"), "9"}}, "b -> 9", {}, {}});
    if (defect_ == "objective_move") {
      moves.push_back(
          Move{"b",
               {Change{"--b", GetValue(r, "--b"), "3"}, Change{"--lr", GetValue(r, "--lr"), "1"}},
               "b -> 3 with lr -> 1",
               {},
               {}});
    }
    if (defect_ == "stray_move")
      moves.push_back(Move{"b", {Change{"--lr", GetValue(r, "--lr"), "1"}}, "lr -> 1", {}, {}});
    return moves;
  }
  GateVerdict CheckObjective(const Recipe& base, const Recipe& cand) const override {
    if (defect_ == "gate_self") return GateVerdict{false, "always", "refuses everything", 0};
    if (GetValue(base, "--lr") != GetValue(cand, "--lr")) return GateVerdict{false, "obj.lr", "--lr changed", 0};
    return GateVerdict{true, "ok", "", 0};
  }
  Result<LaunchSpec> RenderLaunch(const Recipe& r) const override {
    if (defect_ == "render_empty") return LaunchSpec{};
    LaunchSpec spec;
    spec.argv = {"python3"};
    spec.argv.insert(spec.argv.end(), r.entry.begin(), r.entry.end());
    for (const auto& a : r.args) {
      spec.argv.push_back(a.flag);
      spec.argv.insert(spec.argv.end(), a.values.begin(), a.values.end());
    }
    return spec;
  }
  Result<Recipe> BenchmarkForm(const Recipe& r) const override {
    Recipe form = r;
    if (defect_ == "form_topology") form.topology.nodes += 1;
    if (defect_ == "form_objective") ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--lr", "5"));
    return form;
  }
  LogParse ParseLog(std::string_view log) const override {
    if (defect_ == "parse_throws" && log.find('\0') != std::string_view::npos) {
      throw std::runtime_error("NUL byte");
    }
    LogParse p;
    if (defect_ == "parse_random") {
      static std::mt19937 rng(1);
      p.iterations.resize(rng() % 3);
    }
    return p;
  }
  Result<Measurement> Measure(const LogParse&, const Recipe&) const override {
    return Status::FailedPrecondition("teststack measures nothing");
  }
  Failure Triage(std::string_view log, const JobEnd& end) const override {
    Failure f;
    if (defect_ == "clean_is_failure" && log.empty()) {
      f.kind = FailureKind::kUnknown;
      f.signature = "empty";
      return f;
    }
    if (end.exit_code != 0 && defect_ != "killed_is_fine") f.kind = FailureKind::kUnknown;
    return f;
  }
  std::vector<Diagnosis> Diagnose(const Recipe&, const Measurement&, const LogParse&,
                                  const ClusterInfo&) const override {
    return {};
  }
  nlohmann::json Describe() const override {
    if (defect_ == "describe") return nlohmann::json::array();
    return {{"stack", "teststack"}};
  }

 private:
  std::string defect_;
  std::vector<Lever> levers_;
};

Result<std::unique_ptr<Plugin>> Create(const PluginContext&) {
  return std::unique_ptr<Plugin>(new TestStack());
}

}  // namespace

ATTUNE_PLUGIN(attune::PluginKind::kStack, "teststack", "0.0.1", Create)
