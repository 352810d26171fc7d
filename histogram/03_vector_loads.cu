// Stage 03: sixteen bytes per load.
//
// Fixes: stage 02 issues one load instruction per value, so the SM spends as many
// load instructions as it counts values, and a warp asks the memory for only 32 bytes
// (or 64) at a time.
// Idea: read the input as uint4, 16 bytes per load (16 byte values or 8 16-bit ones),
// and count every value of it; each thread keeps two such loads in flight per step of
// its grid-stride loop. The loads need 16-byte alignment, so the input is split at
// 16-byte boundaries: a head before the first boundary and a tail after the last
// whole 16 bytes (fewer than 16 values each, counted one per thread), and a body of
// whole uint4s (for_each_bin in values.cuh). The counting is stage 02's.
// Expect: faster than stage 02 on uniform data; on skewed data the shared-memory
// atomics, not the loads, are what limits it.
// Chapter: chapters/27_histogram.md
#include "cuda_check.hpp"
#include "stage.hpp"
#include "values.cuh"

namespace histogram {
namespace {

constexpr int kBlock = 256;

template <class V>
__global__ void __launch_bounds__(kBlock)
    vector_loads(const typename V::T* __restrict__ in, std::size_t n, unsigned* __restrict__ hist) {
  __shared__ unsigned local[V::kCount];
  for (unsigned b = threadIdx.x; b < V::kCount; b += kBlock) local[b] = 0;
  __syncthreads();
  for_each_bin<V>(in, n, std::size_t{blockIdx.x} * kBlock + threadIdx.x, std::size_t{gridDim.x} * kBlock,
                  [&](unsigned bin) { atomicAdd(&local[bin], 1u); });
  __syncthreads();
  for (unsigned b = threadIdx.x; b < V::kCount; b += kBlock)
    if (local[b] != 0) atomicAdd(&hist[b], local[b]);
}

Plan plan(std::size_t n, Bins bins, const common::DeviceInfo& device) {
  Plan p;
  p.block = kBlock;
  p.grid = capped_grid(n, kBlock, 16 / value_bytes(bins), device.sm_count);
  return p;
}

template <class V>
void launch_as(const HistArgs& a) {
  CUDA_CHECK(cudaMemsetAsync(a.hist, 0, V::kCount * sizeof(unsigned), a.stream));
  vector_loads<V><<<a.grid, kBlock, 0, a.stream>>>(static_cast<const typename V::T*>(a.in), a.n, a.hist);
  CUDA_CHECK_LAUNCH();
}

void launch(const HistArgs& a) { a.bins == Bins::b256 ? launch_as<Bytes>(a) : launch_as<Shorts>(a); }

}  // namespace

Stage describe_vector_loads() {
  Stage s;
  s.number = 3;
  s.id = "vector_loads";
  s.title = "16-byte loads";
  s.source = "histogram/03_vector_loads.cu";
  s.chapter = "chapters/27_histogram.md";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace histogram
