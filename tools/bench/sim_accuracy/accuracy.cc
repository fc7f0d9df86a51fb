// Copyright attune authors.
#include "accuracy.h"

#include <cmath>
#include <iomanip>
#include <ostream>

#include "hardware.h"
#include "perf_model.h"

namespace attune::sim::accuracy {
namespace {

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string Cell(const CalibrationRow& row, const char* key) {
  auto it = row.find(key);
  return it == row.end() ? "" : it->second;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

double Number(const CalibrationRow& row, const char* key) {
  std::string v = Cell(row, key);
  if (v.empty()) return 0;
  try {
    return std::stod(v);
  } catch (...) {
    return 0;  // a note in a numeric column: not a measurement
  }
}

// Predicted throughput in the row's own metric: tokens/s/GPU when it has one; otherwise
// TFLOP/s/GPU under its source's FLOP convention (calibration README): Narayanan SC21 and BLOOM
// count the recomputed forward (SC21 eq. 3); the Megatron-LM weak-scaling table counts causal
// attention in full (Megatron before 2025); others use Megatron's current formula.
bool Compare(const CalibrationRow& row, const std::string& group, ScoredRow* out) {
  double tokens = Number(row, "measured_tokens_per_sec_per_gpu");
  double tflops = Number(row, "measured_tflops_per_gpu");
  if (tokens <= 0 && tflops <= 0) return false;
  out->measured = true;
  if (!out->prediction.ok()) return true;
  if (tokens > 0) {
    out->measured_value = tokens;
    out->predicted_value = out->prediction.tokens_per_s_per_gpu;
    out->metric = "tokens/s";
  } else {
    auto model = ModelFromCalibrationRow(row);
    if (!model.ok()) return true;
    const TrainingSetup& setup = model->setup;
    double flops = 0;
    if (group == "Narayanan SC21" || group == "BLOOM-176B") {
      flops = NarayananFlops(setup.model, setup.par.global_batch);
    } else {
      flops = MegatronModelFlops(setup.model, setup.par.global_batch, group != "Megatron-LM weak scaling");
    }
    out->measured_value = tflops;
    out->predicted_value = flops / (out->prediction.step_time_s * 1e12 * setup.par.world);
    out->metric = "TFLOP/s";
  }
  out->scored = true;
  out->signed_error_pct = (out->predicted_value - out->measured_value) / out->measured_value * 100;
  return true;
}

}  // namespace

std::string Generation(const CalibrationRow& row) {
  auto gpu = FindGpu(Cell(row, "gpu"));
  if (!gpu) return "unknown GPU";
  if (gpu->compute_capability_major <= 8) return "Ampere";
  if (gpu->compute_capability_major == 9) return "Hopper";
  return "Blackwell";
}

std::string PrecisionClass(const CalibrationRow& row) {
  std::string p = Lower(Cell(row, "precision"));
  if (Contains(p, "fp4")) return "NVFP4";
  if (Contains(p, "fp8")) return "FP8";
  return "BF16";
}

std::string SliceOf(const CalibrationRow& row) {
  bool moe = Number(row, "moe_experts") > 0;
  return Generation(row) + " / " + (moe ? "MoE" : "dense") + " / " + PrecisionClass(row);
}

std::string SourceGroup(const CalibrationRow& row) {
  std::string s = Cell(row, "source");
  if (Contains(s, "Narayanan")) return "Narayanan SC21";
  if (Contains(s, "Korthikanti")) return "Korthikanti 2022";
  if (Contains(s, "MegaScale")) {
    return Contains(Cell(row, "model"), "(MegaScale)") ? "MegaScale (MegaScale system)"
                                                       : "MegaScale (Megatron-LM)";
  }
  if (Contains(s, "examples/llama")) return "Megatron-LM llama FP8 table";
  if (Contains(s, "model_table")) return "Megatron-LM weak scaling";
  if (Contains(s, "Llama Team")) return "Llama 3 paper";
  if (Contains(s, "MT-NLG")) return "MT-NLG";
  if (Contains(s, "BLOOM")) return "BLOOM-176B";
  if (Contains(s, "Nemotron")) return "Nemotron-4 340B";
  return s.substr(0, 30);
}

std::vector<ScoredRow> ScoreTable(const CsvTable& table, const std::string& file,
                                  const ModelFactors& factors) {
  std::vector<ScoredRow> out;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const CalibrationRow& row = table.rows[i];
    ScoredRow r;
    r.index = static_cast<int>(i);
    r.file = file;
    r.source_group = SourceGroup(row);
    r.slice = SliceOf(row);
    r.prediction = PredictRow(r.index, row, factors);
    Compare(row, r.source_group, &r);
    out.push_back(std::move(r));
  }
  return out;
}

std::map<std::string, GroupStats> GroupBy(const std::vector<ScoredRow>& rows,
                                          std::string (*key_of)(const ScoredRow&)) {
  std::map<std::string, GroupStats> out;
  for (const ScoredRow& r : rows) {
    if (!r.measured) continue;
    std::string key = key_of(r);
    if (key.empty()) continue;
    GroupStats& g = out[key];
    ++g.measured;
    if (!r.scored) continue;
    ++g.scored;
    g.mean_signed_pct += r.signed_error_pct;
    g.mape += std::abs(r.signed_error_pct);
  }
  for (auto& [key, g] : out) {
    if (g.scored == 0) continue;
    g.mean_signed_pct /= g.scored;
    g.mape /= g.scored;
  }
  return out;
}

std::string SliceKey(const ScoredRow& row) { return row.slice; }
std::string SourceKey(const ScoredRow& row) { return row.source_group; }
std::string OverallKey(const ScoredRow& row) {
  return row.source_group == "MegaScale (MegaScale system)" ? "" : "overall";
}

std::string StatedKey(const ScoredRow& row) {
  const std::string& status = row.prediction.status;
  bool unstated = Contains(status, "not stated") || Contains(status, "unknown GPU");
  return unstated ? "" : OverallKey(row);
}

namespace {

void PrintGroups(const std::map<std::string, GroupStats>& groups, std::ostream& out) {
  out << "  " << std::left << std::setw(34) << "" << std::right << std::setw(7) << "scored"
      << std::setw(9) << "of rows" << std::setw(10) << "signed" << std::setw(9) << "MAPE" << "\n";
  for (const auto& [key, g] : groups) {
    out << "  " << std::left << std::setw(34) << key.substr(0, 34) << std::right << std::setw(7)
        << g.scored << std::setw(9) << g.measured;
    if (g.scored > 0) {
      out << std::setw(9) << std::showpos << g.mean_signed_pct << std::noshowpos << "%"
          << std::setw(8) << g.mape << "%";
    }
    out << "\n";
  }
}

}  // namespace

void PrintTables(const std::vector<ScoredRow>& rows, std::ostream& out) {
  out << std::fixed << std::setprecision(1);
  out << "\nBy source (rows scored, rows with a measurement, mean signed error, MAPE):\n";
  PrintGroups(GroupBy(rows, SourceKey), out);
  out << "\nBy slice (GPU generation / dense or MoE / precision):\n";
  PrintGroups(GroupBy(rows, SliceKey), out);
  auto overall = GroupBy(rows, OverallKey);
  const GroupStats& g = overall["overall"];
  out << "\nOverall (all but MegaScale's own system): " << g.scored << " of " << g.measured
      << " rows modelled (" << (g.measured > 0 ? 100.0 * g.scored / g.measured : 0.0)
      << "%), mean signed error " << std::showpos << g.mean_signed_pct << std::noshowpos
      << "%, MAPE " << g.mape << "%\n";
  // Rows that do not give what any model needs (the GPU count, TP/PP, a GPU the table has)
  // cannot be predicted by any simulator; the share among the others says what the model lacks.
  auto stated_groups = GroupBy(rows, StatedKey);
  const GroupStats& stated = stated_groups["overall"];
  out << "Of the rows that state GPU, GPU count, TP and PP: " << stated.scored << " of "
      << stated.measured << " modelled ("
      << (stated.measured > 0 ? 100.0 * stated.scored / stated.measured : 0.0) << "%)\n";
}

}  // namespace attune::sim::accuracy
