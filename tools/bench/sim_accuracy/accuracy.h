// Copyright attune authors.
//
// The accuracy bench's scoring, apart from its command line so the tests can run it on a small
// table: each calibration row's predicted and measured throughput (under the source's FLOP
// convention), its source group and its slice (GPU generation × dense/MoE × precision), and the
// per-group tables sim_accuracy prints. Pure functions; no I/O except Print*.
#ifndef ATTUNE_TOOLS_BENCH_SIM_ACCURACY_ACCURACY_H_
#define ATTUNE_TOOLS_BENCH_SIM_ACCURACY_ACCURACY_H_

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "csv.h"
#include "predict.h"

namespace attune::sim::accuracy {

struct ScoredRow {
  int index = 0;              // row number in its file (0-based, header excluded)
  std::string file;           // label of the CSV it came from
  std::string source_group;   // "Narayanan SC21", ... or the first 30 characters of `source`
  std::string slice;          // "Hopper / MoE / FP8"
  bool measured = false;      // the row has a throughput to compare
  bool scored = false;        // measured and modelled
  double measured_value = 0, predicted_value = 0;
  double signed_error_pct = 0;  // (predicted − measured) / measured × 100
  std::string metric;         // "tokens/s" or "TFLOP/s"
  Prediction prediction;
};

// "Ampere", "Hopper", "Blackwell" from the row's GPU ("unknown GPU" when the table lacks it).
std::string Generation(const CalibrationRow& row);
// "BF16", "FP8" (any FP8 recipe, MXFP8 included) or "NVFP4" from the `precision` column.
std::string PrecisionClass(const CalibrationRow& row);
// Generation / dense|MoE / precision.
std::string SliceOf(const CalibrationRow& row);
std::string SourceGroup(const CalibrationRow& row);

// Predicts and scores every row of `table` (label `file` in the output).
std::vector<ScoredRow> ScoreTable(const CsvTable& table, const std::string& file,
                                  const ModelFactors& factors = {});

struct GroupStats {
  int measured = 0;           // rows with a throughput
  int scored = 0;             // of which modelled
  double mean_signed_pct = 0; // over the scored rows
  double mape = 0;
};
// Statistics per key (`key_of` maps a row to its group; rows mapped to "" are left out).
std::map<std::string, GroupStats> GroupBy(const std::vector<ScoredRow>& rows,
                                          std::string (*key_of)(const ScoredRow&));
std::string SliceKey(const ScoredRow& row);
std::string SourceKey(const ScoredRow& row);
// All rows except MegaScale's own system (not a Megatron-LM run; kept in its source line).
std::string OverallKey(const ScoredRow& row);
// "overall" for the rows OverallKey counts that state what a model needs (GPU type and count,
// TP and PP): the denominator of the share of rows the model covers.
std::string StatedKey(const ScoredRow& row);

// The tables sim_accuracy prints: by source, by slice, and the overall line with the share of
// rows modelled.
void PrintTables(const std::vector<ScoredRow>& rows, std::ostream& out);

}  // namespace attune::sim::accuracy

#endif  // ATTUNE_TOOLS_BENCH_SIM_ACCURACY_ACCURACY_H_
