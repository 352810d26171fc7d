// Compiled for one architecture at a time by tests/host/test_sm_limits.py. ptxas warns that
// a __launch_bounds__ minimum is "out of range" when an SM of the target architecture
// cannot hold that many blocks, so the limits of common/sm_limits.hpp must compile
// silently, and one block more (in threads, then in block slots) must not.
#include "sm_limits.hpp"

extern "C" __global__ void __launch_bounds__(512, common::sm_max_threads() / 512) threads_exact(float* p) {
  p[threadIdx.x] += 1.0f;
}
extern "C" __global__ void __launch_bounds__(512, common::sm_max_threads() / 512 + 1) threads_over(float* p) {
  p[threadIdx.x] += 1.0f;
}
extern "C" __global__ void __launch_bounds__(32, common::sm_max_blocks()) blocks_exact(float* p) {
  p[threadIdx.x] += 1.0f;
}
extern "C" __global__ void __launch_bounds__(32, common::sm_max_blocks() + 1) blocks_over(float* p) {
  p[threadIdx.x] += 1.0f;
}
