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
#include "kernel_image.hpp"
#include "launch_shape.hpp"
#include "measure.hpp"
#include "output.hpp"
#include "prepared_stage.hpp"
#include "registry.hpp"
#include "row_measure.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace reduction {
namespace {

// Threads per block no CUDA device exceeds (every one from compute capability 2.0 on
// takes exactly this many), so --block is checked once, before a GPU is looked for.
constexpr int kMaxBlockThreads = 1024;

struct Options : common::MeasureOptions {
  std::vector<const Stage*> selected;  // --stages, resolved once
  std::optional<int> block;
  bool list_csv = false;  // --list --format csv
};

// What `reduce --list --format csv` prints: the listing's columns as a CSV with one
// metadata line, the form scripts read (results/registry.csv is a copy of it).
std::string registry_csv(const std::vector<const Stage*>& selection) {
  std::vector<common::Record> records;
  for (const Stage* s : selection)
    records.push_back({
        common::text_field("key", stage_key(*s)),
        common::text_field("id", s->id),
        common::text_field("kind", s->kind == Kind::stage ? "stage" : "baseline"),
        common::text_field("title", s->title),
        common::text_field("source", s->source),
        common::text_field("chapter", s->chapter),
    });
  return common::to_csv({{"registry", "reduction/stages.cpp, as reduce --list --format csv prints it"}}, records);
}

// One row of the table at one n: the stage, the block it runs with and its plan, made once.
struct PlannedRow {
  const Stage* stage = nullptr;
  std::size_t n = 0;
  int block = 0;
  LaunchPlan plan;
};

// Everything a run does, decided before any work: the rows in table order (every size
// of a sweep) and which of them is CUB's, measured first at each n so that every row can
// be compared with it as it is printed.
struct RunPlan {
  std::vector<std::uint64_t> sizes;
  std::vector<PlannedRow> rows;    // sizes.size() groups of the same stages
  std::size_t per_size = 0;        // rows per size
  std::optional<std::size_t> cub;  // index within a group
};

struct Row {
  const PlannedRow* planned = nullptr;
  common::Check check;
  float result = 0.0f;
  bool timed = false;
  common::Timing timing;
};

// One row's run: one checked run, then the timed repetitions (common/row_measure.hpp).
Row run_row(const PlannedRow& planned, const float* input, const common::Reference& ref, const Options& opt,
            cudaStream_t stream, common::L2Flusher* flusher) {
  const Stage& s = *planned.stage;
  PreparedStage prepared(s, planned.plan, input, planned.n, planned.block, stream);
  Row row;
  row.planned = &planned;
  common::RowMeasure measure(s.id);
  row.result = measure.checked_run(prepared.args().out, common::poison_value(), stream, s.launch, prepared.args());
  row.check = common::check_sum(row.result, ref, planned.plan.bound(), planned.n);
  // An unbounded row (no finite error bound at this n) is still timed; the table
  // says "no-bound" and shows the measured error.
  if (!row.check.acceptable() || opt.run_once) return row;
  row.timing = measure.timed([&] { prepared.launch(); }, opt.timing, opt.warm_l2, stream, flusher);
  row.timed = true;
  return row;
}

common::Record make_record(const Row& r, double reference, const common::DeviceInfo& d, double t01, double t_prev,
                           double t_cub) {
  using common::number_field;
  using common::text_field;
  const Stage& s = *r.planned->stage;
  const std::size_t n = r.planned->n;
  const common::Timing* timing = r.timed ? &r.timing : nullptr;
  const double us = r.timed ? r.timing.us.median : NAN;
  const double gbs = r.timed ? common::gb_per_s(static_cast<double>(n) * sizeof(float), us) : NAN;
  common::Record rec = {
      number_field("n", static_cast<double>(n)),
      text_field("key", stage_key(s)),
      text_field("id", s.id),
      text_field("stage", s.title),
      text_field("kind", s.kind == Kind::stage ? "stage" : "baseline"),
      s.blocks.configurable ? number_field("block", r.planned->block) : text_field("block", "-"),
      number_field("grid", r.planned->plan.grid > 0 ? static_cast<double>(r.planned->plan.grid) : NAN),
  };
  common::append(rec, common::timing_fields(timing));
  common::append(rec, {
                          number_field("gbs", gbs),
                          number_field("pct_peak", 100.0 * gbs / d.peak_bandwidth_gbs()),
                          number_field("speedup_vs_01", common::ratio(t01, us)),
                          number_field("vs_previous", common::ratio(t_prev, us)),
                          number_field("vs_cub", common::ratio(t_cub, us)),
                          number_field("result", static_cast<double>(r.result)),
                          number_field("reference", reference),
                          number_field("abs_error", r.check.abs_error),
                          number_field("rel_error", r.check.rel_error),
                          number_field("tolerance", r.check.tolerance),
                          text_field("check", r.check.verdict()),
                          text_field("deterministic", s.deterministic ? "yes" : "no"),
                          text_field("single_launch", s.single_launch ? "yes" : "no"),
                          number_field("book_v100_ms", s.book_v100_ms),
                      });
  return rec;
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

// Every row of the run with its plan, each made once. CUB joins the rows (it is what
// vs-CUB divides by) unless the run times nothing.
RunPlan plan_run(const Options& opt, const common::DeviceInfo& device) {
  RunPlan plan;
  plan.sizes = opt.sizes();
  std::vector<const Stage*> stages = opt.selected;
  const Stage* cub = find_stage("cub");
  if (!opt.run_once && cub != nullptr && std::find(stages.begin(), stages.end(), cub) == stages.end()) {
    stages.push_back(cub);
    std::sort(stages.begin(), stages.end(), [](const Stage* a, const Stage* b) { return a < b; });
  }
  plan.per_size = stages.size();
  for (std::size_t i = 0; i < stages.size(); ++i)
    if (!opt.run_once && stages[i] == cub) plan.cub = i;
  for (const std::uint64_t n : plan.sizes)
    for (const Stage* s : stages) {
      const int block = effective_block(*s, opt.block.value_or(0), device);
      plan.rows.push_back({s, n, block, s->plan(n, block, device)});
    }
  return plan;
}

int run(const Options& opt) {
  // Everything that can be refused is refused before any work or output; what needs
  // no device, before one is looked for.
  const std::vector<std::uint64_t> sizes = opt.sizes();
  const std::uint64_t n_max = *std::max_element(sizes.begin(), sizes.end());
  for (const Stage* s : opt.selected)
    if (n_max > s->max_n)
      throw common::UsageError("--n " + common::format_count(n_max) + " is larger than stage " + stage_key(*s) + " (" +
                               s->id + ") supports (at most " + std::to_string(s->max_n) + " elements).");

  const common::DeviceInfo device = common::query_device(opt.device);
  const RunPlan plan = plan_run(opt, device);
  std::size_t largest_scratch = 0;
  for (const PlannedRow& r : plan.rows) largest_scratch = std::max(largest_scratch, r.plan.scratch_bytes);
  const std::size_t flush_bytes = opt.warm_l2 || opt.run_once ? 0 : common::l2_flush_bytes(device.l2_bytes);
  const common::SumInput input = common::prepare_sum_input(opt, n_max, largest_scratch, flush_bytes, device);

  common::CudaStream stream;
  std::unique_ptr<common::L2Flusher> flusher;
  if (flush_bytes > 0) flusher = std::make_unique<common::L2Flusher>(device.l2_bytes, opt.flush);

  if (opt.run_once) {
    // For profilers: exactly one checked launch of each stage, nothing timed.
    const common::Reference ref = input.reference(opt.n);
    common::Tally tally;
    for (const PlannedRow& planned : plan.rows) {
      const Row r = run_row(planned, input.device.get(), ref, opt, stream.get(), nullptr);
      const Stage& s = *planned.stage;
      // As in the table: a row with no finite error bound is reported, not failed.
      std::cout << stage_key(s) << " " << s.id << ": sum " << r.result << " (reference " << ref.sum << ") "
                << r.check.verdict() << (r.check.ok ? "" : ": " + r.check.detail) << "\n";
      tally.add(r.check, nullptr);
    }
    return tally.all_ok ? 0 : 1;
  }

  common::Metadata meta = common::base_metadata(device);
  meta.push_back({"n", opt.sweep.empty() ? std::to_string(opt.n) : "sweep"});
  meta.push_back({"pattern", opt.pattern});
  meta.push_back({"seed", std::to_string(opt.seed)});
  common::add_timing_metadata(meta, opt.timing, opt.warm_l2,
                              "CUDA events around the launcher, median of the repetitions", true, &opt.flush);

  std::cout << common::device_banner("GPU reduction stages", device,
                                     {common::l2_detail(device), common::peak_detail(device)})
            << "\n";
  if (opt.sweep.empty())
    std::cout << "n = " << common::format_count(opt.n) << " floats ("
              << common::format_bytes(static_cast<double>(opt.n) * 4) << "), ";
  else
    std::cout << "sweep of " << sizes.size() << " sizes from " << common::format_count(sizes.front()) << " to "
              << common::format_count(sizes.back()) << ", ";
  std::cout << opt.pattern << " inputs (seed " << opt.seed << "), median of up to " << opt.timing.reps
            << " repetitions per row, L2 " << common::l2_state(opt.warm_l2, opt.flush, true) << "\n";
  // On a GPU or build without clusters, say which path stage 15 takes instead.
  for (const Stage* s : opt.selected)
    if (std::string(s->id) == "one_cluster") {
      const std::string why = shape::cluster_refusal(device, common::build_arch());
      if (!why.empty()) std::cout << "Note: " << why << "\n";
    }
  std::cout << "\n";

  const bool sweep = !opt.sweep.empty();
  common::TablePrinter table(std::cout, table_columns(sweep));
  table.header();
  std::vector<common::Record> records;
  common::Tally tally;
  for (std::size_t first = 0; first < plan.rows.size(); first += plan.per_size) {
    const std::uint64_t n = plan.rows[first].n;
    const common::Reference ref = input.reference(n);
    // CUB's row is measured ahead of its place in the table: every row is compared with it.
    std::vector<std::optional<Row>> done(plan.per_size);
    if (plan.cub)
      done[*plan.cub] =
          run_row(plan.rows[first + *plan.cub], input.device.get(), ref, opt, stream.get(), flusher.get());
    const double t_cub = plan.cub && done[*plan.cub]->timed ? done[*plan.cub]->timing.us.median : NAN;

    double t01 = NAN;
    double t_prev = NAN;
    bool baselines_started = false;
    for (std::size_t i = 0; i < plan.per_size; ++i) {
      if (!done[i]) done[i] = run_row(plan.rows[first + i], input.device.get(), ref, opt, stream.get(), flusher.get());
      const Row& r = *done[i];
      const Stage& s = *r.planned->stage;
      const double us = r.timed ? r.timing.us.median : NAN;
      if (s.kind == Kind::stage && s.number == 1) t01 = us;
      if (s.kind == Kind::baseline && !baselines_started && !sweep) {
        baselines_started = true;
        table.rule();
      }
      common::Record rec = make_record(r, ref.sum, device, t01, s.kind == Kind::stage ? t_prev : NAN, t_cub);
      if (sweep) rec.insert(rec.begin(), common::text_field("n_text", common::format_count(n)));
      table.row(rec);
      if (sweep) rec.erase(rec.begin());
      if (!r.check.ok)
        std::cout << "  " << stage_key(s) << (r.check.unbounded ? " is not verified: " : " failed its check: ")
                  << r.check.detail << "\n";
      if (s.kind == Kind::stage) t_prev = us;
      tally.add(r.check, r.timed ? &r.timing : nullptr);
      records.push_back(std::move(rec));
    }
    if (sweep) table.rule();
  }

  std::cout << "\nGB/s = n x 4 bytes / median time; %peak against the theoretical "
            << static_cast<long>(device.peak_bandwidth_gbs())
            << " GB/s; vs-CUB = CUB's median time / this row's (above 1 is faster than CUB).\n";
  if (tally.any_unbounded)
    std::cout << "no-bound: the row's summation order has no finite error bound at this n (depth x 2^-24 >= 1); it is "
                 "timed but not verified, and rel-error shows how far off it is.\n";
  common::print_capped_note(std::cout, tally);
  if (!sweep)
    std::cout << "V100-ms*: the book's published Tesla V100 times at n = 2^24, historical; they were measured with a "
                 "64 MiB memcpy inside the timed loop and are not comparable.\n";

  return common::finish_run(opt.csv, opt.json, meta, records, tally.all_ok);
}

}  // namespace

int reduce_main(int argc, const char* const* argv, const char* program, const char* preselected) {
  Options opt;
  common::ArgParser args(program, preselected != nullptr
                                      ? std::string("Verifies and times reduction stage ") + preselected +
                                            " (and CUB for comparison) on the GPU."
                                      : "Verifies and times every reduction stage and baseline on the GPU and prints "
                                        "the table.");
  common::add_size_options(args, opt.n, opt.sweep);
  common::add_selection_option(args, program, preselected,
                               {"--stages", "stage", "CUB", "build/reduction/reduce",
                                "stages to run: numbers (5, 05), ids, ranges (1-11), all, stages, baselines"},
                               [&](const std::string& v) { opt.selected = select_stages(v); });
  args.option("--block", "B", "threads per block for stages that take one (default: each stage's own)",
              [&](const std::string& v) { opt.block = static_cast<int>(common::parse_int(v, "--block", 1, 1 << 20)); });
  common::add_measure_options(args, opt);
  common::add_run_once_option(args, opt.run_once,
                              "one checked launch of each stage and nothing else (for ncu and nsys)");
  args.flag("--list", "print the selected stages (key, id, kind, title, source, chapter), tab-separated, and exit",
            &opt.list);
  args.option("--format", "FMT", "with --list: text (default, tab-separated) or csv (a header row, for scripts)",
              [&](const std::string& v) {
                if (v != "text" && v != "csv") throw common::UsageError("--format '" + v + "': write text or csv.");
                opt.list_csv = v == "csv";
              });
  args.epilog(
      "Exit codes: 0 all rows verified, 1 a row failed its check or a CUDA error occurred, 2 bad usage, 3 no CUDA "
      "device.");

  args.after_parse([&] {
    if (args.given("--format") && !opt.list)
      throw common::UsageError("--format applies to --list only: add --list or drop --format.");
  });

  try {
    if (!args.parse(argc, argv)) return 0;
    if (!args.given("--stages"))
      opt.selected = select_stages(preselected != nullptr ? std::string(preselected) + ",cub" : "all");
    if (opt.list) {
      std::cout << (opt.list_csv ? registry_csv(opt.selected) : registry_listing(opt.selected));
      return 0;
    }
    // The one check of --block, before looking for a GPU: no CUDA device takes more than
    // kMaxBlockThreads threads per block, the limit block_size_error holds a stage to.
    if (opt.block)
      for (const Stage* s : opt.selected) {
        const std::string err = block_size_error(*s, *opt.block, kMaxBlockThreads);
        if (!err.empty()) throw common::UsageError("--block " + std::to_string(*opt.block) + ": " + err);
      }
    return run(opt);
  } catch (...) {
    return common::exit_code_of_current_exception(program);
  }
}

}  // namespace reduction
