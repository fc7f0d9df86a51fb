// Copyright attune authors.
// Packing, statistics, the JSONL reader, chat masks and the indexed dataset writer.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/indexed_dataset.h"
#include "data/jsonl.h"
#include "data/length_stats.h"
#include "data/packer.h"
#include "data/rows.h"
#include "data/tokenizer.h"

namespace attune::data {
namespace {

namespace fs = std::filesystem;

std::vector<PackedRow> PackAll(PackOptions opt, const std::vector<int>& doc_lengths) {
  std::vector<PackedRow> rows;
  Packer packer(opt, [&](const PackedRow& r) {
    rows.push_back(r);
    return Status::Ok();
  });
  int32_t next = 1;
  for (int n : doc_lengths) {
    std::vector<int32_t> ids(n);
    for (auto& id : ids) id = next++;
    REQUIRE(packer.Add(ids, std::vector<uint8_t>(n, 1)).ok());
  }
  REQUIRE(packer.Finish().ok());
  return rows;
}

TEST_CASE("greedy packing with splitting fills every row but the last", "[data][pack]") {
  auto rows = PackAll({8, PackStrategy::kGreedy, true, 0}, {5, 5, 5});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].ids == std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(rows[1].ids == std::vector<int32_t>{9, 10, 11, 12, 13, 14, 15, 0});
  CHECK(rows[1].mask.back() == 0);
}

TEST_CASE("greedy packing without splitting pads and truncates", "[data][pack]") {
  std::vector<PackedRow> rows;
  Packer packer({8, PackStrategy::kGreedy, false, 0}, [&](const PackedRow& r) {
    rows.push_back(r);
    return Status::Ok();
  });
  REQUIRE(packer.Add(std::vector<int32_t>(5, 1), std::vector<uint8_t>(5, 1)).ok());
  REQUIRE(packer.Add(std::vector<int32_t>(5, 2), std::vector<uint8_t>(5, 1)).ok());
  REQUIRE(packer.Add(std::vector<int32_t>(11, 3), std::vector<uint8_t>(11, 1)).ok());
  REQUIRE(packer.Finish().ok());
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].pad == 3);
  CHECK(packer.Counts().truncated_documents == 1);
  CHECK(packer.Counts().truncated_tokens == 3);
  CHECK(packer.Counts().split_documents == 0);
}

TEST_CASE("best-fit puts a document into the fullest row that holds it", "[data][pack]") {
  auto rows = PackAll({10, PackStrategy::kBestFit, false, 0}, {6, 7, 3, 4});
  // 6 -> row A (4 free), 7 -> row B (3 free), 3 -> B (best fit), 4 -> A.
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].documents == 2);
  CHECK(rows[1].documents == 2);
  CHECK(rows[0].pad + rows[1].pad == 0);
}

TEST_CASE("best-fit with a bounded number of open rows writes out the fullest", "[data][pack]") {
  PackOptions opt{10, PackStrategy::kBestFit, true, 0, 1};
  auto rows = PackAll(opt, {6, 7, 25});
  // One open row at a time; the 25-token document is split into two full rows and a rest of 5.
  REQUIRE(rows.size() == 5);
  for (const auto& r : rows) CHECK(r.ids.size() == 10);
}

TEST_CASE("length statistics give exact percentiles and shares", "[data][lengths]") {
  LengthStats s;
  for (int n : {1, 2, 3, 4, 10}) s.Add(n, n / 2);
  CHECK(s.Percentile(0.5) == 3);
  CHECK(s.Percentile(0.9) == 10);
  CHECK(s.TruncatedShare(4) == Approx(6.0 / 20));
  CHECK(s.PaddingShare(4) == Approx((3 + 2 + 1 + 0 + 0) / 20.0));
  CHECK(s.RowsLongerThan(4) == 1);
  auto bins = s.Histogram(2);
  REQUIRE(bins.size() == 2);
  CHECK(bins[0].count == 4);
  CHECK(HistogramSvg(bins, "t <x>", 4).find("t &lt;x&gt;") != std::string::npos);
}

TEST_CASE("the line reader numbers lines and skips those over its limit", "[data][jsonl]") {
  fs::path path = fs::temp_directory_path() / "attune_data_lines.jsonl";
  {
    std::ofstream f(path, std::ios::binary);
    f << "one\n" << std::string(3 << 20, 'x') << "\nthree";  // no final newline
  }
  auto reader = LineReader::Open(path.string(), 1 << 20);
  REQUIRE(reader.ok());
  std::string_view line;
  uint64_t n = 0;
  bool too_long = false;
  REQUIRE((*reader)->Next(&line, &n, &too_long));
  CHECK((line == "one" && n == 1 && !too_long));
  REQUIRE((*reader)->Next(&line, &n, &too_long));
  CHECK((n == 2 && too_long && line.empty()));
  REQUIRE((*reader)->Next(&line, &n, &too_long));
  CHECK((line == "three" && n == 3 && !too_long));
  CHECK_FALSE((*reader)->Next(&line, &n, &too_long));
  fs::remove(path);
}

// A byte-level tokenizer over single characters, with chatml's special tokens.
std::unique_ptr<Tokenizer> CharTokenizer() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int c = 32; c < 127; ++c) vocab[std::string(1, static_cast<char>(c))] = c;
  vocab["\xC4\x8A"] = 10;  // "\n" through the byte-level table
  nlohmann::json doc = {
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}},
      {"added_tokens", {{{"id", 200}, {"content", "<|im_start|>"}, {"special", true}},
                        {{"id", 201}, {"content", "<|im_end|>"}, {"special", true}}}}};
  auto tok = LoadHfTokenizer("chars.json", doc.dump(), "");
  REQUIRE(tok.ok());
  return std::move(*tok);
}

TEST_CASE("chat rows mask everything but the assistant's content and end of turn", "[data][rows]") {
  auto tok = CharTokenizer();
  RowFormat format;
  format.messages = true;
  auto rows = RowTokenizer::Create(tok.get(), format);
  REQUIRE(rows.ok());
  CHECK(rows->Template() == ChatTemplate::kChatml);
  TokenizedRow row;
  auto bad = rows->Tokenize(
      R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]})",
      1, &row);
  REQUIRE_FALSE(bad.has_value());
  // <|im_start|> u s e r \n h i <|im_end|> \n <|im_start|> a s s i s t a n t \n y o <|im_end|> \n
  std::vector<uint8_t> want(row.ids.size(), 0);
  size_t yo = row.ids.size() - 4;
  want[yo] = want[yo + 1] = want[yo + 2] = 1;
  CHECK(row.ids[yo] == 'y');
  CHECK(row.mask == want);
}

TEST_CASE("bad rows say what is wrong and where", "[data][rows]") {
  auto tok = CharTokenizer();
  RowFormat format;
  auto rows = RowTokenizer::Create(tok.get(), format);
  REQUIRE(rows.ok());
  TokenizedRow row;
  auto json_error = rows->Tokenize("{\"text\": ", 7, &row);
  REQUIRE(json_error);
  CHECK(json_error->kind == BadRowKind::kInvalidJson);
  CHECK(json_error->line == 7);
  auto utf8 = rows->Tokenize("{\"text\": \"a\xC3\"}", 8, &row);
  REQUIRE(utf8);
  CHECK(utf8->kind == BadRowKind::kInvalidUtf8);
  CHECK_THAT(utf8->message, Catch::Contains("column 12"));
  auto missing = rows->Tokenize("{\"body\": \"x\"}", 9, &row);
  REQUIRE(missing);
  CHECK(missing->kind == BadRowKind::kMissingField);
  CHECK_THAT(missing->message, Catch::Contains("field 'text' is missing"));
}

TEST_CASE("a chat template whose tokens the tokenizer lacks is refused up front", "[data][rows]") {
  auto tok = CharTokenizer();
  RowFormat format;
  format.messages = true;
  format.chat_template = ChatTemplate::kLlama3;
  auto rows = RowTokenizer::Create(tok.get(), format);
  REQUIRE_FALSE(rows.ok());
  CHECK_THAT(rows.status().message(), Catch::Contains("needs the token <|begin_of_text|>"));
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST_CASE("the indexed dataset writer produces Megatron's byte layout", "[data][indexed]") {
  std::string prefix = (fs::temp_directory_path() / "attune_data_idx").string();
  auto w = IndexedDatasetWriter::Create(prefix, IndexDType::kUint16);
  REQUIRE(w.ok());
  int32_t a[] = {1, 2, 3}, b[] = {65535};
  REQUIRE((*w)->AddSequence(a, 3).ok());
  REQUIRE((*w)->AddSequence(b, 1).ok());
  REQUIRE((*w)->EndDocument().ok());
  REQUIRE((*w)->Finish().ok());
  std::string bin = ReadAll(prefix + ".bin"), idx = ReadAll(prefix + ".idx");
  CHECK(bin == std::string("\x01\x00\x02\x00\x03\x00\xFF\xFF", 8));
  std::string want("MMIDIDX\x00\x00", 9);
  want += std::string("\x01\0\0\0\0\0\0\0", 8) + "\x08";        // version 1, dtype uint16
  want += std::string("\x02\0\0\0\0\0\0\0", 8);                 // 2 sequences
  want += std::string("\x02\0\0\0\0\0\0\0", 8);                 // 2 document indices
  want += std::string("\x03\0\0\0\x01\0\0\0", 8);               // lengths 3, 1
  want += std::string("\0\0\0\0\0\0\0\0\x06\0\0\0\0\0\0\0", 16);  // pointers 0, 6 bytes
  want += std::string("\0\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0", 16);  // documents 0, 2
  CHECK(idx == want);
  CHECK_FALSE(fs::exists(prefix + ".idx.lengths.tmp"));
  CHECK(TokenDTypeFor(65499) == IndexDType::kUint16);
  CHECK(TokenDTypeFor(128256) == IndexDType::kInt32);
  fs::remove(prefix + ".bin");
  fs::remove(prefix + ".idx");
}

}  // namespace
}  // namespace attune::data
