#include "runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "inputs.hpp"
#include "output.hpp"
#include "prepared_stage.hpp"
#include "registry.hpp"
#include "row_measure.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

struct Options {
  std::uint64_t n = std::uint64_t{1} << 24;
  std::vector<std::uint64_t> sweep;  // non-empty: --sweep sizes
  std::string stages;
  std::optional<int> block;
  std::string csv;
  std::string json;
  bool warm_l2 = false;
  common::FlushMode flush = common::FlushMode::read;
  bool list = false;
  bool run_once = false;
  std::string pattern = "uniform";
  std::uint64_t seed = 1;
  int device = 0;
  common::TimingOptions timing;
};

struct Row {
  const Stage* stage = nullptr;
  int block = 0;
  LaunchPlan plan;
  common::Check check;
  float result = 0.0f;
  bool timed = false;
  common::Timing timing;
};

// One row's run: plan, scratch, one checked run, then the timed repetitions.
class StageRunner {
 public:
  StageRunner(const common::DeviceInfo& device, const Options& options, cudaStream_t stream, common::L2Flusher* flusher)
      : device_(device), options_(options), stream_(stream), flusher_(flusher) {}

  LaunchPlan plan_for(const Stage& s, std::size_t n) const {
    return s.plan(n, effective_block(s, options_.block.value_or(0), device_), device_);
  }

  Row run(const Stage& s, const float* input, std::size_t n, const common::Reference& ref) {
    PreparedStage prepared(s, input, n, options_.block.value_or(0), device_, stream_);
    Row row;
    row.stage = &s;
    row.block = prepared.block();
    row.plan = prepared.plan();

    common::RowMeasure measure(s.id);
    row.result = measure.checked([&] { return prepared.run_checked(); });
    row.check = common::check_sum(row.result, ref, row.plan.bound(), n);
    // An unbounded row (no finite error bound at this n) is still timed; the table
    // says "no-bound" and shows the measured error.
    if (!row.check.acceptable() || options_.run_once) return row;
    row.timing = measure.timed([&] { prepared.launch(); }, options_.timing, options_.warm_l2, stream_, flusher_);
    row.timed = true;
    return row;
  }

 private:
  const common::DeviceInfo& device_;
  const Options& options_;
  cudaStream_t stream_;
  common::L2Flusher* flusher_;
};

double ratio(double num, double den) { return (den > 0.0 && num > 0.0) ? num / den : NAN; }

common::Record make_record(const Row& r, std::size_t n, double reference, const common::DeviceInfo& d, double t01,
                           double t_prev, double t_cub) {
  using common::number_field;
  using common::text_field;
  const Stage& s = *r.stage;
  const double us = r.timed ? r.timing.us.median : NAN;
  const double gbs = r.timed ? static_cast<double>(n) * sizeof(float) / (us * 1e-6) / 1e9 : NAN;
  std::string reps = "-";
  if (r.timed) reps = std::to_string(r.timing.reps_run) + (r.timing.capped ? "*" : "");
  std::string check = r.check.verdict();
  return {
      number_field("n", static_cast<double>(n)),
      text_field("key", stage_key(s)),
      text_field("id", s.id),
      text_field("stage", s.title),
      text_field("kind", s.kind == Kind::stage ? "stage" : "baseline"),
      s.blocks.configurable ? number_field("block", r.block) : text_field("block", "-"),
      number_field("grid", r.plan.grid > 0 ? static_cast<double>(r.plan.grid) : NAN),
      text_field("reps", reps),
      number_field("median_us", us),
      number_field("min_us", r.timed ? r.timing.us.min : NAN),
      number_field("max_us", r.timed ? r.timing.us.max : NAN),
      number_field("gbs", gbs),
      number_field("pct_peak", 100.0 * gbs / d.peak_bandwidth_gbs()),
      number_field("speedup_vs_01", ratio(t01, us)),
      number_field("vs_previous", ratio(t_prev, us)),
      number_field("vs_cub", ratio(t_cub, us)),
      number_field("result", static_cast<double>(r.result)),
      number_field("reference", reference),
      number_field("abs_error", r.check.abs_error),
      number_field("rel_error", r.check.rel_error),
      number_field("tolerance", r.check.tolerance),
      text_field("check", check),
      text_field("deterministic", s.deterministic ? "yes" : "no"),
      text_field("single_launch", s.single_launch ? "yes" : "no"),
      number_field("book_v100_ms", s.book_v100_ms),
  };
}

std::vector<common::Column> table_columns(bool sweep) {
  std::vector<common::Column> cols;
  if (sweep) cols.push_back({"n_text", "n", 7, 0, false});
  cols.insert(cols.end(), {
                              {"key", "#", 18, 0, true},
                              {"stage", "stage", 26, 0, true},
                              {"block", "block", 5, 0, false},
                              {"reps", "reps", 5, 0, false},
                              {"median_us", "median-us", 10, 1, false},
                              {"gbs", "GB/s", 7, 0, false},
                              {"pct_peak", "%peak", 6, 1, false},
                              {"speedup_vs_01", "vs-01", 7, 1, false},
                              {"vs_previous", "vs-prev", 7, 2, false},
                              {"vs_cub", "vs-CUB", 6, 2, false},
                              {"rel_error", "rel-error", 9, 1, false},
                              {"check", "check", 5, 0, false},
                          });
  if (!sweep) cols.push_back({"book_v100_ms", "V100-ms*", 8, 3, false});
  return cols;
}

std::string format_bytes(double bytes) {
  std::ostringstream s;
  s.precision(3);
  if (bytes >= 1 << 30)
    s << bytes / (1 << 30) << " GiB";
  else if (bytes >= 1 << 20)
    s << bytes / (1 << 20) << " MiB";
  else if (bytes >= 1 << 10)
    s << bytes / (1 << 10) << " KiB";
  else
    s << bytes << " B";
  return s.str();
}

int run(const Options& opt, std::vector<const Stage*> selected) {
  // Everything that can be refused is refused before any work or output; what needs
  // no device, before one is looked for.
  const std::vector<std::uint64_t> sizes = opt.sweep.empty() ? std::vector<std::uint64_t>{opt.n} : opt.sweep;
  const std::uint64_t n_max = *std::max_element(sizes.begin(), sizes.end());
  for (const Stage* s : selected)
    if (n_max > s->max_n)
      throw common::UsageError("--n " + common::format_count(n_max) + " is larger than stage " + stage_key(*s) + " (" +
                               s->id + ") supports (at most " + std::to_string(s->max_n) + " elements).");

  const common::DeviceInfo device = common::query_device(opt.device);
  for (const Stage* s : selected) {
    if (opt.block && s->blocks.configurable) {
      const std::string err = block_size_error(*s, *opt.block, device.max_threads_per_block);
      if (!err.empty()) throw common::UsageError("--block " + std::to_string(*opt.block) + ": " + err);
    }
  }

  // Every table carries CUB's row, timed in the same run: it is what vs-CUB divides by.
  const Stage* cub = find_stage("cub");
  const bool compare_cub = !opt.run_once && cub != nullptr;
  if (compare_cub && std::find(selected.begin(), selected.end(), cub) == selected.end()) {
    selected.push_back(cub);
    std::sort(selected.begin(), selected.end(), [](const Stage* a, const Stage* b) { return a < b; });
  }

  common::CudaStream stream;
  StageRunner probe(device, opt, stream.get(), nullptr);
  std::size_t largest_scratch = 0;
  for (const Stage* s : selected) largest_scratch = std::max(largest_scratch, probe.plan_for(*s, n_max).scratch_bytes);
  MemoryNeed need;
  need.input = n_max * sizeof(float);
  need.scratch = largest_scratch;
  need.flush = opt.warm_l2 || opt.run_once ? 0 : common::l2_flush_bytes(device.l2_bytes);
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  common::device_memory(free_bytes, total_bytes);
  const std::string shortfall = memory_shortfall(n_max, need, free_bytes, device.name);
  if (!shortfall.empty()) throw common::UsageError(shortfall);

  const common::Pattern pattern = common::parse_pattern(opt.pattern);
  if (n_max >= (std::uint64_t{1} << 26))
    std::cerr << "generating " << common::format_count(n_max) << " " << opt.pattern << " floats (seed " << opt.seed
              << ") and their double-precision reference..." << std::endl;
  const std::vector<float> host = common::make_input(pattern, opt.seed, n_max);
  common::DeviceBuffer<float> input(n_max);
  common::copy_to_device(input.get(), host.data(), input.bytes());

  std::unique_ptr<common::L2Flusher> flusher;
  if (need.flush > 0) flusher = std::make_unique<common::L2Flusher>(device.l2_bytes, opt.flush);
  StageRunner runner(device, opt, stream.get(), flusher.get());

  common::Metadata meta = common::base_metadata(device);
  meta.push_back({"n", opt.sweep.empty() ? std::to_string(opt.n) : "sweep"});
  meta.push_back({"pattern", opt.pattern});
  meta.push_back({"seed", std::to_string(opt.seed)});
  meta.push_back({"max_reps", std::to_string(opt.timing.reps)});
  meta.push_back({"min_reps", std::to_string(opt.timing.min_reps)});
  meta.push_back({"budget_ms_per_row", std::to_string(opt.timing.budget_ms)});
  meta.push_back({"l2_flushed", opt.warm_l2 ? "no" : "yes"});
  meta.push_back({"l2_flush", opt.warm_l2 ? "none" : common::flush_mode_name(opt.flush)});
  meta.push_back({"timing", "CUDA events around the launcher, median of the repetitions"});

  if (opt.run_once) {
    // For profilers: exactly one checked launch of each stage, nothing timed.
    const std::size_t n = opt.n;
    const std::vector<float> prefix(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(n));
    const common::Reference ref = common::reference_sum(prefix);
    bool all_ok = true;
    for (const Stage* s : selected) {
      const Row r = runner.run(*s, input.get(), n, ref);
      // As in the table: a row with no finite error bound is reported, not failed.
      std::cout << stage_key(*s) << " " << s->id << ": sum " << r.result << " (reference " << ref.sum << ") "
                << r.check.verdict() << (r.check.ok ? "" : ": " + r.check.detail) << "\n";
      all_ok = all_ok && r.check.acceptable();
    }
    return all_ok ? 0 : 1;
  }

  std::cout << "GPU reduction stages on " << device.name << " (sm_" << device.cc_major << device.cc_minor << ", "
            << device.sm_count << " SMs, " << format_bytes(static_cast<double>(device.l2_bytes)) << " L2, theoretical "
            << static_cast<long>(device.peak_bandwidth_gbs()) << " GB/s), driver " << device.driver << "\n";
  if (opt.sweep.empty())
    std::cout << "n = " << common::format_count(opt.n) << " floats (" << format_bytes(static_cast<double>(opt.n) * 4)
              << "), ";
  else
    std::cout << "sweep of " << sizes.size() << " sizes from " << common::format_count(sizes.front()) << " to "
              << common::format_count(sizes.back()) << ", ";
  std::cout << opt.pattern << " inputs (seed " << opt.seed << "), median of up to " << opt.timing.reps
            << " repetitions per row, L2 "
            << (opt.warm_l2                            ? "warm (not flushed)"
                : opt.flush == common::FlushMode::read ? "flushed before each repetition (read flush)"
                                                       : "flushed before each repetition (write flush)")
            << "\n\n";

  const bool sweep = !opt.sweep.empty();
  common::TablePrinter table(std::cout, table_columns(sweep));
  table.header();
  std::vector<common::Record> records;
  bool all_ok = true;
  bool any_capped = false;
  bool any_unbounded = false;
  for (const std::uint64_t n : sizes) {
    const std::vector<float> prefix =
        n == n_max ? std::vector<float>()
                   : std::vector<float>(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(n));
    const common::Reference ref = common::reference_sum(n == n_max ? host : prefix);

    // CUB first, so every row can be compared with it as it is printed.
    std::optional<Row> cub_row;
    if (compare_cub) cub_row = runner.run(*cub, input.get(), n, ref);
    const double t_cub = cub_row && cub_row->timed ? cub_row->timing.us.median : NAN;

    double t01 = NAN;
    double t_prev = NAN;
    bool baselines_started = false;
    for (const Stage* s : selected) {
      const Row r = (s == cub && cub_row) ? *cub_row : runner.run(*s, input.get(), n, ref);
      const double us = r.timed ? r.timing.us.median : NAN;
      if (s->kind == Kind::stage && s->number == 1) t01 = us;
      if (s->kind == Kind::baseline && !baselines_started && !sweep) {
        baselines_started = true;
        table.rule();
      }
      common::Record rec = make_record(r, n, ref.sum, device, t01, s->kind == Kind::stage ? t_prev : NAN, t_cub);
      if (sweep) rec.insert(rec.begin(), common::text_field("n_text", common::format_count(n)));
      table.row(rec);
      if (sweep) rec.erase(rec.begin());
      if (!r.check.ok)
        std::cout << "  " << stage_key(*s) << (r.check.unbounded ? " is not verified: " : " failed its check: ")
                  << r.check.detail << "\n";
      if (s->kind == Kind::stage) t_prev = us;
      all_ok = all_ok && r.check.acceptable();
      any_unbounded = any_unbounded || r.check.unbounded;
      any_capped = any_capped || (r.timed && r.timing.capped);
      records.push_back(std::move(rec));
    }
    if (sweep) table.rule();
  }

  std::cout << "\nGB/s = n x 4 bytes / median time; %peak against the theoretical "
            << static_cast<long>(device.peak_bandwidth_gbs())
            << " GB/s; vs-CUB = CUB's median time / this row's (above 1 is faster than CUB).\n";
  if (any_unbounded)
    std::cout << "no-bound: the row's summation order has no finite error bound at this n (depth x 2^-24 >= 1); it is "
                 "timed but not verified, and rel-error shows how far off it is.\n";
  if (any_capped) std::cout << "reps marked * were cut short by the time budget per row (--budget-ms).\n";
  if (!sweep)
    std::cout << "V100-ms*: the book's published Tesla V100 times at n = 2^24, historical; they were measured with a "
                 "64 MiB memcpy inside the timed loop and are not comparable.\n";

  return common::finish_run(opt.csv, opt.json, meta, records, all_ok);
}

}  // namespace

std::string memory_shortfall(std::uint64_t n, const MemoryNeed& need, std::size_t free_bytes,
                             const std::string& device) {
  if (need.total() <= free_bytes) return "";
  return "n = " + common::format_count(n) + " needs " + std::to_string(need.total()) + " bytes of GPU memory (input " +
         std::to_string(need.input) + ", scratch " + std::to_string(need.scratch) + ", L2 flush buffer " +
         std::to_string(need.flush) + ", output and slack 1048576) but only " + std::to_string(free_bytes) +
         " bytes are free on " + device + ".";
}

int reduce_main(int argc, const char* const* argv, const char* program, const char* preselected) {
  Options opt;
  opt.stages = preselected != nullptr ? std::string(preselected) + ",cub" : "all";
  common::ArgParser args(program, preselected != nullptr
                                      ? std::string("Verifies and times reduction stage ") + preselected +
                                            " (and CUB for comparison) on the GPU."
                                      : "Verifies and times every reduction stage and baseline on the GPU and prints "
                                        "the table.");
  common::add_size_options(args, opt.n, opt.sweep);
  if (preselected != nullptr)
    args.refuse("--stages", std::string(program) + " runs stage " + preselected +
                                " (and CUB) only, so it takes no --stages: run build/reduction/reduce --stages LIST "
                                "for other stages.");
  else
    args.option("--stages", "LIST", "stages to run: numbers (5, 05), ids, ranges (1-11), all, stages, baselines",
                [&](const std::string& v) {
                  select_stages(v);  // validate now
                  opt.stages = v;
                });
  args.option("--block", "B", "threads per block for stages that take one (default: each stage's own)",
              [&](const std::string& v) { opt.block = static_cast<int>(common::parse_int(v, "--block", 1, 1 << 20)); });
  common::add_timing_options(args, opt.timing, opt.warm_l2, true);
  common::add_pattern_option(args, opt.pattern);
  common::add_seed_option(args, opt.seed, "input");
  common::add_device_option(args, opt.device);
  common::add_output_options(args, opt.csv, opt.json, "every column");
  common::add_flush_option(args, opt.flush);
  args.flag("--run-once", "one checked launch of each stage and nothing else (for ncu and nsys)", &opt.run_once);
  args.flag("--list", "print the selected stages (key, id, kind, title, source, chapter), tab-separated, and exit",
            &opt.list);
  args.epilog(
      "Exit codes: 0 all rows verified, 1 a row failed its check or a CUDA error occurred, 2 bad usage, 3 no CUDA "
      "device.");

  // Combinations that cannot mean anything are refused once every option is read.
  args.after_parse([&] {
    if (opt.run_once && args.given("--sweep")) throw common::UsageError("--sweep and --run-once cannot be combined.");
    if (opt.run_once && (args.given("--csv") || args.given("--json")))
      throw common::UsageError(std::string("--run-once times nothing, so there is no table to write: drop ") +
                               (args.given("--csv") ? "--csv" : "--json") + " or --run-once.");
  });

  return common::run_program(program, [&] {
    if (!args.parse(argc, argv)) return 0;
    if (opt.list) {
      std::cout << registry_listing(select_stages(opt.stages));
      return 0;
    }
    const std::vector<const Stage*> selected = select_stages(opt.stages);
    // Refuse impossible block sizes before looking for a GPU: no CUDA device takes
    // more than 1024 threads per block. run() checks the actual device's limit.
    if (opt.block)
      for (const Stage* s : selected) {
        const std::string err = block_size_error(*s, *opt.block, 1024);
        if (!err.empty()) throw common::UsageError("--block " + std::to_string(*opt.block) + ": " + err);
      }
    return run(opt, selected);
  });
}

}  // namespace reduction
