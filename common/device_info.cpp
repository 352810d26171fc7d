#include "device_info.hpp"

#include <cuda_runtime.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "cuda_check.hpp"

namespace common {

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  std::ostringstream msg;
  msg << "CUDA error " << cudaGetErrorName(code) << " (" << cudaGetErrorString(code) << ") in " << expr << " at "
      << file << ":" << line;
  throw CudaError(code, msg.str());
}

bool means_no_device(int cuda_error, int driver_version) {
  if (cuda_error == cudaErrorNoDevice) return true;
  // With no driver library at all the runtime reports an insufficient driver; then
  // cudaDriverGetVersion says 0 ("no driver installed").
  return cuda_error == cudaErrorInsufficientDriver && driver_version == 0;
}

int cuda_device_count() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaSuccess) return count;
  cudaGetLastError();  // clear the error
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (means_no_device(error, driver)) return 0;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  std::ostringstream msg;
  msg << "CUDA cannot start: cudaGetDeviceCount failed with " << cudaGetErrorName(error) << " ("
      << cudaGetErrorString(error) << "); the driver "
      << (driver > 0 ? "supports CUDA " + version(driver) : std::string("reports no version")) << ", this program "
      << "was built with the CUDA " << version(runtime) << " runtime.";
  throw CudaError(error, msg.str());
}

namespace {

// The kernel module's version file names the driver release; the runtime API only
// knows the CUDA version the driver supports.
std::string driver_release(int cuda_driver_version) {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  if (file && std::getline(file, line)) {
    std::smatch match;
    if (std::regex_search(line, match, std::regex(R"((\d+\.\d+(\.\d+)?))"))) return match[1].str();
  }
  return "CUDA driver API " + std::to_string(cuda_driver_version / 1000) + "." +
         std::to_string((cuda_driver_version % 1000) / 10);
}

int attribute(cudaDeviceAttr attr, int ordinal) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, ordinal));
  return value;
}

}  // namespace

DeviceInfo query_device(int ordinal) {
  const int count = cuda_device_count();
  if (count == 0) throw NoDeviceError("No CUDA device was found: this program needs an NVIDIA GPU and its driver.");
  if (ordinal < 0 || ordinal >= count)
    throw NoDeviceError("CUDA device " + std::to_string(ordinal) + " does not exist (found " + std::to_string(count) +
                        ").");
  CUDA_CHECK(cudaSetDevice(ordinal));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.max_threads_per_block = prop.maxThreadsPerBlock;
  info.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  info.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  info.warp_size = prop.warpSize;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.global_mem_bytes = prop.totalGlobalMem;
  info.shared_mem_per_block = prop.sharedMemPerBlock;
  info.shared_mem_per_sm = prop.sharedMemPerMultiprocessor;
  info.cluster_launch = attribute(cudaDevAttrClusterLaunch, ordinal) != 0;
  info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  info.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  CUDA_CHECK(cudaRuntimeGetVersion(&info.cuda_runtime_version));
  CUDA_CHECK(cudaDriverGetVersion(&info.cuda_driver_version));
  info.driver = driver_release(info.cuda_driver_version);
  return info;
}

void device_memory(std::size_t& free_bytes, std::size_t& total_bytes) {
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
}

}  // namespace common
