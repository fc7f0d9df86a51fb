// Copyright attune authors.
// The tokenizer.json pipeline on small hand-written files: merge order, byte fallback, unknown
// tokens, ignore_merges, added tokens, split behaviours, normalizers and post-processors.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "data/hf_components.h"
#include "data/tokenizer.h"

namespace attune::data {
namespace {

using nlohmann::json;

json TinyBpe() {
  return json::parse(R"({
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5,
                                       "<unk>": 6, "<0x7A>": 7},
              "merges": ["b c", "a b", "a bc"], "unk_token": "<unk>"},
    "added_tokens": [{"id": 8, "content": "<eos>", "special": true}]
  })");
}

std::vector<int32_t> Encode(const json& doc, const std::string& text, bool special = false) {
  auto tok = LoadHfTokenizer("test.json", doc.dump(), "");
  REQUIRE(tok.ok());
  std::vector<int32_t> ids;
  (*tok)->Encode(text, special, &ids);
  return ids;
}

TEST_CASE("merges apply lowest rank first, not left to right", "[data][bpe]") {
  // "b c" has rank 0, so "abc" is a + bc -> abc, never ab + c.
  CHECK(Encode(TinyBpe(), "abc") == std::vector<int32_t>{5});
  CHECK(Encode(TinyBpe(), "abcab") == std::vector<int32_t>{5, 3});
}

TEST_CASE("unknown characters become unk, fused when fuse_unk is set", "[data][bpe]") {
  json doc = TinyBpe();
  CHECK(Encode(doc, "xya") == std::vector<int32_t>{6, 6, 0});
  doc["model"]["fuse_unk"] = true;
  CHECK(Encode(doc, "xya") == std::vector<int32_t>{6, 0});
}

TEST_CASE("byte fallback spells an unknown character as <0xXX> tokens", "[data][bpe]") {
  json doc = TinyBpe();
  doc["model"]["byte_fallback"] = true;
  CHECK(Encode(doc, "za") == std::vector<int32_t>{7, 0});
  // No <0xC3> in the vocabulary: the whole character falls back to unk.
  CHECK(Encode(doc, "\xC3\xA9") == std::vector<int32_t>{6});
}

TEST_CASE("ignore_merges takes a word that is in the vocabulary as it is", "[data][bpe]") {
  json doc = TinyBpe();
  doc["model"]["vocab"]["ca"] = 9;
  CHECK(Encode(doc, "ca") == std::vector<int32_t>{2, 0});
  doc["model"]["ignore_merges"] = true;
  CHECK(Encode(doc, "ca") == std::vector<int32_t>{9});
}

TEST_CASE("added tokens are cut out of the text before the model runs", "[data][bpe]") {
  CHECK(Encode(TinyBpe(), "ab<eos>c") == std::vector<int32_t>{3, 8, 2});
  CHECK(Encode(TinyBpe(), "<eos") == std::vector<int32_t>{6, 6, 6, 6});
}

TEST_CASE("lstrip and rstrip added tokens take the white space beside them", "[data][bpe]") {
  json doc = TinyBpe();
  doc["pre_tokenizer"] = json::parse(R"({"type": "WhitespaceSplit"})");
  doc["added_tokens"][0]["lstrip"] = true;
  CHECK(Encode(doc, "a  <eos> b") == std::vector<int32_t>{0, 8, 1});
}

TEST_CASE("a TemplateProcessing post-processor adds its tokens only on request", "[data][bpe]") {
  json doc = TinyBpe();
  doc["post_processor"] = json::parse(R"({"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<eos>"}}, {"Sequence": {"id": "A"}}, {"SpecialToken": {"id": "<eos>"}}],
    "special_tokens": {"<eos>": {"id": "<eos>", "ids": [8], "tokens": ["<eos>"]}}})");
  CHECK(Encode(doc, "ab", false) == std::vector<int32_t>{3});
  CHECK(Encode(doc, "ab", true) == std::vector<int32_t>{8, 3, 8});
}

TEST_CASE("merges are read in both the string and the pair form", "[data][bpe]") {
  json doc = TinyBpe();
  doc["model"]["merges"] = json::parse(R"([["b", "c"], ["a", "b"], ["a", "bc"]])");
  CHECK(Encode(doc, "abc") == std::vector<int32_t>{5});
}

TEST_CASE("unsupported components are refused with their name", "[data][bpe]") {
  json doc = TinyBpe();
  doc["normalizer"] = json::parse(R"({"type": "Precompiled"})");
  auto tok = LoadHfTokenizer("t.json", doc.dump(), "");
  REQUIRE_FALSE(tok.ok());
  CHECK_THAT(tok.status().message(), Catch::Contains("normalizer type 'Precompiled' is not supported"));
  json bad = TinyBpe();
  bad["model"]["merges"] = json::parse(R"(["a q"])");
  auto merge = LoadHfTokenizer("t.json", bad.dump(), "");
  REQUIRE_FALSE(merge.ok());
  CHECK_THAT(merge.status().message(), Catch::Contains("model.merges[0]"));
}

std::vector<std::string> Split(const std::string& text, std::vector<std::pair<size_t, size_t>> m,
                               SplitBehavior b, bool invert = false) {
  std::vector<Piece> out;
  SplitPiece(Piece{text, true}, m, b, invert, &out);
  std::vector<std::string> texts;
  for (const Piece& p : out) texts.push_back(p.text);
  return texts;
}

TEST_CASE("split behaviours place the delimiters as the tokenizers crate does", "[data][bpe]") {
  // "a-b--c" with the dashes as matches.
  std::vector<std::pair<size_t, size_t>> dashes = {{1, 2}, {3, 4}, {4, 5}};
  using V = std::vector<std::string>;
  CHECK(Split("a-b--c", dashes, SplitBehavior::kRemoved) == V{"a", "b", "c"});
  CHECK(Split("a-b--c", dashes, SplitBehavior::kIsolated) == V{"a", "-", "b", "-", "-", "c"});
  CHECK(Split("a-b--c", dashes, SplitBehavior::kMergedWithPrevious) == V{"a-", "b-", "-", "c"});
  CHECK(Split("a-b--c", dashes, SplitBehavior::kMergedWithNext) == V{"a", "-b", "-", "-c"});
  CHECK(Split("a-b--c", dashes, SplitBehavior::kContiguous) == V{"a", "-", "b", "--", "c"});
  CHECK(Split("a-b--c", dashes, SplitBehavior::kRemoved, true) == V{"-", "-", "-"});
}

TEST_CASE("the byte-level table maps every byte to a printable character", "[data][bpe]") {
  CHECK(ByteLevelEncode(" ") == "\xC4\xA0");   // U+0120 'Ġ'
  CHECK(ByteLevelEncode("\n") == "\xC4\x8A");  // U+010A 'Ċ'
  CHECK(ByteLevelEncode("A") == "A");
}

TEST_CASE("NFC and Prepend/Replace normalizers change the text before the model", "[data][bpe]") {
  json doc = TinyBpe();
  doc["model"]["vocab"]["\xC3\xA9"] = 10;  // é, precomposed
  doc["normalizer"] = json::parse(R"({"type": "NFC"})");
  CHECK(Encode(doc, "e\xCC\x81") == std::vector<int32_t>{10});
  doc["normalizer"] = json::parse(R"({"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "a"}, {"type": "Replace", "pattern": {"String": " "}, "content": "b"}]})");
  CHECK(Encode(doc, " c") == std::vector<int32_t>{5});  // "abc"
}

}  // namespace
}  // namespace attune::data
