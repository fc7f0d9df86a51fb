#include "report/svg_axis.h"

#include <fmt/format.h>

#include <cmath>

namespace attune {

double NiceStep(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  // A small allowance so that 2.0000000001 is still 2 and not 5.
  const double nice = fraction <= 1.0 + 1e-9   ? 1
                      : fraction <= 2.0 + 1e-9 ? 2
                      : fraction <= 5.0 + 1e-9 ? 5
                                               : 10;
  return nice * magnitude;
}

NiceAxis MakeNiceAxis(double data_max, int target_ticks) {
  NiceAxis axis;
  if (!(data_max > 0) || !std::isfinite(data_max)) data_max = 1;
  // At most target_ticks + 2 intervals: the step is the nice one at or above max ÷ (target + 2).
  axis.step = NiceStep(data_max / (std::max(target_ticks, 1) + 2));
  axis.max = std::ceil(data_max / axis.step - 1e-9) * axis.step;
  axis.decimals = axis.step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(axis.step) - 1e-9));
  return axis;
}

std::vector<double> NiceAxis::Ticks() const {
  std::vector<double> ticks;
  const int n = static_cast<int>(std::lround(max / step));
  for (int i = 0; i <= n; ++i) ticks.push_back(i * step);
  return ticks;
}

std::string NiceAxis::Label(double v) const { return fmt::format("{:.{}f}", v, decimals); }

}  // namespace attune
