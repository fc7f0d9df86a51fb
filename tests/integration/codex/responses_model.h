// Copyright attune authors.
//
// Test fixture: runs tests/fake_model/responses_server.py with a scenario, and reads back the
// requests the Codex CLI sent.
#ifndef ATTUNE_TESTS_INTEGRATION_CODEX_RESPONSES_MODEL_H_
#define ATTUNE_TESTS_INTEGRATION_CODEX_RESPONSES_MODEL_H_

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scripted_server.h"

namespace attune::testing {

class ResponsesModel {
 public:
  // Starts the server in `dir` (scenario.json, requests.jsonl, port.txt); waits until it listens.
  ResponsesModel(const std::filesystem::path& dir, const nlohmann::json& scenario);
  ResponsesModel(const ResponsesModel&) = delete;
  ResponsesModel& operator=(const ResponsesModel&) = delete;

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(server_.port()) + "/v1"; }
  // Bodies of the POST .../responses requests, in order.
  std::vector<nlohmann::json> Requests() const;

 private:
  ScriptedServer server_;
};

// The `output` of every function_call_output input item of a request, in order.
std::vector<std::string> ToolOutputs(const nlohmann::json& request);
// All text of a request's input messages (user, developer and assistant), concatenated.
std::string InputText(const nlohmann::json& request);

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_INTEGRATION_CODEX_RESPONSES_MODEL_H_
