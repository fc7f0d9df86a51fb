// Copyright attune authors.
#include "responses_model.h"

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

ResponsesModel::ResponsesModel(const fs::path& dir, const json& scenario) : dir_(dir) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "scenario.json") << scenario.dump();
  std::vector<std::string> args = {"/usr/bin/python3",
                                   ATTUNE_FAKE_RESPONSES,
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
    throw std::runtime_error("cannot start the fake Responses server");
  }
  for (int i = 0; i < 200 && port_ == 0; ++i) {
    std::ifstream f(dir_ / "port.txt");
    if (!(f >> port_)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (port_ == 0) throw std::runtime_error("the fake Responses server did not start in 10 s");
}

ResponsesModel::~ResponsesModel() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

std::vector<json> ResponsesModel::Requests() const {
  std::vector<json> out;
  std::ifstream f(dir_ / "requests.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("method", "") != "POST") continue;
    std::string path = e.value("path", "");
    if (path.size() < 10 || path.compare(path.size() - 10, 10, "/responses") != 0) continue;
    out.push_back(e["body"]);
  }
  return out;
}

std::vector<std::string> ToolOutputs(const json& request) {
  std::vector<std::string> out;
  if (!request.is_object()) return out;
  for (const auto& item : request.value("input", json::array())) {
    if (item.value("type", "") != "function_call_output") continue;
    out.push_back(item["output"].is_string() ? item["output"].get<std::string>()
                                             : item["output"].dump());
  }
  return out;
}

std::string InputText(const json& request) {
  std::string text;
  if (!request.is_object()) return text;
  for (const auto& item : request.value("input", json::array())) {
    if (!item.contains("content")) continue;
    if (item["content"].is_string()) text += item["content"].get<std::string>() + "\n";
    if (!item["content"].is_array()) continue;
    for (const auto& c : item["content"]) {
      if (c.contains("text") && c["text"].is_string()) text += c["text"].get<std::string>() + "\n";
    }
  }
  return text;
}

}  // namespace attune::testing
