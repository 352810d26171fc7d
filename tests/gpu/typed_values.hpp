// Deterministic test inputs of any arithmetic type, for the single_pass library's GPU
// tests (test_generic.cu and single_pass_two_files.hpp): integers in -1000..1000, whose
// sums no type here can overflow at the tested sizes, and floating values in [-1, 1).
// Each element comes from common::hash64(seed, i), so a failing case names its seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "inputs.hpp"

namespace test_inputs {

template <typename T>
std::vector<T> typed_values(std::size_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = common::hash64(seed, i);
    if constexpr (std::is_integral_v<T>)
      v[i] = static_cast<T>(static_cast<std::int64_t>(h % 2001) - 1000);
    else
      v[i] = static_cast<T>(static_cast<double>(h >> 11) * 0x1p-53 * 2.0 - 1.0);
  }
  return v;
}

}  // namespace test_inputs
