#include "utf8.h"

#include <cmath>
#include <cstdio>

namespace attune {
namespace {

// The length of the well-formed sequence at `i`, or 0 (the table of well-formed byte sequences
// of the Unicode standard, section 3.9).
size_t SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlong forms
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

}  // namespace

std::optional<size_t> FirstInvalidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t len = SequenceLength(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

std::string ToValidUtf8(std::string_view text, size_t* replaced) {
  size_t count = 0;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len = SequenceLength(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++count;
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  if (replaced != nullptr) *replaced = count;
  return out;
}

size_t MakeValidUtf8(nlohmann::json& value) {
  size_t total = 0;
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (FirstInvalidUtf8(s)) {
      size_t n = 0;
      value = ToValidUtf8(s, &n);
      total += n;
    }
  } else if (value.is_array()) {
    for (auto& item : value) total += MakeValidUtf8(item);
  } else if (value.is_object()) {
    bool bad_key = false;
    for (auto it = value.begin(); it != value.end(); ++it) {
      total += MakeValidUtf8(it.value());
      bad_key = bad_key || FirstInvalidUtf8(it.key()).has_value();
    }
    if (bad_key) {
      nlohmann::json fixed = nlohmann::json::object();
      for (auto it = value.begin(); it != value.end(); ++it) {
        size_t n = 0;
        fixed[ToValidUtf8(it.key(), &n)] = std::move(it.value());
        total += n;
      }
      value = std::move(fixed);
    }
  }
  return total;
}

size_t ReplaceNonFinite(nlohmann::json& value) {
  if (value.is_number_float()) {
    if (std::isfinite(value.get<double>())) return 0;
    value = nullptr;
    return 1;
  }
  size_t total = 0;
  if (value.is_array() || value.is_object()) {
    for (auto& item : value) total += ReplaceNonFinite(item);
  }
  return total;
}

namespace {

std::string Position(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

std::string Hex(unsigned char byte) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", byte);
  return hex;
}

bool IsControl(unsigned char c) {
  return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F;
}

}  // namespace

bool IsPrintableText(std::string_view text) {
  if (FirstInvalidUtf8(text)) return false;
  for (char c : text) {
    if (IsControl(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Status CheckYamlText(std::string_view text, const std::string& source, const std::string& what) {
  if (auto bad = FirstInvalidUtf8(text)) {
    return Status::InvalidArgument(source + ":" + Position(text, *bad) + ": byte " +
                                   Hex(static_cast<unsigned char>(text[*bad])) +
                                   " is not valid UTF-8; " + what +
                                   " must be UTF-8 text (re-save the file as UTF-8)");
  }
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsControl(static_cast<unsigned char>(text[i]))) {
      return Status::InvalidArgument(source + ":" + Position(text, i) + ": byte " +
                                     Hex(static_cast<unsigned char>(text[i])) +
                                     " is a control character; " + what +
                                     " may hold no control characters other than tab and line "
                                     "breaks");
    }
  }
  return Status::Ok();
}

}  // namespace attune
