#include "test_support.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attune::megatron::testing {

const MegatronStack& Stack() {
  static const std::unique_ptr<MegatronStack> stack = [] {
    auto opened = MegatronStack::Open(ATTUNE_SOURCE_DIR);
    if (!opened.ok()) throw std::runtime_error(opened.status().ToString());
    return std::move(opened).value();
  }();
  return *stack;
}

ClusterInfo H100() {
  ClusterInfo c;
  c.device_type = "H100";
  c.device_memory_gib = 80;
  c.peak_tflops = 989;
  c.devices_per_node = 8;
  c.max_nodes = 4;
  c.compute_capability_major = 9;
  return c;
}

ClusterInfo B200() {
  ClusterInfo c = H100();
  c.device_type = "B200";
  c.device_memory_gib = 180;
  c.compute_capability_major = 10;
  return c;
}

ClusterInfo Cpu() {
  ClusterInfo c;
  c.device_type = "cpu";
  c.devices_per_node = 2;
  c.max_nodes = 1;
  return c;
}

Recipe With(Recipe r, const std::string& key, const std::optional<std::string>& value) {
  if (!SetValue(&r, key, value).ok()) throw std::runtime_error("bad key " + key);
  return r;
}

namespace {

Recipe Base(int nodes, int gpus) {
  Recipe r;
  r.stack = "megatron";
  r.entry = {"pretrain_gpt.py"};
  r.launcher_hint = "torchrun";
  r.topology = Topology{nodes, gpus, ""};
  return r;
}

void Args(Recipe* r, const std::vector<std::pair<std::string, std::string>>& args) {
  for (const auto& [k, v] : args) *r = With(*r, k, v);
}

}  // namespace

Recipe DenseRecipe() {
  Recipe r = Base(2, 8);
  Args(&r, {{"--num-layers", "32"}, {"--hidden-size", "4096"}, {"--num-attention-heads", "32"},
            {"--seq-length", "4096"}, {"--max-position-embeddings", "4096"},
            {"--micro-batch-size", "1"}, {"--global-batch-size", "256"}, {"--lr", "3e-4"},
            {"--bf16", ""}, {"--tensor-model-parallel-size", "2"},
            {"--pipeline-model-parallel-size", "2"}, {"--sequence-parallel", ""},
            {"--use-distributed-optimizer", ""}, {"--overlap-grad-reduce", ""},
            {"--calculate-per-token-loss", ""}, {"--padded-vocab-size", "32000"},
            {"--log-interval", "10"}});
  r.env = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  return r;
}

Recipe MoeRecipe() {
  Recipe r = Base(1, 8);
  Args(&r, {{"--num-layers", "16"}, {"--hidden-size", "2048"}, {"--num-attention-heads", "16"},
            {"--seq-length", "4096"}, {"--micro-batch-size", "1"}, {"--global-batch-size", "64"},
            {"--bf16", ""}, {"--num-experts", "8"}, {"--moe-router-topk", "2"},
            {"--disable-bias-linear", ""}, {"--calculate-per-token-loss", ""},
            {"--padded-vocab-size", "32000"}, {"--moe-router-load-balancing-type", "aux_loss"},
            {"--moe-aux-loss-coeff", "0.0"}});
  return r;
}

Recipe TinyRecipe() {
  Recipe r = Base(1, 1);
  r.entry = {"python3", "pretrain_gpt.py"};
  r.launcher_hint = "python";
  Args(&r, {{"--num-layers", "4"}, {"--hidden-size", "256"}, {"--num-attention-heads", "4"},
            {"--seq-length", "128"}, {"--micro-batch-size", "2"}, {"--global-batch-size", "16"},
            {"--vocab-size", "512"}, {"--train-iters", "20"}, {"--log-interval", "1"}});
  return r;
}

Recipe MinigptRecipe() {
  Recipe r = Base(1, 1);
  r.entry = {"/usr/bin/python3", "tools/minigpt/pretrain_gpt.py"};
  r.launcher_hint = "python";
  r.topology.gpu_type = "cpu";
  Args(&r, {{"--num-layers", "4"}, {"--hidden-size", "128"}, {"--num-attention-heads", "4"},
            {"--seq-length", "128"}, {"--max-position-embeddings", "128"}, {"--vocab-size", "512"},
            {"--micro-batch-size", "1"}, {"--global-batch-size", "8"}, {"--train-iters", "10"},
            {"--lr", "3e-3"}, {"--seed", "1234"}, {"--recompute-granularity", "full"},
            {"--recompute-method", "uniform"}, {"--recompute-num-layers", "1"},
            {"--calculate-per-token-loss", ""}, {"--log-interval", "1"}, {"--log-throughput", ""}});
  r.env = {{"OMP_NUM_THREADS", "1"}, {"OMP_WAIT_POLICY", "PASSIVE"}};
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string SharedLogs() { return std::string(ATTUNE_SHARED_DIR) + "/fixtures/logs"; }
std::string OwnFixtures() { return std::string(ATTUNE_SOURCE_DIR) + "/tests/fixtures/megatron"; }

namespace {

// One CSV record (RFC 4180 quoting; quoted fields may hold newlines).
bool ReadRecord(const std::string& text, size_t* pos, std::vector<std::string>* fields) {
  fields->clear();
  if (*pos >= text.size()) return false;
  std::string cur;
  bool quoted = false;
  while (*pos < text.size()) {
    char c = text[(*pos)++];
    if (quoted) {
      if (c == '"' && *pos < text.size() && text[*pos] == '"') { cur += '"'; ++*pos; }
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields->push_back(cur);
      cur.clear();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      cur += c;
    }
  }
  fields->push_back(cur);
  return true;
}

}  // namespace

std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
  std::string text = ReadFile(path);
  size_t pos = 0;
  std::vector<std::string> header, fields;
  ReadRecord(text, &pos, &header);
  std::vector<std::map<std::string, std::string>> rows;
  while (ReadRecord(text, &pos, &fields)) {
    if (fields.size() == 1 && fields[0].empty()) continue;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

}  // namespace attune::megatron::testing
