// Copyright attune authors.
#include "data/unicode_regex.h"

#include <oniguruma.h>

#include <mutex>

namespace attune::data {
namespace {

// Oniguruma wants its encodings initialised once per process before the first compile.
void InitOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  return 4;
}

}  // namespace

Result<std::unique_ptr<UnicodeRegex>> UnicodeRegex::Compile(std::string_view pattern) {
  InitOnce();
  regex_t* compiled = nullptr;
  OnigErrorInfo info;
  auto begin = reinterpret_cast<const OnigUChar*>(pattern.data());
  int rc = onig_new(&compiled, begin, begin + pattern.size(), ONIG_OPTION_NONE,
                    ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &info);
  if (rc != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, rc, &info);
    return Status::InvalidArgument("regular expression '" + std::string(pattern) +
                                   "' does not compile: " +
                                   reinterpret_cast<const char*>(message));
  }
  return std::unique_ptr<UnicodeRegex>(new UnicodeRegex(compiled));
}

UnicodeRegex::~UnicodeRegex() { onig_free(static_cast<regex_t*>(regex_)); }

std::vector<std::pair<size_t, size_t>> UnicodeRegex::FindAll(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  auto* regex = static_cast<regex_t*>(regex_);
  auto* base = reinterpret_cast<const OnigUChar*>(text.data());
  const OnigUChar* end = base + text.size();
  OnigRegion* region = onig_region_new();
  size_t from = 0;
  bool have_last = false;
  size_t last_end = 0;
  while (from <= text.size()) {
    int at = onig_search(regex, base, end, base + from, end, region, ONIG_OPTION_NONE);
    if (at < 0) break;  // ONIG_MISMATCH, or an error such as a retry limit: no further match
    size_t b = static_cast<size_t>(region->beg[0]);
    size_t e = static_cast<size_t>(region->end[0]);
    if (b == e && have_last && last_end == e) {
      // An empty match where the previous one ended: step over one character, as find_iter does.
      if (from >= text.size()) break;
      from += Utf8Length(static_cast<unsigned char>(text[from]));
      continue;
    }
    matches.emplace_back(b, e);
    have_last = true;
    last_end = e;
    from = e > from ? e : from + (from < text.size() ? Utf8Length(static_cast<unsigned char>(text[from])) : 1);
  }
  onig_region_free(region, 1);
  return matches;
}

}  // namespace attune::data
