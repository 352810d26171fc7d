// Occupancy 01: threads, blocks, warps and lanes, made visible.
//
// Idea: every thread of a grid x block launch records who it is (global index, block,
// warp, lane), where it ran (%smid, and the hardware's own %laneid) and when it started
// (clock64, the SM's cycle counter, and %globaltimer, a nanosecond clock shared by the
// whole GPU), plus a ticket: lane 0's atomicAdd on one counter, so the tickets number
// the warps in the order their atomics reached the counter (at the L2), which is not
// the order in which they started. The records go to device memory, not printf, so
// nothing is lost and the output order means nothing; the host then counts what they
// show.
// Expect: the 32 lanes of a warp share an SM and read identical clocks: they were
// converged at the kernel's first instructions (evidence for that point only: since
// Volta each thread has its own program counter and a warp may split anywhere, so
// code that needs its lanes together says so with __syncwarp or a _sync mask); all
// threads of a block share one SM; the blocks spread over all SMs; and neither the
// blocks' nor the warps' tickets follow index order, so nothing orders them.
// Nsight Compute: launch__grid_size, launch__waves_per_multiprocessor and
// sm__warps_active.avg.pct_of_peak_sustained_active (achieved occupancy).
// Chapter: chapters/21_occupancy.md
#include <cuda_runtime.h>

#include <algorithm>
#include <iostream>
#include <string>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "device_limits.hpp"
#include "options.hpp"
#include "output.hpp"
#include "programs.hpp"
#include "thread_records.hpp"

namespace occupancy {
namespace {

constexpr unsigned kWarp = 32;

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ __forceinline__ unsigned hardware_lane() {
  unsigned id;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  return id;
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void record_hierarchy(ThreadRecord* __restrict__ records, unsigned* __restrict__ warps_started) {
  // The clocks are read first, while nothing has yet had a chance to split the warp.
  const unsigned long long timer = global_timer_ns();
  const long long cycles = clock64();
  const unsigned sm = sm_id();
  const unsigned hw_lane = hardware_lane();

  const unsigned warp = threadIdx.x / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  // The last warp of a block whose size is not a multiple of 32 has fewer lanes; the
  // shuffle's mask must name exactly the lanes that exist.
  const unsigned lanes_here = min(kWarp, blockDim.x - warp * kWarp);
  const unsigned mask = lanes_here == kWarp ? 0xffffffffu : (1u << lanes_here) - 1u;
  unsigned ticket = 0;
  if (lane == 0) ticket = atomicAdd(warps_started, 1u);
  ticket = __shfl_sync(mask, ticket, 0);

  const std::uint64_t global = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  ThreadRecord r;
  r.global_thread = global;
  r.clock = static_cast<std::uint64_t>(cycles);
  r.globaltimer = timer;
  r.block = blockIdx.x;
  r.warp = warp;
  r.lane = lane;
  r.hw_lane = hw_lane;
  r.smid = sm;
  r.warp_ticket = ticket;
  records[global] = r;
}

common::Record to_record(const ThreadRecord& r, std::uint64_t first_ns) {
  using common::number_field;
  using common::text_field;
  return {
      number_field("thread", static_cast<double>(r.global_thread)),
      number_field("block", r.block),
      number_field("warp", r.warp),
      number_field("lane", r.lane),
      number_field("hw_lane", r.hw_lane),
      number_field("smid", r.smid),
      number_field("warp_ticket", r.warp_ticket),
      // clock64 counts cycles since some point of the SM's life: kept exact, as text.
      text_field("clock64", std::to_string(r.clock)),
      number_field("start_ns", static_cast<double>(r.globaltimer - first_ns)),
  };
}

}  // namespace

std::vector<ThreadRecord> record_threads(std::uint32_t grid, std::uint32_t block) {
  const std::size_t threads = static_cast<std::size_t>(grid) * block;
  common::DeviceBuffer<ThreadRecord> records(threads);
  common::DeviceBuffer<unsigned> warps_started(1);
  // All-ones bytes: an unwritten record names thread 2^64 - 1, which the coverage check rejects.
  CUDA_CHECK(cudaMemset(records.get(), 0xFF, records.bytes()));
  CUDA_CHECK(cudaMemset(warps_started.get(), 0, warps_started.bytes()));
  record_hierarchy<<<grid, block>>>(records.get(), warps_started.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<ThreadRecord> host(threads);
  CUDA_CHECK(cudaMemcpy(host.data(), records.get(), records.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

int thread_hierarchy_main(int argc, const char* const* argv) {
  return run_on_device(
      "01_thread_hierarchy", &parse_hierarchy_options, argc, argv,
      [&](HierarchyOptions& opt, const common::DeviceInfo& info, const DeviceLimits& limits) {
        check_hierarchy_options(opt, limits);
        const std::uint32_t grid = *opt.grid;

        const std::vector<ThreadRecord> records = record_threads(grid, opt.block);
        std::cout << "01_thread_hierarchy on " << info.name << " (sm_" << info.cc_major << info.cc_minor << ", "
                  << info.sm_count << " SMs), driver " << info.driver << "\n";
        const CoverageReport coverage = check_coverage(records, grid, opt.block);
        if (!coverage.ok) {
          std::cout << "The records FAILED their check: " << coverage.detail << "\n";
          return kExitFailed;
        }
        std::cout << "Each of the " << records.size()
                  << " threads left exactly one record, with block, warp and lane consistent with its index.\n\n";
        const HierarchySummary summary = summarize_records(records, grid, opt.block);
        std::cout << format_summary(summary, opt.first, info.sm_count);

        if (opt.raw) {
          std::cout << "\n" << raw_header() << "\n";
          for (const ThreadRecord& r : records) std::cout << raw_line(r) << "\n";
        }
        if (!opt.csv.empty() || !opt.json.empty()) {
          std::uint64_t first_ns = records.front().globaltimer;
          for (const ThreadRecord& r : records) first_ns = std::min(first_ns, r.globaltimer);
          std::vector<common::Record> rows;
          rows.reserve(records.size());
          for (const ThreadRecord& r : records) rows.push_back(to_record(r, first_ns));
          common::Metadata meta = common::base_metadata(info);
          meta.push_back({"grid", std::to_string(grid)});
          meta.push_back({"block", std::to_string(opt.block)});
          meta.push_back({"start_ns", "%globaltimer of the thread minus the earliest one, in ns"});
          if (!opt.csv.empty()) common::write_file_atomically(opt.csv, common::to_csv(meta, rows));
          if (!opt.json.empty()) common::write_file_atomically(opt.json, common::to_json(meta, rows));
        }
        return kExitOk;
      });
}

}  // namespace occupancy
