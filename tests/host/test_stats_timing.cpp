// Order statistics and the repetition planner.
#include "catch.hpp"
#include "stats.hpp"
#include "timing.hpp"

TEST_CASE("summarize gives median, min and max", "[stats]") {
  const auto odd = common::summarize({5.0, 1.0, 3.0});
  CHECK(odd.median == 3.0);
  CHECK(odd.min == 1.0);
  CHECK(odd.max == 5.0);
  CHECK(odd.count == 3);
  const auto even = common::summarize({4.0, 1.0, 3.0, 2.0});
  CHECK(even.median == 2.5);
  CHECK(common::summarize({7.0}).median == 7.0);
  CHECK_THROWS_AS(common::summarize({}), std::invalid_argument);
}

TEST_CASE("planned_repetitions fits the budget but never drops below the floor", "[timing]") {
  common::TimingOptions o;
  o.reps = 100;
  o.min_reps = 3;
  o.budget_ms = 1000;
  CHECK(common::planned_repetitions(1.0, o) == 100);   // 100 fit
  CHECK(common::planned_repetitions(20.0, o) == 50);   // only 50 fit
  CHECK(common::planned_repetitions(5000.0, o) == 3);  // slow: the floor
  o.reps = 2;
  CHECK(common::planned_repetitions(5000.0, o) == 2);  // never more than asked
  CHECK(common::planned_repetitions(0.0, o) == 2);
}

TEST_CASE("the L2 flush buffer is at least twice the L2", "[timing]") {
  CHECK(common::l2_flush_bytes(60u << 20) == (120u << 20));
  CHECK(common::l2_flush_bytes(0) >= (4u << 20));
}
