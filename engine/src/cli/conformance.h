// Copyright attune authors.
//
// The clause runner shared by the conformance suites (`attune stack check`, `attune launcher
// check`, `attune agent check`): each clause is a function that says what held, or Fail(why), or Skip(why); an exception
// escaping a plugin fails that clause. The report names every clause, exit 1 when one failed.
#ifndef ATTUNE_ENGINE_CLI_CONFORMANCE_H_
#define ATTUNE_ENGINE_CLI_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace attune::cli {

enum class Verdict { kPass, kFail, kSkip };

struct ClauseResult {
  std::string id;
  Verdict verdict = Verdict::kPass;
  std::string detail;
};

// What a clause body returns when the clause does not hold / does not apply.
std::string Fail(const std::string& why);
std::string Skip(const std::string& why);
// True when a clause body's answer is a Fail(...).
bool IsFail(const std::string& detail);

// The cluster a recipe's topology describes, for suites that validate without a launcher: its
// GPUs with H100 facts (80 GiB, 989 TFLOP/s, compute capability 9) unless gpu_type says "cpu".
ClusterInfo ClusterForRecipe(const Recipe& recipe);

class ConformanceSuite {
 public:
  void Run(const std::string& id, const std::function<std::string()>& body);
  const std::vector<ClauseResult>& results() const { return results_; }
  bool Passed() const;

 private:
  std::vector<ClauseResult> results_;
};

// The `--with` option of a suite: a JSON object (the workflow's `<block>.with`), or @FILE holding
// one. kInvalidArgument says what was expected.
Result<nlohmann::json> ReadWithOption(const std::string& text, const std::string& block);

// The folder a suite gives the plugin as its campaign directory: the one the user named (created
// when missing, kept) or a fresh one under /tmp, removed when this object goes.
class CheckDir {
 public:
  static Result<std::unique_ptr<CheckDir>> Make(const std::string& given, const std::string& kind);
  ~CheckDir();
  CheckDir(const CheckDir&) = delete;
  CheckDir& operator=(const CheckDir&) = delete;
  const std::string& path() const { return path_; }
  bool temporary() const { return temporary_; }

 private:
  CheckDir(std::string path, bool temporary) : path_(std::move(path)), temporary_(temporary) {}
  std::string path_;
  bool temporary_;
};

// Prints the clauses (text: "ok/FAIL/skip  id: detail" lines and a verdict line; or JSON
// {<kind>: name, pass, clauses: [{clause, pass, skipped, detail}]}) and returns the exit code.
int ReportSuite(Env& env, const std::string& kind, const std::string& name, const ConformanceSuite& suite,
                bool json);

}  // namespace attune::cli

#endif  // ATTUNE_ENGINE_CLI_CONFORMANCE_H_
