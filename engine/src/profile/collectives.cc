// NCCL collectives by type, data type and process group, with their message sizes.
#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "profile/parts.h"

namespace attune::profile {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "ncclKernel_AllReduce_RING_LL_Sum_float" → {"ncclKernel", "AllReduce", ...} (before any '(').
std::vector<std::string> KernelNameParts(std::string_view name) {
  std::vector<std::string> parts;
  name = name.substr(0, name.find('('));
  if (name.rfind("void ", 0) == 0) name.remove_prefix(5);
  size_t start = 0;
  while (start <= name.size()) {
    size_t underscore = name.find('_', start);
    if (underscore == std::string_view::npos) underscore = name.size();
    parts.emplace_back(name.substr(start, underscore - start));
    start = underscore + 1;
  }
  return parts;
}

struct Sized {
  std::string type, dtype, group, source;
  std::optional<int64_t> bytes;
  bool named = false;  // the type comes from collective args, not from the kernel name
};

// What one NCCL activity says about its collective: its own args, else the record_param_comms
// operator that launched it (same External id), else its kernel name.
Sized Describe(const TraceRecord& r, const Activity& a) {
  const CollectiveArgs* args = nullptr;
  std::string source;
  if (a.args >= 0) {
    args = &r.collective_args[a.args];
    source = "kernel args";
  } else if (auto it = r.comm_ops.find(a.external_id); a.external_id >= 0 && it != r.comm_ops.end()) {
    args = &it->second;
    source = "record_param_comms";
  }
  const std::string& name = r.names[a.name];
  Sized s;
  s.named = args != nullptr;
  s.type = CollectiveType(args ? args->collective : KernelCollective(name));
  s.dtype = args && !args->dtype.empty() ? args->dtype : KernelDtype(name);
  if (args) s.group = args->group;
  int width = DtypeBytes(s.dtype);
  if (args && args->nelems && width > 0) {
    s.bytes = *args->nelems * width;
    s.source = source;
  }
  return s;
}

}  // namespace

std::string CollectiveType(std::string_view text) {
  std::string s;
  for (char c : Lower(text)) {
    if (c != '_') s += c;
  }
  // Longest names first: "reducescatter" contains "reduce", "allgather" contains "gather".
  for (const char* known : {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
                            "sendrecv", "barrier", "send", "recv", "reduce", "gather", "scatter"}) {
    if (s.find(known) != std::string::npos) return known;
  }
  return s;
}

std::string KernelCollective(std::string_view kernel_name) {
  auto parts = KernelNameParts(kernel_name);
  if (parts.size() < 2 || Lower(parts[0]).find("nccl") == std::string::npos) return "";
  return parts[1];
}

std::string KernelDtype(std::string_view kernel_name) {
  auto parts = KernelNameParts(kernel_name);
  // ncclKernel_<collective>_<algorithm>_<protocol>_<op>_<type>, e.g. ..._Sum_int8_t: the type
  // may itself hold an underscore ("int8_t"), so it is everything after the fifth part.
  if (parts.size() < 6 || Lower(parts[0]).find("nccl") == std::string::npos) return "";
  std::string type = parts[5];
  for (size_t i = 6; i < parts.size(); ++i) type += "_" + parts[i];
  return type;
}

int DtypeBytes(std::string_view dtype) {
  static const std::map<std::string, int> kWidths = {
      {"float", 4},   {"float32", 4}, {"int", 4},     {"int32", 4},    {"int32_t", 4},
      {"uint32_t", 4}, {"half", 2},   {"float16", 2}, {"bfloat16", 2}, {"bf16", 2},
      {"__nv_bfloat16", 2}, {"double", 8}, {"float64", 8}, {"long", 8}, {"int64", 8},
      {"int64_t", 8}, {"uint64_t", 8}, {"byte", 1},  {"char", 1},     {"bool", 1},
      {"int8_t", 1},  {"uint8_t", 1}, {"int8", 1},    {"uint8", 1},    {"float8_e4m3fn", 1},
      {"float8_e5m2", 1}};
  auto it = kWidths.find(Lower(dtype));
  return it == kWidths.end() ? 0 : it->second;
}

std::string CollectiveTypeOf(const TraceRecord& record, const Activity& activity) {
  return Describe(record, activity).type;
}

PointToPoint PointToPointOf(const TraceRecord& record, const Activity& activity) {
  if (activity.cls != ActivityClass::kCommunication) return PointToPoint::kNone;
  Sized s = Describe(record, activity);
  if (s.type != "sendrecv" && s.type != "send" && s.type != "recv") return PointToPoint::kNone;
  return s.named ? PointToPoint::kNamed : PointToPoint::kKernelName;
}

bool IsPointToPoint(const TraceRecord& record, const Activity& activity) {
  return PointToPointOf(record, activity) != PointToPoint::kNone;
}

std::vector<CollectiveSummary> Collectives(const TraceRecord& r) {
  std::map<std::tuple<std::string, std::string, std::string>, CollectiveSummary> by_key;
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<int64_t>> sizes;
  for (const Activity& a : r.activities) {
    if (a.cls != ActivityClass::kCommunication) continue;
    Sized s = Describe(r, a);
    auto key = std::make_tuple(s.type, s.dtype, s.group);
    CollectiveSummary& c = by_key[key];
    c.type = s.type;
    c.dtype = s.dtype;
    c.group = s.group;
    ++c.count;
    c.total_ns += a.end - a.start;
    if (s.bytes) {
      sizes[key].push_back(*s.bytes);
      c.size_source = s.source;
    }
  }
  std::vector<CollectiveSummary> out;
  for (auto& [key, c] : by_key) {
    auto& v = sizes[key];
    std::sort(v.begin(), v.end());
    c.sized = static_cast<int64_t>(v.size());
    if (!v.empty()) {
      c.min_bytes = v.front();
      c.max_bytes = v.back();
      c.median_bytes = v[v.size() / 2];
      for (int64_t b : v) c.total_bytes += b;
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const CollectiveSummary& a, const CollectiveSummary& b) {
    return a.total_ns > b.total_ns;
  });
  return out;
}

}  // namespace attune::profile
