// Copyright attune authors.
//
// The pieces of a Hugging Face tokenizer.json pipeline that run before the model: normalizers and
// pre-tokenizers, each built from its JSON object. They follow the Rust `tokenizers` crate (the
// reference the files are written for), component by component; what is not implemented is refused
// at load with the component's name, never approximated.
//
// Internal to engine/src/data.
#ifndef ATTUNE_ENGINE_DATA_HF_COMPONENTS_H_
#define ATTUNE_ENGINE_DATA_HF_COMPONENTS_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune::data {

// One pre-token: UTF-8 text, and whether it begins at offset 0 of the original input (the
// Metaspace pre-tokenizer's "first" scheme prepends only there).
struct Piece {
  std::string text;
  bool at_start = false;
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void Apply(std::string* text) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces `pieces` by their split (and transformed) pieces; empty pieces are dropped.
  virtual void Apply(std::vector<Piece>* pieces) const = 0;
};

// `where` prefixes error messages ("tokenizer.json: normalizer").
Result<std::unique_ptr<Normalizer>> MakeNormalizer(const nlohmann::json& spec,
                                                   const std::string& where);
Result<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const nlohmann::json& spec,
                                                       const std::string& where);

// How a split treats the matched delimiters (SplitDelimiterBehavior in `tokenizers`).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Splits `piece` at `matches` (byte ranges, sorted, non-overlapping) with `behavior`; `invert`
// swaps matches and gaps. Appends the non-empty results to `out`.
void SplitPiece(const Piece& piece, const std::vector<std::pair<size_t, size_t>>& matches,
                SplitBehavior behavior, bool invert, std::vector<Piece>* out);

// GPT-2's byte-to-character table: byte b becomes the UTF-8 of a printable code point.
const std::string& ByteLevelChar(unsigned char b);
std::string ByteLevelEncode(std::string_view bytes);

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_HF_COMPONENTS_H_
