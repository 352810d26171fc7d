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

  unsigned* local;  // kWords words of shared memory, 16-byte aligned
  unsigned mine;    // this lane's copy as a shared-memory address: bin b is at mine + b * kCopies * 4

  __device__ explicit LaneBanks(unsigned* shared) : local(shared) {
    mine = static_cast<unsigned>(__cvta_generic_to_shared(shared + threadIdx.x % 32 % kCopies));
    asm("" : "+r"(mine));  // hides how the base was made: one multiply-add per value, bin x stride + base
  }

  __device__ void count(unsigned bin) {
    atomicAdd(static_cast<unsigned*>(__cvta_shared_to_generic(mine + bin * (kCopies * 4))), 1u);
  }

  // Every thread of the block, 16 bytes per store (`local` is 16-byte aligned), then a
  // __syncthreads() before counting.
  __device__ void zero(unsigned block) {
    uint4* words = reinterpret_cast<uint4*>(local);
    for (unsigned i = threadIdx.x; i < kWords / 4; i += block) words[i] = make_uint4(0, 0, 0, 0);
  }

  // Bin b summed over the copies, after a __syncthreads(): its 32 copies are 8 uint4s,
  // read 16 bytes at a time. A 16-byte load is served 8 lanes at a time; lane l starts
  // at uint4 l % 8, so 8 lanes (8 consecutive bins) read 8 different groups of 4 banks.
  __device__ unsigned total(unsigned b) const {
    if constexpr (kCopies == 1) {
      return local[b];
    } else {
      constexpr unsigned kVectors = kCopies / 4;
      const uint4* row = reinterpret_cast<const uint4*>(local + b * kCopies);
      unsigned sum = 0;
#pragma unroll 2
      for (unsigned k = 0; k < kVectors; ++k) {
        const uint4 v = row[(k + threadIdx.x) % kVectors];
        sum += v.x + v.y + v.z + v.w;
      }
      return sum;
    }
  }
};

}  // namespace histogram
