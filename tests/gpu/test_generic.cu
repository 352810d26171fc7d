// single_pass/single_pass.cuh as a library: sum, min and max over float, double and
// int32, against host references (integers exactly).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
    const auto host = make_values<float>(n, 5 + n);
    const float first = run_on_gpu<float, g::Sum>(host, 0, ws);
    for (int i = 0; i < 5; ++i) CHECK(run_on_gpu<float, g::Sum>(host, 0, ws) == first);
  }
}

namespace {

struct TicketState {
  unsigned ticket;
  unsigned tag;
  std::vector<unsigned long long> slots;
};

TicketState read_ticket_state(const g::Workspace& ws, unsigned grid) {
  std::vector<unsigned char> bytes(g::scratch_bytes<float>(grid));
  CUDA_CHECK(cudaMemcpy(bytes.data(), ws.get(), bytes.size(), cudaMemcpyDeviceToHost));
  TicketState s{};
  std::memcpy(&s.ticket, bytes.data(), 4);
  std::memcpy(&s.tag, bytes.data() + g::kTagOffset, 4);
  s.slots.resize(grid);
  std::memcpy(s.slots.data(), bytes.data() + g::kSlotsOffset, grid * sizeof(unsigned long long));
  return s;
}

}  // namespace

TEST_CASE("generic single pass: tagged slots carry the launch's tag, which advances and skips 0", "[gpu][generic]") {
  g::Workspace ws;
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const unsigned grid = g::grid_for<float, g::Sum>(n, ws.sm_count());
  REQUIRE(grid > 16u);  // the ticket path
  const auto host = make_values<float>(n, 123);
  double ref = 0.0, abs_sum = 0.0;
  for (float x : host) {
    ref += x;
    abs_sum += std::fabs(x);
  }
  const double bound = (static_cast<double>(n) / 1024.0 + 64.0) * 0x1p-24 * abs_sum;
  const float first = run_on_gpu<float, g::Sum>(host, 0, ws);
  CHECK(std::fabs(first - ref) <= bound);
  TicketState s = read_ticket_state(ws, grid);
  CHECK(s.ticket == 0u);
  CHECK(s.tag == 1u);
  for (unsigned b = 0; b < grid; ++b) CHECK(static_cast<unsigned>(s.slots[b] >> 32) == 1u);
  // The slots hold the blocks' partials; added in index order on the host they give
  // back the GPU's result to within the last block's tree.
  double from_slots = 0.0;
  for (unsigned long long w : s.slots) {
    const auto bits = static_cast<unsigned>(w);
    float v;
    std::memcpy(&v, &bits, 4);
    from_slots += v;
  }
  CHECK(std::fabs(from_slots - first) <= 16 * 0x1p-24 * abs_sum);

  CHECK(run_on_gpu<float, g::Sum>(host, 0, ws) == first);
  CHECK(read_ticket_state(ws, grid).tag == 2u);

  // The tag after 0xffffffff is 1: 0 is the zeroed scratch's, never a launch's.
  const unsigned last = 0xffffffffu;
  CUDA_CHECK(cudaMemcpy(static_cast<unsigned char*>(ws.get()) + g::kTagOffset, &last, 4, cudaMemcpyHostToDevice));
  CHECK(run_on_gpu<float, g::Sum>(host, 0, ws) == first);
  s = read_ticket_state(ws, grid);
  CHECK(s.ticket == 0u);
  CHECK(s.tag == 1u);
  for (unsigned b = 0; b < grid; ++b) CHECK(static_cast<unsigned>(s.slots[b] >> 32) == 1u);
}

TEST_CASE("generic single pass: 8-byte values take the fenced ticket and leave the tag alone", "[gpu][generic]") {
  g::Workspace ws;
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const auto host = make_values<double>(n, 321);
  double ref = 0.0;
  for (double x : host) ref += x;
  const double sum = run_on_gpu<double, g::Sum>(host, 0, ws);
  CHECK(std::fabs(sum - ref) <= 1e-9 * static_cast<double>(n));
  const TicketState s = read_ticket_state(ws, 1);
  CHECK(s.ticket == 0u);
  CHECK(s.tag == 0u);
}
