// The third build of the SGEMM kernel: the same body as the other two, in a translation
// unit of its own because --maxrregcount caps every kernel of the file it compiles.
// occupancy/CMakeLists.txt sets the cap (OCCUPANCY_MAXRREGCOUNT) for this file only;
// the value is low enough that the compiler must spill to local memory, which is the
// trade-off 02_resource_usage measures. Chapter: chapters/21_occupancy.md
#include "cuda_check.hpp"
#include "sgemm.hpp"
#include "sgemm_tile.cuh"

#ifndef OCCUPANCY_MAXRREGCOUNT
#error "OCCUPANCY_MAXRREGCOUNT must be the value passed to --maxrregcount for this file"
#endif

namespace occupancy {
namespace {

__global__ void sgemm_register_capped(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                      int m, int n, int k) {
  sgemm_tile(a, b, c, m, n, k);
}

}  // namespace

const void* sgemm_maxrregcount_kernel() { return reinterpret_cast<const void*>(&sgemm_register_capped); }

void launch_sgemm_maxrregcount(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
  const dim3 block(kSgemmThreadsPerSide, kSgemmThreadsPerSide);
  sgemm_register_capped<<<sgemm_grid(m, n), block, 0, stream>>>(a, b, c, m, n, k);
  CUDA_CHECK_LAUNCH();
}

int sgemm_maxrregcount_limit() { return OCCUPANCY_MAXRREGCOUNT; }

}  // namespace occupancy
