// Copyright attune authors.
#include "attune/support/json_text.h"

namespace attune::support {

size_t MatchingBrace(const std::string& text, size_t open) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) return i;
  }
  return std::string::npos;
}

std::vector<nlohmann::json> JsonObjectsIn(const std::string& text) {
  std::vector<nlohmann::json> out;
  size_t i = text.find('{');
  while (i != std::string::npos) {
    size_t close = MatchingBrace(text, i);
    nlohmann::json j = close == std::string::npos
                           ? nlohmann::json(nullptr)
                           : nlohmann::json::parse(text.substr(i, close - i + 1), nullptr, false);
    if (j.is_object()) {
      out.push_back(std::move(j));
      i = text.find('{', close + 1);
    } else {
      i = text.find('{', i + 1);
    }
  }
  return out;
}

}  // namespace attune::support
