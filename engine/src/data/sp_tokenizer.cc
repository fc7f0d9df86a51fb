// Copyright attune authors.
//
// SentencePiece .model files through libsentencepiece (Debian's libsentencepiece-dev): the
// library is the reference implementation, so nothing of its algorithm is repeated here.
#include <sentencepiece_processor.h>

#include "attune/hash.h"
#include "data/tokenizer.h"

namespace attune::data {
namespace {

class SentencePieceTokenizer : public Tokenizer {
 public:
  SentencePieceTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> sp,
                         TokenizerInfo info)
      : sp_(std::move(sp)) {
    info_ = std::move(info);
  }

  void Encode(std::string_view text, bool add_special_tokens, std::vector<int32_t>* ids) override {
    scratch_.clear();
    // Encode fails only for a processor that is not loaded, which the constructor rules out.
    (void)sp_->Encode(text, &scratch_);
    if (add_special_tokens && sp_->bos_id() >= 0) ids->push_back(sp_->bos_id());
    ids->insert(ids->end(), scratch_.begin(), scratch_.end());
  }

  std::optional<int32_t> TokenId(std::string_view token) const override {
    int id = sp_->PieceToId(token);
    if (id == sp_->unk_id() && sp_->IdToPiece(id) != token) return std::nullopt;
    return id;
  }

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::vector<int> scratch_;
};

std::optional<int32_t> IdOrNone(int id) {
  return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> LoadSentencePiece(const std::string& path,
                                                     const std::string& bytes) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  auto status = sp->LoadFromSerializedProto(bytes);
  if (!status.ok()) {
    return Status::InvalidArgument(path + ": not a SentencePiece model: " + status.ToString());
  }
  TokenizerInfo info;
  info.kind = "sentencepiece";
  info.path = path;
  info.sha256 = Sha256Hex(bytes);
  info.vocab_size = sp->GetPieceSize();
  info.bos_id = IdOrNone(sp->bos_id());
  info.eos_id = IdOrNone(sp->eos_id());
  info.pad_id = IdOrNone(sp->pad_id());
  return std::unique_ptr<Tokenizer>(new SentencePieceTokenizer(std::move(sp), std::move(info)));
}

}  // namespace attune::data
