// The SM and block limits of a real device, for the occupancy arithmetic.
#pragma once

#include <cuda_runtime.h>

#include "occupancy_calc.hpp"

namespace occupancy {

// Pure: copies the limits out of a cudaDeviceProp and adds the architectural constants.
DeviceLimits limits_from_properties(const cudaDeviceProp& prop);

// Queries device `ordinal` (throws common::NoDeviceError when there is none).
DeviceLimits query_device_limits(int ordinal);

// What occupancy_calc needs to know about `kernel` launched with `threads_per_block`
// threads (no dynamic shared memory), from cudaFuncGetAttributes; the attributes
// themselves in `attributes` when it is not null.
KernelResources kernel_resources(const void* kernel, int threads_per_block, cudaFuncAttributes* attributes = nullptr);

}  // namespace occupancy
