// Copyright attune authors.
#include "scripted_server.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace attune::testing {

namespace fs = std::filesystem;
using nlohmann::json;

ScriptedServer::ScriptedServer(const std::string& script, const fs::path& dir, const json& scenario,
                               const std::string& what)
    : dir_(dir) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "scenario.json") << scenario.dump();
  std::vector<std::string> args = {"/usr/bin/python3", script,
                                   "--scenario", (dir_ / "scenario.json").string(),
                                   "--log", (dir_ / "requests.jsonl").string(),
                                   "--port-file", (dir_ / "port.txt").string(),
                                   "--lifetime", "300",
                                   "--max-requests", "100"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start the " + what);
  }
  for (int i = 0; i < 200 && port_ == 0; ++i) {
    std::ifstream f(dir_ / "port.txt");
    if (!(f >> port_)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (port_ == 0) throw std::runtime_error("the " + what + " did not start in 10 s");
}

ScriptedServer::~ScriptedServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

std::vector<json> ScriptedServer::PostBodies(const std::function<bool(const std::string&)>& wanted) const {
  std::vector<json> out;
  std::ifstream f(dir_ / "requests.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("method", "") != "POST") continue;
    if (!wanted(e.value("path", ""))) continue;
    out.push_back(e["body"]);
  }
  return out;
}

}  // namespace attune::testing
