// The ceiling's kernel (peers/ceiling.cu; lab/stream.cu times it beside sums):
// each thread streams its share with float4 loads, Unroll in flight, folds the bit
// patterns into one register (an integer add, so no floating-point latency chain), and
// stores it only if it equals a key it never equals in practice: the loads cannot be
// removed and no thread ever talks to another. `checked` adds every thread's fold into
// *out instead (atomics), for a check that every element was read exactly once.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ceiling {

// A key no thread's fold is expected to equal; if one ever does, it writes one word.
constexpr unsigned int kKey = 0xFFFFFFFFu;

__device__ __forceinline__ unsigned int fold(const float4 v) {
  return __float_as_uint(v.x) + __float_as_uint(v.y) + __float_as_uint(v.z) + __float_as_uint(v.w);
}

// in must be 16-byte aligned (a cudaMalloc'd buffer is).
template <int Unroll>
__global__ void stream_only(const float* __restrict__ in, std::size_t n, unsigned int* out, bool checked) {
  const float4* in4 = reinterpret_cast<const float4*>(in);
  const std::size_t n4 = n / 4;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned int acc = 0;
  std::size_t i = tid;
  for (; i + (Unroll - 1) * threads < n4; i += Unroll * threads) {
    float4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) v[u] = in4[i + u * threads];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc += fold(v[u]);
  }
  for (; i < n4; i += threads) acc += fold(in4[i]);
  if (tid < n - 4 * n4) acc += __float_as_uint(in[4 * n4 + tid]);
  if (checked)
    atomicAdd(out, acc);
  else if (acc == kKey)
    *out = acc;
}

}  // namespace ceiling
