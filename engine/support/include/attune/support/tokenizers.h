// Copyright attune authors.
//
// The vocabulary a Megatron-LM recipe trains with when it does not say --vocab-size: Megatron
// takes the size from the tokenizer. A few of its tokenizer types name a fixed, well-known
// vocabulary; the others read it from a file the recipe names (HuggingFaceTokenizer,
// SentencePieceTokenizer, TikTokenizer) or require --vocab-size (NullTokenizer), so nothing can be
// said without the file. Shared by the Megatron stack's simulated plan and the heuristic agent's
// estimates (the output layer's weight in a pipeline stage, the logits' memory), which should agree
// on the logits' size. An assumption, not a fact about the recipe: a Llama2Tokenizer can load any
// SentencePiece model. The correctness gate does not use it; a vocabulary it cannot read keeps it
// closed.
//
// Pure function; thread-safe.
#ifndef ATTUNE_SUPPORT_TOKENIZERS_H_
#define ATTUNE_SUPPORT_TOKENIZERS_H_

#include <optional>
#include <string_view>

namespace attune::support {

// Tokens in the vocabulary of `tokenizer_type` (the value of --tokenizer-type), before Megatron
// pads it to a multiple of --make-vocab-size-divisible-by × TP:
// - GPT2BPETokenizer: GPT-2's byte-level BPE, 50,257 tokens (its vocab file's entries);
// - Llama2Tokenizer: Llama 2's SentencePiece model, 32,000 pieces (the type is for that model);
// - BertWordPieceLowerCase / BertWordPieceCase: BERT's uncased and cased vocabularies, 30,522 and
//   28,996 entries.
// std::nullopt for any other type, whose size is in a file.
inline std::optional<long> MegatronTokenizerVocab(std::string_view tokenizer_type) {
  if (tokenizer_type == "GPT2BPETokenizer") return 50257;
  if (tokenizer_type == "Llama2Tokenizer") return 32000;
  if (tokenizer_type == "BertWordPieceLowerCase") return 30522;
  if (tokenizer_type == "BertWordPieceCase") return 28996;
  return std::nullopt;
}

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_TOKENIZERS_H_
