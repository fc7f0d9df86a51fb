// Copyright attune authors.
//
// `attune sim predict --csv FILE [-o OUT]`: the model's prediction for each row of a table in the
// column format of ../shared/calibration/published_throughput.csv. Also the row-to-setup mapping
// the accuracy bench (tools/bench/sim_accuracy) uses.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_PREDICT_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_PREDICT_H_

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "hardware.h"
#include "perf_model.h"
#include "setup.h"

namespace attune::sim {

using CalibrationRow = std::map<std::string, std::string>;

// A calibration row as a run the simulator can model, with the defaults it had to assume for
// cells the source leaves empty.
struct RowModel {
  TrainingSetup setup;
  ClusterSpec cluster;
  std::vector<std::string> assumptions;
};

// Fails (the message says why) when the row cannot be modelled: missing TP/PP, an unknown GPU,
// a system that is not Megatron-LM.
Result<RowModel> ModelFromCalibrationRow(const CalibrationRow& row);

struct Prediction {
  int row = 0;
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tflops_per_gpu = 0;  // Megatron's current formula (reference §3.4)
  double memory_gib = 0;      // peak reserved + non-PyTorch on the worst stage
  std::string status = "ok";  // or why the row cannot be modelled
  std::string assumptions;    // "; "-separated defaults used for empty cells
  bool ok() const { return status == "ok"; }
};

Prediction PredictRow(int index, const CalibrationRow& row, const ModelFactors& factors = {});

// Parses a calibration-format CSV and predicts every row.
Result<std::vector<Prediction>> PredictCsv(const std::string& csv_text,
                                           const ModelFactors& factors = {});

// Writes the prediction CSV (header: row, predicted_step_time_s, predicted_tokens_per_sec_per_gpu,
// predicted_tflops_per_gpu, predicted_memory_gib, status, assumptions).
void WritePredictionCsv(const std::vector<Prediction>& predictions, std::ostream& out);

// The `predict` command: args are `--csv FILE [-o OUT]`. Returns 0, 1 (failure) or 2 (usage).
int RunPredictCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_PREDICT_H_
