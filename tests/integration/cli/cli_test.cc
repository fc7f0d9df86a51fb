// The `attune` executable end to end: exit codes and the messages users see.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "log/event_log.h"
#include "test_files.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

class Scratch {
 public:
  Scratch() {
    std::random_device rd;
    root_ = fs::temp_directory_path() /
            ("attune-cli-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(root_);
  }
  ~Scratch() { fs::remove_all(root_); }
  std::string Path(const std::string& name) const { return (root_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }

 private:
  fs::path root_;
};

// Runs `attune ARGS` (ARGS already shell-quoted) and captures both streams and the exit code.
Outcome Attune(const Scratch& s, const std::string& args) {
  std::string out = s.Path("stdout"), err = s.Path("stderr");
  std::string cmd = "'" + testing::AttuneBinaryPath() + "' " + args + " >'" + out + "' 2>'" + err +
                    "' </dev/null";
  int status = std::system(cmd.c_str());
  Outcome o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = testing::ReadWholeFile(out);
  o.err = testing::ReadWholeFile(err);
  return o;
}

void MakeLog(const std::string& dir, int events) {
  EventLogOptions options;
  options.campaign_id = "cli";
  options.flush_on_close = false;  // keep the events in the WAL, as a crash leaves them
  auto log = EventLog::Open(dir, options);
  REQUIRE(log.ok());
  for (int i = 0; i < events; ++i) REQUIRE((*log)->Append({NewEvent{"Tick", {{"i", i}}}}).ok());
}

void FlipMiddleByteOfWal(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(EventLogDirOf(dir))) {
    if (e.path().extension() != ".log" || fs::file_size(e.path()) == 0) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    auto at = static_cast<std::streamoff>(fs::file_size(e.path()) / 2);
    char c = 0;
    f.seekg(at);
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(at);
    f.write(&c, 1);
    return;
  }
  FAIL("no WAL file in " << dir);
}

TEST_CASE("attune --help lists the commands and exit codes", "[cli]") {
  Scratch s;
  Outcome o = Attune(s, "--help");
  CHECK(o.code == 0);
  CHECK_THAT(o.out, Catch::Contains("validate WORKFLOW"));
  CHECK_THAT(o.out, Catch::Contains("exit codes:"));
  CHECK(Attune(s, "no-such-command").code == 2);
  // A command group with a subcommand it lacks names the group's commands, not the group.
  Outcome sub = Attune(s, "stack shwo megatron");
  CHECK(sub.code == 2);
  CHECK_THAT(sub.err, Catch::Contains("attune stack: unknown command 'shwo' (did you mean 'show'?)") &&
                          Catch::Contains("the stack commands are show, check"));
}

TEST_CASE("validate of a broken workflow exits 2 with file:line:col and a suggestion", "[cli]") {
  Scratch s;
  std::string wf = s.Write("wf.yaml", "attune: 1\nname: x\nsed: 7\n");
  Outcome o = Attune(s, "validate '" + wf + "'");
  CHECK(o.code == 2);
  CHECK_THAT(o.err, Catch::Contains(wf + ":3:1: sed: unknown key 'sed' (did you mean 'seed'?)"));
}

TEST_CASE("validate refuses a misspelt Megatron flag unless the workflow declares it", "[cli]") {
  // The quick start's recipe with one flag misspelt; Megatron-LM's argparse would stop on it.
  Scratch s;
  std::string recipe =
      testing::ReadWholeFile(std::string(ATTUNE_SOURCE_DIR) + "/workflows/recipes/minigpt.yaml");
  const std::string good = "[--global-batch-size, ";
  REQUIRE(recipe.find(good) != std::string::npos);
  recipe.replace(recipe.find(good), good.size(), "[--global-batch-sise, ");
  s.Write("minigpt.yaml", recipe);
  std::string quickstart =
      testing::ReadWholeFile(std::string(ATTUNE_SOURCE_DIR) + "/workflows/quickstart.yaml");
  quickstart.replace(quickstart.find("recipe: recipes/minigpt.yaml"),
                     std::string("recipe: recipes/minigpt.yaml").size(), "recipe: minigpt.yaml");
  std::string wf = s.Write("wf.yaml", quickstart);
  Outcome refused = Attune(s, "validate '" + wf + "'");
  CHECK(refused.code == 2);
  CHECK_THAT(refused.err,
             Catch::Contains("args.known: --global-batch-sise is not an argument of Megatron-LM") &&
                 Catch::Contains("did you mean --global-batch-size?"));
  // Declared as an argument of the user's Megatron-LM: the stack gets the workflow's options.
  quickstart.replace(quickstart.find("stack: megatron"), std::string("stack: megatron").size(),
                     "stack: {name: megatron, with: {extra_arguments: [--global-batch-sise]}}");
  wf = s.Write("wf.yaml", quickstart);
  Outcome declared = Attune(s, "validate '" + wf + "'");
  INFO(declared.err);
  CHECK(declared.code == 0);
}

TEST_CASE("verify passes an intact log and reports a flipped byte with exit 1", "[cli]") {
  Scratch s;
  std::string dir = s.Path("campaign");
  MakeLog(dir, 40);
  Outcome intact = Attune(s, "verify '" + dir + "'");
  CHECK(intact.code == 0);
  CHECK_THAT(intact.out, Catch::Contains("ok: 40 events"));
  FlipMiddleByteOfWal(dir);
  Outcome damaged = Attune(s, "verify '" + dir + "'");
  CHECK(damaged.code == 1);
  CHECK_THAT(damaged.out, Catch::Contains("DAMAGED"));
  CHECK_THAT(damaged.out, Catch::Contains("Corruption"));
  Outcome json = Attune(s, "verify --json '" + dir + "'");
  CHECK(json.code == 1);
  CHECK(nlohmann::json::parse(json.out)["ok"] == false);
}

TEST_CASE("a second attune run on a locked directory is refused with the holder's pid", "[cli]") {
  Scratch s;
  std::string dir = s.Path("campaign");
  auto holder = EventLog::Open(dir, EventLogOptions{});
  REQUIRE(holder.ok());
  std::string wf = s.Write("wf.yaml", "attune: 1\n");
  Outcome o = Attune(s, "run '" + wf + "' --dir '" + dir + "'");
  CHECK(o.code == 4);
  CHECK_THAT(o.err, Catch::Contains("is in use by attune pid " + std::to_string(getpid())));
}

TEST_CASE("attune plugins lists the good test plugin from --plugin-path", "[cli]") {
  Scratch s;
  std::string dir = std::string(ATTUNE_TEST_PLUGIN_DIR) + "/good";
  Outcome o = Attune(s, "plugins --plugin-path '" + dir + "'");
  INFO(o.err);
  CHECK(o.code == 0);
  CHECK_THAT(o.out, Catch::Contains("testgood"));
  Outcome json = Attune(s, "plugins --json --plugin-path '" + dir + "'");
  REQUIRE(json.code == 0);
  bool found = false;
  nlohmann::json listed = nlohmann::json::parse(json.out);
  for (const auto& p : listed["plugins"]) found |= p["name"] == "testgood";
  CHECK(found);
}

TEST_CASE("a plugin's own command is dispatched by its name", "[cli]") {
  Scratch s;
  std::string dir = std::string(ATTUNE_TEST_PLUGIN_DIR) + "/good";
  Outcome o = Attune(s, "--plugin-path '" + dir + "' testgood echo hello world");
  INFO(o.err);
  CHECK(o.code == 0);
  CHECK(o.out == "hello\nworld\n");
  CHECK(Attune(s, "--plugin-path '" + dir + "' testgod echo").code == 2);
}

TEST_CASE("a broken plugin on the search path is an error naming the file", "[cli]") {
  Scratch s;
  std::string dir = std::string(ATTUNE_TEST_PLUGIN_DIR) + "/abi";
  Outcome o = Attune(s, "plugins --plugin-path '" + dir + "'");
  CHECK(o.code != 0);
  CHECK_THAT(o.err, Catch::Contains("attune_agent_abimismatch.so was built for attune plugin ABI"));
}

}  // namespace
}  // namespace attune
