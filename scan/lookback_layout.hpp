// The scratch of the single-pass scans (scan/lookback.cuh), for the host and the tests.
#pragma once

#include <cstddef>

namespace scan {

// The header holds the counters and the epoch in one 128-byte line; the descriptors (one
// 8-byte word per tile) start after it. The whole scratch is zeroed once, when allocated.
struct LookbackHeader {
  unsigned ticket;  // tiles handed out in this launch
  unsigned done;    // blocks finished in this launch
  unsigned epoch;   // this launch's epoch, 0 .. kLastEpoch
};
constexpr std::size_t kDescriptorsOffset = 128;
constexpr unsigned kStatusX = 0;
constexpr unsigned kStatusA = 1;
constexpr unsigned kStatusP = 2;
constexpr unsigned kLastEpoch = (1u << 30) - 1;

// Bytes of scratch for `tiles` tiles.
constexpr std::size_t lookback_scratch_bytes(std::size_t tiles) { return kDescriptorsOffset + 8 * tiles; }

}  // namespace scan
