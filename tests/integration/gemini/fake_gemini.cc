// Copyright attune authors.
#include "fake_gemini.h"

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

FakeGemini::FakeGemini(const fs::path& dir, const json& scenario) : dir_(dir) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "scenario.json") << scenario.dump();
  std::vector<std::string> args = {"/usr/bin/python3",
                                   ATTUNE_GEMINI_SERVER,
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
    throw std::runtime_error("cannot start the fake Gemini server");
  }
  for (int i = 0; i < 200 && port_ == 0; ++i) {
    std::ifstream f(dir_ / "port.txt");
    if (!(f >> port_)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (port_ == 0) throw std::runtime_error("the fake Gemini server did not start in 10 s");
}

FakeGemini::~FakeGemini() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

std::vector<json> FakeGemini::ModelRequests() const {
  std::vector<json> out;
  std::ifstream f(dir_ / "requests.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("method", "") != "POST") continue;
    if (e.value("path", "").find("enerateContent") == std::string::npos) continue;
    out.push_back(e["body"]);
  }
  return out;
}

std::vector<json> FunctionResponses(const json& request) {
  std::vector<json> out;
  for (const auto& c : request.value("contents", json::array())) {
    for (const auto& p : c.value("parts", json::array())) {
      if (p.contains("functionResponse")) out.push_back(p["functionResponse"]);
    }
  }
  return out;
}

std::string ContentsText(const json& request) {
  std::string text;
  for (const auto& c : request.value("contents", json::array())) {
    for (const auto& p : c.value("parts", json::array())) {
      if (p.contains("text") && p["text"].is_string()) text += p["text"].get<std::string>() + "\n";
      if (p.contains("functionResponse")) text += p["functionResponse"].dump() + "\n";
    }
  }
  return text;
}

std::vector<std::string> DeclaredTools(const json& request) {
  std::vector<std::string> names;
  for (const auto& t : request.value("tools", json::array())) {
    for (const auto& d : t.value("functionDeclarations", json::array())) {
      names.push_back(d.value("name", ""));
    }
  }
  return names;
}

}  // namespace attune::testing
