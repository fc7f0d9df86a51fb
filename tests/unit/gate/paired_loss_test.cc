// The paired-loss comparison: relative, per loss, failing closed.
#include <catch2/catch.hpp>

#include "gate/paired_loss.h"

namespace attune {
namespace {

TEST_CASE("losses within the relative tolerance pass", "[gate][paired]") {
  auto v = ComparePairedLosses({10.0, 9.0, 8.0}, {10.01, 9.0, 8.05}, 5, 0.01);
  CHECK(v.pass);
  CHECK(v.compared == 3);
  CHECK(v.worst_index == 2);
  CHECK(v.max_rel_diff == Approx(0.05 / 8));
  CHECK_THAT(v.reason, Catch::Contains("within tolerance"));
}

TEST_CASE("one loss beyond the tolerance fails and is named", "[gate][paired]") {
  auto v = ComparePairedLosses({10.0, 9.0, 8.0}, {10.0, 9.5, 8.0}, 5, 0.02);
  CHECK_FALSE(v.pass);
  CHECK(v.worst_index == 1);
  CHECK_THAT(v.reason, Catch::Contains("loss 2 of 3"));
  CHECK_THAT(v.reason, Catch::Contains("exceeds tolerance"));
}

TEST_CASE("only the first `count` losses are compared", "[gate][paired]") {
  auto v = ComparePairedLosses({10, 9, 8, 7}, {10, 9, 100, 100}, 2, 0.01);
  CHECK(v.pass);
  CHECK(v.compared == 2);
}

TEST_CASE("no losses to compare fails closed", "[gate][paired]") {
  auto v = ComparePairedLosses({}, {10.0}, 5, 0.5);
  CHECK_FALSE(v.pass);
  CHECK(v.compared == 0);
  CHECK_THAT(v.reason, Catch::Contains("fails closed"));
}

TEST_CASE("a NaN loss is never within tolerance", "[gate][paired]") {
  auto v = ComparePairedLosses({10.0, 9.0}, {10.0, std::nan("")}, 5, 1.0);
  CHECK_FALSE(v.pass);
  CHECK(v.worst_index == 1);
}

}  // namespace
}  // namespace attune
