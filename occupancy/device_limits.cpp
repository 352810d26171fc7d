#include "device_limits.hpp"

#include "cuda_check.hpp"
#include "device_info.hpp"

namespace occupancy {

DeviceLimits limits_from_properties(const cudaDeviceProp& prop) {
  DeviceLimits d;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.warp_size = prop.warpSize;
  d.max_threads_per_block = prop.maxThreadsPerBlock;
  d.max_grid_x = prop.maxGridSize[0];
  d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  d.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  d.regs_per_sm = prop.regsPerMultiprocessor;
  d.regs_per_block = prop.regsPerBlock;
  d.shared_per_sm = prop.sharedMemPerMultiprocessor;
  d.shared_per_block = prop.sharedMemPerBlock;
  d.reserved_shared_per_block = prop.reservedSharedMemPerBlock;
  d.shared_alloc_unit = prop.major >= 8 ? 128 : 256;
  return d;
}

DeviceLimits query_device_limits(int ordinal) {
  common::query_device(ordinal);  // one clear sentence when there is no device
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  return limits_from_properties(prop);
}

KernelResources kernel_resources(const void* kernel, int threads_per_block, cudaFuncAttributes* attributes) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  if (attributes != nullptr) *attributes = attr;
  KernelResources res;
  res.threads_per_block = threads_per_block;
  res.regs_per_thread = attr.numRegs;
  res.static_shared = attr.sharedSizeBytes;
  res.max_threads_per_block = attr.maxThreadsPerBlock;
  return res;
}

}  // namespace occupancy
