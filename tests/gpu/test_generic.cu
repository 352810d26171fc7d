// single_pass/single_pass.cuh as a library: sum, min and max over float, double, int32,
// int64 and uint32, and user operators, against host references (integers exactly), at
// n on both sides of every path's limit and with misaligned pointers; several streams at
// once and a workspace called on the wrong stream, under a deadline.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "single_pass.cuh"
#include "typed_values.hpp"
#include "wait_or_fail.hpp"

namespace g = reduction::generic;
using gpu_test::wait_or_fail;

namespace {

const std::vector<std::size_t> kSizes = {
    1, 2, 3, 31, 33, 1023, 1025, 4097,
    // the single-block kernel's limits at the default 512 threads: 16384 floats or
    // int32s, 8192 doubles (32 and 16 per thread); one past each takes the cluster path
    // on Hopper, up to 2^17 floats or 2^16 doubles; one past that, the ticket path
    8192, 8193, 16384, 16385, 65536, 65537, 131072, 131073, (std::size_t{1} << 20) + 7, (std::size_t{1} << 24) + 1};

using test_inputs::typed_values;

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

// n = 1 and one below, at and above each path's limit for T at the default block size:
// the one-block kernel's, the cluster's of 8 and of 16 blocks (on Hopper; the ticket
// path elsewhere).
template <typename T>
std::vector<std::size_t> boundary_sizes() {
  const std::size_t one_block = std::size_t{g::kDefaultBlock} * g::kSmallLoads * g::Pack<T>::kCount;
  const std::size_t cluster8 = std::size_t{8} * g::kDefaultBlock * g::kClusterLoads * g::Pack<T>::kCount;
  std::vector<std::size_t> sizes = {1};
  for (std::size_t limit : {one_block, cluster8, 2 * cluster8})
    for (std::size_t n : {limit - 1, limit, limit + 1}) sizes.push_back(n);
  return sizes;
}

template <typename T>
void check_type(const g::Workspace& ws) {
  std::vector<std::size_t> sizes = kSizes;
  for (std::size_t n : boundary_sizes<T>()) sizes.push_back(n);
  for (std::size_t n : sizes) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const auto host = typed_values<T>(n + offset, 7 + n);
      const auto first = host.begin() + static_cast<std::ptrdiff_t>(offset);
      INFO("n=" << n << " offset=" << offset << " sizeof(T)=" << sizeof(T));
      // Min and max are exact for every type.
      CHECK(run_on_gpu<T, g::Min>(host, offset, ws) == *std::min_element(first, host.end()));
      CHECK(run_on_gpu<T, g::Max>(host, offset, ws) == *std::max_element(first, host.end()));
      const T sum = run_on_gpu<T, g::Sum>(host, offset, ws);
      if constexpr (std::is_integral_v<T>) {
        // Exact, modulo 2^(bits of T) (unsigned values from negative ones wrap).
        using U = std::make_unsigned_t<T>;
        std::uint64_t ref = 0;
        for (auto it = first; it != host.end(); ++it) ref += static_cast<std::uint64_t>(static_cast<std::int64_t>(*it));
        CHECK(static_cast<U>(sum) == static_cast<U>(ref));
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

TEST_CASE("generic single pass: int64 sum (exact), min, max", "[gpu][generic]") {
  g::Workspace ws;
  check_type<long long>(ws);
}

TEST_CASE("generic single pass: uint32 sum (exact modulo 2^32), min, max", "[gpu][generic]") {
  g::Workspace ws;
  check_type<std::uint32_t>(ws);
}

namespace {

// User operators: the largest magnitude (identity 0) and a bitwise or (identity 0).
struct MaxAbs {
  template <typename T>
  __host__ __device__ static T identity() {
    return T(0);
  }
  template <typename T>
  __host__ __device__ T operator()(T a, T b) const {
    return fabs(a) < fabs(b) ? fabs(b) : fabs(a);
  }
};

struct BitOr {
  template <typename T>
  __host__ __device__ static T identity() {
    return T(0);
  }
  template <typename T>
  __host__ __device__ T operator()(T a, T b) const {
    return a | b;
  }
};

}  // namespace

TEST_CASE("generic single pass: user operators (max-abs of floats, bitwise or of uint32)", "[gpu][generic]") {
  g::Workspace ws;
  std::vector<std::size_t> sizes = boundary_sizes<float>();
  sizes.push_back((std::size_t{1} << 22) + 3);
  for (std::size_t n : sizes) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      INFO("n=" << n << " offset=" << offset);
      const auto floats = typed_values<float>(n + offset, 41 + n);
      float most = 0.0f;
      for (std::size_t i = offset; i < floats.size(); ++i) most = std::max(most, std::fabs(floats[i]));
      CHECK(run_on_gpu<float, MaxAbs>(floats, offset, ws) == most);
      // One bit per element position modulo 32, set only where the hash says so: the or
      // of all must have exactly the bits that some element has.
      std::vector<std::uint32_t> words(n + offset);
      std::uint32_t ored = 0;
      for (std::size_t i = 0; i < words.size(); ++i) {
        const std::uint64_t h = common::hash64(77, i);
        words[i] = (h % 3 == 0) ? (1u << (i % 32)) & static_cast<std::uint32_t>(h >> 32) : 0u;
        if (i >= offset) ored |= words[i];
      }
      CHECK(run_on_gpu<std::uint32_t, BitOr>(words, offset, ws) == ored);
    }
  }
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
  const auto host = typed_values<float>((std::size_t{1} << 22) + 3, 99);
  const float first = run_on_gpu<float, g::Sum>(host, 0, ws);
  for (int i = 0; i < 10; ++i) CHECK(run_on_gpu<float, g::Sum>(host, 0, ws) == first);
}

TEST_CASE("generic single pass: the path follows n (one block, one cluster on sm_90, the ticket)", "[gpu][generic]") {
  g::Workspace ws;
  // The cluster path needs the cluster kernel's code compiled for 9.0 or later: a build
  // for sm_80 running on an H100 takes the ticket path instead.
  cudaFuncAttributes cluster_code{};
  CUDA_CHECK(
      cudaFuncGetAttributes(&cluster_code, g::cluster_kernel<float, g::Sum, g::kDefaultBlock, g::kDefaultUnroll>));
  const int sms = ws.sm_count();
  CHECK(g::grid_for<float, g::Sum>(16384, sms) == 1);
  const unsigned mid = g::grid_for<float, g::Sum>(std::size_t{1} << 16, sms);
  if (cluster_code.ptxVersion >= 90) {
    CHECK((mid == 8 || mid == 16));
    CHECK(g::cluster_blocks<float, g::Sum, g::kDefaultBlock, g::kDefaultUnroll>() == static_cast<int>(mid));
  } else {
    CHECK(g::cluster_blocks<float, g::Sum, g::kDefaultBlock, g::kDefaultUnroll>() == 0);
  }
  CHECK(g::grid_for<float, g::Sum>(std::size_t{1} << 24, sms) > 16u);
  // The ticket path's grid for a large n: resident blocks per SM (capped at
  // kTargetThreadsPerSm) times SMs, asked once and remembered: the same on a second call.
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, g::single_pass_kernel<float, g::Sum, g::kDefaultBlock, g::kDefaultUnroll>, g::kDefaultBlock, 0));
  per_sm = std::min(per_sm, g::kTargetThreadsPerSm / g::kDefaultBlock);
  const std::size_t big = std::size_t{1} << 28;
  CHECK(g::ticket_grid<float, g::Sum>(big, sms) == static_cast<unsigned>(std::max(per_sm, 1) * sms));
  CHECK(g::ticket_grid<float, g::Sum>(big, sms) == static_cast<unsigned>(std::max(per_sm, 1) * sms));
  // and a small n still gets no more blocks than give each thread two vectors
  CHECK(g::ticket_grid<float, g::Sum>(std::size_t{1} << 18, sms) ==
        std::min<unsigned>(64u, static_cast<unsigned>(std::max(per_sm, 1) * sms)));
  // Results at the boundaries between the paths, repeated: bitwise the same each time.
  for (std::size_t n : {std::size_t{16385}, std::size_t{131072}, std::size_t{131073}}) {
    const auto host = typed_values<float>(n, 5 + n);
    const float first = run_on_gpu<float, g::Sum>(host, 0, ws);
    for (int i = 0; i < 5; ++i) CHECK(run_on_gpu<float, g::Sum>(host, 0, ws) == first);
  }
}

namespace {

struct TicketState {
  unsigned ticket;
  std::vector<unsigned long long> slots;
};

TicketState read_ticket_state(const g::Workspace& ws, unsigned grid) {
  std::vector<unsigned char> bytes(g::scratch_bytes<float>(grid));
  CUDA_CHECK(cudaMemcpy(bytes.data(), ws.get(), bytes.size(), cudaMemcpyDeviceToHost));
  TicketState s{};
  std::memcpy(&s.ticket, bytes.data(), 4);
  s.slots.resize(grid);
  std::memcpy(s.slots.data(), bytes.data() + g::kSlotsOffset, grid * sizeof(unsigned long long));
  return s;
}

}  // namespace

TEST_CASE("generic single pass: the last block empties every tagged slot it reads", "[gpu][generic]") {
  g::Workspace ws;
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const unsigned grid = g::grid_for<float, g::Sum>(n, ws.sm_count());
  REQUIRE(grid > 16u);  // the ticket path
  const auto host = typed_values<float>(n, 123);
  double ref = 0.0, abs_sum = 0.0;
  for (float x : host) {
    ref += x;
    abs_sum += std::fabs(x);
  }
  const double bound = (static_cast<double>(n) / 1024.0 + 64.0) * 0x1p-24 * abs_sum;
  const float first = run_on_gpu<float, g::Sum>(host, 0, ws);
  CHECK(std::fabs(first - ref) <= bound);
  for (int rep = 0; rep < 3; ++rep) {
    const TicketState s = read_ticket_state(ws, grid);
    CHECK(s.ticket == 0u);
    for (unsigned b = 0; b < grid; ++b) CHECK(s.slots[b] == 0ull);
    CHECK(run_on_gpu<float, g::Sum>(host, 0, ws) == first);
  }
  // After each launch every slot is empty, so no later launch (with any grid) can find
  // a full slot that is not its own.
  const TicketState after = read_ticket_state(ws, grid);
  std::size_t full = 0;
  for (unsigned long long w : after.slots) full += (w >> 32) != 0;
  CHECK(full == 0u);
}

TEST_CASE("generic single pass: 8-byte values take the fenced ticket and leave the ticket at zero", "[gpu][generic]") {
  g::Workspace ws;
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const auto host = typed_values<double>(n, 321);
  double ref = 0.0;
  for (double x : host) ref += x;
  const double sum = run_on_gpu<double, g::Sum>(host, 0, ws);
  CHECK(std::fabs(sum - ref) <= 1e-9 * static_cast<double>(n));
  const TicketState s = read_ticket_state(ws, 1);
  CHECK(s.ticket == 0u);
}

TEST_CASE("generic single pass: sums on several streams at once, each with its own workspace",
          "[gpu][generic][streams]") {
  constexpr int kStreams = 4;
  constexpr int kRounds = 20;
  // A ticket-path size (the issue's), a cluster-path size and a one-block size.
  for (std::size_t n : {(std::size_t{1} << 22) + 3, std::size_t{100003}, std::size_t{4097}}) {
    INFO("n=" << n);
    const auto host = typed_values<float>(n, 2024 + n);
    double ref = 0.0, abs_sum = 0.0;
    for (float x : host) {
      ref += x;
      abs_sum += std::fabs(x);
    }
    const double bound = (static_cast<double>(n) / 1024.0 + 64.0) * 0x1p-24 * abs_sum;
    common::DeviceBuffer<float> in(n);
    common::copy_to_device(in.get(), host.data(), n * sizeof(float));
    std::vector<std::unique_ptr<common::CudaStream>> streams;
    std::vector<std::unique_ptr<g::Workspace>> workspaces;
    for (int s = 0; s < kStreams; ++s) {
      streams.push_back(std::make_unique<common::CudaStream>());
      workspaces.push_back(std::make_unique<g::Workspace>(0, streams.back()->get()));
    }
    common::DeviceBuffer<float> out(static_cast<std::size_t>(kStreams) * kRounds);
    CUDA_CHECK(cudaMemset(out.get(), 0xff, out.bytes()));  // NaN: an unwritten result fails
    CUDA_CHECK(cudaDeviceSynchronize());
    // Every sum on every stream is enqueued before any is awaited.
    for (int r = 0; r < kRounds; ++r)
      for (int s = 0; s < kStreams; ++s)
        g::reduce<float>(in.get(), n, out.get() + r * kStreams + s, *workspaces[s], streams[s]->get());
    for (int s = 0; s < kStreams; ++s) wait_or_fail(streams[s]->get(), 60.0, "the sums on stream " + std::to_string(s));
    std::vector<float> results(static_cast<std::size_t>(kStreams) * kRounds);
    CUDA_CHECK(cudaMemcpy(results.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
    for (float r : results) {
      CHECK(std::fabs(r - ref) <= bound);
      CHECK(r == results[0]);  // one grid and order for all: bitwise the same
    }
  }
}

TEST_CASE("generic single pass: a workspace refuses a second stream, with both named", "[gpu][generic][streams]") {
  const std::size_t n = (std::size_t{1} << 22) + 3;
  const auto host = typed_values<float>(n, 5);
  common::DeviceBuffer<float> in(n);
  common::copy_to_device(in.get(), host.data(), n * sizeof(float));
  common::DeviceBuffer<float> out(2);
  CUDA_CHECK(cudaMemset(out.get(), 0xff, out.bytes()));
  CUDA_CHECK(cudaDeviceSynchronize());
  common::CudaStream first, second;

  SECTION("bound by its first call") {
    g::Workspace ws;
    g::reduce<float>(in.get(), n, out.get(), ws, first.get());
    try {
      g::reduce<float>(in.get(), n, out.get() + 1, ws, second.get());
      FAIL("a call on a second stream was accepted");
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      INFO(message);
      std::ostringstream a, b;
      a << static_cast<const void*>(first.get());
      b << static_cast<const void*>(second.get());
      CHECK(message.find(a.str()) != std::string::npos);
      CHECK(message.find(b.str()) != std::string::npos);
    }
    // One element and a cluster-size n are refused as well: the rule does not depend on the path.
    CHECK_THROWS_AS(g::reduce<float>(in.get(), 1, out.get() + 1, ws, second.get()), std::invalid_argument);
    CHECK_THROWS_AS(g::reduce<float>(in.get(), 100003, out.get() + 1, ws, second.get()), std::invalid_argument);
    CHECK_THROWS_AS(g::reduce<float>(in.get(), n, out.get() + 1, ws, nullptr), std::invalid_argument);
    // The first stream still works.
    g::reduce<float>(in.get(), n, out.get(), ws, first.get());
  }
  SECTION("bound by its constructor") {
    g::Workspace ws(0, first.get());
    CHECK_THROWS_AS(g::reduce<float>(in.get(), n, out.get() + 1, ws, second.get()), std::invalid_argument);
    g::reduce<float>(in.get(), n, out.get(), ws, first.get());
  }
  wait_or_fail(first.get(), 60.0, "the sums on the first stream");
  wait_or_fail(second.get(), 60.0, "the second stream");
  float results[2];
  CUDA_CHECK(cudaMemcpy(results, out.get(), sizeof results, cudaMemcpyDeviceToHost));
  double ref = 0.0, abs_sum = 0.0;
  for (float x : host) {
    ref += x;
    abs_sum += std::fabs(x);
  }
  CHECK(std::fabs(results[0] - ref) <= (static_cast<double>(n) / 1024.0 + 64.0) * 0x1p-24 * abs_sum);
  CHECK(std::isnan(results[1]));  // nothing refused was enqueued
}
