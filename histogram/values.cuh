// What every histogram kernel shares: the value types of the two histograms, and the
// 16-byte loop of stage 03 on (a head of single values up to the first 16-byte
// boundary, whole uint4 loads, a tail of single values).
#pragma once

#include <cstddef>
#include <cstdint>

#include "stage.hpp"

namespace histogram {

// 256 bins: bytes, a byte's bin is its value.
struct Bytes {
  using T = unsigned char;
  static constexpr Bins kBins = Bins::b256;
  static constexpr unsigned kCount = 256;
  static constexpr int kPerWord = 4;  // values in a 32-bit word
  __device__ static unsigned bin(unsigned v) { return v; }
  // Byte k of the word, zero-extended: one PRMT (byte permute) instruction.
  __device__ static unsigned bin_in_word(unsigned word, int k) { return __byte_perm(word, 0, 0x4440 + k); }
};

// 4,096 bins: 16-bit values, a value's bin is its top 12 bits.
struct Shorts {
  using T = unsigned short;
  static constexpr Bins kBins = Bins::b4096;
  static constexpr unsigned kCount = 4096;
  static constexpr int kPerWord = 2;
  __device__ static unsigned bin(unsigned v) { return v >> 4; }
  __device__ static unsigned bin_in_word(unsigned word, int k) { return (word >> (16 * k + 4)) & 0xfffu; }
};

// Calls count(bin) once for every one of the n values at `in`, in the share of thread
// `t` of `threads` (threads >= 16). The input is split at 16-byte boundaries: the head
// (the values before the first boundary, none when `in` is aligned) and the tail (the
// values after the last whole 16 bytes) are fewer than 16 values each, counted one
// value per thread by the first threads; the body is whole uint4s (16-byte loads),
// thread t taking uint4s t, t + threads, ..., two of them in flight per step.
template <class V, class Count>
__device__ inline void for_each_bin(const typename V::T* __restrict__ in, std::size_t n, std::size_t t,
                                    std::size_t threads, Count&& count) {
  using T = typename V::T;
  constexpr std::size_t kPerVector = 16 / sizeof(T);
  const unsigned misalign = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(in) % 16);
  const std::size_t to_boundary = misalign == 0 ? 0 : (16 - misalign) / sizeof(T);
  const std::size_t head = to_boundary < n ? to_boundary : n;
  const std::size_t vectors = (n - head) / kPerVector;
  const std::size_t tail = head + vectors * kPerVector;
  const uint4* __restrict__ body = reinterpret_cast<const uint4*>(in + head);

  auto count_vector = [&](const uint4& v) {
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int w = 0; w < 4; ++w)
#pragma unroll
      for (int k = 0; k < V::kPerWord; ++k) count(V::bin_in_word(words[w], k));
  };
  // n < 2^32 values, so vector indices fit in 32 bits (fewer registers than 64-bit ones).
  const unsigned step = static_cast<unsigned>(threads);
  const unsigned count_of_vectors = static_cast<unsigned>(vectors);
  unsigned i = static_cast<unsigned>(t);
  for (; i + step < count_of_vectors; i += 2 * step) {
    const uint4 a = body[i];
    const uint4 b = body[i + step];
    count_vector(a);
    count_vector(b);
  }
  if (i < count_of_vectors) count_vector(body[i]);
  if (t < head) count(V::bin(in[t]));
  if (t < n - tail) count(V::bin(in[tail + t]));
}

// The grid a stage launches: enough blocks for `per_thread` values per thread, at most
// as many threads as 2,048 per SM (one wave where every block fits), at least one block.
inline unsigned capped_grid(std::size_t n, int block, std::size_t per_thread, int sm_count) {
  const std::size_t per_block = static_cast<std::size_t>(block) * per_thread;
  const std::size_t wanted = (n + per_block - 1) / per_block;
  const std::size_t cap = static_cast<std::size_t>(sm_count) * 2048 / static_cast<std::size_t>(block);
  return static_cast<unsigned>(wanted < cap ? (wanted > 0 ? wanted : 1) : cap);
}

}  // namespace histogram
