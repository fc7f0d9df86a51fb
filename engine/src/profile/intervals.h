// Copyright attune authors.
//
// Sets of time intervals on one clock (integer nanoseconds): the interval arithmetic behind every
// figure of a profile (busy = |union of all|, exposed communication = |comm \ compute|, ...).
// Values; no I/O; not thread-safe for concurrent mutation (distinct objects are independent).
#ifndef ATTUNE_ENGINE_PROFILE_INTERVALS_H_
#define ATTUNE_ENGINE_PROFILE_INTERVALS_H_

#include <cstdint>
#include <vector>

namespace attune::profile {

// [start, end): start <= end. An empty interval (start == end) has length 0.
struct Interval {
  int64_t start = 0;
  int64_t end = 0;
};

// A normalised set: sorted by start, pairwise disjoint, no two touching, none empty.
class IntervalSet {
 public:
  IntervalSet() = default;

  // Sorts and merges `intervals` (overlapping or touching ones become one; empty ones vanish).
  static IntervalSet Of(std::vector<Interval> intervals);

  // The total length of the set.
  int64_t Length() const;
  bool empty() const { return parts_.empty(); }
  const std::vector<Interval>& parts() const { return parts_; }

  IntervalSet Union(const IntervalSet& other) const;
  IntervalSet Intersect(const IntervalSet& other) const;
  // The part of this set not covered by `other`.
  IntervalSet Subtract(const IntervalSet& other) const;
  // The part of this set inside [start, end).
  IntervalSet Clip(int64_t start, int64_t end) const;

 private:
  std::vector<Interval> parts_;
};

}  // namespace attune::profile

#endif  // ATTUNE_ENGINE_PROFILE_INTERVALS_H_
