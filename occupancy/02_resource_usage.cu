// Occupancy 02: registers, spills and shared memory decide how many blocks fit on an SM.
//
// Idea: one SGEMM kernel (sgemm_tile.cuh: 16 x 16 threads, each computing a 4 x 4 patch
// of C from shared-memory slices) built three ways: as the compiler likes it; with
// __launch_bounds__(256, 4), which tells the compiler to fit 4 blocks of 256 threads per
// SM and so caps its registers at 64 (3 blocks for Blackwell, where 64 would spill:
// sgemm.hpp); and from sgemm_maxrregcount.cu, compiled with
// --maxrregcount, a hard cap for the whole file. For each build the program reads the
// registers, local (spill) memory and shared memory from cudaFuncGetAttributes, asks
// cudaOccupancyMaxActiveBlocksPerMultiprocessor how many blocks fit, works the same
// number out by hand (occupancy_calc.hpp) to show which resource limits it, and times a
// 2048^3 product (the book's size) after checking the results on the host.
// Expect: the plain build is limited by its registers; the launch-bounds build fits one
// more block per SM with fewer registers and no spills; the build capped with
// --maxrregcount reaches full occupancy but spills to local memory (the chapter shows
// what the compiler chose on the H200).
// More occupancy is not always more speed: spilled values come back through L1 and
// memory, and a thread that keeps its data in registers does more work per load.
// Nsight Compute: launch__registers_per_thread, launch__occupancy_limit_registers,
// sm__warps_active.avg.pct_of_peak_sustained_active, and for the spills
// l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum.
// Chapter: chapters/21_occupancy.md
#include <cuda_runtime.h>

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
#include "gemm_check.hpp"
#include "inputs.hpp"
#include "kernel_image.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "output.hpp"
#include "programs.hpp"
#include "row_measure.hpp"
#include "sgemm.hpp"
#include "sgemm_tile.cuh"
#include "sm_limits.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace occupancy {
namespace {

__global__ void sgemm_plain(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                            int n, int k) {
  sgemm_tile(a, b, c, m, n, k);
}

__global__ void __launch_bounds__(kSgemmBlockThreads, launch_bounds_min_blocks(common::kCompiledArch))
    sgemm_bounded(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n,
                  int k) {
  sgemm_tile(a, b, c, m, n, k);
}

}  // namespace

dim3 sgemm_grid(int m, int n) {
  return dim3(static_cast<unsigned>((n + kSgemmTile - 1) / kSgemmTile),
              static_cast<unsigned>((m + kSgemmTile - 1) / kSgemmTile));
}

const std::vector<SgemmBuild>& all_sgemm_builds() {
  static const std::vector<SgemmBuild> builds = {SgemmBuild::plain, SgemmBuild::launch_bounds,
                                                 SgemmBuild::maxrregcount};
  return builds;
}

const char* sgemm_build_id(SgemmBuild build) {
  switch (build) {
    case SgemmBuild::plain: return "plain";
    case SgemmBuild::launch_bounds: return "launch_bounds";
    case SgemmBuild::maxrregcount: return "maxrregcount";
  }
  return "?";
}

std::string sgemm_build_title(SgemmBuild build) {
  switch (build) {
    case SgemmBuild::plain: return "no limit";
    case SgemmBuild::launch_bounds:
      return "__launch_bounds__(" + std::to_string(kSgemmBlockThreads) + ", " +
             std::to_string(sgemm_launch_bounds_min_blocks()) + ")";
    case SgemmBuild::maxrregcount: return "--maxrregcount=" + std::to_string(sgemm_maxrregcount_limit());
  }
  return "?";
}

int sgemm_launch_bounds_min_blocks() { return launch_bounds_min_blocks(common::compiled_arch_of(&sgemm_bounded)); }

const void* sgemm_kernel(SgemmBuild build) {
  switch (build) {
    case SgemmBuild::plain: return reinterpret_cast<const void*>(&sgemm_plain);
    case SgemmBuild::launch_bounds: return reinterpret_cast<const void*>(&sgemm_bounded);
    case SgemmBuild::maxrregcount: return sgemm_maxrregcount_kernel();
  }
  return nullptr;
}

void launch_sgemm(SgemmBuild build, const float* a, const float* b, float* c, int m, int n, int k,
                  cudaStream_t stream) {
  const dim3 block(kSgemmThreadsPerSide, kSgemmThreadsPerSide);
  switch (build) {
    case SgemmBuild::plain:
      sgemm_plain<<<sgemm_grid(m, n), block, 0, stream>>>(a, b, c, m, n, k);
      CUDA_CHECK_LAUNCH();
      return;
    case SgemmBuild::launch_bounds:
      sgemm_bounded<<<sgemm_grid(m, n), block, 0, stream>>>(a, b, c, m, n, k);
      CUDA_CHECK_LAUNCH();
      return;
    case SgemmBuild::maxrregcount: launch_sgemm_maxrregcount(a, b, c, m, n, k, stream); return;
  }
}

namespace {

// One square problem on the device: A and B random in [-1, 1), C poisoned before each checked run.
class Problem {
 public:
  Problem(int size, std::uint64_t seed)
      : size_(size),
        elems_(static_cast<std::size_t>(size) * size),
        a_(common::make_input(common::Pattern::mixed_signs, seed, elems_)),
        b_(common::make_input(common::Pattern::mixed_signs, seed + 1, elems_)),
        d_a_(elems_),
        d_b_(elems_),
        d_c_(elems_) {
    common::copy_to_device(d_a_.get(), a_.data(), d_a_.bytes());
    common::copy_to_device(d_b_.get(), b_.data(), d_b_.bytes());
  }

  void launch(SgemmBuild build, cudaStream_t stream) const {
    launch_sgemm(build, d_a_.get(), d_b_.get(), d_c_.get(), size_, size_, size_, stream);
  }

  // Poison C, one run, copy C back (common::poisoned_run).
  std::vector<float> run_poisoned(SgemmBuild build, cudaStream_t stream) const {
    return common::poisoned_run(
        d_c_.get(), elems_, common::poison_value(), [&] { launch(build, stream); }, stream);
  }
  // C compared with the host's product (all elements, or `positions`).
  GemmCheck check(const std::vector<float>& c, const std::vector<std::size_t>& positions) const {
    return check_gemm(a_, b_, c, size_, size_, size_, positions);
  }
  GemmCheck run_checked(SgemmBuild build, cudaStream_t stream, const std::vector<std::size_t>& positions) const {
    return check(run_poisoned(build, stream), positions);
  }

  static std::size_t device_bytes(int size) { return 3 * static_cast<std::size_t>(size) * size * sizeof(float); }

 private:
  int size_;
  std::size_t elems_;
  std::vector<float> a_;
  std::vector<float> b_;
  common::DeviceBuffer<float> d_a_;
  common::DeviceBuffer<float> d_b_;
  common::DeviceBuffer<float> d_c_;
};

std::string check_text(const GemmCheck& small, const GemmCheck& large) { return small.ok && large.ok ? "ok" : "FAIL"; }

}  // namespace

int resource_usage_main(int argc, const char* const* argv) {
  return run_on_device(
      "02_resource_usage", &parse_sgemm_options, argc, argv,
      [&](SgemmOptions& opt, const common::DeviceInfo& info, const DeviceLimits& limits) {
        common::MemoryNeed need;
        need.add("matrices", Problem::device_bytes(opt.size) + Problem::device_bytes(opt.check_size));
        need.add("L2 flush buffer", opt.warm_l2 ? 0 : common::l2_flush_bytes(info.l2_bytes));
        common::require_memory(need, "--size " + std::to_string(opt.size), info.name);

        std::cout << common::device_banner("02_resource_usage", info,
                                           {std::to_string(limits.regs_per_sm) + " registers and " +
                                                std::to_string(limits.shared_per_sm) + " bytes of shared memory per SM",
                                            "at most " + std::to_string(limits.max_warps_per_sm()) + " warps and " +
                                                std::to_string(limits.max_blocks_per_sm) + " blocks per SM"})
                  << "\n";
        std::cout << "C = A x B, " << opt.size << "^3 timed (median of up to " << opt.timing.reps << " repetitions, L2 "
                  << (opt.warm_l2 ? "warm" : "flushed before each") << "); checked on the host: all " << opt.check_size
                  << "^2 elements of a " << opt.check_size << "^3 product and " << opt.samples
                  << " sampled elements of the timed one, inputs uniform in [-1, 1) (seed " << opt.seed << ").\n";
        std::cout << "Blocks of 16 x 16 = " << kSgemmBlockThreads << " threads, each block a 64 x 64 tile of C.\n\n";

        common::CudaStream stream;
        const Problem small(opt.check_size, opt.seed);
        const Problem large(opt.size, opt.seed + 2);
        const std::vector<std::size_t> positions =
            sample_positions(opt.samples, static_cast<std::size_t>(opt.size) * opt.size, opt.seed);
        std::unique_ptr<common::L2Flusher> flusher;
        if (!opt.warm_l2) flusher = std::make_unique<common::L2Flusher>(info.l2_bytes);

        common::TablePrinter table(std::cout, {
                                                  {"build", "build", 13, 0, true},
                                                  {"limit", "limit", 25, 0, true},
                                                  {"registers", "regs", 4, 0, false},
                                                  {"local_bytes", "spill-B", 7, 0, false},
                                                  {"shared_bytes", "smem-B", 6, 0, false},
                                                  {"blocks_per_sm_api", "blk/SM", 6, 0, false},
                                                  {"limited_by", "limited by", 20, 0, true},
                                                  {"occupancy_pct", "occ-%", 5, 1, false},
                                                  {"median_us", "median-us", 9, 1, false},
                                                  {"gflops", "GFLOP/s", 7, 0, false},
                                                  {"vs_plain", "vs-plain", 8, 2, false},
                                                  {"worst_error_ratio", "err/tol", 7, 3, false},
                                                  {"check", "check", 5, 0, true},
                                              });
        table.header();
        std::vector<common::Record> records;
        bool all_ok = true;
        std::vector<std::string> notes;
        double plain_us = NAN;
        for (const SgemmBuild build : all_sgemm_builds()) {
          cudaFuncAttributes attr{};
          const KernelResources res = kernel_resources(sgemm_kernel(build), kSgemmBlockThreads, &attr);
          int api_blocks = 0;
          CUDA_CHECK(
              cudaOccupancyMaxActiveBlocksPerMultiprocessor(&api_blocks, sgemm_kernel(build), kSgemmBlockThreads, 0));
          const OccupancyResult calc = compute_occupancy(limits, res);
          if (calc.blocks_per_sm != api_blocks)
            notes.push_back(std::string(sgemm_build_id(build)) + ": the hand calculation gives " +
                            std::to_string(calc.blocks_per_sm) + " blocks per SM, the API " +
                            std::to_string(api_blocks) + ".");
          const double api_occupancy =
              static_cast<double>(api_blocks) * calc.warps_per_block / limits.max_warps_per_sm();

          // Verify before timing (common/row_measure.hpp); a build that fails is not timed.
          common::RowMeasure measure(sgemm_build_id(build));
          const GemmCheck small_check =
              small.check(measure.checked([&] { return small.run_poisoned(build, stream.get()); }), {});
          GemmCheck large_check;
          common::Timing t;
          bool timed = false;
          if (small_check.ok) {
            t = measure.timed([&] { large.launch(build, stream.get()); }, opt.timing, opt.warm_l2, stream.get(),
                              flusher.get());
            timed = true;
            large_check = large.run_checked(build, stream.get(), positions);
          }
          const bool ok = small_check.ok && large_check.ok;
          all_ok = all_ok && ok;
          const double flops = 2.0 * opt.size * static_cast<double>(opt.size) * opt.size;
          const double us = timed ? t.us.median : NAN;
          if (build == SgemmBuild::plain) plain_us = us;
          common::Record rec = {
              common::text_field("build", sgemm_build_id(build)),
              common::text_field("limit", sgemm_build_title(build)),
              common::number_field("registers", attr.numRegs),
              common::number_field("local_bytes", static_cast<double>(attr.localSizeBytes)),
              common::number_field("shared_bytes", static_cast<double>(attr.sharedSizeBytes)),
              common::number_field("max_threads_per_block", attr.maxThreadsPerBlock),
              common::number_field("block_threads", kSgemmBlockThreads),
              common::number_field("blocks_per_sm_api", api_blocks),
              common::number_field("blocks_per_sm_calc", calc.blocks_per_sm),
              common::text_field("limited_by", limiter_names(calc.limiters)),
              common::number_field("occupancy_pct", 100.0 * api_occupancy),
              common::number_field("size", opt.size),
          };
          common::append(rec, common::timing_fields(timed ? &t : nullptr));
          common::append(rec, {
                                  common::number_field("gflops", timed ? flops / (us * 1e-6) / 1e9 : NAN),
                                  common::number_field("vs_plain", plain_us / us),
                                  common::number_field("check_size", opt.check_size),
                                  common::number_field("max_abs_error",
                                                       std::fmax(small_check.max_abs_error, large_check.max_abs_error)),
                                  common::number_field("worst_error_ratio",
                                                       std::fmax(small_check.worst_ratio, large_check.worst_ratio)),
                                  common::text_field("check", check_text(small_check, large_check)),
                              });
          table.row(rec);
          if (!small_check.ok) notes.push_back(std::string(sgemm_build_id(build)) + " failed: " + small_check.detail);
          if (timed && !large_check.ok)
            notes.push_back(std::string(sgemm_build_id(build)) + " failed at " + std::to_string(opt.size) + ": " +
                            large_check.detail);
          records.push_back(rec);
        }

        std::cout
            << "\nregs, spill-B (local memory per thread) and smem-B (static shared memory per block): "
               "cudaFuncGetAttributes.\n"
               "blk/SM: cudaOccupancyMaxActiveBlocksPerMultiprocessor; 'limited by': the same count worked out by "
               "hand (occupancy/occupancy_calc.hpp).\n"
            << "occ-% = blk/SM x " << kSgemmBlockThreads / limits.warp_size << " warps / " << limits.max_warps_per_sm()
            << " warps per SM; vs-plain = the plain build's time / this one's.\n"
            << "err/tol = the worst |error| / tolerance over the checked elements (at most 1 passes), tolerance = "
               "(gamma(k+1) + gamma_double(k)) x sum |a b|.\n";
        std::cout << "The compiler's report of the same three builds: scripts/resource_usage.sh\n";
        for (const auto& note : notes) std::cout << "  " << note << "\n";

        common::Metadata meta = common::base_metadata(info);
        meta.push_back({"size", std::to_string(opt.size)});
        meta.push_back({"check_size", std::to_string(opt.check_size)});
        meta.push_back({"samples", std::to_string(opt.samples)});
        meta.push_back({"seed", std::to_string(opt.seed)});
        common::add_timing_metadata(meta, opt.timing, opt.warm_l2,
                                    "CUDA events around the kernel, median of the repetitions", false);
        return common::finish_run(opt.csv, opt.json, meta, records, all_ok, "Some builds FAILED their check.");
      });
}

}  // namespace occupancy
