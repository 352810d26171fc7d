// The block histogram of stages 05 and 06: one copy of the histogram per lane, laid out
// so that each lane only ever touches its own bank of shared memory.
//
// Shared memory has 32 banks of 4-byte words (word w is in bank w % 32), and one warp
// instruction takes one pass per distinct word any bank is asked for. With one
// histogram, the 32 lanes of an atomicAdd hit random banks: several lanes that need
// different words of one bank make the instruction take several passes. Here copy c
// of bin b is word b * 32 + c, in bank c, and lane l counts into copy l: whatever the
// 32 bins of a warp's instruction, its 32 words are in 32 different banks, one pass.
// Lanes l of different warps share copy l, so the updates stay atomic.
// 256 bins x 32 copies x 4 bytes = 32 KiB. At 4,096 bins 32 copies would take 512 KiB,
// more than any SM has, so that histogram keeps one copy (kCopies = 1).
#pragma once

#include "values.cuh"

namespace histogram {

template <class V>
struct LaneBanks {
  static constexpr unsigned kCopies = V::kCount == 256 ? 32 : 1;
  static constexpr unsigned kWords = V::kCount * kCopies;

  unsigned* local;  // kWords words of shared memory
  unsigned mine;    // this lane's copy as a shared-memory address: bin b is at mine + b * kCopies * 4

  __device__ explicit LaneBanks(unsigned* shared) : local(shared) {
    mine = static_cast<unsigned>(__cvta_generic_to_shared(shared + threadIdx.x % 32 % kCopies));
    asm("" : "+r"(mine));  // hides how the base was made: one multiply-add per value, bin x stride + base
  }

  __device__ void count(unsigned bin) {
    atomicAdd(static_cast<unsigned*>(__cvta_shared_to_generic(mine + bin * (kCopies * 4))), 1u);
  }

  // Every thread of the block, then a __syncthreads() before counting.
  __device__ void zero(unsigned block) {
    for (unsigned i = threadIdx.x; i < kWords; i += block) local[i] = 0;
  }

  // Bin b summed over the copies, after a __syncthreads(). Lane l starts at copy l, so
  // the 32 lanes of a warp (32 consecutive bins) read 32 different banks at each step.
  __device__ unsigned total(unsigned b) const {
    unsigned sum = 0;
#pragma unroll 4
    for (unsigned c = 0; c < kCopies; ++c) sum += local[b * kCopies + (c + threadIdx.x) % kCopies];
    return sum;
  }
};

}  // namespace histogram
