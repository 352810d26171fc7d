// Decoupled look-back (stage 04; stage 05 reuses it). The method is from D. Merrill and
// M. Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA
// technical report NVR-2016-002 (2016); this is our own code for it.
//
// Each tile has a descriptor: one 64-bit word, the tagged word of reduction stage 14
// (chapters/14_tagged_slots.md) with a status in its tag:
//     high 32 bits  epoch << 2 | status     status X = 0 (nothing yet), A = 1, P = 2
//     low 32 bits   the value's bits        A: the tile's aggregate (its own sum)
//                                           P: its inclusive prefix (everything up to its end)
// Stored whole, so a reader that sees the status sees the value that goes with it.
// A tile publishes A as soon as it has summed its values, then looks back: one warp
// reads the 32 descriptors before it at once, waits while any is X, adds the values
// from the nearest P on (or all 32 aggregates, and moves 32 tiles back), and publishes P.
//
// Safety rules:
//  1. The tile index is a ticket taken from a counter when the block starts, not
//     blockIdx.x. A tile waits only on tiles with smaller tickets, whose blocks are
//     already running and publish A without waiting on anyone: no hang, in whatever
//     order the GPU starts the blocks, and with one block resident at a time.
//  2. No launch can read another launch's descriptor. Each launch has an epoch, read
//     from the scratch when its blocks start, and a descriptor counts only when its
//     epoch is the launch's; the last block to finish (a second counter) resets both
//     counters and advances the epoch for the next launch, in the same kernel: no memset.
//     The epoch has 30 bits. When it would wrap to 0, the last block first empties every
//     descriptor of the scratch, so a descriptor written 2^30 launches ago, by a larger
//     launch, cannot come back to life: an epoch value is reused only on a clean slate.
//     The last block is last to finish its look-back too: every block takes its place
//     in the done counter after its own look-back (with release order), so no block
//     still reads descriptors when the last one empties them.
//  3. One launch at a time per scratch: two scans at once (two streams, graph branches)
//     need two scratch areas, as they would for reduction stage 14. A launch must run to
//     its end (an aborted one leaves its counters behind).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "lookback_layout.hpp"
#include "primitives.cuh"

namespace scan {

__device__ __forceinline__ unsigned long long load_relaxed(const unsigned long long* p) {
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
  return w;
}
__device__ __forceinline__ void store_relaxed(unsigned long long* p, unsigned long long w) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}

__device__ __forceinline__ unsigned value_bits(unsigned v) { return v; }
__device__ __forceinline__ unsigned value_bits(float v) { return __float_as_uint(v); }
template <typename T>
__device__ __forceinline__ T from_bits(unsigned b) {
  if constexpr (std::is_same_v<T, float>)
    return __uint_as_float(b);
  else
    return b;
}

template <typename T>
__device__ __forceinline__ unsigned long long descriptor(unsigned epoch, unsigned status, T value) {
  return (static_cast<unsigned long long>(epoch << 2 | status) << 32) | value_bits(value);
}
// The status of word w for this launch: X unless its epoch is `epoch`.
__device__ __forceinline__ unsigned status_of(unsigned long long w, unsigned epoch) {
  const auto tag = static_cast<unsigned>(w >> 32);
  return tag >> 2 == epoch ? (tag & 3u) : kStatusX;
}

// The block's tile and the launch's epoch, the same in every thread.
struct TileTicket {
  unsigned tile;
  unsigned epoch;
};

// Rule 1: thread 0 takes the ticket and reads the epoch; one barrier shares them. A
// grid of one block needs neither (it has no predecessor and no descriptor).
__device__ __forceinline__ TileTicket begin_tile(LookbackHeader* header) {
  if (gridDim.x == 1) return {0, 0};
  __shared__ TileTicket shared;
  if (threadIdx.x == 0) {
    unsigned tile;
    unsigned epoch;
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(tile) : "l"(&header->ticket) : "memory");
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(epoch) : "l"(&header->epoch) : "memory");
    shared = {tile, epoch};
  }
  __syncthreads();
  return shared;
}

// Called by the whole of warp 0 once the block knows its tile's aggregate: publishes A
// (P for tile 0), looks back, publishes P, and returns the exclusive prefix of the tile
// (the sum of every value before it) to every lane.
template <typename T>
__device__ __forceinline__ T tile_exclusive_prefix(unsigned long long* descriptors, TileTicket t, T aggregate) {
  const unsigned lane = threadIdx.x % 32;
  if (gridDim.x == 1) return T(0);
  if (t.tile == 0) {
    if (lane == 0) store_relaxed(descriptors, descriptor(t.epoch, kStatusP, aggregate));
    return T(0);
  }
  if (lane == 0) store_relaxed(descriptors + t.tile, descriptor(t.epoch, kStatusA, aggregate));

  T prefix = T(0);
  long long nearest = static_cast<long long>(t.tile) - 1;  // the window is nearest-31 .. nearest
  for (;;) {
    const long long mine = nearest - (31 - lane);       // lane 31 reads the nearest predecessor
    unsigned status = mine >= 0 ? kStatusX : kStatusP;  // before tile 0: an empty prefix
    unsigned long long word = 0;
    do {
      if (status == kStatusX) {
        word = load_relaxed(descriptors + mine);
        status = status_of(word, t.epoch);
      }
    } while (__any_sync(kFullMask, status == kStatusX));
    const T value = mine >= 0 ? from_bits<T>(static_cast<unsigned>(word)) : T(0);
    const unsigned with_p = __ballot_sync(kFullMask, status == kStatusP);
    // From the nearest P up to the tile (all 32 values when there is none).
    const unsigned first = with_p ? 31 - __clz(with_p) : 0;
    prefix = warp_total(lane >= first ? value : T(0)) + prefix;
    if (with_p) break;
    nearest -= 32;
  }
  if (lane == 0) store_relaxed(descriptors + t.tile, descriptor(t.epoch, kStatusP, prefix + aggregate));
  return prefix;
}

// Rule 2, by thread 0 after the block's look-back (and a barrier after it): counts the
// block done; the last one resets the counters and advances the epoch, emptying all
// `capacity` descriptors first when the epoch wraps.
__device__ __forceinline__ void end_tile(LookbackHeader* header, unsigned long long* descriptors, TileTicket t,
                                         unsigned capacity) {
  if (gridDim.x == 1 || threadIdx.x != 0) return;
  unsigned done;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(done) : "l"(&header->done) : "memory");
  if (done != gridDim.x - 1) return;
  header->ticket = 0;
  header->done = 0;
  if (t.epoch == kLastEpoch) {
    for (unsigned i = 0; i < capacity; ++i) descriptors[i] = 0;  // once in 2^30 launches
    header->epoch = 0;
  } else {
    header->epoch = t.epoch + 1;
  }
}

}  // namespace scan
