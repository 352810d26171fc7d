// Which architecture a kernel's running code was compiled for.
//
// A path that needs a feature of a newer GPU (thread-block clusters, redux.sync, L2
// cache hints) is chosen by what the loaded kernel image holds, never by the device's
// compute capability alone. A build for sm_80 (machine code plus compute_80 PTX) runs
// on an H100 through the driver's JIT compilation of the compute_80 PTX: the device
// says 9.0, but the code was compiled with __CUDA_ARCH__ = 800 and has no cluster
// instructions. cudaFuncGetAttributes' ptxVersion is the virtual architecture the
// kernel's code was compiled for (80 for compute_80, 90 for compute_90), whether the
// driver loaded machine code or compiled PTX; binaryVersion is the machine code's
// architecture (90 for both on an H100).
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace common {

// 10 x major + minor of the virtual architecture `kernel` was compiled for (80, 90, ...).
inline int compiled_arch(const void* kernel) {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  return a.ptxVersion;
}

template <typename Kernel>
int compiled_arch_of(Kernel* kernel) {
  return compiled_arch(reinterpret_cast<const void*>(kernel));
}

// compiled_arch of a kernel of this build (common/kernel_image.cu): every CUDA file is
// compiled for the same architectures, so this is what the build's code for the current
// GPU was compiled for (90 for a build for sm_90 on an H100, 80 for a build for sm_80).
int build_arch();

// __CUDA_ARCH__ as that same kernel sees it on the current GPU (900, 800, ...): a GPU test
// checks that it is 10 x build_arch(), the fact the paths above are chosen by.
int running_cuda_arch();

}  // namespace common
