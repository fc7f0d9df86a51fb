// Copyright attune authors.
//
// How far NVLink reaches for a GPU type, for the plugins that reason about a recipe's fabric
// (the heuristic agent's communication estimates, the Megatron stack's legal TP sizes): a GB200
// or GB300 system is an NVL72 rack, 72 GPUs over NVLink switches with 4 to a compute tray; on
// any other system NVLink ends at the node. The simulated cluster keeps its own hardware table.
//
// Pure function; thread-safe.
#ifndef ATTUNE_SUPPORT_NVLINK_H_
#define ATTUNE_SUPPORT_NVLINK_H_

#include <string_view>

namespace attune::support {

// The GPUs one NVLink fabric joins for `device_type` ("GB200", "GB300-NVL72", ...): 72 for
// GB200 and GB300, 0 where the node bounds it.
inline int NvlinkRackGpus(std::string_view device_type) {
  const bool nvl72 = device_type.substr(0, 5) == "GB200" || device_type.substr(0, 5) == "GB300";
  return nvl72 ? 72 : 0;
}

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_NVLINK_H_
