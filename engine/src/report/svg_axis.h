// Copyright attune authors.
//
// "Nice" axis ticks for the report's SVG plots: steps of 1, 2 or 5 times a power of ten, an axis
// end rounded up to a whole step, labels with just enough decimals for the step.
#ifndef ATTUNE_ENGINE_REPORT_SVG_AXIS_H_
#define ATTUNE_ENGINE_REPORT_SVG_AXIS_H_

#include <string>
#include <vector>

namespace attune {

struct NiceAxis {
  double step = 1;
  double max = 1;  // a whole number of steps, >= the data's maximum
  int decimals = 0;
  std::vector<double> Ticks() const;  // 0, step, 2 step, ..., max
  std::string Label(double v) const;  // fixed decimals
};

// An axis from 0 to at least `data_max` with about `target_ticks` (at most target_ticks + 2)
// intervals. A non-positive or
// non-finite maximum gives the axis 0..1.
NiceAxis MakeNiceAxis(double data_max, int target_ticks);

// The 1-2-5 step nearest above `raw` (> 0).
double NiceStep(double raw);

}  // namespace attune

#endif  // ATTUNE_ENGINE_REPORT_SVG_AXIS_H_
