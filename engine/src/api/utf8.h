// Checks of text read from users' YAML files. YAML must be printable Unicode, but yaml-cpp does not
// check: nlohmann::json throws when it serializes a string that is not UTF-8 (recipe ids, workflow
// hashes, events), and yaml-cpp's emitter mangles control characters such as NUL, so a recipe
// would not survive its own YAML form. Files are checked once, where they are read, with a
// position.
#ifndef ATTUNE_ENGINE_SRC_API_UTF8_H_
#define ATTUNE_ENGINE_SRC_API_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune {

// The offset of the first byte that does not belong to a well-formed UTF-8 sequence (overlong
// forms, surrogates and code points above U+10FFFF are not well-formed), or nullopt.
std::optional<size_t> FirstInvalidUtf8(std::string_view text);

// OK, or InvalidArgument "<source>:<line>:<column>: byte 0xNN is not valid UTF-8; <what> must be
// UTF-8 text (re-save the file as UTF-8)", or "...: byte 0xNN is a control character; <what> may
// hold no control characters other than tab and line breaks".
Status CheckYamlText(std::string_view text, const std::string& source, const std::string& what);

// `text` as valid UTF-8: every byte that does not belong to a well-formed sequence becomes
// U+FFFD. Text from outside (job logs, agent answers, error messages) goes through this before it
// is stored or printed as JSON, so that one stray byte can never make an event unstorable.
// `*replaced` (when given) receives the number of bytes replaced.
std::string ToValidUtf8(std::string_view text, size_t* replaced = nullptr);

// Makes every string and object key in `value` valid UTF-8 (as ToValidUtf8), in place; returns the
// number of bytes replaced.
size_t MakeValidUtf8(nlohmann::json& value);

// Replaces every NaN and infinity in `value` by null (JSON has no non-finite numbers, and
// nlohmann::json writes them as null anyway), in place; returns how many it replaced.
size_t ReplaceNonFinite(nlohmann::json& value);

// True when `text` is UTF-8 without control characters other than tab and line breaks. A YAML
// file that passes CheckYamlText can still produce other values through escape sequences ("\0",
// "\xFF", "\_"), so parsed values are checked too.
bool IsPrintableText(std::string_view text);

}  // namespace attune

#endif  // ATTUNE_ENGINE_SRC_API_UTF8_H_
