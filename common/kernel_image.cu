// A kernel compiled with the same architectures as every other CUDA file of the build,
// which tells what the build's code for this GPU was compiled for.
#include "cuda_check.hpp"
#include "kernel_image.hpp"

namespace common {
namespace {

__global__ void arch_probe(int* out) {
#ifdef __CUDA_ARCH__
  *out = __CUDA_ARCH__;
#endif
}

}  // namespace

int build_arch() { return compiled_arch_of(arch_probe); }

int running_cuda_arch() {
  int* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, sizeof(int)));
  int value = -1;
  try {
    CUDA_CHECK(cudaMemset(d, 0xff, sizeof(int)));
    arch_probe<<<1, 1>>>(d);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(&value, d, sizeof(int), cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(d);
    throw;
  }
  CUDA_CHECK(cudaFree(d));
  return value;
}

}  // namespace common
