// Copyright attune authors.
//
// A tokenizer turns UTF-8 text into token ids. Two kinds are read:
//   * Hugging Face tokenizer.json with a BPE model (byte-level BPE as in Llama 3, Qwen and
//     DeepSeek; SentencePiece-style BPE with byte fallback as in Llama 2 and Mistral), implemented
//     here after the Rust `tokenizers` crate (hf_tokenizer.cc);
//   * SentencePiece .model files, through Debian's libsentencepiece.
// A directory is accepted for tokenizer.json: DIR/tokenizer.json (with DIR/tokenizer_config.json,
// when present, for the names of the BOS, EOS and PAD tokens).
//
// Not thread-safe: Encode memoises words. Use one Tokenizer per thread.
#ifndef ATTUNE_ENGINE_DATA_TOKENIZER_H_
#define ATTUNE_ENGINE_DATA_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/status.h"

namespace attune::data {

// What identifies a tokenizer in a manifest.
struct TokenizerInfo {
  std::string kind;    // "tokenizer.json" or "sentencepiece"
  std::string path;    // the file that was read
  std::string sha256;  // of that file's bytes
  int64_t vocab_size = 0;  // the largest id plus one (added tokens included)
  std::optional<int32_t> bos_id, eos_id, pad_id;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Appends the ids of `text` to `ids`. Special tokens written in the text (e.g. "<|eot_id|>")
  // become their ids, as in the reference implementation. With `add_special_tokens`, the
  // tokenizer's own additions (its post-processor's BOS/EOS; SentencePiece: BOS) are added.
  // Precondition: `text` is valid UTF-8.
  virtual void Encode(std::string_view text, bool add_special_tokens,
                      std::vector<int32_t>* ids) = 0;

  // The id of a token written exactly as in the vocabulary ("<|im_end|>", "</s>").
  virtual std::optional<int32_t> TokenId(std::string_view token) const = 0;

  const TokenizerInfo& Info() const { return info_; }

 protected:
  TokenizerInfo info_;
};

// Loads PATH: a .model file (SentencePiece), a tokenizer.json, or a directory holding one.
// NotFound / InvalidArgument name the file and what is wrong with it.
Result<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& path);

// The two loaders, for tests. `bytes` is the file's content; `config_json` the content of
// tokenizer_config.json or empty.
Result<std::unique_ptr<Tokenizer>> LoadHfTokenizer(const std::string& path, const std::string& bytes,
                                                   const std::string& config_json);
Result<std::unique_ptr<Tokenizer>> LoadSentencePiece(const std::string& path,
                                                     const std::string& bytes);

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_TOKENIZER_H_
