// Copyright attune authors.
//
// A Unicode regular expression over UTF-8 text, as Hugging Face `tokenizers` compiles the patterns
// of tokenizer.json: with Oniguruma (the Rust crate's default engine), UTF-8 encoding, the default
// (Oniguruma) syntax and no options. Using the same engine, not a translation to another dialect,
// is what makes `\p{L}`, `\s`, `(?i:...)` and lookahead mean exactly what the tokenizer's authors
// tested.
//
// Thread-safety: a compiled UnicodeRegex is immutable; FindAll may be called from several threads.
#ifndef ATTUNE_ENGINE_DATA_UNICODE_REGEX_H_
#define ATTUNE_ENGINE_DATA_UNICODE_REGEX_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attune/status.h"

namespace attune::data {

class UnicodeRegex {
 public:
  // Compiles `pattern` (UTF-8). InvalidArgument names the pattern and Oniguruma's reason.
  static Result<std::unique_ptr<UnicodeRegex>> Compile(std::string_view pattern);
  ~UnicodeRegex();
  UnicodeRegex(const UnicodeRegex&) = delete;
  UnicodeRegex& operator=(const UnicodeRegex&) = delete;

  // Every non-overlapping match, left to right, as byte ranges [begin, end) of `text`. An empty
  // match directly after the previous match is skipped, as the onig crate's find_iter does.
  // Precondition: `text` is valid UTF-8.
  std::vector<std::pair<size_t, size_t>> FindAll(std::string_view text) const;

 private:
  explicit UnicodeRegex(void* compiled) : regex_(compiled) {}
  void* regex_;  // regex_t*, owned
};

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_UNICODE_REGEX_H_
