// phases: where the tagged ticket kernel's finish spends its time, n = 2^14 .. 2^22
// (every other power of two). DIAGNOSTIC: the kernel reads clocks (the global timer
// and the SM's cycle counter) along its way; no CUB column. Its sum is still checked
// (the first of the 101 launches at each n).
// Chapter: lab/notes/90_lab_notes.md. Run: build/lab/phases [--csv FILE]
//
// Columns, medians over 101 launches with the L2 flushed (read) before each:
//   body_ns          first block's start to the last block's own sum (global timer)
//   start_spread_ns  first block's start to the last block's start
//   last_data_pct    how often the block that took the last ticket had also finished
//                    its own sum last (mean)
//   then the last block, in SM cycles: data_cycles (its own chunk and sum),
//   ticket_cycles (its store, atomic and the barrier that shares the ticket),
//   slots_cycles (reading the slots), add_cycles (adding them; thread 0's view, so
//   this includes waiting for the block's other threads); finish_ns (from its own sum
//   to the result); rereads (slots it had to read again because the tag was not there
//   yet, mean); sm_ghz (cycles over global-timer ns during its own sum)
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include "cli.hpp"
#include "lab.cuh"
#include "sm_limits.hpp"

namespace {

namespace g = reduction::generic;
using lab::chunk_sum;
using lab::Experiment;

// The tagged ticket kernel with clocks read along the way. Every block's thread 0
// records the global timer (ns) when the block starts, when its own sum is ready, and
// once its ticket is back (after the barrier that shares it). The last block also
// records its SM clock (cycles) at those points, after reading the slots, and after
// adding them.
struct Stamps {
  unsigned long long start, data, ticket;  // global timer, ns
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock, common::one_block_on(75, 100, 120))
    phases_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                      unsigned char* __restrict__ scratch, Stamps* stamps, long long* last_clocks) {
  const long long c0 = clock64();
  const unsigned long long g0 = global_ns();
  const unsigned tag = lab::read_launch_tag(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  const long long c1 = clock64();
  const unsigned long long g1 = global_ns();
  auto* ticket = reinterpret_cast<unsigned*>(scratch);
  auto* slots = lab::slots_of(scratch);
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  if (threadIdx.x == 0) {
    launch_tag = tag;
    unsigned taken = 0;
    lab::store_slot(slots, blockIdx.x, tag, v);
    taken = lab::take_ticket(scratch);
    is_last = taken == gridDim.x - 1;
  }
  __syncthreads();
  // Past the barrier, so after the atomic's answer has arrived.
  const long long c2 = clock64();
  if (threadIdx.x == 0) stamps[blockIdx.x] = {g0, g1, global_ns()};
  if (!is_last) return;
  const unsigned expected = launch_tag;
  __shared__ unsigned rereads;  // slots read more than once, in the whole block
  if (threadIdx.x == 0) rereads = 0;
  __syncthreads();
  const long long c3 = clock64();
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
    unsigned long long word = 0;
    unsigned reads = 0;
    do {
      word = lab::load_slot(slots, b);
      ++reads;
    } while (static_cast<unsigned>(word >> 32) != expected);
    if (reads > 1) atomicAdd(&rereads, reads - 1);
    w += g::untag_value<float>(word);
  }
  const long long c4 = clock64();
  w = lab::block_sum_one_round<kBlock>(w);
  if (threadIdx.x == 0) {
    *out = w;
    const long long c5 = clock64();
    *ticket = 0;
    *reinterpret_cast<unsigned*>(scratch + lab::kLaunchTagOffset) = expected;
    const long long c[6] = {c0, c1, c2, c3, c4, c5};
    for (int k = 0; k < 6; ++k) last_clocks[k] = c[k];
    last_clocks[6] = blockIdx.x;
    last_clocks[7] = rereads;  // block_sum_one_round's barrier came after every thread's reads
  }
}

// Runs the instrumented kernel 101 times at each n (L2 flushed before each, as when
// timing) and prints and returns the median (or mean) of each column.
std::vector<common::Record> phases(Experiment& e) {
  const int sms = e.device().sm_count;
  common::DeviceBuffer<unsigned char> own(1 << 20);
  CUDA_CHECK(cudaMemset(own.get(), 0, own.bytes()));
  common::DeviceBuffer<Stamps> stamps(4096);
  common::DeviceBuffer<long long> clocks(8);
  std::vector<common::Record> records;
  std::printf("phases on %s (commit %s); medians of 101 launches, L2 flushed (read) before each\n",
              e.device().name.c_str(), common::git_commit().c_str());
  std::printf("%6s %5s %8s %9s %9s | last block, cycles: %6s %7s %6s %6s | %9s %7s  %s\n", "n", "grid", "body-ns",
              "spread-ns", "last-data", "data", "ticket", "slots", "add", "finish-ns", "re-read", "GHz");
  for (int k = 14; k <= 22; k += 2) {
    const std::size_t n = std::size_t{1} << k;
    e.set_reference(n);
    const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
    const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
    constexpr int kCols = 10;
    std::vector<std::vector<double>> cols(kCols);
    std::vector<Stamps> host(grid);
    long long c[8] = {};
    for (int rep = 0; rep < 101; ++rep) {
      if (rep == 0) e.poison_output();
      e.flusher().flush(e.stream());
      phases_ticket_sum<512, g::kDefaultUnroll>
          <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), own.get(), stamps.get(), clocks.get());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaStreamSynchronize(e.stream()));
      if (rep == 0) {
        const common::Check check = e.check_output();
        if (!check.ok) e.fail("the instrumented kernel's sum at n = " + common::format_count(n) + ": " + check.detail);
      }
      CUDA_CHECK(cudaMemcpy(host.data(), stamps.get(), grid * sizeof(Stamps), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(c, clocks.get(), sizeof c, cudaMemcpyDeviceToHost));
      unsigned long long first_start = ~0ull, last_start = 0, last_data = 0;
      for (const Stamps& st : host) {
        first_start = std::min(first_start, st.start);
        last_start = std::max(last_start, st.start);
        last_data = std::max(last_data, st.data);
      }
      const Stamps& lb = host.at(static_cast<std::size_t>(c[6]));
      const double ghz = static_cast<double>(c[1] - c[0]) / static_cast<double>(lb.data - lb.start);
      cols[0].push_back(static_cast<double>(last_data - first_start));
      cols[1].push_back(static_cast<double>(last_start - first_start));
      cols[2].push_back(lb.data == last_data ? 100.0 : 0.0);
      cols[3].push_back(static_cast<double>(c[1] - c[0]));  // data
      cols[4].push_back(static_cast<double>(c[2] - c[1]));  // ticket
      cols[5].push_back(static_cast<double>(c[4] - c[3]));  // slots
      cols[6].push_back(static_cast<double>(c[5] - c[4]));  // add
      cols[7].push_back(static_cast<double>(c[5] - c[1]) / ghz);
      cols[8].push_back(static_cast<double>(c[7]));
      cols[9].push_back(ghz);
    }
    std::vector<double> m(kCols);
    for (int j = 0; j < kCols; ++j) {
      std::vector<double> v = cols[j];
      std::sort(v.begin(), v.end());
      const bool mean = j == 2 || j == 8;
      m[j] = mean ? std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()) : v[v.size() / 2];
    }
    std::printf("%6s %5u %8.0f %9.0f %8.0f%% | %26.0f %7.0f %6.0f %6.0f | %9.0f %7.2f  %.2f\n",
                common::format_count(n).c_str(), grid, m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9]);
    std::fflush(stdout);
    records.push_back({common::number_field("n", static_cast<double>(n)), common::number_field("grid", grid),
                       common::number_field("body_ns", m[0]), common::number_field("start_spread_ns", m[1]),
                       common::number_field("last_data_pct", m[2]), common::number_field("data_cycles", m[3]),
                       common::number_field("ticket_cycles", m[4]), common::number_field("slots_cycles", m[5]),
                       common::number_field("add_cycles", m[6]), common::number_field("finish_ns", m[7]),
                       common::number_field("rereads", m[8]), common::number_field("sm_ghz", m[9])});
  }
  return records;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"phases",
       "n = 2^14 .. 2^22 (even powers), DIAGNOSTIC: the tagged ticket kernel with clocks read inside it\n"
       "(global timer and SM cycles): how long the last block takes to get its ticket, read the slots and\n"
       "add them. Medians of 101 launches, L2 flushed (read) before each; no CUB column.",
       std::size_t{1} << 22, phases});
}
