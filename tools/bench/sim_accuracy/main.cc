// sim_accuracy: the simulated cluster's error against published throughput measurements.
//
//   sim_accuracy [--csv FILE]... [--rows] [--explain ROW]
//
// Scores every row of each CSV given (default: ../shared/calibration/published_throughput.csv
// and every *.csv in tools/bench/sim_accuracy/data/ when present) and prints MAPE and mean signed
// error by source and by slice (GPU generation × dense/MoE × precision), with the share of rows
// modelled. accuracy.h has the scoring; rows the model cannot represent are listed with the
// reason (--rows) and left out of the means.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "accuracy.h"
#include "memory_model.h"
#include "perf_model.h"

namespace {

namespace acc = attune::sim::accuracy;

std::vector<std::string> DefaultCsvs() {
  std::vector<std::string> out = {std::string(ATTUNE_SHARED_DIR) +
                                  "/calibration/published_throughput.csv"};
  std::error_code ec;
  std::vector<std::string> extra;
  for (const auto& entry : std::filesystem::directory_iterator(ATTUNE_BENCH_DATA_DIR, ec)) {
    if (entry.path().extension() == ".csv") extra.push_back(entry.path().string());
  }
  std::sort(extra.begin(), extra.end());
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

// Prints the step-time breakdown of one row (seconds per iteration).
void Explain(const attune::sim::CalibrationRow& row) {
  auto model = attune::sim::ModelFromCalibrationRow(row);
  if (!model.ok()) {
    std::cout << "cannot explain: " << model.status().message() << "\n";
    return;
  }
  auto b = attune::sim::EstimateStep(model->setup, model->cluster);
  std::cout << std::setprecision(3) << "step " << b.step_s << " s = gemm " << b.gemm_s
            << " + attention " << b.attention_s << " + elementwise " << b.elementwise_s
            << " + recompute " << b.recompute_s << " + host " << b.host_exposed_s << " + tp "
            << b.tp_comm_s << " + cp " << b.cp_comm_s << " + ep " << b.ep_comm_s
            << " + moe router/permute/sync " << b.moe_overhead_s << " + p2p " << b.pp_p2p_s
            << " + bubble " << b.bubble_s << " + dp " << b.dp_comm_s << " + optimizer "
            << b.optimizer_s << " + step overhead " << b.step_overhead_s << "; MFU " << b.tflops_per_gpu / model->cluster.gpu.peak_bf16_tflops * 100
            << "% of BF16 peak; busiest EP rank load " << attune::sim::MoeBusiestLoad(model->setup)
            << "\n";
  auto m = attune::sim::EstimateMemory(model->setup, model->cluster);
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::cout << "memory stage " << m.worst.stage << ": weights+optimizer "
            << m.worst.weight_optimizer_b / kGiB << " GiB (" << m.worst.params / 1e9
            << "B params) + activations " << m.worst.activation_b / kGiB << " + transient "
            << m.worst.transient_b / kGiB << " -> reserved " << m.worst.max_reserved_b / kGiB
            << " + non-PyTorch " << m.worst.non_pytorch_b / kGiB << " of "
            << m.capacity_b / kGiB << " GiB\n";
}

void PrintRow(const acc::ScoredRow& r, const attune::sim::CalibrationRow& row) {
  std::cout << r.file << " row " << r.index << " [" << r.source_group << "; " << r.slice << "] ";
  if (!r.scored) {
    std::cout << "skipped: " << (r.prediction.ok() ? "no throughput" : r.prediction.status) << "\n";
    return;
  }
  auto cell = [&](const char* k) { auto it = row.find(k); return it == row.end() ? std::string() : it->second; };
  std::cout << cell("model") << " on " << cell("num_gpus") << " " << cell("gpu") << ": measured "
            << r.measured_value << " " << r.metric << ", predicted " << r.predicted_value << " ("
            << std::showpos << r.signed_error_pct << std::noshowpos << "%) step "
            << std::setprecision(3) << r.prediction.step_time_s << " s, mem " << std::setprecision(1)
            << r.prediction.memory_gib << " GiB"
            << (r.prediction.assumptions.empty() ? "" : " [" + r.prediction.assumptions + "]") << "\n";
}

// --factor NAME=VALUE sets one of ModelFactors (to see one effect at a time against the data).
bool SetFactor(const std::string& spec, attune::sim::ModelFactors* f) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos) return false;
  std::string name = spec.substr(0, eq);
  double value = std::stod(spec.substr(eq + 1));
  struct Field { const char* name; double attune::sim::ModelFactors::*member; };
  static const Field kFields[] = {
      {"gemm_half_dim", &attune::sim::ModelFactors::gemm_half_dim},
      {"attention_fraction", &attune::sim::ModelFactors::attention_fraction},
      {"elementwise_traffic", &attune::sim::ModelFactors::elementwise_traffic},
      {"host_us_per_layer", &attune::sim::ModelFactors::host_us_per_layer},
      {"comm_overlap_hidden", &attune::sim::ModelFactors::comm_overlap_hidden},
      {"fp8_gemm_fraction", &attune::sim::ModelFactors::fp8_gemm_fraction},
      {"fp4_gemm_fraction", &attune::sim::ModelFactors::fp4_gemm_fraction},
      {"blackwell_gemm_efficiency", &attune::sim::ModelFactors::blackwell_gemm_efficiency},
      {"moe_expert_load_cv", &attune::sim::ModelFactors::moe_expert_load_cv},
      {"moe_sync_us", &attune::sim::ModelFactors::moe_sync_us},
      {"mnnvl_alltoall_efficiency", &attune::sim::ModelFactors::mnnvl_alltoall_efficiency},
      {"step_overhead_ms", &attune::sim::ModelFactors::step_overhead_ms},
  };
  for (const Field& field : kFields) {
    if (name == field.name) {
      f->*field.member = value;
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> paths;
  attune::sim::ModelFactors factors;
  bool show_rows = false;
  int explain = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--csv" && i + 1 < argc) paths.push_back(argv[++i]);
    else if (a == "--rows") show_rows = true;
    else if (a == "--explain" && i + 1 < argc) explain = std::stoi(argv[++i]);
    else if (a == "--factor" && i + 1 < argc && SetFactor(argv[++i], &factors)) continue;
    else {
      std::cerr << "usage: sim_accuracy [--csv FILE]... [--rows] [--explain ROW (of the first CSV)] "
                   "[--factor NAME=VALUE]...\n";
      return 2;
    }
  }
  if (paths.empty()) paths = DefaultCsvs();
  std::vector<acc::ScoredRow> all;
  std::cout << std::fixed << std::setprecision(1);
  for (size_t f = 0; f < paths.size(); ++f) {
    std::ifstream in(paths[f], std::ios::binary);
    if (!in) {
      std::cerr << "sim_accuracy: cannot read " << paths[f] << " (check the path)\n";
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    auto table = attune::sim::ParseCsvTable(text.str());
    if (!table.ok()) {
      std::cerr << "sim_accuracy: " << paths[f] << ": " << table.status().message() << "\n";
      return 1;
    }
    std::string label = std::filesystem::path(paths[f]).filename().string();
    auto rows = acc::ScoreTable(*table, label, factors);
    for (const auto& r : rows) {
      if (f == 0 && r.index == explain) Explain(table->rows[r.index]);
      if (show_rows) PrintRow(r, table->rows[r.index]);
    }
    all.insert(all.end(), rows.begin(), rows.end());
  }
  acc::PrintTables(all, std::cout);
  return 0;
}
