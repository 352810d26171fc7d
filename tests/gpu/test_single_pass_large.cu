// single_pass/single_pass.cuh past 2^32 elements of a 4-byte type: n = 2^32 + 7 uint32
// values (17.2 GB), so a 32-bit element count or index anywhere on the ticket path would
// drop or repeat elements. The values are a hash of the 64-bit index (no period of 2^32),
// generated on the device; the host computes the same values for its reference. The
// largest value (2^32 - 1) and the smallest (0) appear once each, both past index 2^32.
//
// Its own main: exit 0 when every check holds, 1 when one fails, 77 (ctest: Skipped) when
// there is no CUDA device or the device has too little free memory, with a sentence
// saying which.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <thread>
#include <vector>

#include "device_buffer.hpp"
#include "device_info.hpp"
#include "single_pass.cuh"

namespace g = reduction::generic;

namespace {

constexpr std::size_t kN = (std::size_t{1} << 32) + 7;
constexpr std::size_t kMaxAt = (std::size_t{1} << 32) + 3;
constexpr std::size_t kMinAt = (std::size_t{1} << 32) + 5;

__host__ __device__ std::uint32_t value_at(std::size_t i) {
  if (i == kMaxAt) return 0xffffffffu;
  if (i == kMinAt) return 0u;
  std::uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<std::uint32_t>(z >> 33) | 1u;  // 1 .. 2^31 - 1
}

__global__ void fill(std::uint32_t* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = value_at(i);
}

// The sum modulo 2^32 and the largest of values first..end-1, on every host core.
struct HostFold {
  std::uint32_t sum = 0;
  std::uint32_t max = 0;
};

HostFold host_fold(std::size_t first, std::size_t end) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<HostFold> partial(threads);
  std::vector<std::thread> pool;
  const std::size_t share = (end - first + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&partial, t, first, end, share] {
      const std::size_t begin = std::min(end, first + t * share);
      const std::size_t stop = std::min(end, begin + share);
      std::uint64_t s = 0;
      std::uint32_t m = 0;
      for (std::size_t i = begin; i < stop; ++i) {
        const std::uint32_t v = value_at(i);
        s += v;
        m = std::max(m, v);
      }
      partial[t] = HostFold{static_cast<std::uint32_t>(s), m};
    });
  }
  for (auto& th : pool) th.join();
  HostFold all;
  for (const HostFold& p : partial) {
    all.sum += p.sum;  // modulo 2^32, as the GPU's
    all.max = std::max(all.max, p.max);
  }
  return all;
}

// Waits for the stream, failing the program if it has not finished within `seconds`:
// a hang must fail the test, not stall it.
void wait_or_fail(cudaStream_t stream, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) {
      std::fprintf(stderr, "FAIL: the stream reported %s\n", cudaGetErrorString(e));
      std::_Exit(1);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "FAIL: the reduction did not finish within %.0f s (a hang)\n", seconds);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int failures = 0;

template <typename Op>
void check_one(const char* what, const std::uint32_t* in, std::size_t n, std::uint32_t expected, const g::Workspace& ws,
               cudaStream_t stream) {
  common::DeviceBuffer<std::uint32_t> out(1);
  CUDA_CHECK(cudaMemsetAsync(out.get(), 0xa5, sizeof(std::uint32_t), stream));  // poison
  g::reduce<std::uint32_t, Op>(in, n, out.get(), ws, stream);
  wait_or_fail(stream, 120.0);
  std::uint32_t got = 0;
  CUDA_CHECK(cudaMemcpy(&got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
  const bool ok = got == expected;
  failures += ok ? 0 : 1;
  std::printf("%s %s over n = %zu: %u (expected %u)\n", ok ? "ok:  " : "FAIL:", what, n, got, expected);
}

}  // namespace

int main() {
  try {
    if (common::cuda_device_count() == 0) {
      std::fprintf(stderr, "No CUDA device: the 2^32 + 7 element test is skipped.\n");
      return common::kExitSkipTest;
    }
    const std::size_t bytes = kN * sizeof(std::uint32_t);
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t needed = bytes + (std::size_t{1} << 30);
    if (free_bytes < needed) {
      std::fprintf(stderr,
                   "Skipped: n = 2^32 + 7 uint32 values need %.1f GB of device memory (with 1 GiB to spare), and "
                   "the device has %.1f GB free.\n",
                   static_cast<double>(needed) / 1e9, static_cast<double>(free_bytes) / 1e9);
      return common::kExitSkipTest;
    }
    common::CudaStream stream;
    const g::Workspace ws(0, stream.get());
    const unsigned grid = g::grid_for<std::uint32_t, g::Sum>(kN, ws.sm_count());
    std::printf("n = %zu (2^32 + 7) uint32 values, %.1f GB; the ticket path with %u blocks\n", kN,
                static_cast<double>(bytes) / 1e9, grid);
    if (grid <= 16) {
      std::printf("FAIL: n = 2^32 + 7 should take the ticket path (more than 16 blocks)\n");
      return 1;
    }
    common::DeviceBuffer<std::uint32_t> in(kN);
    fill<<<4096, 256, 0, stream.get()>>>(in.get(), kN);
    CUDA_CHECK(cudaGetLastError());
    wait_or_fail(stream.get(), 120.0);

    const HostFold all = host_fold(0, kN);
    const HostFold from_1 = host_fold(1, kN);
    const HostFold first_2p32 = host_fold(0, std::size_t{1} << 32);
    check_one<g::Sum>("sum mod 2^32", in.get(), kN, all.sum, ws, stream.get());
    check_one<g::Max>("max (2^32 - 1, at 2^32 + 3)", in.get(), kN, 0xffffffffu, ws, stream.get());
    check_one<g::Min>("min (0, at 2^32 + 5)", in.get(), kN, 0u, ws, stream.get());
    // One element in: the pointer is 4 bytes past a 16-byte boundary.
    check_one<g::Sum>("sum mod 2^32 from in + 1", in.get() + 1, kN - 1, from_1.sum, ws, stream.get());
    // n = 2^32 exactly (0 in 32 bits): neither planted extreme is inside.
    check_one<g::Sum>("sum mod 2^32 of the first 2^32", in.get(), std::size_t{1} << 32, first_2p32.sum, ws,
                      stream.get());
    check_one<g::Max>("max of the first 2^32", in.get(), std::size_t{1} << 32, first_2p32.max, ws, stream.get());
    std::printf("%d failed\n", failures);
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
