// Copyright attune authors.
//
// JSON values inside free text (an agent's answer, a log line with an embedded object).
//
// Thread-safety: pure functions.
#ifndef ATTUNE_SUPPORT_JSON_TEXT_H_
#define ATTUNE_SUPPORT_JSON_TEXT_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attune::support {

// The index of the '}' that closes the object opened by the '{' at `open`, or npos. Strings and
// their escapes are respected; nothing is parsed.
size_t MatchingBrace(const std::string& text, size_t open);

// The top-level JSON objects in `text` that parse, left to right. A parsed object is taken whole:
// the objects nested inside it are not returned again.
std::vector<nlohmann::json> JsonObjectsIn(const std::string& text);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_JSON_TEXT_H_
