// Copyright attune authors.
#include "data/data_tools.h"

#include <chrono>
#include <cstdio>

#include "data/indexed_dataset.h"

namespace attune::data {
namespace {

using Clock = std::chrono::steady_clock;

// A one-line progress bar, redrawn in place.
class ProgressBar {
 public:
  ProgressBar(std::ostream* out, uint64_t total) : out_(out), total_(total) {}
  void Update(uint64_t bytes, uint64_t rows, uint64_t tokens, bool force = false) {
    if (!out_) return;
    auto now = Clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    double frac = total_ ? std::min(1.0, static_cast<double>(bytes) / total_) : 1.0;
    int filled = static_cast<int>(frac * 30);
    double secs = std::chrono::duration<double>(now - start_).count();
    char line[200];
    std::snprintf(line, sizeof(line), "\r[%-30s] %5.1f%%  %.1f/%.1f MB  %llu rows  %.0f tokens/s ",
                  std::string(filled, '#').c_str(), frac * 100, bytes / 1e6, total_ / 1e6,
                  static_cast<unsigned long long>(rows), secs > 0 ? tokens / secs : 0.0);
    *out_ << line << std::flush;
  }
  void Done() {
    if (out_) *out_ << "\n" << std::flush;
  }

 private:
  std::ostream* out_;
  uint64_t total_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

// Opens the tokenizer and the file and feeds every good row to `each`.
Result<InputSummary> ForEachRow(const InputOptions& opt, Tokenizer* tokenizer, const RowSink& each) {
  InputSummary summary;
  summary.tokenizer = tokenizer->Info();
  ATTUNE_ASSIGN_OR_RETURN(RowTokenizer rows, RowTokenizer::Create(tokenizer, opt.format));
  summary.chat_template = rows.Template();
  ATTUNE_ASSIGN_OR_RETURN(auto reader, LineReader::Open(opt.data_path, opt.max_line_bytes));
  ProgressBar bar(opt.progress, reader->FileSize());
  auto start = Clock::now();
  std::string_view line;
  uint64_t number = 0, tokens = 0;
  bool too_long = false;
  TokenizedRow row;
  while (reader->Next(&line, &number, &too_long)) {
    ++summary.lines;
    if (too_long) {
      summary.bad.Add({number, BadRowKind::kTooLong,
                       "longer than " + std::to_string(opt.max_line_bytes) + " bytes; skipped"});
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      ++summary.blank_lines;
      continue;
    }
    if (auto bad = rows.Tokenize(line, number, &row)) {
      summary.bad.Add(std::move(*bad));
      continue;
    }
    ++summary.good_rows;
    tokens += row.ids.size();
    ATTUNE_RETURN_IF_ERROR(each(number, row));
    bar.Update(reader->BytesRead(), summary.good_rows, tokens);
  }
  ATTUNE_RETURN_IF_ERROR(reader->error());
  bar.Update(reader->BytesRead(), summary.good_rows, tokens, true);
  bar.Done();
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

Result<std::optional<int32_t>> ResolveToken(const Tokenizer& tok, const std::string& spec,
                                            std::optional<int32_t> automatic, const char* what) {
  if (spec == "none") return std::optional<int32_t>();
  if (spec == "auto") {
    if (!automatic) {
      return Status::InvalidArgument(std::string("the tokenizer names no ") + what +
                                     " token; give one with --" + what + " TOKEN" +
                                     (std::string(what) == "eod" ? " (or --eod none)" : ""));
    }
    return automatic;
  }
  std::optional<int32_t> id = tok.TokenId(spec);
  if (!id) {
    return Status::InvalidArgument("--" + std::string(what) + " " + spec +
                                   ": no such token in " + tok.Info().path);
  }
  return id;
}

nlohmann::json TokenizerJson(const TokenizerInfo& t) {
  auto opt = [](std::optional<int32_t> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"kind", t.kind}, {"path", t.path}, {"sha256", t.sha256}, {"vocab_size", t.vocab_size},
          {"bos_id", opt(t.bos_id)}, {"eos_id", opt(t.eos_id)}, {"pad_id", opt(t.pad_id)}};
}

nlohmann::json Manifest(const PackToolOptions& o, const InputSummary& in, const PackCounts& c,
                        std::optional<int32_t> eod, IndexDType dtype) {
  double rows = c.rows ? static_cast<double>(c.rows) : 1.0;
  return {
      {"format", "attune-packed-dataset"},
      {"version", 1},
      {"source", o.input.data_path},
      {"tokenizer", TokenizerJson(in.tokenizer)},
      {"rows_format",
       {{"kind", o.input.format.messages ? "messages" : "text"},
        {"field", o.input.format.messages ? "messages" : o.input.format.field},
        {"chat_template", o.input.format.messages ? std::string(ChatTemplateName(in.chat_template)) : ""},
        {"loss", o.input.format.messages ? std::string(LossRuleName(o.input.format.loss)) : "all"}}},
      {"seq_length", o.pack.seq_length},
      {"fixed_length", true},
      {"strategy", PackStrategyName(o.pack.strategy)},
      {"documents_split", o.pack.split},
      {"eod_id", eod ? nlohmann::json(*eod) : nlohmann::json(nullptr)},
      {"pad_id", o.pack.pad_id},
      {"files",
       {{"tokens", {{"prefix", o.output_prefix}, {"dtype", IndexDTypeName(dtype)}}},
        {"loss_mask", {{"prefix", o.output_prefix + "_loss_mask"}, {"dtype", "uint8"}}}}},
      {"counts",
       {{"lines", in.lines}, {"blank_lines", in.blank_lines}, {"bad_rows", in.bad.Count()},
        {"documents", c.documents}, {"rows", c.rows}, {"tokens_in", c.tokens_in},
        {"tokens_kept", c.tokens_kept}, {"pad_tokens", c.pad_tokens},
        {"loss_tokens", c.loss_tokens}, {"split_documents", c.split_documents},
        {"truncated_documents", c.truncated_documents}, {"truncated_tokens", c.truncated_tokens}}},
      {"loss_tokens_per_row",
       {{"min", c.min_loss_per_row}, {"max", c.max_loss_per_row}, {"mean", c.loss_tokens / rows}}},
      {"uniform_loss_tokens", c.rows > 0 && c.min_loss_per_row == c.max_loss_per_row},
      {"padding_share", c.rows ? static_cast<double>(c.pad_tokens) / (rows * o.pack.seq_length) : 0.0},
      {"bad_rows", in.bad.ToJson()},
  };
}

// The rows' token sink: appends EOD, checks ids fit the dtype, packs.
class PackSink {
 public:
  PackSink(Packer* packer, std::optional<int32_t> eod) : packer_(packer), eod_(eod) {}
  Status operator()(uint64_t, const TokenizedRow& row) {
    ids_ = row.ids;
    mask_ = row.mask;
    if (eod_ && (ids_.empty() || ids_.back() != *eod_)) {
      ids_.push_back(*eod_);
      mask_.push_back(mask_.empty() ? 1 : mask_.back());
    }
    return packer_->Add(ids_, mask_);
  }

 private:
  Packer* packer_;
  std::optional<int32_t> eod_;
  std::vector<int32_t> ids_;
  std::vector<uint8_t> mask_;
};

}  // namespace

nlohmann::json InputSummary::ToJson() const {
  return {{"tokenizer", TokenizerJson(tokenizer)},
          {"chat_template", ChatTemplateName(chat_template)},
          {"lines", lines},
          {"blank_lines", blank_lines},
          {"rows", good_rows},
          {"bad_rows", bad.ToJson()},
          {"seconds", seconds}};
}

Result<LengthsResult> RunLengths(const InputOptions& options) {
  ATTUNE_ASSIGN_OR_RETURN(auto tokenizer, LoadTokenizer(options.tokenizer_path));
  LengthsResult result;
  auto sink = [&](uint64_t, const TokenizedRow& row) {
    result.stats.Add(row.ids.size(), row.LossTokens());
    return Status::Ok();
  };
  ATTUNE_ASSIGN_OR_RETURN(result.input, ForEachRow(options, tokenizer.get(), sink));
  return result;
}

Result<InputSummary> RunEncode(const InputOptions& options, const RowSink& each) {
  ATTUNE_ASSIGN_OR_RETURN(auto tokenizer, LoadTokenizer(options.tokenizer_path));
  return ForEachRow(options, tokenizer.get(), each);
}

Result<PackResult> RunPack(const PackToolOptions& options) {
  if (options.pack.seq_length == 0) return Status::InvalidArgument("--seq-length must be at least 1");
  ATTUNE_ASSIGN_OR_RETURN(auto tokenizer, LoadTokenizer(options.input.tokenizer_path));
  const TokenizerInfo& info = tokenizer->Info();
  ATTUNE_ASSIGN_OR_RETURN(auto eod, ResolveToken(*tokenizer, options.eod, info.eos_id, "eod"));
  ATTUNE_ASSIGN_OR_RETURN(auto pad, ResolveToken(*tokenizer, options.pad, info.pad_id ? info.pad_id : eod, "pad"));
  PackToolOptions opt = options;
  opt.pack.pad_id = pad.value_or(0);
  IndexDType dtype = TokenDTypeFor(info.vocab_size);
  ATTUNE_ASSIGN_OR_RETURN(auto tokens, IndexedDatasetWriter::Create(opt.output_prefix, dtype));
  ATTUNE_ASSIGN_OR_RETURN(auto masks, IndexedDatasetWriter::Create(opt.output_prefix + "_loss_mask",
                                                                   IndexDType::kUint8));
  std::vector<int32_t> mask_values;
  Packer packer(opt.pack, [&](const PackedRow& row) -> Status {
    ATTUNE_RETURN_IF_ERROR(tokens->AddSequence(row.ids.data(), row.ids.size()));
    ATTUNE_RETURN_IF_ERROR(tokens->EndDocument());
    mask_values.assign(row.mask.begin(), row.mask.end());
    ATTUNE_RETURN_IF_ERROR(masks->AddSequence(mask_values.data(), mask_values.size()));
    return masks->EndDocument();
  });
  PackSink sink(&packer, eod);
  ATTUNE_ASSIGN_OR_RETURN(InputSummary summary,
                          ForEachRow(opt.input, tokenizer.get(), std::ref(sink)));
  ATTUNE_RETURN_IF_ERROR(packer.Finish());
  ATTUNE_RETURN_IF_ERROR(tokens->Finish());
  ATTUNE_RETURN_IF_ERROR(masks->Finish());
  PackResult result{std::move(summary), packer.Counts(), {}};
  result.manifest = Manifest(opt, result.input, result.counts, eod, dtype);
  ATTUNE_RETURN_IF_ERROR(WriteFileAtomically(opt.output_prefix + ".manifest.json",
                                             result.manifest.dump(2) + "\n"));
  return result;
}

}  // namespace attune::data
