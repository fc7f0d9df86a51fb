// Copyright attune authors.
#include "slurm_options.h"

#include "attune/support/names.h"

#include <algorithm>
#include <functional>
#include <map>

#include "attune/support/json_schema.h"
#include "options_schema.h"

namespace attune::slurm {
namespace {

using Json = nlohmann::json;
using Setter = std::function<Status(const Json&, SlurmOptions*)>;

Status TypeError(const std::string& key, const char* expected, const Json& found) {
  return Status::InvalidArgument("slurm launcher option '" + key + "': expected " + expected +
                                 ", found " + found.dump());
}

Setter String(std::string SlurmOptions::*field, std::string key) {
  return [field, key](const Json& v, SlurmOptions* o) -> Status {
    if (!v.is_string()) return TypeError(key, "a string", v);
    o->*field = v.get<std::string>();
    return Status::Ok();
  };
}

Setter Int(int SlurmOptions::*field, std::string key, int min) {
  return [field, key, min](const Json& v, SlurmOptions* o) -> Status {
    if (!v.is_number_integer() || v.get<int>() < min) {
      return TypeError(key, ("an integer >= " + std::to_string(min)).c_str(), v);
    }
    o->*field = v.get<int>();
    return Status::Ok();
  };
}

Setter Double(double SlurmOptions::*field, std::string key) {
  return [field, key](const Json& v, SlurmOptions* o) -> Status {
    if (!v.is_number() || v.get<double>() < 0) return TypeError(key, "a number >= 0", v);
    o->*field = v.get<double>();
    return Status::Ok();
  };
}

Setter Bool(bool SlurmOptions::*field, std::string key) {
  return [field, key](const Json& v, SlurmOptions* o) -> Status {
    if (!v.is_boolean()) return TypeError(key, "true or false", v);
    o->*field = v.get<bool>();
    return Status::Ok();
  };
}

// A list of strings; a single string is a one-element list.
Setter Strings(std::vector<std::string> SlurmOptions::*field, std::string key) {
  return [field, key](const Json& v, SlurmOptions* o) -> Status {
    Json list = v.is_string() ? Json::array({v}) : v;
    if (!list.is_array()) return TypeError(key, "a list of strings", v);
    std::vector<std::string> out;
    for (const auto& item : list) {
      if (!item.is_string()) return TypeError(key, "a list of strings", v);
      out.push_back(item.get<std::string>());
    }
    o->*field = std::move(out);
    return Status::Ok();
  };
}

Status SetEnv(const Json& v, SlurmOptions* o) {
  if (!v.is_object()) return TypeError("env", "a map NAME: value", v);
  o->env.clear();
  for (const auto& [k, value] : v.items()) {
    if (k.empty() || k.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789_") != std::string::npos) {
      return Status::InvalidArgument("slurm launcher option 'env': '" + k +
                                     "' is not a valid environment variable name");
    }
    if (value.is_string()) {
      o->env.emplace_back(k, value.get<std::string>());
    } else if (value.is_number() || value.is_boolean()) {
      o->env.emplace_back(k, value.dump());
    } else {
      return TypeError("env." + k, "a string or number", value);
    }
  }
  return Status::Ok();
}

const std::map<std::string, Setter>& Setters() {
  static const auto* setters = new std::map<std::string, Setter>{
      {"partition", String(&SlurmOptions::partition, "partition")},
      {"account", String(&SlurmOptions::account, "account")},
      {"qos", String(&SlurmOptions::qos, "qos")},
      {"gpus_per_node", Int(&SlurmOptions::gpus_per_node, "gpus_per_node", 0)},
      {"ntasks_per_node", Int(&SlurmOptions::ntasks_per_node, "ntasks_per_node", 1)},
      {"cpus_per_task", Int(&SlurmOptions::cpus_per_task, "cpus_per_task", 0)},
      {"extra_sbatch", Strings(&SlurmOptions::extra_sbatch, "extra_sbatch")},
      {"env", SetEnv},
      {"prologue", Strings(&SlurmOptions::prologue, "prologue")},
      {"srun", Bool(&SlurmOptions::use_srun, "srun")},
      {"srun_args", Strings(&SlurmOptions::srun_args, "srun_args")},
      {"requeue", Bool(&SlurmOptions::requeue, "requeue")},
      {"master_port_base", Int(&SlurmOptions::master_port_base, "master_port_base", 1024)},
      {"master_port_span", Int(&SlurmOptions::master_port_span, "master_port_span", 1)},
      {"log_dir", String(&SlurmOptions::log_dir, "log_dir")},
      {"state_dir", String(&SlurmOptions::state_dir, "state_dir")},
      {"bin_dir", String(&SlurmOptions::bin_dir, "bin_dir")},
      {"slurm_conf", String(&SlurmOptions::slurm_conf, "slurm_conf")},
      {"poll_interval_s", Double(&SlurmOptions::poll_interval_s, "poll_interval_s")},
      {"command_timeout_s", Double(&SlurmOptions::command_timeout_s, "command_timeout_s")},
      {"device_type", String(&SlurmOptions::device_type, "device_type")},
      {"device_memory_gib", Double(&SlurmOptions::device_memory_gib, "device_memory_gib")},
      {"peak_tflops", Double(&SlurmOptions::peak_tflops, "peak_tflops")},
      {"compute_capability_major",
       Int(&SlurmOptions::compute_capability_major, "compute_capability_major", 0)},
      {"devices_per_node", Int(&SlurmOptions::devices_per_node, "devices_per_node", 0)},
      {"max_nodes", Int(&SlurmOptions::max_nodes, "max_nodes", 0)},
  };
  return *setters;
}

std::string UnknownKeyMessage(const std::string& key) {
  std::vector<std::string> names;
  for (const auto& [name, setter] : Setters()) names.push_back(name);
  const std::string best = support::NearestName(key, names);
  std::string message = "slurm launcher: unknown option '" + key + "'";
  if (!best.empty()) message += " (did you mean '" + best + "'?)";
  return message + "; see docs/slurm.md for the options";
}

}  // namespace

Result<SlurmOptions> ParseSlurmOptions(const nlohmann::json& config, SlurmOptions base) {
  if (config.is_null()) return base;
  // The declared schema checks keys, types and ranges (the same check `attune validate` makes).
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(kOptionsSchema, config, "slurm launcher"));
  for (const auto& [key, value] : config.items()) {
    auto it = Setters().find(key);
    if (it == Setters().end()) return Status::InvalidArgument(UnknownKeyMessage(key));
    ATTUNE_RETURN_IF_ERROR(it->second(value, &base));
  }
  return base;
}

}  // namespace attune::slurm
