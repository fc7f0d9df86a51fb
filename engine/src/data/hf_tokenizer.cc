// Copyright attune authors.
//
// tokenizer.json, read and applied as the Rust `tokenizers` crate does it (the format's reference):
//   1. added tokens that are not "normalized" are cut out of the raw text (leftmost-longest match,
//      with single_word / lstrip / rstrip);
//   2. the rest is normalized, and "normalized" added tokens are cut out of that;
//   3. each remaining piece is pre-tokenized, then each pre-token goes through the BPE model;
//   4. with add_special_tokens, the post-processor adds its tokens (TemplateProcessing, Bert,
//      Roberta; ByteLevel changes only offsets, so nothing here).
// No well-kept C++ library reads tokenizer.json (Debian has none; the crate is Rust), hence this
// file. tests/unit/data compares its ids with the JavaScript reference on real tokenizer files.
#include <unicode/uchar.h>

#include <map>

#include "attune/hash.h"
#include "data/bpe_model.h"
#include "data/hf_components.h"
#include "data/tokenizer.h"

namespace attune::data {
namespace {

using nlohmann::json;

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false;
};

// A piece of input after step 1 or 2: either an added token's id or text still to tokenize.
struct Segment {
  std::optional<int32_t> id;
  std::string text;
  bool at_start = false;
};

char32_t DecodeAt(std::string_view s, size_t i, size_t* len) {
  unsigned char c = s[i];
  if (c < 0x80) { *len = 1; return c; }
  int n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
  char32_t cp = c & (0x7F >> n);
  for (int k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
  *len = n;
  return cp;
}

char32_t LastChar(std::string_view s, size_t* start) {
  size_t i = s.size();
  do { --i; } while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80);
  size_t len;
  *start = i;
  return DecodeAt(s, i, &len);
}

bool IsWordChar(char32_t c) { return u_isalnum(c) || c == '_'; }

// Leftmost-longest matching of added tokens, over a byte trie.
class AddedMatcher {
 public:
  void Add(const AddedToken* token) {
    size_t node = 0;
    for (unsigned char c : token->content) {
      auto it = nodes_[node].next.find(c);
      if (it == nodes_[node].next.end()) {
        nodes_.push_back({});
        it = nodes_[node].next.emplace(c, nodes_.size() - 1).first;
      }
      node = it->second;
    }
    nodes_[node].token = token;
    first_bytes_[static_cast<unsigned char>(token->content[0])] = true;
  }
  bool Empty() const { return nodes_.size() == 1; }

  // The longest token starting at `at`, or null.
  const AddedToken* LongestAt(std::string_view text, size_t at) const {
    if (!first_bytes_[static_cast<unsigned char>(text[at])]) return nullptr;
    const AddedToken* best = nullptr;
    size_t node = 0;
    for (size_t i = at; i < text.size(); ++i) {
      auto it = nodes_[node].next.find(static_cast<unsigned char>(text[i]));
      if (it == nodes_[node].next.end()) break;
      node = it->second;
      if (nodes_[node].token) best = nodes_[node].token;
    }
    return best;
  }

 private:
  struct Node {
    std::map<unsigned char, size_t> next;
    const AddedToken* token = nullptr;
  };
  std::vector<Node> nodes_{Node{}};
  bool first_bytes_[256] = {};
};

// Appends `text` split at the matcher's tokens (AddedVocabulary::find_matches in the crate).
void SplitAdded(const AddedMatcher& matcher, const std::string& text, bool at_start,
                std::vector<Segment>* out) {
  if (matcher.Empty()) {
    if (!text.empty()) out->push_back({std::nullopt, text, at_start});
    return;
  }
  size_t done = 0;  // end of the last emitted match
  for (size_t i = 0; i < text.size();) {
    const AddedToken* t = matcher.LongestAt(text, i);
    if (!t) { ++i; continue; }
    size_t start = i, stop = i + t->content.size();
    if (t->single_word) {
      size_t unused, len;
      bool left_ok = start == 0 || !IsWordChar(LastChar(std::string_view(text).substr(0, start), &unused));
      bool right_ok = stop == text.size() || !IsWordChar(DecodeAt(text, stop, &len));
      if (!left_ok || !right_ok) { ++i; continue; }
    }
    if (t->lstrip) {
      size_t s = start;
      while (s > done) {
        size_t prev;
        char32_t c = LastChar(std::string_view(text).substr(0, s), &prev);
        if (!u_isUWhiteSpace(c)) break;
        s = prev;
      }
      start = std::max(s, done);
    }
    if (t->rstrip) {
      size_t len;
      while (stop < text.size() && u_isUWhiteSpace(DecodeAt(text, stop, &len))) stop += len;
    }
    if (done < start) out->push_back({std::nullopt, text.substr(done, start - done), at_start && done == 0});
    out->push_back({t->id, "", false});
    done = stop;
    i = stop;
  }
  if (done < text.size()) out->push_back({std::nullopt, text.substr(done), at_start && done == 0});
}

// TemplateProcessing's single-sequence template, or Bert/Roberta's fixed one.
struct PostTemplate {
  std::vector<int32_t> before, after;
};

Result<PostTemplate> TemplateFrom(const json& spec, const std::string& where) {
  PostTemplate t;
  if (spec.is_null()) return t;
  std::string type = spec.value("type", std::string());
  if (type == "ByteLevel") return t;
  if (type == "Sequence") {
    for (const json& p : spec.value("processors", json::array())) {
      ATTUNE_ASSIGN_OR_RETURN(PostTemplate part, TemplateFrom(p, where));
      t.before.insert(t.before.end(), part.before.begin(), part.before.end());
      t.after.insert(t.after.begin(), part.after.begin(), part.after.end());
    }
    return t;
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    t.before.push_back(spec["cls"][1].get<int32_t>());
    t.after.push_back(spec["sep"][1].get<int32_t>());
    return t;
  }
  if (type != "TemplateProcessing") {
    return Status::InvalidArgument(where + ": post-processor type '" + type +
                                   "' is not supported (supported: TemplateProcessing, ByteLevel, "
                                   "BertProcessing, RobertaProcessing, Sequence)");
  }
  bool seen_sequence = false;
  for (const json& item : spec.value("single", json::array())) {
    if (item.contains("Sequence")) { seen_sequence = true; continue; }
    std::string name = item["SpecialToken"].value("id", std::string());
    const json& ids = spec["special_tokens"][name]["ids"];
    for (const json& id : ids) (seen_sequence ? t.after : t.before).push_back(id.get<int32_t>());
  }
  return t;
}

class HfTokenizer : public Tokenizer {
 public:
  void Encode(std::string_view text, bool add_special_tokens, std::vector<int32_t>* ids) override {
    if (add_special_tokens) ids->insert(ids->end(), post_.before.begin(), post_.before.end());
    segments_.clear();
    SplitAdded(raw_added_, std::string(text), true, &segments_);
    for (Segment& seg : segments_) {
      if (seg.id) { ids->push_back(*seg.id); continue; }
      if (normalizer_) normalizer_->Apply(&seg.text);
      normalized_.clear();
      SplitAdded(normalized_added_, seg.text, seg.at_start, &normalized_);
      for (Segment& part : normalized_) {
        if (part.id) { ids->push_back(*part.id); continue; }
        TokenizeText(part, ids);
      }
    }
    if (add_special_tokens) ids->insert(ids->end(), post_.after.begin(), post_.after.end());
  }

  std::optional<int32_t> TokenId(std::string_view token) const override {
    for (const AddedToken& t : added_) {
      if (t.content == token) return t.id;
    }
    return model_->TokenId(token);
  }

  // Reads the parsed tokenizer.json `doc` (and tokenizer_config.json `config`, or null) of the
  // file `path` whose bytes hash to `sha256`.
  Status Load(const std::string& path, const std::string& sha256, const json& doc,
              const json& config);

 private:
  void TokenizeText(const Segment& part, std::vector<int32_t>* ids) {
    pieces_.assign(1, Piece{part.text, part.at_start});
    if (pre_) pre_->Apply(&pieces_);
    for (const Piece& p : pieces_) model_->Tokenize(p.text, ids);
  }
  Status LoadAdded(const json& list, const std::string& where);
  void FindSpecialIds(const json& config);

  std::vector<AddedToken> added_;
  AddedMatcher raw_added_, normalized_added_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_;
  std::unique_ptr<BpeModel> model_;
  PostTemplate post_;
  std::vector<Segment> segments_, normalized_;
  std::vector<Piece> pieces_;
};

Status HfTokenizer::LoadAdded(const json& list, const std::string& where) {
  added_.reserve(list.size());  // because the matchers keep pointers into added_
  for (size_t i = 0; i < list.size(); ++i) {
    const json& t = list[i];
    if (!t.is_object() || !t.contains("content") || !t["content"].is_string() ||
        !t.contains("id") || !t["id"].is_number_integer()) {
      return Status::InvalidArgument(where + "[" + std::to_string(i) +
                                     "]: an added token needs a string 'content' and an integer 'id'");
    }
    AddedToken a;
    a.content = t["content"].get<std::string>();
    a.id = t["id"].get<int32_t>();
    a.single_word = t.value("single_word", false);
    a.lstrip = t.value("lstrip", false);
    a.rstrip = t.value("rstrip", false);
    a.normalized = t.value("normalized", !t.value("special", false));
    if (a.content.empty()) continue;
    added_.push_back(a);
    info_.vocab_size = std::max<int64_t>(info_.vocab_size, a.id + 1);
  }
  for (const AddedToken& a : added_) (a.normalized ? normalized_added_ : raw_added_).Add(&a);
  return Status::Ok();
}

// A special token's name from tokenizer_config.json: a string or {"content": ...}.
std::optional<std::string> ConfigToken(const json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return std::nullopt;
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  return std::nullopt;
}

void HfTokenizer::FindSpecialIds(const json& config) {
  auto lookup = [&](const char* key, std::initializer_list<const char*> fallbacks) {
    std::optional<std::string> name = ConfigToken(config, key);
    if (name) return TokenId(*name);
    for (const char* f : fallbacks) {
      if (auto id = TokenId(f)) return id;
    }
    return std::optional<int32_t>();
  };
  info_.bos_id = lookup("bos_token", {"<|begin_of_text|>", "<s>", "<｜begin▁of▁sentence｜>"});
  info_.eos_id = lookup("eos_token", {"<|end_of_text|>", "</s>", "<|endoftext|>",
                                      "<｜end▁of▁sentence｜>"});
  info_.pad_id = lookup("pad_token", {"<pad>", "<|pad|>", "<｜▁pad▁｜>"});
}

Status HfTokenizer::Load(const std::string& path, const std::string& sha256, const json& doc,
                         const json& config) {
  info_.kind = "tokenizer.json";
  info_.path = path;
  info_.sha256 = sha256;
  if (!doc.is_object() || !doc.contains("model")) {
    return Status::InvalidArgument(path + ": not a tokenizer.json (no \"model\" object)");
  }
  ATTUNE_ASSIGN_OR_RETURN(model_, BpeModel::FromJson(doc["model"], path));
  info_.vocab_size = model_->VocabSize();
  ATTUNE_RETURN_IF_ERROR(LoadAdded(doc.value("added_tokens", json::array()), path + ": added_tokens"));
  ATTUNE_ASSIGN_OR_RETURN(normalizer_,
                          MakeNormalizer(doc.value("normalizer", json()), path + ": normalizer"));
  ATTUNE_ASSIGN_OR_RETURN(pre_, MakePreTokenizer(doc.value("pre_tokenizer", json()),
                                                 path + ": pre_tokenizer"));
  ATTUNE_ASSIGN_OR_RETURN(post_, TemplateFrom(doc.value("post_processor", json()),
                                              path + ": post_processor"));
  FindSpecialIds(config);
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> LoadHfTokenizer(const std::string& path, const std::string& bytes,
                                                   const std::string& config_json) {
  json doc, config;
  try {
    doc = json::parse(bytes);
    if (!config_json.empty()) config = json::parse(config_json);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(path + ": not valid JSON: " + e.what());
  }
  auto tok = std::make_unique<HfTokenizer>();
  try {
    ATTUNE_RETURN_IF_ERROR(tok->Load(path, Sha256Hex(bytes), doc, config));
  } catch (const json::exception& e) {
    // A field of the wrong JSON type deep in a component: say which file, not where in our code.
    return Status::InvalidArgument(path + ": unexpected structure: " + e.what());
  }
  return std::unique_ptr<Tokenizer>(std::move(tok));
}

}  // namespace attune::data
