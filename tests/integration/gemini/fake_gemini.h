// Copyright attune authors.
//
// Test fixture: runs tests/fake_model/gemini_server.py with a scenario, and reads back the
// requests the Gemini CLI sent.
#ifndef ATTUNE_TESTS_INTEGRATION_GEMINI_FAKE_GEMINI_H_
#define ATTUNE_TESTS_INTEGRATION_GEMINI_FAKE_GEMINI_H_

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scripted_server.h"

namespace attune::testing {

class FakeGemini {
 public:
  // Starts the server in `dir` (scenario.json, requests.jsonl, port.txt); waits until it listens.
  FakeGemini(const std::filesystem::path& dir, const nlohmann::json& scenario);
  FakeGemini(const FakeGemini&) = delete;
  FakeGemini& operator=(const FakeGemini&) = delete;

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  // Bodies of the model requests (streamGenerateContent and generateContent), in order.
  std::vector<nlohmann::json> ModelRequests() const;

 private:
  ScriptedServer server_;
};

// Every functionResponse part in a request's contents.
std::vector<nlohmann::json> FunctionResponses(const nlohmann::json& request);
// All text of a request's contents (text parts and function responses), concatenated.
std::string ContentsText(const nlohmann::json& request);
// The names of the functions a request declares to the model.
std::vector<std::string> DeclaredTools(const nlohmann::json& request);

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_INTEGRATION_GEMINI_FAKE_GEMINI_H_
