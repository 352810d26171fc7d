// What every GPU test file shares: the device it runs on and one stream, created on
// first use (gpu_main.cpp has already made sure a device exists).
#pragma once

#include <cuda_runtime.h>

#include "device_buffer.hpp"
#include "device_info.hpp"

namespace gpu_test {

inline const common::DeviceInfo& device() {
  static const common::DeviceInfo info = common::query_device(0);
  return info;
}

inline cudaStream_t stream() {
  static common::CudaStream s;
  return s.get();
}

}  // namespace gpu_test
