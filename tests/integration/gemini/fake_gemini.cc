// Copyright attune authors.
#include "fake_gemini.h"

namespace attune::testing {

namespace fs = std::filesystem;
using nlohmann::json;

FakeGemini::FakeGemini(const fs::path& dir, const json& scenario)
    : server_(ATTUNE_GEMINI_SERVER, dir, scenario, "fake Gemini server") {}

std::vector<json> FakeGemini::ModelRequests() const {
  return server_.PostBodies([](const std::string& path) { return path.find("enerateContent") != std::string::npos; });
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
