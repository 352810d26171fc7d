// The SM and block limits of a real device, for the occupancy arithmetic.
#pragma once

#include <cuda_runtime.h>

#include "occupancy_calc.hpp"

namespace occupancy {

// Pure: copies the limits out of a cudaDeviceProp and adds the architectural constants.
DeviceLimits limits_from_properties(const cudaDeviceProp& prop);

// Queries device `ordinal` (throws common::NoDeviceError when there is none).
DeviceLimits query_device_limits(int ordinal);

}  // namespace occupancy
