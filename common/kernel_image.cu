// A kernel compiled with the same architectures as every other CUDA file of the build,
// which tells what the build's code for this GPU was compiled for.
#include "cuda_check.hpp"
#include "device_buffer.hpp"
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
  DeviceBuffer<int> d(1);
  CUDA_CHECK(cudaMemset(d.get(), 0xff, sizeof(int)));
  arch_probe<<<1, 1>>>(d.get());
  CUDA_CHECK_LAUNCH();
  int value = -1;
  CUDA_CHECK(cudaMemcpy(&value, d.get(), sizeof(int), cudaMemcpyDeviceToHost));
  return value;
}

}  // namespace common
