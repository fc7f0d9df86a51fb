// Copyright attune authors.
//
// The BPE model of a tokenizer.json ("model": {"type": "BPE", ...}), after the Rust `tokenizers`
// crate's models/bpe: characters to initial symbols (with continuing_subword_prefix,
// end_of_word_suffix, byte_fallback to <0xXX> tokens, unk_token with fuse_unk), then merges
// applied lowest rank first (leftmost first among equal ranks), and ignore_merges (a word that is
// itself in the vocabulary is one token). Dropout is refused: it is a training-time feature.
//
// Not thread-safe: Tokenize memoises words in a bounded cache.
#ifndef ATTUNE_ENGINE_DATA_BPE_MODEL_H_
#define ATTUNE_ENGINE_DATA_BPE_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune::data {

class BpeModel {
 public:
  // `spec` is tokenizer.json's "model" object; `where` prefixes error messages.
  static Result<std::unique_ptr<BpeModel>> FromJson(const nlohmann::json& spec,
                                                    const std::string& where);

  // Appends the ids of one pre-token (non-empty UTF-8).
  void Tokenize(std::string_view word, std::vector<int32_t>* ids);

  std::optional<int32_t> TokenId(std::string_view token) const;
  // The largest id in the vocabulary plus one.
  int64_t VocabSize() const { return vocab_size_; }

 private:
  struct Merge {
    uint32_t rank;
    int32_t new_id;
  };
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    uint32_t bytes;  // 0 once merged into the symbol on its left
  };

  BpeModel() = default;
  Status LoadMerges(const nlohmann::json& merges, const std::string& where);
  void InitialSymbols(std::string_view word, std::vector<Symbol>* symbols) const;
  void MergeAll(std::vector<Symbol>* symbols) const;
  const Merge* FindMerge(int32_t left, int32_t right) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  std::optional<std::string> unk_token_;
  std::string continuing_prefix_;
  std::string end_suffix_;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  int64_t vocab_size_ = 0;
  std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_BPE_MODEL_H_
