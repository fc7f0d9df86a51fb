// Copyright attune authors.
//
// Pre-tokenizers of tokenizer.json, after the Rust `tokenizers` crate: Sequence, Split, ByteLevel,
// Metaspace, Digits, Whitespace and WhitespaceSplit.
#include <algorithm>
#include <array>

#include "data/hf_components.h"
#include "data/unicode_regex.h"

namespace attune::data {
namespace {

using nlohmann::json;

// GPT-2's pattern, used by ByteLevel when use_regex is true.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::array<std::string, 256> BuildByteTable() {
  // bytes_to_unicode(): printable Latin-1 bytes map to themselves, the rest to U+0100 upwards.
  std::array<std::string, 256> table;
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    int cp = printable ? b : next++;
    std::string s;
    if (cp < 0x80) {
      s.push_back(static_cast<char>(cp));
    } else {
      s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    table[b] = s;
  }
  return table;
}

void ForEachPiece(std::vector<Piece>* pieces, const auto& split) {
  std::vector<Piece> out;
  out.reserve(pieces->size());
  for (const Piece& p : *pieces) split(p, &out);
  *pieces = std::move(out);
}

std::vector<std::pair<size_t, size_t>> FindLiteral(std::string_view text, std::string_view lit) {
  std::vector<std::pair<size_t, size_t>> matches;
  if (lit.empty()) return matches;
  for (size_t at = text.find(lit); at != std::string_view::npos; at = text.find(lit, at + lit.size())) {
    matches.emplace_back(at, at + lit.size());
  }
  return matches;
}

class SequencePre : public PreTokenizer {
 public:
  explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  void Apply(std::vector<Piece>* pieces) const override {
    for (const auto& p : parts_) p->Apply(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

class SplitPre : public PreTokenizer {
 public:
  SplitPre(std::string literal, std::unique_ptr<UnicodeRegex> regex, SplitBehavior behavior,
           bool invert)
      : literal_(std::move(literal)), regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
  void Apply(std::vector<Piece>* pieces) const override {
    ForEachPiece(pieces, [&](const Piece& p, std::vector<Piece>* out) {
      auto matches = regex_ ? regex_->FindAll(p.text) : FindLiteral(p.text, literal_);
      SplitPiece(p, matches, behavior_, invert_, out);
    });
  }

 private:
  std::string literal_;
  std::unique_ptr<UnicodeRegex> regex_;
  SplitBehavior behavior_;
  bool invert_;
};

class ByteLevelPre : public PreTokenizer {
 public:
  ByteLevelPre(bool add_prefix_space, std::unique_ptr<UnicodeRegex> regex)
      : add_prefix_space_(add_prefix_space), regex_(std::move(regex)) {}
  void Apply(std::vector<Piece>* pieces) const override {
    ForEachPiece(pieces, [&](const Piece& p, std::vector<Piece>* out) {
      Piece piece = p;
      if (add_prefix_space_ && (piece.text.empty() || piece.text[0] != ' ')) {
        piece.text = " " + piece.text;
      }
      size_t first = out->size();
      if (regex_) {
        SplitPiece(piece, regex_->FindAll(piece.text), SplitBehavior::kIsolated, false, out);
      } else if (!piece.text.empty()) {
        out->push_back(std::move(piece));
      }
      for (size_t i = first; i < out->size(); ++i) (*out)[i].text = ByteLevelEncode((*out)[i].text);
    });
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<UnicodeRegex> regex_;
};

enum class PrependScheme { kAlways, kFirst, kNever };

class MetaspacePre : public PreTokenizer {
 public:
  MetaspacePre(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void Apply(std::vector<Piece>* pieces) const override {
    ForEachPiece(pieces, [&](const Piece& p, std::vector<Piece>* out) {
      Piece piece = p;
      std::string replaced;
      for (char c : piece.text) {
        if (c == ' ') replaced += replacement_; else replaced.push_back(c);
      }
      piece.text = std::move(replaced);
      bool starts = piece.text.compare(0, replacement_.size(), replacement_) == 0;
      bool prepend = scheme_ == PrependScheme::kAlways ||
                     (scheme_ == PrependScheme::kFirst && piece.at_start);
      if (prepend && !starts) piece.text.insert(0, replacement_);
      if (!split_) {
        if (!piece.text.empty()) out->push_back(std::move(piece));
        return;
      }
      SplitPiece(piece, FindLiteral(piece.text, replacement_), SplitBehavior::kMergedWithNext,
                 false, out);
    });
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

// Digits, Whitespace and WhitespaceSplit: a fixed regex and behaviour.
class RegexPre : public PreTokenizer {
 public:
  RegexPre(std::unique_ptr<UnicodeRegex> regex, SplitBehavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
  void Apply(std::vector<Piece>* pieces) const override {
    ForEachPiece(pieces, [&](const Piece& p, std::vector<Piece>* out) {
      SplitPiece(p, regex_->FindAll(p.text), behavior_, invert_, out);
    });
  }

 private:
  std::unique_ptr<UnicodeRegex> regex_;
  SplitBehavior behavior_;
  bool invert_;
};

Result<SplitBehavior> BehaviorFromName(const std::string& name, const std::string& where) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  return Status::InvalidArgument(where + ": unknown split behavior '" + name +
                                 "' (expected Removed, Isolated, MergedWithPrevious, "
                                 "MergedWithNext or Contiguous)");
}

Result<std::unique_ptr<PreTokenizer>> MakeSplit(const json& spec, const std::string& where) {
  ATTUNE_ASSIGN_OR_RETURN(SplitBehavior behavior,
                          BehaviorFromName(spec.value("behavior", std::string()), where));
  bool invert = spec.value("invert", false);
  const json& pattern = spec.value("pattern", json::object());
  if (pattern.contains("Regex") && pattern["Regex"].is_string()) {
    ATTUNE_ASSIGN_OR_RETURN(auto regex, UnicodeRegex::Compile(pattern["Regex"].get<std::string>()));
    return std::unique_ptr<PreTokenizer>(new SplitPre("", std::move(regex), behavior, invert));
  }
  if (pattern.contains("String") && pattern["String"].is_string()) {
    return std::unique_ptr<PreTokenizer>(
        new SplitPre(pattern["String"].get<std::string>(), nullptr, behavior, invert));
  }
  return Status::InvalidArgument(where + ": Split needs pattern.String or pattern.Regex");
}

Result<std::unique_ptr<PreTokenizer>> MakeByteLevel(const json& spec) {
  std::unique_ptr<UnicodeRegex> regex;
  if (spec.value("use_regex", true)) {
    ATTUNE_ASSIGN_OR_RETURN(regex, UnicodeRegex::Compile(kGpt2Pattern));
  }
  return std::unique_ptr<PreTokenizer>(
      new ByteLevelPre(spec.value("add_prefix_space", true), std::move(regex)));
}

Result<std::unique_ptr<PreTokenizer>> MakeMetaspace(const json& spec, const std::string& where) {
  std::string replacement = spec.value("replacement", std::string("\xE2\x96\x81"));
  PrependScheme scheme = PrependScheme::kAlways;
  if (spec.contains("prepend_scheme")) {
    std::string s = spec.value("prepend_scheme", std::string());
    if (s == "always") scheme = PrependScheme::kAlways;
    else if (s == "first") scheme = PrependScheme::kFirst;
    else if (s == "never") scheme = PrependScheme::kNever;
    else return Status::InvalidArgument(where + ": unknown prepend_scheme '" + s + "'");
  } else if (!spec.value("add_prefix_space", true)) {
    scheme = PrependScheme::kNever;  // the older form of the same setting
  }
  return std::unique_ptr<PreTokenizer>(
      new MetaspacePre(replacement, scheme, spec.value("split", true)));
}

Result<std::unique_ptr<PreTokenizer>> MakeFixed(const char* pattern, SplitBehavior behavior,
                                                bool invert) {
  ATTUNE_ASSIGN_OR_RETURN(auto regex, UnicodeRegex::Compile(pattern));
  return std::unique_ptr<PreTokenizer>(new RegexPre(std::move(regex), behavior, invert));
}

Result<std::unique_ptr<PreTokenizer>> MakeSequence(const json& spec, const std::string& where) {
  std::vector<std::unique_ptr<PreTokenizer>> parts;
  const json& list = spec.value("pretokenizers", json::array());
  for (size_t i = 0; i < list.size(); ++i) {
    ATTUNE_ASSIGN_OR_RETURN(
        auto part, MakePreTokenizer(list[i], where + ".pretokenizers[" + std::to_string(i) + "]"));
    if (part) parts.push_back(std::move(part));
  }
  return std::unique_ptr<PreTokenizer>(new SequencePre(std::move(parts)));
}

}  // namespace

const std::string& ByteLevelChar(unsigned char b) {
  static const std::array<std::string, 256> kTable = BuildByteTable();
  return kTable[b];
}

std::string ByteLevelEncode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) out += ByteLevelChar(b);
  return out;
}

void SplitPiece(const Piece& piece, const std::vector<std::pair<size_t, size_t>>& found,
                SplitBehavior behavior, bool invert, std::vector<Piece>* out) {
  // Matches and the gaps between them, in order, each flagged as a match or not.
  std::vector<std::pair<std::pair<size_t, size_t>, bool>> parts;
  const std::string& text = piece.text;
  if (text.empty()) return;
  size_t prev = 0;
  for (const auto& [b, e] : found) {
    if (prev != b) parts.push_back({{prev, b}, invert});
    parts.push_back({{b, e}, !invert});
    prev = e;
  }
  if (prev != text.size()) parts.push_back({{prev, text.size()}, invert});

  std::vector<std::pair<std::pair<size_t, size_t>, bool>> kept;  // (range, removed)
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (const auto& [r, m] : parts) kept.push_back({r, false});
      break;
    case SplitBehavior::kRemoved:
      for (const auto& [r, m] : parts) kept.push_back({r, m});
      break;
    case SplitBehavior::kContiguous:
      for (const auto& [r, m] : parts) {
        if (m == previous_match && !kept.empty()) kept.back().first.second = r.second;
        else kept.push_back({r, false});
        previous_match = m;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const auto& [r, m] : parts) {
        if (m && !previous_match && !kept.empty()) kept.back().first.second = r.second;
        else kept.push_back({r, false});
        previous_match = m;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->second && !previous_match && !kept.empty()) kept.back().first.first = it->first.first;
        else kept.push_back({it->first, false});
        previous_match = it->second;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  for (const auto& [r, removed] : kept) {
    if (removed || r.first == r.second) continue;
    out->push_back({text.substr(r.first, r.second - r.first), piece.at_start && r.first == 0});
  }
}

Result<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const json& spec, const std::string& where) {
  if (spec.is_null()) return std::unique_ptr<PreTokenizer>();
  std::string type = spec.value("type", std::string());
  if (type == "Sequence") return MakeSequence(spec, where);
  if (type == "Split") return MakeSplit(spec, where);
  if (type == "ByteLevel") return MakeByteLevel(spec);
  if (type == "Metaspace") return MakeMetaspace(spec, where);
  if (type == "Digits") {
    return MakeFixed(R"(\p{N})", spec.value("individual_digits", false)
                                     ? SplitBehavior::kIsolated
                                     : SplitBehavior::kContiguous, false);
  }
  if (type == "Whitespace") return MakeFixed(R"(\w+|[^\w\s]+)", SplitBehavior::kRemoved, true);
  if (type == "WhitespaceSplit") return MakeFixed(R"(\s+)", SplitBehavior::kRemoved, false);
  return Status::InvalidArgument(where + ": pre-tokenizer type '" + type +
                                 "' is not supported (supported: Sequence, Split, ByteLevel, "
                                 "Metaspace, Digits, Whitespace, WhitespaceSplit)");
}

}  // namespace attune::data
