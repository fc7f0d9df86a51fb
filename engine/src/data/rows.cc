// Copyright attune authors.
#include "data/rows.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "api/utf8.h"

namespace attune::data {
namespace {

using nlohmann::json;

constexpr std::string_view kTemplateNames[] = {"auto", "chatml", "llama3", "llama2", "deepseek",
                                               "plain"};
constexpr std::string_view kLossNames[] = {"all", "assistant"};

// The special tokens each template writes.
std::vector<std::string_view> TemplateTokens(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::kChatml: return {"<|im_start|>", "<|im_end|>"};
    case ChatTemplate::kLlama3:
      return {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
    case ChatTemplate::kLlama2: return {"<s>", "</s>"};
    case ChatTemplate::kDeepseek:
      return {"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>"};
    default: return {};
  }
}

// The template a tokenizer's own special tokens suggest.
ChatTemplate DetectTemplate(const Tokenizer& tok) {
  for (ChatTemplate t : {ChatTemplate::kChatml, ChatTemplate::kLlama3, ChatTemplate::kDeepseek,
                         ChatTemplate::kLlama2}) {
    bool all = true;
    for (std::string_view name : TemplateTokens(t)) all = all && tok.TokenId(name).has_value();
    if (all) return t;
  }
  return ChatTemplate::kPlain;
}

// The message content: a string, or OpenAI-style parts [{"type": "text", "text": ...}].
std::optional<std::string> ContentText(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return std::nullopt;
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || part.value("type", std::string()) != "text" ||
        !part.contains("text") || !part["text"].is_string()) {
      return std::nullopt;
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

std::string HexByte(char c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02X", static_cast<unsigned char>(c));
  return buf;
}

BadRow Bad(uint64_t line, BadRowKind kind, std::string message) {
  return BadRow{line, kind, std::move(message)};
}

// "column 17: syntax error ..." from nlohmann's "[json.exception...] parse error at line 1,
// column 17: syntax error ...".
std::string JsonError(const json::parse_error& e) {
  std::string what = e.what();
  size_t at = what.find("column ");
  size_t colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  return "column " + std::to_string(e.byte) + ": " + reason;
}

}  // namespace

std::string_view ChatTemplateName(ChatTemplate t) { return kTemplateNames[static_cast<size_t>(t)]; }
std::optional<ChatTemplate> ChatTemplateFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kTemplateNames); ++i) {
    if (kTemplateNames[i] == name) return static_cast<ChatTemplate>(i);
  }
  return std::nullopt;
}
std::string_view LossRuleName(LossRule r) { return kLossNames[static_cast<size_t>(r)]; }
std::optional<LossRule> LossRuleFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kLossNames); ++i) {
    if (kLossNames[i] == name) return static_cast<LossRule>(i);
  }
  return std::nullopt;
}

uint64_t TokenizedRow::LossTokens() const {
  uint64_t n = 0;
  for (uint8_t m : mask) n += m;
  return n;
}

Result<RowTokenizer> RowTokenizer::Create(Tokenizer* tokenizer, RowFormat format) {
  ChatTemplate resolved = format.chat_template;
  if (format.messages && resolved == ChatTemplate::kAuto) resolved = DetectTemplate(*tokenizer);
  RowTokenizer rt(tokenizer, std::move(format), resolved);
  if (rt.format_.messages) ATTUNE_RETURN_IF_ERROR(rt.ResolveTokens());
  return rt;
}

Status RowTokenizer::ResolveTokens() {
  for (std::string_view name : TemplateTokens(template_)) {
    std::optional<int32_t> id = tok_->TokenId(name);
    if (!id) {
      return Status::InvalidArgument(
          "chat template '" + std::string(ChatTemplateName(template_)) + "' needs the token " +
          std::string(name) + ", which " + tok_->Info().path +
          " does not have; choose another --chat-template (chatml, llama3, llama2, deepseek, "
          "plain)");
    }
    specials_.emplace_back(std::string(name), *id);
  }
  return Status::Ok();
}

int32_t RowTokenizer::Special(std::string_view name) const {
  for (const auto& [n, id] : specials_) {
    if (n == name) return id;
  }
  return 0;  // unreachable: ResolveTokens checked every name the templates use
}

void RowTokenizer::RenderMessage(const std::string& role, const std::string& content, bool first,
                                 std::vector<Part>* parts, bool* inst_open) const {
  bool assistant = role == "assistant";
  bool loss = format_.loss == LossRule::kAll || assistant;
  auto special = [&](std::string_view name, bool l) { parts->push_back({Special(name), "", l}); };
  auto text = [&](std::string t, bool l) { parts->push_back({std::nullopt, std::move(t), l}); };
  bool all = format_.loss == LossRule::kAll;
  switch (template_) {
    case ChatTemplate::kChatml:
      special("<|im_start|>", all);
      text(role + "\n", all);
      text(content, loss);
      special("<|im_end|>", loss);
      text("\n", all);
      return;
    case ChatTemplate::kLlama3:
      if (first) special("<|begin_of_text|>", all);
      special("<|start_header_id|>", all);
      text(role, all);
      special("<|end_header_id|>", all);
      text("\n\n", all);
      text(content, loss);
      special("<|eot_id|>", loss);
      return;
    case ChatTemplate::kDeepseek:
      if (first) special("<｜begin▁of▁sentence｜>", all);
      if (role == "user") special("<｜User｜>", all);
      if (assistant) special("<｜Assistant｜>", all);
      text(content, loss);
      if (assistant) special("<｜end▁of▁sentence｜>", loss);
      return;
    case ChatTemplate::kLlama2:
      if (role == "system") {
        special("<s>", all);
        text("[INST] <<SYS>>\n" + content + "\n<</SYS>>\n\n", all);
        *inst_open = true;
      } else if (assistant) {
        text(content, loss);
        special("</s>", loss);
      } else {
        if (!*inst_open) special("<s>", all);
        text((*inst_open ? "" : "[INST] ") + content + " [/INST]", loss);
        *inst_open = false;
      }
      return;
    default:
      text(content, loss);
      return;
  }
}

void RowTokenizer::Render(const std::vector<std::pair<std::string, std::string>>& messages,
                          std::vector<Part>* parts) const {
  bool inst_open = false;
  for (size_t i = 0; i < messages.size(); ++i) {
    RenderMessage(messages[i].first, messages[i].second, i == 0, parts, &inst_open);
  }
}

std::optional<BadRow> RowTokenizer::Tokenize(std::string_view line, uint64_t n, TokenizedRow* row) {
  row->ids.clear();
  row->mask.clear();
  if (auto bad = FirstInvalidUtf8(line)) {
    return Bad(n, BadRowKind::kInvalidUtf8, "column " + std::to_string(*bad + 1) + ": byte " +
                                                HexByte(line[*bad]) + " is not valid UTF-8");
  }
  json doc;
  try {
    doc = json::parse(line);
  } catch (const json::parse_error& e) {
    return Bad(n, BadRowKind::kInvalidJson, JsonError(e));
  }
  if (!doc.is_object()) {
    return Bad(n, BadRowKind::kInvalidJson, std::string("expected a JSON object, found ") + doc.type_name());
  }
  if (!format_.messages) {
    auto it = doc.find(format_.field);
    if (it == doc.end() || !it->is_string()) {
      return Bad(n, BadRowKind::kMissingField,
                 "field '" + format_.field + "' " + (it == doc.end() ? "is missing" : std::string("is a ") + it->type_name() + ", not a string"));
    }
    tok_->Encode(it->get_ref<const std::string&>(), true, &row->ids);
    row->mask.assign(row->ids.size(), 1);
    return std::nullopt;
  }
  auto it = doc.find("messages");
  if (it == doc.end() || !it->is_array()) {
    return Bad(n, BadRowKind::kBadMessages, "field 'messages' is missing or not an array");
  }
  std::vector<std::pair<std::string, std::string>> messages;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return Bad(n, BadRowKind::kBadMessages, at + ": needs a string 'role'");
    }
    std::string role = m["role"].get<std::string>();
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      return Bad(n, BadRowKind::kBadMessages,
                 at + ": unknown role '" + role + "' (expected system, user, assistant or tool)");
    }
    std::optional<std::string> content = m.contains("content") ? ContentText(m["content"]) : std::nullopt;
    if (!content) {
      return Bad(n, BadRowKind::kBadMessages,
                 at + ": 'content' must be a string or a list of {\"type\": \"text\", \"text\": ...}");
    }
    messages.emplace_back(std::move(role), std::move(*content));
  }
  std::vector<Part> parts;
  Render(messages, &parts);
  for (const Part& p : parts) {
    size_t before = row->ids.size();
    if (p.special) row->ids.push_back(*p.special);
    else if (!p.text.empty()) tok_->Encode(p.text, false, &row->ids);
    row->mask.resize(row->ids.size(), 0);
    if (p.loss) std::fill(row->mask.begin() + before, row->mask.end(), 1);
  }
  return std::nullopt;
}

}  // namespace attune::data
