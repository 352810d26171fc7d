// The operators of single_pass/single_pass.cuh on the host: Min's and Max's identities are
// the extremes of every type, so a Min or Max over any data is unaffected by the padding
// values that threads past the end contribute.
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "catch.hpp"
#include "single_pass.cuh"

namespace g = reduction::generic;

template <typename T>
void check_identities() {
  INFO("type of size " << sizeof(T));
  CHECK(g::Min::identity<T>() == g::highest_value<T>());
  CHECK(g::Max::identity<T>() == g::lowest_value<T>());
  const T values[] = {std::numeric_limits<T>::lowest(), T(0), T(1), std::numeric_limits<T>::max()};
  for (T v : values) {
    CHECK(g::Min{}(g::Min::identity<T>(), v) == v);
    CHECK(g::Max{}(g::Max::identity<T>(), v) == v);
  }
}

TEST_CASE("Min and Max identities leave every value unchanged, for every type", "[single_pass]") {
  check_identities<float>();
  check_identities<double>();
  check_identities<int>();
  check_identities<unsigned>();
  check_identities<long long>();
  check_identities<unsigned long long>();
  CHECK(std::isinf(g::Min::identity<float>()));
  CHECK(g::Min::identity<unsigned>() == UINT_MAX);
  CHECK(g::Max::identity<long long>() == LLONG_MIN);
  CHECK(g::Sum::identity<std::int64_t>() == 0);
}
