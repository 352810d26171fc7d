// reduction/single_pass.cuh as a library: sum, min and max over float, double and
// int32, against host references (integers exactly).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "single_pass.cuh"

namespace g = reduction::generic;

namespace {

const std::vector<std::size_t> kSizes = {
    1, 2, 3, 31, 33, 1023, 1025, 4097,
    // the single-block kernel's limits at the default 512 threads: 16384 floats or
    // int32s, 8192 doubles (32 and 16 per thread); one past each takes the cluster path
    // on Hopper, up to 2^17 floats or 2^16 doubles; one past that, the ticket path
    8192, 8193, 16384, 16385, 65536, 65537, 131072, 131073, (std::size_t{1} << 20) + 7, (std::size_t{1} << 24) + 1};

template <typename T>
std::vector<T> make_values(std::size_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = common::hash64(seed, i);
    if constexpr (std::is_integral_v<T>)
      v[i] = static_cast<T>(static_cast<std::int64_t>(h % 2001) - 1000);  // -1000..1000
    else
      v[i] = static_cast<T>(static_cast<double>(h >> 11) * 0x1p-53 * 2.0 - 1.0);  // [-1, 1)
  }
  return v;
}

template <typename T, typename Op>
T run_on_gpu(const std::vector<T>& host, std::size_t offset, const g::Workspace& ws) {
  const std::size_t n = host.size() - offset;
  common::DeviceBuffer<T> in(host.size());
  common::DeviceBuffer<T> out(1);
  common::copy_to_device(in.get(), host.data(), host.size() * sizeof(T));
  const T poison = static_cast<T>(-12345);
  common::copy_to_device(out.get(), &poison, sizeof(T));
  g::reduce<T, Op>(in.get() + offset, n, out.get(), ws);
  T result{};
  CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof(T), cudaMemcpyDeviceToHost));
  return result;
}

template <typename T>
void check_type(const g::Workspace& ws) {
  for (std::size_t n : kSizes) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const auto host = make_values<T>(n + offset, 7 + n);
      const auto first = host.begin() + static_cast<std::ptrdiff_t>(offset);
      INFO("n=" << n << " offset=" << offset << " sizeof(T)=" << sizeof(T));
      // Min and max are exact for every type.
      CHECK(run_on_gpu<T, g::Min>(host, offset, ws) == *std::min_element(first, host.end()));
      CHECK(run_on_gpu<T, g::Max>(host, offset, ws) == *std::max_element(first, host.end()));
      const T sum = run_on_gpu<T, g::Sum>(host, offset, ws);
      if constexpr (std::is_integral_v<T>) {
        std::int64_t ref = 0;
        for (auto it = first; it != host.end(); ++it) ref += *it;
        CHECK(static_cast<std::int64_t>(sum) == ref);  // |sum| < 2^31 for these sizes: exact
      } else {
        double ref = 0.0, abs_sum = 0.0;
        for (auto it = first; it != host.end(); ++it) {
          ref += static_cast<double>(*it);
          abs_sum += std::fabs(static_cast<double>(*it));
        }
        // Per-thread share plus trees: a depth far below n; bounded here by n / 2^10 + 64.
        const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
        const double depth = static_cast<double>(n) / 1024.0 + 64.0;
        CHECK(std::fabs(static_cast<double>(sum) - ref) <= depth * u * abs_sum * 1.01 + 1e-300);
      }
    }
  }
}

}  // namespace

TEST_CASE("generic single pass: float sum, min, max", "[gpu][generic]") {
  g::Workspace ws;
  check_type<float>(ws);
}

TEST_CASE("generic single pass: double sum, min, max", "[gpu][generic]") {
  g::Workspace ws;
  check_type<double>(ws);
}

TEST_CASE("generic single pass: int32 sum (exact), min, max", "[gpu][generic]") {
  g::Workspace ws;
  check_type<int>(ws);
}

TEST_CASE("generic single pass: int32 sums wrap around like two's complement", "[gpu][generic]") {
  g::Workspace ws;
  const std::vector<int> host((std::size_t{1} << 20) + 5, 1 << 20);  // total 2^40 + 5 * 2^20
  const int sum = run_on_gpu<int, g::Sum>(host, 0, ws);
  const std::uint64_t exact = static_cast<std::uint64_t>(host.size()) << 20;
  CHECK(static_cast<std::uint32_t>(sum) == static_cast<std::uint32_t>(exact));
}

TEST_CASE("generic single pass: the ticket is reset, so back-to-back calls agree", "[gpu][generic]") {
  g::Workspace ws;
  const auto host = make_values<float>((std::size_t{1} << 22) + 3, 99);
  const float first = run_on_gpu<float, g::Sum>(host, 0, ws);
  for (int i = 0; i < 10; ++i) CHECK(run_on_gpu<float, g::Sum>(host, 0, ws) == first);
}

TEST_CASE("generic single pass: the path follows n (one block, one cluster on sm_90, the ticket)", "[gpu][generic]") {
  g::Workspace ws;
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  const int sms = ws.sm_count();
  CHECK(g::grid_for<float, g::Sum>(16384, sms) == 1);
  const unsigned mid = g::grid_for<float, g::Sum>(std::size_t{1} << 16, sms);
  if (major >= 9) {
    CHECK((mid == 8 || mid == 16));
    CHECK(g::cluster_blocks<float, g::Sum, g::kDefaultBlock, g::kDefaultUnroll>() == static_cast<int>(mid));
  } else {
    CHECK(g::cluster_blocks<float, g::Sum, g::kDefaultBlock, g::kDefaultUnroll>() == 0);
  }
  CHECK(g::grid_for<float, g::Sum>(std::size_t{1} << 24, sms) > 16u);
  // Results at the boundaries between the paths, repeated: bitwise the same each time.
  for (std::size_t n : {std::size_t{16385}, std::size_t{131072}, std::size_t{131073}}) {
    const auto host = make_values<float>(n, 5 + n);
    const float first = run_on_gpu<float, g::Sum>(host, 0, ws);
    for (int i = 0; i < 5; ++i) CHECK(run_on_gpu<float, g::Sum>(host, 0, ws) == first);
  }
}
