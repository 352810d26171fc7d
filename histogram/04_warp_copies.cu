// Stage 04: one histogram per warp in shared memory.
//
// Fixes: in stage 03 all the warps of a block update one shared histogram, so on
// skewed data many of a block's atomics go to the same few words.
// Idea: give each warp its own copy of the histogram (256 bins: 8 copies of 1 KiB for
// a block of 8 warps); at the end a thread per bin adds the copies and makes one
// global atomicAdd. At 4,096 bins one copy of 16 KiB per block is all that fits in
// every GPU's static shared memory, so that histogram keeps stage 03's single copy.
// Expect: little change on uniform data; whatever remains is the conflicts inside
// one warp's atomics, which separate copies per warp cannot remove (stage 05).
// Chapter: chapters/27_histogram.md
#include "cuda_check.hpp"
#include "stage.hpp"
#include "values.cuh"

namespace histogram {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

template <class V>
__global__ void __launch_bounds__(kBlock)
    warp_copies(const typename V::T* __restrict__ in, std::size_t n, unsigned* __restrict__ hist) {
  constexpr int kCopies = V::kCount == 256 ? kWarps : 1;
  __shared__ unsigned local[kCopies][V::kCount];
  for (unsigned i = threadIdx.x; i < kCopies * V::kCount; i += kBlock) (&local[0][0])[i] = 0;
  __syncthreads();
  unsigned* mine = local[(threadIdx.x / 32) % kCopies];
  for_each_bin<V>(in, n, std::size_t{blockIdx.x} * kBlock + threadIdx.x, std::size_t{gridDim.x} * kBlock,
                  [&](unsigned bin) { atomicAdd(&mine[bin], 1u); });
  __syncthreads();
  for (unsigned b = threadIdx.x; b < V::kCount; b += kBlock) {
    unsigned total = 0;
    for (int c = 0; c < kCopies; ++c) total += local[c][b];
    if (total != 0) atomicAdd(&hist[b], total);
  }
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
  warp_copies<V><<<a.grid, kBlock, 0, a.stream>>>(static_cast<const typename V::T*>(a.in), a.n, a.hist);
  CUDA_CHECK_LAUNCH();
}

void launch(const HistArgs& a) { a.bins == Bins::b256 ? launch_as<Bytes>(a) : launch_as<Shorts>(a); }

}  // namespace

Stage describe_warp_copies() {
  Stage s;
  s.number = 4;
  s.id = "warp_copies";
  s.title = "a histogram per warp";
  s.source = "histogram/04_warp_copies.cu";
  s.chapter = "chapters/27_histogram.md";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace histogram
