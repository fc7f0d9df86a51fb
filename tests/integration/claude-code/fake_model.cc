// Copyright attune authors.
#include "fake_model.h"

namespace attune::testing {

namespace fs = std::filesystem;
using nlohmann::json;

FakeModel::FakeModel(const fs::path& dir, const json& scenario)
    : server_(ATTUNE_FAKE_MODEL, dir, scenario, "fake model server") {}

std::vector<json> FakeModel::ModelRequests() const {
  return server_.PostBodies([](const std::string& path) {
    return path.find("/v1/messages") != std::string::npos && path.find("count_tokens") == std::string::npos;
  });
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
