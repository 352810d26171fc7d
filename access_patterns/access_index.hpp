// Index arithmetic the access-pattern kernels and their host references share.
//
// Each function is compiled for the device (inside a kernel) and for the host (the
// reference and the tests), so the addresses a kernel touches and the addresses the
// host checks against are computed by the same lines.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define ACCESS_HD __host__ __device__
#else
#define ACCESS_HD
#endif

namespace access_patterns {

constexpr unsigned kWarp = 32;
constexpr unsigned kBanks = 32;        // shared-memory banks, 4 bytes wide
constexpr unsigned kSectorBytes = 32;  // the unit L1, L2 and DRAM move
constexpr unsigned kLineBytes = 128;   // an L1/L2 cache line: four sectors

// Smallest number of bits b with 2^b >= m (0 for m <= 1).
ACCESS_HD inline unsigned bits_for(std::uint64_t m) {
  unsigned b = 0;
  while (b < 64 && (std::uint64_t{1} << b) < m) ++b;
  return b;
}

// A bijection of [0, 2^bits): three rounds of multiply by an odd constant (invertible
// modulo 2^bits), add the key, and xor with the value shifted right (invertible too).
ACCESS_HD inline std::uint64_t scramble(std::uint64_t x, unsigned bits, std::uint64_t key) {
  const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  const unsigned shift = bits / 2 + 1;
  for (int round = 0; round < 3; ++round) {
    x = (x * 0x9E3779B97F4A7C15ull + key) & mask;
    x ^= x >> shift;
  }
  return x;
}

// A random permutation of [0, m), computed instead of stored: scramble over the
// smallest power of two that holds m, repeated while the value falls outside [0, m)
// ("cycle walking"; fewer than two rounds on average since m > 2^bits / 2). Neighbouring
// j land far apart, so the lanes of a warp read unrelated sectors. bits = bits_for(m).
ACCESS_HD inline std::uint64_t random_index(std::uint64_t j, std::uint64_t m, unsigned bits, std::uint64_t key) {
  std::uint64_t x = j;
  do {
    x = scramble(x, bits, key);
  } while (x >= m);
  return x;
}

// Shared-memory padding: one unused word after every 32, so word i lands in bank
// (i + i / 32) % 32 instead of i % 32. Used by 05_bank_padding and 08_block_scan.
ACCESS_HD inline unsigned padded_slot(unsigned i) { return i + i / kBanks; }

}  // namespace access_patterns
