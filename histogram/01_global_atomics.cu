// Stage 01: one atomicAdd on the global histogram per value.
//
// Idea: the simplest correct histogram. Every thread reads one value at a time
// (grid-stride loop) and adds 1 to its bin in global memory with atomicAdd; the
// histogram is zeroed first by a memset on the same stream. Every update is a
// read-modify-write performed in the L2, and updates of the same bin queue there: the
// more values share a bin, the longer the queue (skewed data, and worst of all one
// value everywhere).
// Expect: the slowest stage, far slower on skewed and one-value inputs than on uniform.
// Chapter: chapters/27_histogram.md
#include "cuda_check.hpp"
#include "stage.hpp"
#include "values.cuh"

namespace histogram {
namespace {

constexpr int kBlock = 256;

template <class V>
__global__ void __launch_bounds__(kBlock)
    global_atomics(const typename V::T* __restrict__ in, std::size_t n, unsigned* __restrict__ hist) {
  const std::size_t stride = std::size_t{gridDim.x} * kBlock;
  for (std::size_t i = std::size_t{blockIdx.x} * kBlock + threadIdx.x; i < n; i += stride)
    atomicAdd(&hist[V::bin(in[i])], 1u);
}

Plan plan(std::size_t n, Bins, const common::DeviceInfo& device) {
  Plan p;
  p.block = kBlock;
  p.grid = capped_grid(n, kBlock, 1, device.sm_count);
  return p;
}

template <class V>
void launch_as(const HistArgs& a) {
  CUDA_CHECK(cudaMemsetAsync(a.hist, 0, V::kCount * sizeof(unsigned), a.stream));
  global_atomics<V><<<a.grid, kBlock, 0, a.stream>>>(static_cast<const typename V::T*>(a.in), a.n, a.hist);
  CUDA_CHECK_LAUNCH();
}

void launch(const HistArgs& a) { a.bins == Bins::b256 ? launch_as<Bytes>(a) : launch_as<Shorts>(a); }

}  // namespace

Stage describe_global_atomics() {
  Stage s;
  s.number = 1;
  s.id = "global_atomics";
  s.title = "one global atomic per value";
  s.source = "histogram/01_global_atomics.cu";
  s.chapter = "chapters/27_histogram.md";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace histogram
