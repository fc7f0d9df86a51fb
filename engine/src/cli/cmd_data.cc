// `attune data lengths|pack|encode`: token-length statistics of a JSONL dataset, packing it into
// fixed-length rows in Megatron's indexed dataset format, and its token ids (docs/data.md).
// Flags are parsed here; the work is in engine/src/data.
#include <unistd.h>

#include <fstream>
#include <iomanip>
#include <ostream>

#include "cli/args.h"
#include "data/data_tools.h"
#include "data/indexed_dataset.h"

namespace attune::cli {

namespace {

using data::InputOptions;

void AddInputOptions(ArgParser* p) {
  p->Options()("tokenizer", po::value<std::string>(),
               "tokenizer.json, a folder holding one, or a SentencePiece .model (required)")(
      "field", po::value<std::string>()->default_value("text"), "the text field of each row")(
      "messages", "rows are chats: {\"messages\": [{\"role\", \"content\"}, ...]}")(
      "chat-template", po::value<std::string>()->default_value("auto"),
      "with --messages: auto, chatml, llama3, llama2, deepseek or plain")(
      "loss", po::value<std::string>()->default_value("assistant"),
      "with --messages: which tokens count in the loss: assistant or all")(
      "max-line-bytes", po::value<size_t>()->default_value(256u << 20),
      "longer lines are reported as bad rows and skipped")(
      "no-progress", "no progress bar (it is shown only when stderr is a terminal)")(
      "json", "machine-readable output");
  p->Positional("data");
}

Result<InputOptions> ReadInputOptions(const ArgParser& p, Env& env) {
  InputOptions o;
  if (!p.Has("data")) return Status::InvalidArgument("need DATA (a JSONL file)");
  if (!p.Has("tokenizer")) return Status::InvalidArgument("need --tokenizer T");
  o.data_path = p.Get("data");
  o.tokenizer_path = p.Get("tokenizer");
  o.format.messages = p.Has("messages");
  o.format.field = p.Get("field");
  auto tmpl = data::ChatTemplateFromName(p.Get("chat-template"));
  if (!tmpl) {
    return Status::InvalidArgument("--chat-template " + p.Get("chat-template") +
                                   ": expected auto, chatml, llama3, llama2, deepseek or plain");
  }
  o.format.chat_template = *tmpl;
  auto loss = data::LossRuleFromName(p.Get("loss"));
  if (!loss) return Status::InvalidArgument("--loss " + p.Get("loss") + ": expected assistant or all");
  o.format.loss = *loss;
  o.max_line_bytes = p.vm()["max-line-bytes"].as<size_t>();
  if (!p.Has("no-progress") && ::isatty(STDERR_FILENO) && env.err) o.progress = env.err;
  return o;
}

std::string Percent(double share) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << share * 100 << "%";
  return s.str();
}

// What every tool says about its input: counts, template, and the first bad rows.
void PrintInput(const data::InputSummary& in, const InputOptions& o, std::ostream& out,
                std::ostream& err) {
  out << "tokenizer: " << in.tokenizer.path << " (" << in.tokenizer.kind << ", vocab "
      << in.tokenizer.vocab_size << ", sha256 " << in.tokenizer.sha256.substr(0, 16) << ")\n";
  if (o.format.messages) {
    out << "rows: chat messages, template " << data::ChatTemplateName(in.chat_template)
        << ", loss on " << data::LossRuleName(o.format.loss) << " tokens\n";
  } else {
    out << "rows: text field '" << o.format.field << "'\n";
  }
  out << "lines: " << in.lines << " (" << in.good_rows << " rows, " << in.bad.Count()
      << " bad, " << in.blank_lines << " blank)\n" << std::flush;
  for (const data::BadRow& b : in.bad.Kept()) {
    if (&b - in.bad.Kept().data() >= 20) {
      err << "... " << in.bad.Count() - 20 << " more bad rows (--json lists up to 1000)\n";
      break;
    }
    err << o.data_path << ":" << b.line << ": " << data::BadRowKindName(b.kind) << ": " << b.message
        << "\n";
  }
}

int RunDataLengths(const std::vector<std::string>& args, Env& env) {
  ArgParser p("data lengths DATA --tokenizer T [--field F | --messages] [--seq-length N] "
              "[--svg FILE] [--json]",
              "Token-length statistics of a JSONL dataset: percentiles, a histogram, the share of "
              "tokens lost to truncation and to padding at --seq-length, and the loss-token share "
              "per row. Bad rows are counted and listed with their line numbers.");
  AddInputOptions(&p);
  p.Options()("seq-length", po::value<uint64_t>()->default_value(0),
              "report truncation and padding at this sequence length")(
      "bins", po::value<int>()->default_value(20), "histogram bins")(
      "svg", po::value<std::string>(), "also write the histogram as an SVG file");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  auto input = ReadInputOptions(p, env);
  if (!input.ok()) return ReportError(env, "data lengths", input.status(), json);
  auto result = data::RunLengths(*input);
  if (!result.ok()) return ReportError(env, "data lengths", result.status(), json);
  uint64_t s = p.vm()["seq-length"].as<uint64_t>();
  int bins = std::max(1, p.vm()["bins"].as<int>());
  auto histogram = result->stats.Histogram(bins);
  if (p.Has("svg")) {
    std::string title = "token lengths of " + input->data_path + " (" +
                        std::to_string(result->stats.Rows()) + " rows)";
    Status w = data::WriteFileAtomically(p.Get("svg"), data::HistogramSvg(histogram, title, s));
    if (!w.ok()) return ReportError(env, "data lengths", w, json);
  }
  if (json) {
    nlohmann::json bins_json = nlohmann::json::array();
    for (const auto& b : histogram) bins_json.push_back({{"lo", b.lo}, {"hi", b.hi}, {"count", b.count}});
    *env.out << nlohmann::json{{"ok", true}, {"input", result->input.ToJson()},
                               {"lengths", result->stats.ToJson(s)}, {"histogram", bins_json}}
                    .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
    return kExitOk;
  }
  PrintInput(result->input, *input, *env.out, *env.err);
  nlohmann::json st = result->stats.ToJson(s);
  const auto& pc = st["percentiles"];
  *env.out << "tokens: " << result->stats.Tokens() << ", per row: mean "
           << std::fixed << std::setprecision(1) << st["mean"].get<double>() << ", min " << st["min"]
           << ", p50 " << pc["p50"] << ", p90 " << pc["p90"] << ", p95 " << pc["p95"] << ", p99 "
           << pc["p99"] << ", max " << st["max"] << "\n";
  const auto& ls = st["loss_share"];
  *env.out << "loss tokens: " << result->stats.LossTokens() << " ("
           << Percent(ls["overall"].get<double>()) << "); per row p10 "
           << Percent(ls["p10"].get<double>()) << ", p50 " << Percent(ls["p50"].get<double>())
           << ", p90 " << Percent(ls["p90"].get<double>()) << "; rows without loss tokens: "
           << ls["rows_without_loss_tokens"] << "\n";
  if (s > 0) {
    *env.out << "at --seq-length " << s << " (one row per sequence): " << result->stats.RowsLongerThan(s)
             << " rows longer, " << Percent(result->stats.TruncatedShare(s))
             << " of tokens truncated, " << Percent(result->stats.PaddingShare(s))
             << " of sequence slots padding\n";
  }
  if (result->input.seconds > 0) {
    *env.out << std::setprecision(0) << result->stats.Tokens() / result->input.seconds
             << " tokens/s\n";
  }
  *env.out << "\n" << data::HistogramText(histogram, 40, s);
  return kExitOk;
}

int RunDataPack(const std::vector<std::string>& args, Env& env) {
  ArgParser p("data pack DATA --tokenizer T --seq-length N -o PREFIX [--field F | --messages] "
              "[--strategy greedy|best-fit] [--no-split] [--json]",
              "Packs the rows of a JSONL dataset into rows of exactly --seq-length tokens with a "
              "loss mask, in Megatron's indexed dataset format: PREFIX.bin/PREFIX.idx (tokens), "
              "PREFIX_loss_mask.bin/.idx (1 where a token is a target) and "
              "PREFIX.manifest.json (counts, the tokenizer's hash). See docs/data.md.");
  AddInputOptions(&p);
  p.Options()("seq-length", po::value<uint32_t>(), "tokens per packed row (required)")(
      "output,o", po::value<std::string>(), "output prefix (required)")(
      "strategy", po::value<std::string>()->default_value("greedy"), "greedy or best-fit")(
      "no-split", "never split a document across rows (longer ones are truncated)")(
      "eod", po::value<std::string>()->default_value("auto"),
      "token appended to each document: a token, auto (the tokenizer's EOS) or none")(
      "pad", po::value<std::string>()->default_value("auto"),
      "padding token: a token or auto (the tokenizer's PAD, else the EOD token)")(
      "open-rows", po::value<size_t>()->default_value(256), "best-fit: rows kept open at once");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  auto input = ReadInputOptions(p, env);
  if (!input.ok()) return ReportError(env, "data pack", input.status(), json);
  if (!p.Has("seq-length") || !p.Has("output")) {
    return ReportError(env, "data pack", Status::InvalidArgument("need --seq-length N and -o PREFIX"), json);
  }
  data::PackToolOptions o;
  o.input = *input;
  o.output_prefix = p.Get("output");
  o.pack.seq_length = p.vm()["seq-length"].as<uint32_t>();
  auto strategy = data::PackStrategyFromName(p.Get("strategy"));
  if (!strategy) {
    return ReportError(env, "data pack",
                       Status::InvalidArgument("--strategy " + p.Get("strategy") + ": expected greedy or best-fit"), json);
  }
  o.pack.strategy = *strategy;
  o.pack.split = !p.Has("no-split");
  o.pack.open_rows = p.vm()["open-rows"].as<size_t>();
  o.eod = p.Get("eod");
  o.pad = p.Get("pad");
  auto result = data::RunPack(o);
  if (!result.ok()) return ReportError(env, "data pack", result.status(), json);
  if (json) {
    *env.out << nlohmann::json{{"ok", true}, {"input", result->input.ToJson()}, {"manifest", result->manifest}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  PrintInput(result->input, *input, *env.out, *env.err);
  const data::PackCounts& c = result->counts;
  const auto& m = result->manifest;
  *env.out << "packed: " << c.documents << " documents into " << c.rows << " rows of "
           << o.pack.seq_length << " tokens (" << data::PackStrategyName(o.pack.strategy)
           << ", documents " << (o.pack.split ? "split across rows when needed" : "never split")
           << ")\n"
           << "split documents: " << c.split_documents << ", truncated documents: "
           << c.truncated_documents << " (" << c.truncated_tokens << " tokens dropped)\n"
           << "padding: " << c.pad_tokens << " tokens (" << Percent(m["padding_share"].get<double>())
           << "); loss tokens per row: min " << c.min_loss_per_row << ", max "
           << c.max_loss_per_row << (m["uniform_loss_tokens"].get<bool>() ? " (uniform)" : "")
           << "\n"
           << "wrote " << o.output_prefix << ".bin/.idx ("
           << m["files"]["tokens"]["dtype"].get<std::string>() << "), " << o.output_prefix
           << "_loss_mask.bin/.idx, " << o.output_prefix << ".manifest.json\n";
  return kExitOk;
}

int RunDataEncode(const std::vector<std::string>& args, Env& env) {
  ArgParser p("data encode DATA --tokenizer T [--field F | --messages]",
              "Prints the token ids of each row as one JSON line {\"line\", \"ids\"} (with "
              "--messages also \"mask\"), for checking a tokenizer against another "
              "implementation. Bad rows go to stderr.");
  AddInputOptions(&p);
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  auto input = ReadInputOptions(p, env);
  if (!input.ok()) return ReportError(env, "data encode", input.status(), false);
  bool with_mask = input->format.messages;
  auto summary = data::RunEncode(*input, [&](uint64_t line, const data::TokenizedRow& row) {
    nlohmann::json j = {{"line", line}, {"ids", row.ids}};
    if (with_mask) j["mask"] = row.mask;
    *env.out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return Status::Ok();
  });
  if (!summary.ok()) return ReportError(env, "data encode", summary.status(), false);
  for (const data::BadRow& b : summary->bad.Kept()) {
    *env.err << input->data_path << ":" << b.line << ": " << data::BadRowKindName(b.kind) << ": "
             << b.message << "\n";
  }
  return kExitOk;
}

}  // namespace

int RunData(const std::vector<std::string>& args, Env& env) {
  std::string sub = args.empty() ? "" : args[0];
  std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (sub == "lengths") return RunDataLengths(rest, env);
  if (sub == "pack") return RunDataPack(rest, env);
  if (sub == "encode") return RunDataEncode(rest, env);
  *env.err << "attune data: expected lengths, pack or encode (see attune data lengths --help, "
              "docs/data.md)\n";
  return kExitUsage;
}

}  // namespace attune::cli
