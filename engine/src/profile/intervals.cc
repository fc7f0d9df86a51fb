#include "profile/intervals.h"

#include <algorithm>

namespace attune::profile {

IntervalSet IntervalSet::Of(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  IntervalSet set;
  for (const Interval& i : intervals) {
    if (!set.parts_.empty() && i.start <= set.parts_.back().end) {
      set.parts_.back().end = std::max(set.parts_.back().end, i.end);
    } else {
      set.parts_.push_back(i);
    }
  }
  return set;
}

int64_t IntervalSet::Length() const {
  int64_t total = 0;
  for (const Interval& i : parts_) total += i.end - i.start;
  return total;
}

IntervalSet IntervalSet::Union(const IntervalSet& other) const {
  std::vector<Interval> all = parts_;
  all.insert(all.end(), other.parts_.begin(), other.parts_.end());
  return Of(std::move(all));
}

IntervalSet IntervalSet::Intersect(const IntervalSet& other) const {
  IntervalSet out;
  size_t a = 0, b = 0;
  while (a < parts_.size() && b < other.parts_.size()) {
    int64_t start = std::max(parts_[a].start, other.parts_[b].start);
    int64_t end = std::min(parts_[a].end, other.parts_[b].end);
    if (start < end) out.parts_.push_back({start, end});
    // Advance whichever ends first: it cannot meet anything further in the other set.
    if (parts_[a].end < other.parts_[b].end) {
      ++a;
    } else {
      ++b;
    }
  }
  return out;
}

IntervalSet IntervalSet::Subtract(const IntervalSet& other) const {
  IntervalSet out;
  size_t b = 0;
  for (Interval piece : parts_) {
    while (b < other.parts_.size() && other.parts_[b].end <= piece.start) ++b;
    size_t k = b;
    while (k < other.parts_.size() && other.parts_[k].start < piece.end) {
      if (other.parts_[k].start > piece.start) {
        out.parts_.push_back({piece.start, other.parts_[k].start});
      }
      piece.start = std::max(piece.start, other.parts_[k].end);
      ++k;
    }
    if (piece.start < piece.end) out.parts_.push_back(piece);
  }
  return out;
}

IntervalSet IntervalSet::Clip(int64_t start, int64_t end) const {
  return Intersect(Of({{start, end}}));
}

}  // namespace attune::profile
