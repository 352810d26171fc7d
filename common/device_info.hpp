// What the runners need to know about the GPU, and its theoretical DRAM bandwidth.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace common {

// Exit code of a runner that found no CUDA device (test binaries use 77 instead,
// which ctest reports as Skipped).
constexpr int kExitNoDevice = 3;
constexpr int kExitSkipTest = 77;

class NoDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The GPU as the programs see it, filled by query_device from cudaGetDeviceProperties; the
// launch planners (reduction/launch_shape.hpp) are host functions of it, so the tests can
// describe other GPUs by hand.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;  // block slots per SM (16 on 7.5 and 8.6, 24 on 8.9, 32 on 8.0 and 9.0)
  int warp_size = 32;
  std::size_t l2_bytes = 0;
  std::size_t global_mem_bytes = 0;
  std::size_t shared_mem_per_block = 0;
  std::size_t shared_mem_per_sm = 0;
  bool cluster_launch = false;  // thread-block clusters (compute capability 9.0 and newer)
  int memory_clock_khz = 0;     // cudaDevAttrMemoryClockRate
  int memory_bus_bits = 0;      // cudaDevAttrGlobalMemoryBusWidth
  std::string driver;           // driver version string, e.g. "580.159.04"
  int cuda_runtime_version = 0;
  int cuda_driver_version = 0;

  // 2 transfers per clock (DDR) x clock x bus width in bytes.
  double peak_bandwidth_gbs() const { return theoretical_bandwidth_gbs(memory_clock_khz, memory_bus_bits); }
  std::string compute_capability() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }

  static double theoretical_bandwidth_gbs(int memory_clock_khz, int bus_bits) {
    return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 * (static_cast<double>(bus_bits) / 8.0) / 1e9;
  }
};

// Number of CUDA devices: 0 when CUDA reports none (cudaErrorNoDevice) or when no NVIDIA
// driver is installed at all (cudaErrorInsufficientDriver with no driver version).
// Any other failure (a driver too old for this runtime, a stub driver library, a
// broken installation) throws CudaError naming the CUDA error: that is a machine
// with a problem, not a machine without a GPU.
int cuda_device_count();

// The decision above, given cudaGetDeviceCount's error code and cudaDriverGetVersion's
// value (0: no driver installed): true when it means "no device".
bool means_no_device(int cuda_error, int driver_version);

// Queries device `ordinal`; throws NoDeviceError with one clear sentence when there is none.
DeviceInfo query_device(int ordinal = 0);

// Free and total device memory in bytes.
void device_memory(std::size_t& free_bytes, std::size_t& total_bytes);

}  // namespace common
