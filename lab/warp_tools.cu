// warp_tools: the warp step of a block sum written with each warp-level tool, at
// n = 1000, 2^20 and 2^24 (or --n), floats and 32-bit unsigned integers.
// Chapters: chapters/08_warp_shuffles.md, chapters/09_cooperative_groups.md.
// Run: build/lab/warp_tools [--n N] [--csv FILE]
//
//   f32-shfl, u32-shfl         stage 08's five __shfl_down_sync steps; lanes with no
//                              element hold 0
//   f32-cg-reduce, u32-...     cooperative_groups::reduce over a 32-thread tile
//   u32-reduce-add             __reduce_add_sync (redux.sync), integers only, sm_80+
//   f32-ballot, u32-ballot     lanes with no element leave the sum; __ballot_sync gives
//                              the mask of those that stay (u32: __reduce_add_sync with it)
//
// The kernels are in warp_tools.cuh. Every row is checked before it is timed (output
// poisoned first): floats against the double reference within the bound of
// common/verify.hpp, integers exactly (modulo 2^32). Then timed with CUDA events, the L2
// flushed (read) before each repetition, median.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "inputs.hpp"
#include "output.hpp"
#include "row_measure.hpp"
#include "timing.hpp"
#include "verify.hpp"
#include "warp_tools.cuh"

namespace {

constexpr const char* kProgram = "warp_tools";
constexpr std::uint64_t kMaxN = std::uint64_t{1} << 30;
constexpr std::uint64_t kSeed = 1;

struct Options {
  std::vector<std::size_t> sizes{1000, std::size_t{1} << 20, std::size_t{1} << 24};
  std::string csv;
  std::string json;
  int device = 0;
  common::TimingOptions timing;
  bool warm_l2 = false;
};

std::vector<common::Column> table_columns() {
  return {{"key", "design", 15, 0, true}, {"n_text", "n", 7, 0},          {"grid", "grid", 5, 0},
          {"median_us", "us", 9, 2},      {"gbs", "GB/s", 7, 0},          {"vs_shfl", "vs-shfl", 8, 3},
          {"rel_error", "rel-err", 9, 1}, {"check", "check", 11, 0, true}};
}

// A row's check: poison the output, run, read it back, compare.
struct Verdict {
  bool ok = false;
  double result = 0.0;
  double reference = 0.0;
  double abs_error = 0.0;
  double rel_error = NAN;
  double tolerance = 0.0;
  std::string detail;
};

struct Inputs {
  std::vector<float> f32;
  std::vector<unsigned> u32;
  common::DeviceBuffer<float> d_f32;
  common::DeviceBuffer<unsigned> d_u32;
};

int run(const Options& opt) {
  const common::DeviceInfo info = common::query_device(opt.device);
  const std::size_t max_n = *std::max_element(opt.sizes.begin(), opt.sizes.end());
  const std::size_t need = max_n * (sizeof(float) + sizeof(unsigned)) + common::l2_flush_bytes(info.l2_bytes);
  std::size_t free_bytes = 0, total_bytes = 0;
  common::device_memory(free_bytes, total_bytes);
  if (need > free_bytes)
    throw common::UsageError("--n " + common::format_count(max_n) + " needs " + std::to_string(need >> 20) +
                             " MiB of GPU memory for the float and integer inputs and the L2 flush, but " +
                             std::to_string(free_bytes >> 20) + " MiB are free: choose a smaller --n.");

  Inputs in{common::make_input(common::Pattern::uniform, kSeed, max_n), warp_tools::make_u32_input(max_n, kSeed),
            common::DeviceBuffer<float>(max_n), common::DeviceBuffer<unsigned>(max_n)};
  common::copy_to_device(in.d_f32.get(), in.f32.data(), in.d_f32.bytes());
  common::copy_to_device(in.d_u32.get(), in.u32.data(), in.d_u32.bytes());
  common::DeviceBuffer<unsigned> out(1);  // four bytes: one float or one unsigned
  common::CudaStream stream;
  common::L2Flusher flusher(info.l2_bytes);
  const std::vector<warp_tools::Design> designs = warp_tools::designs();
  // The largest grid any design plans, for the partial sums.
  std::size_t max_grid = 1;
  for (const auto& d : designs) max_grid = std::max<std::size_t>(max_grid, d.grid(max_n, info.sm_count));
  common::DeviceBuffer<unsigned> partials(max_grid);

  std::cout << kProgram << " on " << info.name << " (compute capability " << info.compute_capability() << "); block "
            << warp_tools::kBlock << ", us = median, L2 "
            << (opt.warm_l2 ? "not flushed" : "flushed (read) before each repetition") << "\n";
  common::TablePrinter table(std::cout, table_columns());
  table.header();

  std::vector<common::Record> records;
  bool all_ok = true;
  for (const std::size_t n : opt.sizes) {
    const common::Reference ref_f32 =
        common::reference_sum(std::vector<float>(in.f32.begin(), in.f32.begin() + static_cast<std::ptrdiff_t>(n)));
    const unsigned ref_u32 = warp_tools::u32_reference(in.u32, n);
    double shfl_us = NAN;  // the shfl row of the current element type
    for (const auto& d : designs) {
      const bool f32 = d.element == warp_tools::Element::f32;
      const std::size_t bytes = n * (f32 ? sizeof(float) : sizeof(unsigned));
      const unsigned grid = d.grid(n, info.sm_count);
      const void* input = f32 ? static_cast<const void*>(in.d_f32.get()) : static_cast<const void*>(in.d_u32.get());
      common::Record rec{common::text_field("key", d.key), common::text_field("element", f32 ? "f32" : "u32"),
                         common::number_field("n", static_cast<double>(n)),
                         common::number_field("block", warp_tools::kBlock), common::number_field("grid", grid)};
      if (!d.runs_here()) {
        // Not a failure: the instruction is not in this build's code for this GPU.
        for (const char* k : {"reps", "median_us", "min_us", "max_us", "gbs", "vs_shfl", "result", "reference",
                              "abs_error", "rel_error", "tolerance"})
          rec.push_back(common::number_field(k, NAN));
        rec.push_back(common::text_field("check", "needs-sm80"));
        records.push_back(rec);
        continue;
      }
      const auto launch = [&] { d.launch(input, n, out.get(), partials.get(), grid, stream.get()); };

      common::RowMeasure measure(d.key.c_str());
      const Verdict v = measure.checked([&] {
        Verdict r;
        // The poison: common's float poison, or for integers the complement of the
        // reference, which no correct sum equals.
        const unsigned poison_u32 = ~ref_u32;
        const float poison_f32 = common::poison_value();
        common::copy_to_device(out.get(), f32 ? static_cast<const void*>(&poison_f32) : &poison_u32, 4);
        launch();
        CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        if (f32) {
          float result = 0.0f;
          CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
          const common::Check c = common::check_sum(result, ref_f32, warp_tools::float_depth(n, grid), n);
          r = {c.ok, result, ref_f32.sum, c.abs_error, c.rel_error, c.tolerance, c.detail};
        } else {
          unsigned result = 0;
          CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
          r.ok = result == ref_u32;
          r.result = result;
          r.reference = ref_u32;
          r.abs_error = result == ref_u32 ? 0.0 : 1.0;  // modular sums: equal or not
          r.rel_error = NAN;
          r.tolerance = 0.0;
          if (result == poison_u32)
            r.detail = "the output still holds the poison value: nothing was written";
          else if (!r.ok)
            r.detail = "expected " + std::to_string(ref_u32) + " (exact, modulo 2^32), got " + std::to_string(result);
        }
        return r;
      });
      const common::Timing t = measure.timed(launch, opt.timing, opt.warm_l2, stream.get(), &flusher);
      if (d.key.size() > 4 && d.key.compare(4, std::string::npos, "shfl") == 0) shfl_us = t.us.median;
      if (!v.ok) all_ok = false;

      rec.push_back(common::number_field("reps", t.reps_run));
      rec.push_back(common::number_field("median_us", t.us.median));
      rec.push_back(common::number_field("min_us", t.us.min));
      rec.push_back(common::number_field("max_us", t.us.max));
      rec.push_back(common::number_field("gbs", static_cast<double>(bytes) / (t.us.median * 1e3)));
      rec.push_back(common::number_field("vs_shfl", shfl_us / t.us.median));
      rec.push_back(common::number_field("result", v.result));
      rec.push_back(common::number_field("reference", v.reference));
      rec.push_back(common::number_field("abs_error", v.abs_error));
      rec.push_back(common::number_field("rel_error", v.rel_error));
      rec.push_back(common::number_field("tolerance", v.tolerance));
      rec.push_back(common::text_field("check", v.ok ? "ok" : "FAIL"));
      records.push_back(rec);

      common::Record line = rec;
      line.push_back(common::text_field("n_text", common::format_count(n)));
      table.row(line);
      if (!v.ok) std::cout << "  FAIL " << d.key << " at n = " << common::format_count(n) << ": " << v.detail << "\n";
    }
  }

  common::Metadata meta = common::base_metadata(info);
  meta.push_back({"experiment", kProgram});
  meta.push_back({"block", std::to_string(warp_tools::kBlock)});
  meta.push_back({"seed", std::to_string(kSeed)});
  meta.push_back({"l2_flush", opt.warm_l2 ? "none" : "read"});
  return common::finish_run(opt.csv, opt.json, meta, records, all_ok);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  opt.timing.reps = 200;
  opt.timing.warmup = 3;
  common::ArgParser args(
      kProgram,
      "The warp step of a block sum with each warp-level tool: __shfl_down_sync (stage 08), "
      "cooperative_groups::reduce,\n__reduce_add_sync (32-bit integers, compute capability 8.0 or later) and "
      "__ballot_sync for warps that are only\npartly full; floats (uniform in [0, 1)) and unsigned 32-bit integers "
      "(exact, modulo 2^32), block " +
          std::to_string(warp_tools::kBlock) +
          ".\nDesigns: f32-shfl, f32-cg-reduce, f32-ballot, u32-shfl, u32-cg-reduce, u32-reduce-add, u32-ballot.\n"
          "Every row checked, then timed with CUDA events, L2 flushed (read) before each repetition, median.");
  args.option("--n", "N", "one size instead of the default 1000, 2^20 and 2^24 (1 to 2^30; 1000, 2^24, 16M)",
              [&opt](const std::string& v) { opt.sizes = {common::parse_count(v, "--n", 4, 1, kMaxN)}; });
  common::add_output_options(args, opt.csv, opt.json, "every row");
  common::add_device_option(args, opt.device);
  common::add_timing_options(args, opt.timing, opt.warm_l2, false);
  args.epilog(
      "What the designs show: chapters/08_warp_shuffles.md and chapters/09_cooperative_groups.md.\n"
      "Exit codes: 0 every row verified, 1 a check failed or a CUDA error occurred, 2 bad usage, 3 no CUDA "
      "device.");
  return common::run_program(kProgram, [&] {
    if (!args.parse(argc, argv)) return 0;
    return run(opt);
  });
}
