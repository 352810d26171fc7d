#include "inputs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

namespace common {

const std::vector<Pattern>& all_patterns() {
  static const std::vector<Pattern> patterns = {Pattern::uniform,      Pattern::ones,     Pattern::mixed_signs,
                                                Pattern::large,        Pattern::with_nan, Pattern::with_inf,
                                                Pattern::inf_minus_inf};
  return patterns;
}

std::string pattern_name(Pattern p) {
  switch (p) {
    case Pattern::uniform: return "uniform";
    case Pattern::ones: return "ones";
    case Pattern::mixed_signs: return "mixed_signs";
    case Pattern::large: return "large";
    case Pattern::with_nan: return "with_nan";
    case Pattern::with_inf: return "with_inf";
    case Pattern::inf_minus_inf: return "inf_minus_inf";
  }
  return "unknown";
}

Pattern parse_pattern(const std::string& name) {
  std::string allowed;
  for (Pattern p : all_patterns()) {
    if (pattern_name(p) == name) return p;
    allowed += (allowed.empty() ? "" : ", ") + pattern_name(p);
  }
  throw std::invalid_argument("unknown input pattern '" + name + "' (allowed: " + allowed + ")");
}

std::uint64_t hash64(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

// 24 random bits: exactly representable in a float, uniform in [0, 1).
float unit_float(std::uint64_t h) { return static_cast<float>(h >> 40) * 0x1p-24f; }

// Where the special values of the NaN/Inf patterns go (depends on the seed).
std::size_t special_index(std::uint64_t seed, std::size_t n, std::uint64_t which) {
  return static_cast<std::size_t>(hash64(seed ^ 0xA5A5A5A5ull, which) % n);
}

}  // namespace

float pattern_value(Pattern p, std::uint64_t seed, std::size_t i, std::size_t n) {
  const std::uint64_t h = hash64(seed, i);
  switch (p) {
    case Pattern::uniform: return unit_float(h);
    case Pattern::ones: return 1.0f;
    case Pattern::mixed_signs: return 2.0f * unit_float(h) - 1.0f;
    case Pattern::large: {
      const int exponent = 40 + static_cast<int>((h & 0xFF) % 41);
      return std::ldexp(1.0f + unit_float(h), exponent);
    }
    case Pattern::with_nan:
      return i == special_index(seed, n, 0) ? std::numeric_limits<float>::quiet_NaN() : unit_float(h);
    case Pattern::with_inf:
      return i == special_index(seed, n, 0) ? std::numeric_limits<float>::infinity() : unit_float(h);
    case Pattern::inf_minus_inf: {
      const std::size_t pos = special_index(seed, n, 0);
      // With n == 1 there is room for only one of the two infinities.
      const std::size_t neg = n > 1 ? (pos + 1 + special_index(seed, n - 1, 1)) % n : n;
      if (i == pos) return std::numeric_limits<float>::infinity();
      if (i == neg) return -std::numeric_limits<float>::infinity();
      return unit_float(h);
    }
  }
  return 0.0f;
}

void parallel_chunks(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t min_chunk = std::size_t{1} << 16;
  const std::size_t threads = std::min(hw, std::max<std::size_t>(1, n / min_chunk));
  if (threads <= 1) {
    body(0, n);
    return;
  }
  std::vector<std::thread> pool;
  const std::size_t chunk = (n + threads - 1) / threads;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(n, t * chunk);
    const std::size_t end = std::min(n, begin + chunk);
    pool.emplace_back(body, begin, end);
  }
  for (auto& th : pool) th.join();
}

std::vector<float> make_input(Pattern p, std::uint64_t seed, std::size_t n) {
  std::vector<float> data(n);
  parallel_chunks(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) data[i] = pattern_value(p, seed, i, n);
  });
  return data;
}

}  // namespace common
