// Copyright attune authors.
#include "fake_model.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace attune::testing {

namespace fs = std::filesystem;
using nlohmann::json;

FakeModel::FakeModel(const fs::path& dir, const json& scenario) : dir_(dir) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "scenario.json") << scenario.dump();
  std::vector<std::string> args = {"/usr/bin/python3",
                                   ATTUNE_FAKE_MODEL,
                                   "--scenario",
                                   (dir_ / "scenario.json").string(),
                                   "--log",
                                   (dir_ / "requests.jsonl").string(),
                                   "--port-file",
                                   (dir_ / "port.txt").string(),
                                   "--lifetime",
                                   "300",
                                   "--max-requests",
                                   "100"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start the fake model server");
  }
  for (int i = 0; i < 200 && port_ == 0; ++i) {
    std::ifstream f(dir_ / "port.txt");
    if (!(f >> port_)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (port_ == 0) throw std::runtime_error("the fake model server did not start in 10 s");
}

FakeModel::~FakeModel() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

std::vector<json> FakeModel::ModelRequests() const {
  std::vector<json> out;
  std::ifstream f(dir_ / "requests.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("method", "") != "POST") continue;
    if (e.value("path", "").find("/v1/messages") == std::string::npos) continue;
    if (e.value("path", "").find("count_tokens") != std::string::npos) continue;
    out.push_back(e["body"]);
  }
  return out;
}

std::vector<json> ToolResults(const json& request) {
  std::vector<json> out;
  for (const auto& m : request.value("messages", json::array())) {
    if (!m.contains("content") || !m["content"].is_array()) continue;
    for (const auto& b : m["content"]) {
      if (b.value("type", "") == "tool_result") out.push_back(b);
    }
  }
  return out;
}

std::string MessagesText(const json& request) {
  std::string text;
  for (const auto& m : request.value("messages", json::array())) {
    if (!m.contains("content")) continue;
    if (m["content"].is_string()) text += m["content"].get<std::string>() + "\n";
    if (!m["content"].is_array()) continue;
    for (const auto& b : m["content"]) {
      if (b.contains("text") && b["text"].is_string()) text += b["text"].get<std::string>() + "\n";
      if (b.value("type", "") == "tool_result") text += b["content"].dump() + "\n";
    }
  }
  return text;
}

}  // namespace attune::testing
