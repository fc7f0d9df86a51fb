#include "attune/sim_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace attune::sim {

std::string VirtualTimestamp(double virtual_s) {
  constexpr std::time_t kVirtualEpoch = 1767225600;  // 2026-01-01 00:00:00 UTC
  double whole = std::floor(virtual_s);
  std::time_t t = kVirtualEpoch + static_cast<std::time_t>(whole);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
  int micros = static_cast<int>(std::min(999999.0, (virtual_s - whole) * 1e6));
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%06d", date, micros);
  return out;
}

}  // namespace attune::sim
