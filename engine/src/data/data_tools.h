// Copyright attune authors.
//
// The `attune data` tools as library calls (the CLI in engine/src/cli/cmd_data.cc only parses
// flags and prints): read a JSONL file as a stream, tokenize each row, and
//   * Lengths: token-length statistics;
//   * Pack:    rows of exactly seq_length tokens in Megatron's indexed dataset format, a parallel
//              loss-mask dataset and a manifest (docs/data.md);
//   * Encode:  the ids (and mask) of each row, for checks against another implementation.
// Bad rows are counted and kept (BadRowLog); they never stop a run. Errors that do stop it (an
// unreadable tokenizer, an unwritable output) come back as Status.
#ifndef ATTUNE_ENGINE_DATA_DATA_TOOLS_H_
#define ATTUNE_ENGINE_DATA_DATA_TOOLS_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "data/jsonl.h"
#include "data/length_stats.h"
#include "data/packer.h"
#include "data/rows.h"
#include "data/tokenizer.h"

namespace attune::data {

struct InputOptions {
  std::string data_path;
  std::string tokenizer_path;
  RowFormat format;
  size_t max_line_bytes = 256u << 20;
  // A progress bar goes to `progress` (when not null) at most five times a second.
  std::ostream* progress = nullptr;
};

// What every tool reports about its input.
struct InputSummary {
  TokenizerInfo tokenizer;
  ChatTemplate chat_template = ChatTemplate::kAuto;
  uint64_t lines = 0, blank_lines = 0, good_rows = 0;
  BadRowLog bad;
  double seconds = 0;  // wall time of the run, for tokens/s in reports (never in the manifest)
  nlohmann::json ToJson() const;
};

struct LengthsResult {
  InputSummary input;
  LengthStats stats;
};
Result<LengthsResult> RunLengths(const InputOptions& options);

struct PackToolOptions {
  InputOptions input;
  PackOptions pack;               // pad_id is filled in from `pad`
  std::string output_prefix;
  std::string eod = "auto";       // a token, "auto" (the tokenizer's EOS) or "none"
  std::string pad = "auto";       // a token, or "auto" (the tokenizer's PAD, else the EOD token)
};
struct PackResult {
  InputSummary input;
  PackCounts counts;
  nlohmann::json manifest;  // also written to PREFIX.manifest.json
};
Result<PackResult> RunPack(const PackToolOptions& options);

// Calls `each` with every good row and its line number.
using RowSink = std::function<Status(uint64_t line, const TokenizedRow& row)>;
Result<InputSummary> RunEncode(const InputOptions& options, const RowSink& each);

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_DATA_TOOLS_H_
