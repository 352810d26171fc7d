// Occupancy 03: is the highest occupancy the fastest? A block-size x blocks-per-SM sweep.
//
// Idea: one simple reduction (each thread sums a grid-stride share of the input, warps
// combine with __shfl_down_sync, one partial per block, a second one-block launch sums
// the partials) launched with every block size from 32 to 1024 and 1, 2, 4, ... blocks
// per SM, as many as the occupancy API says fit. The grid is blocks-per-SM x SM count,
// so the configuration's theoretical occupancy is blocks-per-SM x warps per block / max
// warps per SM. Each configuration is verified against a double-precision reference,
// then timed; the table marks the fastest and the highest-occupancy configurations.
// Expect: each thread has one 4-byte load in flight at a time, so by Little's law the
// bandwidth is resident threads x 4 bytes / DRAM latency: the time roughly halves with
// every doubling of the warps per SM. With one load per thread even full occupancy
// leaves the DRAM well short of its peak, so the curve keeps falling all the way and
// the fastest configurations are the fullest ones (the chapter shows the sweep).
// Nsight Compute: sm__warps_active.avg.pct_of_peak_sustained_active (achieved
// occupancy) next to dram__throughput.avg.pct_of_peak_sustained_elapsed.
// Chapter: chapters/21_occupancy.md
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "device_limits.hpp"
#include "inputs.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "output.hpp"
#include "programs.hpp"
#include "row_measure.hpp"
#include "sweep.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace occupancy {
namespace {

constexpr unsigned kWarp = 32;

__device__ __forceinline__ float warp_sum(float v) {
  // Every lane of the warp takes part: blockDim.x is a multiple of 32.
  for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// One partial sum per block of in[0, n). blockDim.x: a multiple of 32, at most 1024.
__global__ void grid_stride_sum(const float* __restrict__ in, std::size_t n, float* __restrict__ block_sums) {
  __shared__ float warp_sums[32];
  float sum = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    sum += in[i];

  sum = warp_sum(sum);
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < blockDim.x / kWarp ? warp_sums[lane] : 0.0f;
    sum = warp_sum(sum);
    if (lane == 0) block_sums[blockIdx.x] = sum;
  }
}

struct Row {
  int block = 0;
  int per_sm = 0;
  unsigned grid = 0;
  int api_max = 0;
  int registers = 0;
  OccupancyResult calc;
  double occupancy = 0.0;
  float result = 0.0f;
  common::Check check;
  common::Timing timing;
  bool timed = false;
};

std::vector<common::Column> sweep_columns() {
  return {
      {"block", "block", 5, 0, false},         {"per_sm", "blk/SM", 6, 0, false},
      {"grid", "grid", 6, 0, false},           {"warps_per_sm", "warps/SM", 8, 0, false},
      {"occupancy_pct", "occ-%", 6, 1, false}, {"api_max_per_sm", "API-max", 7, 0, false},
      {"median_us", "median-us", 9, 1, false}, {"gbs", "GB/s", 6, 0, false},
      {"pct_peak", "%peak", 5, 1, false},      {"rel_error", "rel-error", 9, 1, false},
      {"check", "check", 5, 0, false},         {"mark", "mark", 18, 0, true},
  };
}

}  // namespace

const void* sweep_sum_kernel() { return reinterpret_cast<const void*>(&grid_stride_sum); }

void launch_sweep_sum(const float* in, std::size_t n, float* partials, float* out, unsigned grid, int block,
                      int final_block, cudaStream_t stream) {
  grid_stride_sum<<<grid, block, 0, stream>>>(in, n, partials);
  CUDA_CHECK_LAUNCH();
  grid_stride_sum<<<1, final_block, 0, stream>>>(partials, grid, out);
  CUDA_CHECK_LAUNCH();
}

int occupancy_sweep_main(int argc, const char* const* argv) {
  return run_on_device(
      "03_occupancy_sweep", &parse_sweep_options, argc, argv,
      [&](SweepOptions& opt, const common::DeviceInfo& info, const DeviceLimits& limits) {
        check_sweep_options(opt, limits);
        const int final_block = std::min(kSweepFinalBlock, limits.max_threads_per_block / 32 * 32);
        const std::size_t max_grid = static_cast<std::size_t>(opt.per_sm.back()) * limits.sm_count;
        common::MemoryNeed need;
        need.add("input", opt.n * sizeof(float)).add("partials", max_grid * sizeof(float));
        need.add("L2 flush buffer", opt.warm_l2 ? 0 : common::l2_flush_bytes(info.l2_bytes));
        common::require_memory(need, "--n " + common::format_count(opt.n), info.name);

        const std::vector<float> host = common::make_input(common::Pattern::uniform, opt.seed, opt.n);
        const common::Reference ref = common::reference_sum(host);
        common::DeviceBuffer<float> input(opt.n);
        common::copy_to_device(input.get(), host.data(), input.bytes());
        common::DeviceBuffer<float> partials(max_grid);
        common::DeviceBuffer<float> out(1);
        common::CudaStream stream;
        std::unique_ptr<common::L2Flusher> flusher;
        if (!opt.warm_l2) flusher = std::make_unique<common::L2Flusher>(info.l2_bytes);

        std::cout << common::device_banner(
                         "03_occupancy_sweep", info,
                         {"at most " + std::to_string(limits.max_warps_per_sm()) + " warps and " +
                              std::to_string(limits.max_blocks_per_sm) + " blocks per SM",
                          "theoretical " + std::to_string(std::lround(info.peak_bandwidth_gbs())) + " GB/s"})
                  << "\n";
        std::cout << "n = " << common::format_count(opt.n) << " uniform floats (seed " << opt.seed
                  << "); grid = blocks per SM x " << info.sm_count << " SMs, then one block of " << final_block
                  << " threads sums the partials; median of up to " << opt.timing.reps << " repetitions, L2 "
                  << (opt.warm_l2 ? "warm" : "flushed before each") << ".\n";

        std::vector<Row> rows;
        std::vector<std::string> skipped;
        for (const int block : opt.blocks) {
          int api_max = 0;
          CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&api_max, sweep_sum_kernel(), block, 0));
          const KernelResources res = kernel_resources(sweep_sum_kernel(), block);
          const OccupancyResult calc = compute_occupancy(limits, res);
          std::vector<int> too_many;
          for (const int per_sm : opt.per_sm) {
            if (per_sm > api_max) {
              too_many.push_back(per_sm);
              continue;
            }
            Row r;
            r.block = block;
            r.per_sm = per_sm;
            r.grid = static_cast<unsigned>(per_sm * limits.sm_count);
            r.api_max = api_max;
            r.registers = res.regs_per_thread;
            r.calc = calc;
            r.occupancy = static_cast<double>(per_sm) * calc.warps_per_block / limits.max_warps_per_sm();
            auto work = [&](cudaStream_t s) {
              launch_sweep_sum(input.get(), opt.n, partials.get(), out.get(), r.grid, block, final_block, s);
            };
            // Verify, then time (common/row_measure.hpp).
            const std::string name = "block " + std::to_string(block) + " x " + std::to_string(per_sm) + "/SM";
            common::RowMeasure measure(name.c_str());
            r.result = measure.checked([&] {
              return common::poisoned_run(
                  out.get(), common::poison_value(), [&] { work(stream.get()); }, stream.get());
            });
            r.check = common::check_sum(r.result, ref, sweep_error_depth(opt.n, r.grid, block, final_block), opt.n);
            if (r.check.ok) {
              r.timing =
                  measure.timed([&] { work(stream.get()); }, opt.timing, opt.warm_l2, stream.get(), flusher.get());
              r.timed = true;
            }
            std::ostringstream progress;
            progress.precision(1);
            progress << std::fixed << "  block " << block << " x " << per_sm << "/SM: ";
            if (r.timed)
              progress << r.timing.us.median << " us";
            else
              progress << "FAILED: " << r.check.detail;
            std::cerr << progress.str() << std::endl;
            rows.push_back(r);
          }
          if (!too_many.empty()) {
            std::ostringstream s;
            s << "block " << block << ": the API fits at most " << api_max << " blocks per SM, so";
            for (const int p : too_many) s << " " << p;
            s << " per SM were skipped";
            if (calc.blocks_per_sm == api_max) s << " (limited by " << limiter_names(calc.limiters) << ")";
            skipped.push_back(s.str());
          }
        }

        std::vector<SweepPoint> points;
        for (const Row& r : rows)
          points.push_back({r.block, r.per_sm, r.occupancy, r.timed ? r.timing.us.median : NAN, r.check.ok && r.timed});
        const SweepVerdict verdict = judge_sweep(points);

        std::cout << "\n";
        common::TablePrinter table(std::cout, sweep_columns());
        table.header();
        std::vector<common::Record> records;
        bool all_ok = true;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const Row& r = rows[i];
          std::string mark;
          if (verdict.any && i == verdict.fastest) mark = "fastest";
          if (std::find(verdict.max_occupancy_rows.begin(), verdict.max_occupancy_rows.end(), i) !=
              verdict.max_occupancy_rows.end())
            mark += mark.empty() ? "max-occ" : ", max-occ";
          const double us = r.timed ? r.timing.us.median : NAN;
          const double gbs = static_cast<double>(opt.n) * sizeof(float) / (us * 1e-6) / 1e9;
          common::Record rec = {
              common::number_field("n", static_cast<double>(opt.n)),
              common::number_field("block", r.block),
              common::number_field("per_sm", r.per_sm),
              common::number_field("grid", r.grid),
              common::number_field("warps_per_sm", r.per_sm * r.calc.warps_per_block),
              common::number_field("occupancy_pct", 100.0 * r.occupancy),
              common::number_field("api_max_per_sm", r.api_max),
              common::number_field("calc_max_per_sm", r.calc.blocks_per_sm),
              common::text_field("limited_by", limiter_names(r.calc.limiters)),
              common::number_field("registers", r.registers),
          };
          common::append(rec, common::timing_fields(r.timed ? &r.timing : nullptr));
          common::append(rec, {
                                  common::number_field("gbs", gbs),
                                  common::number_field("pct_peak", 100.0 * gbs / info.peak_bandwidth_gbs()),
                                  common::number_field("result", r.result),
                                  common::number_field("reference", ref.sum),
                                  common::number_field("rel_error", r.check.rel_error),
                                  common::number_field("tolerance", r.check.tolerance),
                                  common::text_field("check", r.check.ok ? "ok" : "FAIL"),
                                  common::text_field("mark", mark),
                              });
          table.row(rec);
          if (!r.check.ok)
            std::cout << "  block " << r.block << " x " << r.per_sm << " failed: " << r.check.detail << "\n";
          all_ok = all_ok && r.check.ok;
          records.push_back(rec);
        }

        std::cout << "\nocc-% = blk/SM x warps per block / " << limits.max_warps_per_sm()
                  << ", the theoretical occupancy of the launch (every block resident at once); API-max = "
                     "cudaOccupancyMaxActiveBlocksPerMultiprocessor at that block size. GB/s = n x 4 bytes / median "
                     "time; %peak against the theoretical "
                  << std::lround(info.peak_bandwidth_gbs()) << " GB/s.\n";
        for (const auto& s : skipped) std::cout << "  " << s << "\n";
        std::cout << "\n" << verdict.text << "\n";

        common::Metadata meta = common::base_metadata(info);
        meta.push_back({"n", std::to_string(opt.n)});
        meta.push_back({"seed", std::to_string(opt.seed)});
        meta.push_back({"final_block", std::to_string(final_block)});
        common::add_timing_metadata(meta, opt.timing, opt.warm_l2,
                                    "CUDA events around both launches, median of the repetitions", false);
        meta.push_back({"verdict", verdict.text});
        return common::finish_run(opt.csv, opt.json, meta, records, all_ok, "Some configurations FAILED their check.");
      });
}

}  // namespace occupancy
