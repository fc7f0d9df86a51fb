// Copyright attune authors.
//
// Normalizers of tokenizer.json. Unicode normalization forms and lower-casing use ICU, the
// reference implementation of both.
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>
#include <unicode/uchar.h>

#include "data/hf_components.h"
#include "data/unicode_regex.h"

namespace attune::data {
namespace {

using nlohmann::json;

std::string StringField(const json& spec, const char* key) {
  auto it = spec.find(key);
  return it != spec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts)
      : parts_(std::move(parts)) {}
  void Apply(std::string* text) const override {
    for (const auto& p : parts_) p->Apply(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void Apply(std::string* text) const override {
    if (!text->empty()) text->insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

// Replace with a literal pattern, or with a regular expression (every match replaced).
class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(std::string literal, std::unique_ptr<UnicodeRegex> regex, std::string content)
      : literal_(std::move(literal)), regex_(std::move(regex)), content_(std::move(content)) {}
  void Apply(std::string* text) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    if (regex_) {
      matches = regex_->FindAll(*text);
    } else if (!literal_.empty()) {
      for (size_t at = text->find(literal_); at != std::string::npos;
           at = text->find(literal_, at + literal_.size())) {
        matches.emplace_back(at, at + literal_.size());
      }
    }
    if (matches.empty()) return;
    std::string out;
    out.reserve(text->size());
    size_t prev = 0;
    for (const auto& [b, e] : matches) {
      out.append(*text, prev, b - prev);
      out += content_;
      prev = e;
    }
    out.append(*text, prev, std::string::npos);
    *text = std::move(out);
  }

 private:
  std::string literal_;
  std::unique_ptr<UnicodeRegex> regex_;
  std::string content_;
};

enum class UnicodeForm { kNfc, kNfd, kNfkc, kNfkd };

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(const icu::Normalizer2* n) : normalizer_(n) {}
  void Apply(std::string* text) const override {
    bool ascii = true;
    for (unsigned char c : *text) ascii = ascii && c < 0x80;
    if (ascii) return;  // because every normalization form leaves ASCII unchanged
    UErrorCode error = U_ZERO_ERROR;
    icu::UnicodeString in = icu::UnicodeString::fromUTF8(*text);
    icu::UnicodeString out = normalizer_->normalize(in, error);
    if (U_FAILURE(error)) return;  // only on allocation failure; the text stays as it was
    text->clear();
    out.toUTF8String(*text);
  }

 private:
  const icu::Normalizer2* normalizer_;
};

Result<std::unique_ptr<Normalizer>> MakeUnicode(UnicodeForm form, const std::string& where) {
  UErrorCode error = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (form) {
    case UnicodeForm::kNfc: n = icu::Normalizer2::getNFCInstance(error); break;
    case UnicodeForm::kNfd: n = icu::Normalizer2::getNFDInstance(error); break;
    case UnicodeForm::kNfkc: n = icu::Normalizer2::getNFKCInstance(error); break;
    case UnicodeForm::kNfkd: n = icu::Normalizer2::getNFKDInstance(error); break;
  }
  if (U_FAILURE(error) || n == nullptr) {
    return Status::Internal(where + ": ICU has no normalizer: " + u_errorName(error));
  }
  return std::unique_ptr<Normalizer>(new UnicodeNormalizer(n));
}

class LowercaseNormalizer : public Normalizer {
 public:
  void Apply(std::string* text) const override {
    icu::UnicodeString s = icu::UnicodeString::fromUTF8(*text);
    s.toLower(icu::Locale::getRoot());
    text->clear();
    s.toUTF8String(*text);
  }
};

// Strip: Unicode white space off either end (Rust's char::is_whitespace).
class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void Apply(std::string* text) const override {
    icu::UnicodeString s = icu::UnicodeString::fromUTF8(*text);
    int32_t b = 0, e = s.length();
    while (left_ && b < e && u_isUWhiteSpace(s.char32At(b))) b = s.moveIndex32(b, 1);
    while (right_ && e > b && u_isUWhiteSpace(s.char32At(s.moveIndex32(e, -1)))) {
      e = s.moveIndex32(e, -1);
    }
    text->clear();
    s.tempSubStringBetween(b, e).toUTF8String(*text);
  }

 private:
  bool left_, right_;
};

Result<std::unique_ptr<Normalizer>> MakeReplace(const json& spec, const std::string& where) {
  const json& pattern = spec.value("pattern", json::object());
  std::string content = StringField(spec, "content");
  if (pattern.contains("Regex")) {
    ATTUNE_ASSIGN_OR_RETURN(auto regex, UnicodeRegex::Compile(pattern["Regex"].get<std::string>()));
    return std::unique_ptr<Normalizer>(new ReplaceNormalizer("", std::move(regex), content));
  }
  if (pattern.contains("String") && pattern["String"].is_string()) {
    return std::unique_ptr<Normalizer>(
        new ReplaceNormalizer(pattern["String"].get<std::string>(), nullptr, content));
  }
  return Status::InvalidArgument(where + ": Replace needs pattern.String or pattern.Regex");
}

Result<std::unique_ptr<Normalizer>> MakeSequence(const json& spec, const std::string& where) {
  std::vector<std::unique_ptr<Normalizer>> parts;
  const json& list = spec.value("normalizers", json::array());
  for (size_t i = 0; i < list.size(); ++i) {
    ATTUNE_ASSIGN_OR_RETURN(auto part,
                            MakeNormalizer(list[i], where + ".normalizers[" + std::to_string(i) + "]"));
    if (part) parts.push_back(std::move(part));
  }
  return std::unique_ptr<Normalizer>(new SequenceNormalizer(std::move(parts)));
}

}  // namespace

Result<std::unique_ptr<Normalizer>> MakeNormalizer(const json& spec, const std::string& where) {
  if (spec.is_null()) return std::unique_ptr<Normalizer>();
  std::string type = StringField(spec, "type");
  if (type == "Sequence") return MakeSequence(spec, where);
  if (type == "Prepend") {
    return std::unique_ptr<Normalizer>(new PrependNormalizer(StringField(spec, "prepend")));
  }
  if (type == "Replace") return MakeReplace(spec, where);
  if (type == "NFC") return MakeUnicode(UnicodeForm::kNfc, where);
  if (type == "NFD") return MakeUnicode(UnicodeForm::kNfd, where);
  if (type == "NFKC") return MakeUnicode(UnicodeForm::kNfkc, where);
  if (type == "NFKD") return MakeUnicode(UnicodeForm::kNfkd, where);
  if (type == "Lowercase") return std::unique_ptr<Normalizer>(new LowercaseNormalizer());
  if (type == "Strip") {
    return std::unique_ptr<Normalizer>(new StripNormalizer(spec.value("strip_left", true),
                                                           spec.value("strip_right", true)));
  }
  return Status::InvalidArgument(where + ": normalizer type '" + type +
                                 "' is not supported (supported: Sequence, Prepend, Replace, NFC, "
                                 "NFD, NFKC, NFKD, Lowercase, Strip)");
}

}  // namespace attune::data
