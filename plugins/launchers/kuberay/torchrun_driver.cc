// Copyright attune authors.
#include "torchrun_driver.h"

#include <algorithm>
#include <set>

namespace attune::kuberay {
namespace {

// torchrun options that take a value, '-' spelled '_' (torch.distributed.run accepts both). The
// driver keeps the same list (torchrun_on_ray.py, _VALUED).
const std::set<std::string> kValued = {
    "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend",
    "rdzv_endpoint", "rdzv_id", "rdzv_conf", "max_restarts", "monitor_interval", "start_method",
    "role", "log_dir", "redirects", "tee", "local_addr", "logs_specs", "local_ranks_filter",
    "event_log_handler", "r", "t"};
// What the driver sets for every node (torchrun_on_ray.py, _MANAGED).
const std::set<std::string> kManaged = {"nnodes", "node_rank", "master_addr", "master_port",
                                        "rdzv_backend", "rdzv_endpoint", "rdzv_id", "rdzv_conf",
                                        "standalone"};

// Decodes the word after the code and runs it. No '$', '`', '\' or '"': KubeRay's submitter puts
// the entrypoint into a shell line and Ray runs `ray job submit`'s words joined again under
// /bin/sh, so the line is read by two shells.
constexpr char kBootstrap[] = "import base64,sys;exec(base64.b64decode(sys.argv.pop(1)))";

struct Option {
  std::string name;  // without dashes, '_' for '-'
  std::vector<std::string> words;
};

struct TorchrunParts {
  std::vector<std::string> launcher;  // "torchrun" or "python3 -m torch.distributed.run"
  std::vector<Option> options;
  std::vector<std::string> script;  // the script and its arguments
};

std::string OptionName(const std::string& word) {
  std::string name = word.substr(word.find_first_not_of('-'));
  name = name.substr(0, name.find('='));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::string OptionValue(const Option& o) {
  size_t eq = o.words[0].find('=');
  if (eq != std::string::npos) return o.words[0].substr(eq + 1);
  return o.words.size() > 1 ? o.words[1] : "";
}

TorchrunParts Split(const std::vector<std::string>& argv) {
  TorchrunParts parts;
  const size_t head = argv[0].substr(argv[0].rfind('/') + 1) == "torchrun" ? 1 : 3;
  parts.launcher.assign(argv.begin(), argv.begin() + static_cast<long>(head));
  size_t i = head;
  // A lone "-" or "--" is no option (and has no name): the script part starts there.
  while (i < argv.size() && argv[i].size() > 1 && argv[i][0] == '-' && argv[i] != "--") {
    Option o{OptionName(argv[i]), {argv[i]}};
    if (argv[i].find('=') == std::string::npos && kValued.count(o.name) && i + 1 < argv.size()) {
      o.words.push_back(argv[i + 1]);
    }
    i += o.words.size();
    parts.options.push_back(std::move(o));
  }
  parts.script.assign(argv.begin() + static_cast<long>(i), argv.end());
  return parts;
}

// "2" or elastic "1:2" (the maximum is what runs); -1 when it is not a number.
int NodesValue(const std::string& value) {
  std::string last = value.substr(value.find(':') == std::string::npos ? 0 : value.find(':') + 1);
  if (last.empty() || last.size() > 6 || last.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  return std::stoi(last);
}

Status CheckShape(const TorchrunParts& parts, int nodes, int gpus_per_node) {
  for (const Option& o : parts.options) {
    const std::string value = OptionValue(o);
    if (o.name == "nproc_per_node" && value != std::to_string(gpus_per_node)) {
      return Status::InvalidArgument(
          "kuberay launcher: the recipe runs torchrun --nproc-per-node " + value +
          " processes per node, but each worker pod has " + std::to_string(gpus_per_node) +
          " GPUs (gpus_per_worker); set gpus_per_worker: " + value +
          " or change the recipe's --nproc-per-node");
    }
    if (o.name == "nnodes" && NodesValue(value) != nodes) {
      return Status::InvalidArgument(
          "kuberay launcher: the recipe runs torchrun --nnodes " + value + ", but the job asks for " +
          std::to_string(nodes) + " worker pods; make the recipe's topology and --nnodes agree");
    }
  }
  if (parts.script.empty()) {
    return Status::InvalidArgument("kuberay launcher: the torchrun command names no training script");
  }
  return Status::Ok();
}

}  // namespace

bool IsTorchrun(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  if (argv[0].substr(argv[0].rfind('/') + 1) == "torchrun") return true;
  return argv.size() > 2 && argv[1] == "-m" && argv[2] == "torch.distributed.run";
}

Result<std::vector<std::string>> TorchrunOnRay(const std::vector<std::string>& argv, int nodes,
                                               int gpus_per_node) {
  if (!IsTorchrun(argv)) {
    return Status::InvalidArgument("kuberay launcher: not a torchrun command: " +
                                   (argv.empty() ? std::string("(empty)") : argv[0]));
  }
  const TorchrunParts parts = Split(argv);
  ATTUNE_RETURN_IF_ERROR(CheckShape(parts, nodes, gpus_per_node));
  std::vector<std::string> out = {"python3", "-c", kBootstrap, Base64(kTorchrunDriverSource),
                                  "--nnodes", std::to_string(nodes), "--gpus-per-node",
                                  std::to_string(gpus_per_node), "--"};
  out.insert(out.end(), parts.launcher.begin(), parts.launcher.end());
  for (const Option& o : parts.options) {
    if (!kManaged.count(o.name)) out.insert(out.end(), o.words.begin(), o.words.end());
  }
  out.insert(out.end(), parts.script.begin(), parts.script.end());
  return out;
}

std::string Base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t chunk = 0;
    for (size_t k = 0; k < 3; ++k) {
      chunk = (chunk << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    }
    for (size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? kAlphabet[(chunk >> (18 - 6 * k)) & 0x3f] : '=');
    }
  }
  return out;
}

}  // namespace attune::kuberay
