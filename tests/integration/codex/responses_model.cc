// Copyright attune authors.
#include "responses_model.h"

namespace attune::testing {

namespace fs = std::filesystem;
using nlohmann::json;

ResponsesModel::ResponsesModel(const fs::path& dir, const json& scenario)
    : server_(ATTUNE_FAKE_RESPONSES, dir, scenario, "fake Responses server") {}

std::vector<json> ResponsesModel::Requests() const {
  return server_.PostBodies([](const std::string& path) {
    return path.size() >= 10 && path.compare(path.size() - 10, 10, "/responses") == 0;
  });
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
