// A client of the single-pass reduction: the sum of a vector of floats and the minimum
// of a vector of ints, each checked against the host. Exit 0 when both agree, 1 when
// one does not or CUDA fails, 77 when there is no CUDA device to run on.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "single_pass.cuh"

namespace sp = reduction::generic;

namespace {

constexpr int kNoDevice = 77;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// A device array holding a copy of `host`, freed on scope exit.
template <typename T>
struct DeviceArray {
  T* ptr = nullptr;
  explicit DeviceArray(const std::vector<T>& host) {
    check(cudaMalloc(&ptr, host.size() * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~DeviceArray() { cudaFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

template <typename T>
T read_back(const T* device_value) {
  T value{};
  check(cudaMemcpy(&value, device_value, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return value;
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t found = cudaGetDeviceCount(&devices);
  // No GPU at all: the runtime says there is no device, or (with no driver library)
  // that the driver is insufficient while reporting no driver version.
  int driver = 0;
  if (found != cudaSuccess && cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if ((found == cudaSuccess && devices == 0) || found == cudaErrorNoDevice ||
      (found == cudaErrorInsufficientDriver && driver == 0)) {
    std::printf("No CUDA device was found, so the example was built but not run.\n");
    return kNoDevice;
  }
  check(found, "cudaGetDeviceCount");

  // n = 1,000,003 takes the ticket path (many blocks and the workspace's ticket). The
  // floats are small whole numbers, so every partial sum is a whole number below 2^24,
  // which a float holds exactly: the GPU's sum must equal the host's, in any order.
  const std::size_t n = 1000003;
  std::vector<float> floats(n);
  std::vector<int> ints(n);
  unsigned state = 12345u;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;                  // a fixed linear congruential sequence
    floats[i] = static_cast<float>(state >> 28);             // a whole number from 0 to 15
    ints[i] = static_cast<int>(state % 2000001u) - 1000000;  // -10^6 .. 10^6
  }

  try {
    const DeviceArray<float> d_floats(floats);
    const DeviceArray<int> d_ints(ints);
    float* d_sum = nullptr;
    int* d_min = nullptr;
    check(cudaMalloc(&d_sum, sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&d_min, sizeof(int)), "cudaMalloc");
    // Poisoned (a NaN and -1), so that a result that is never written cannot pass.
    check(cudaMemset(d_sum, 0xff, sizeof(float)), "cudaMemset");
    check(cudaMemset(d_min, 0xff, sizeof(int)), "cudaMemset");

    // One workspace per device and stream; the calls below run one after the other on
    // the default stream.
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    const sp::Workspace ws(device);
    sp::reduce<float>(d_floats.ptr, n, d_sum, ws);
    sp::reduce(d_ints.ptr, n, d_min, ws, nullptr, sp::Min{});
    const float sum = read_back(d_sum);
    const int min = read_back(d_min);
    cudaFree(d_sum);
    cudaFree(d_min);

    std::uint64_t host_sum = 0;
    for (float v : floats) host_sum += static_cast<std::uint64_t>(v);
    const int host_min = *std::min_element(ints.begin(), ints.end());
    const bool sum_ok = sum == static_cast<float>(host_sum);
    const bool min_ok = min == host_min;
    std::printf("sum of %zu floats: %.1f (host %llu) %s\n", n, static_cast<double>(sum),
                static_cast<unsigned long long>(host_sum), sum_ok ? "ok" : "WRONG");
    std::printf("min of %zu ints:   %d (host %d) %s\n", n, min, host_min, min_ok ? "ok" : "WRONG");
    return sum_ok && min_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
