// Seeded, repeatable input arrays.
//
// Element i of a pattern depends only on (pattern, seed, i): a counter-based hash,
// so the array can be generated in parallel and any element recomputed on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace common {

enum class Pattern {
  uniform,        // uniform in [0, 1): the default for timing
  ones,           // all 1.0f: every partial sum up to 2^24 is exact, so any order must give n
  mixed_signs,    // uniform in [-1, 1): heavy cancellation, the sum is small next to sum |x|
  large,          // positive, 2^40 .. 2^81: large magnitudes that must neither overflow nor lose scale
  with_nan,       // uniform with one NaN: the sum must be NaN
  with_inf,       // uniform with one +Inf: the sum must be +Inf
  inf_minus_inf,  // uniform with one +Inf and one -Inf: the sum must be NaN
};

// Every pattern, in a fixed order (for tests and --help).
const std::vector<Pattern>& all_patterns();
std::string pattern_name(Pattern p);
// Throws std::invalid_argument naming the allowed values.
Pattern parse_pattern(const std::string& name);

// 64-bit mix of (seed, index) (SplitMix64 finaliser).
std::uint64_t hash64(std::uint64_t seed, std::uint64_t index);

// Element i of the pattern.
float pattern_value(Pattern p, std::uint64_t seed, std::size_t i, std::size_t n);

// The whole array, generated on all host threads.
std::vector<float> make_input(Pattern p, std::uint64_t seed, std::size_t n);

// Runs body(begin, end) over [0, n) in contiguous chunks on the host's threads.
void parallel_chunks(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body);

}  // namespace common
