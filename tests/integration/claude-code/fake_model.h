// Copyright attune authors.
//
// Test fixture: runs tests/fake_model/fake_model_server.py with a scenario, and reads back the
// requests the CLI sent.
#ifndef ATTUNE_TESTS_INTEGRATION_CLAUDE_CODE_FAKE_MODEL_H_
#define ATTUNE_TESTS_INTEGRATION_CLAUDE_CODE_FAKE_MODEL_H_

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scripted_server.h"

namespace attune::testing {

class FakeModel {
 public:
  // Starts the server in `dir` (scenario.json, requests.jsonl, port.txt); waits until it listens.
  FakeModel(const std::filesystem::path& dir, const nlohmann::json& scenario);
  FakeModel(const FakeModel&) = delete;
  FakeModel& operator=(const FakeModel&) = delete;

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  // Bodies of the POST /v1/messages requests, in order.
  std::vector<nlohmann::json> ModelRequests() const;

 private:
  ScriptedServer server_;
};

// Every tool_result block in a request's messages.
std::vector<nlohmann::json> ToolResults(const nlohmann::json& request);
// All text of a request's messages (text blocks and tool_result contents), concatenated.
std::string MessagesText(const nlohmann::json& request);

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_INTEGRATION_CLAUDE_CODE_FAKE_MODEL_H_
