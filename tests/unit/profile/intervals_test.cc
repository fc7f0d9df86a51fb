// Interval arithmetic, checked against a brute-force bitmap of unit cells.
#include <catch2/catch.hpp>

#include <random>

#include "profile/intervals.h"

namespace attune::profile {
namespace {

TEST_CASE("overlapping, touching and empty intervals normalise into disjoint parts", "[profile]") {
  IntervalSet s = IntervalSet::Of({{10, 20}, {0, 5}, {5, 8}, {15, 30}, {40, 40}, {50, 45}});
  REQUIRE(s.parts().size() == 2);
  CHECK(s.parts()[0].start == 0);
  CHECK(s.parts()[0].end == 8);
  CHECK(s.parts()[1].start == 10);
  CHECK(s.parts()[1].end == 30);
  CHECK(s.Length() == 28);
}

TEST_CASE("intersection, difference and clipping of small sets", "[profile]") {
  IntervalSet a = IntervalSet::Of({{0, 10}, {20, 30}});
  IntervalSet b = IntervalSet::Of({{5, 25}});
  CHECK(a.Intersect(b).Length() == 10);
  CHECK(a.Subtract(b).Length() == 10);
  CHECK(b.Subtract(a).Length() == 10);
  CHECK(a.Union(b).Length() == 30);
  CHECK(a.Clip(8, 22).Length() == 4);
  CHECK(IntervalSet().Intersect(a).empty());
  CHECK(a.Subtract(IntervalSet()).Length() == 20);
}

std::vector<bool> Cells(const std::vector<Interval>& v, int size) {
  std::vector<bool> cells(size, false);
  for (const Interval& i : v) {
    for (int64_t t = i.start; t < i.end; ++t) cells[t] = true;
  }
  return cells;
}

TEST_CASE("set operations agree with a bitmap on random sets", "[profile]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> start(0, 180), len(0, 20), count(0, 12);
  for (int round = 0; round < 300; ++round) {
    std::vector<Interval> x, y;
    for (int i = count(rng); i > 0; --i) { int s = start(rng); x.push_back({s, s + len(rng)}); }
    for (int i = count(rng); i > 0; --i) { int s = start(rng); y.push_back({s, s + len(rng)}); }
    auto cx = Cells(x, 200), cy = Cells(y, 200);
    int64_t both = 0, only_x = 0, either = 0;
    for (int t = 0; t < 200; ++t) {
      both += cx[t] && cy[t];
      only_x += cx[t] && !cy[t];
      either += cx[t] || cy[t];
    }
    IntervalSet a = IntervalSet::Of(x), b = IntervalSet::Of(y);
    CHECK(a.Intersect(b).Length() == both);
    CHECK(a.Subtract(b).Length() == only_x);
    CHECK(a.Union(b).Length() == either);
  }
}

}  // namespace
}  // namespace attune::profile
