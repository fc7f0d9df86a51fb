// Copyright attune authors.
//
// One JSONL row to token ids and a loss mask. A row is either a text field ({"text": "..."}; every
// token counts in the loss) or a chat ({"messages": [{"role", "content"}, ...]}) rendered with a
// built-in chat template, where the masking rule says which tokens count: the assistant turns
// (their content and the end-of-turn token) or all of them.
//
// Each template part is encoded on its own, as Megatron's SFT tokenizer measures turns: the ids
// equal those of the whole rendered conversation wherever parts meet at a special token (chatml,
// llama3, deepseek); at llama2's textual [INST] markers a boundary token may differ.
#ifndef ATTUNE_ENGINE_DATA_ROWS_H_
#define ATTUNE_ENGINE_DATA_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/jsonl.h"
#include "data/tokenizer.h"

namespace attune::data {

enum class ChatTemplate { kAuto, kChatml, kLlama3, kLlama2, kDeepseek, kPlain };
std::string_view ChatTemplateName(ChatTemplate t);
std::optional<ChatTemplate> ChatTemplateFromName(std::string_view name);

enum class LossRule { kAll, kAssistant };
std::string_view LossRuleName(LossRule r);
std::optional<LossRule> LossRuleFromName(std::string_view name);

struct RowFormat {
  bool messages = false;        // chat rows; otherwise a text field
  std::string field = "text";   // the text field (messages: ignored)
  ChatTemplate chat_template = ChatTemplate::kAuto;
  LossRule loss = LossRule::kAssistant;  // chat rows only; text rows count every token
};

struct TokenizedRow {
  std::vector<int32_t> ids;
  std::vector<uint8_t> mask;  // 1: the token is a target (counts in the loss); same length as ids
  uint64_t LossTokens() const;
};

class RowTokenizer {
 public:
  // Resolves the template's special tokens in `tokenizer` (borrowed; must outlive this).
  // InvalidArgument when the template needs a token the tokenizer lacks.
  static Result<RowTokenizer> Create(Tokenizer* tokenizer, RowFormat format);

  // Tokenizes one line. Returns the reason when the row is bad (then *row is unspecified).
  std::optional<BadRow> Tokenize(std::string_view line, uint64_t line_number, TokenizedRow* row);

  // The template in use ("auto" resolved), for reports.
  ChatTemplate Template() const { return template_; }
  const RowFormat& Format() const { return format_; }

 private:
  // One part of a rendered message: a special token, or text (content or decoration).
  struct Part {
    std::optional<int32_t> special;
    std::string text;
    bool loss = false;
  };
  RowTokenizer(Tokenizer* t, RowFormat f, ChatTemplate resolved) : tok_(t), format_(f), template_(resolved) {}
  Status ResolveTokens();
  int32_t Special(std::string_view name) const;
  void Render(const std::vector<std::pair<std::string, std::string>>& messages,
              std::vector<Part>* parts) const;
  void RenderMessage(const std::string& role, const std::string& content, bool first,
                     std::vector<Part>* parts, bool* inst_open) const;

  Tokenizer* tok_;
  RowFormat format_;
  ChatTemplate template_;
  std::vector<std::pair<std::string, int32_t>> specials_;
};

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_ROWS_H_
