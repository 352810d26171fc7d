// The histogram runner: every selected stage, and CUB, on the same input buffer, for
// each input and size; each row is one checked run (the histogram poisoned first, then
// every count compared with the host's: equal or the row fails) and the timed
// repetitions of common/row_measure.hpp (L2 flushed before each, CUDA events, median).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "measure.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "row_measure.hpp"
#include "timing.hpp"

namespace histogram {
namespace {

struct Options {
  std::vector<std::uint64_t> sizes = {std::uint64_t{1} << 26};
  std::vector<const Stage*> selected;
  std::vector<Input> inputs = {Input::uniform};
  Bins bins = Bins::b256;
  unsigned offset = 0;  // bytes past a 16-byte boundary where the input starts
  std::uint64_t seed = 1;
  int device = 0;
  common::TimingOptions timing;
  bool warm_l2 = false;
  common::FlushMode flush = common::FlushMode::read;
  bool run_once = false;
  bool list = false;
  std::string csv;
  std::string json;
};

struct Row {
  const Stage* stage = nullptr;
  std::string verdict;  // empty: every count right
  Plan plan;
  std::optional<common::Timing> timing;
};

Row run_row(const Stage& s, const void* in, std::size_t n, unsigned* hist, const std::vector<unsigned>& want,
            const Options& opt, const common::DeviceInfo& device, cudaStream_t stream, common::L2Flusher* flusher) {
  const PreparedStage prepared(s, in, n, opt.bins, hist, device, stream);
  Row row;
  row.stage = &s;
  row.plan = prepared.plan();
  common::RowMeasure measure(s.id);
  const std::vector<unsigned> got = measure.checked([&] { return prepared.checked_run(); });
  row.verdict = compare_counts(got, want);
  if (row.verdict.empty() && !opt.run_once)
    row.timing = measure.timed([&] { prepared.launch(); }, opt.timing, opt.warm_l2, stream, flusher);
  return row;
}

std::vector<common::Column> table_columns() {
  return {{"n_text", "n", 9, 0, false},
          {"input", "input", 7, 0, true},
          {"key", "#", 4, 0, true},
          {"stage", "stage", 30, 0, true},
          {"grid", "grid", 6, 0, false},
          {"reps", "reps", 5, 0, false},
          {"median_us", "median-us", 10, 1, false},
          {"gbs", "GB/s", 7, 0, false},
          {"pct_peak", "%peak", 6, 1, false},
          {"vs_previous", "vs-prev", 7, 2, false},
          {"vs_cub", "vs-CUB", 6, 2, false},
          {"check", "check", 5, 0, false}};
}

int run(const Options& opt) {
  const std::uint64_t n_max = *std::max_element(opt.sizes.begin(), opt.sizes.end());
  const std::size_t width = value_bytes(opt.bins);
  const common::DeviceInfo device = common::query_device(opt.device);

  // Every row's scratch, planned once per size, and refused before any work when the GPU
  // cannot hold the input, the largest scratch and the flush buffer together.
  std::vector<const Stage*> stages = opt.selected;
  const Stage* cub = find_stage("cub");
  if (!opt.run_once && std::find(stages.begin(), stages.end(), cub) == stages.end()) stages.push_back(cub);
  std::size_t scratch = 0;
  for (const Stage* s : stages)
    for (const std::uint64_t n : opt.sizes) scratch = std::max(scratch, s->plan(n, opt.bins, device).scratch_bytes);
  const std::size_t flush_bytes = opt.warm_l2 || opt.run_once ? 0 : common::l2_flush_bytes(device.l2_bytes);
  common::MemoryNeed need;
  need.add("input", n_max * width + 16).add("scratch", scratch).add("L2 flush buffer", flush_bytes);
  common::require_memory(need, "n = " + common::format_count(n_max) + " values", device.name);

  common::CudaStream stream;
  std::unique_ptr<common::L2Flusher> flusher;
  if (flush_bytes > 0) flusher = std::make_unique<common::L2Flusher>(device.l2_bytes, opt.flush);
  common::DeviceBuffer<unsigned char> input(n_max * width + 16);
  common::DeviceBuffer<unsigned> hist(bin_count(opt.bins));
  const void* in = input.get() + opt.offset;

  common::Metadata meta = common::base_metadata(device);
  meta.push_back({"program", "histogram"});
  meta.push_back({"bins", std::to_string(bin_count(opt.bins))});
  meta.push_back({"values", opt.bins == Bins::b256 ? "bytes, bin = value" : "16-bit values, bin = value >> 4"});
  meta.push_back({"offset_bytes", std::to_string(opt.offset)});
  meta.push_back({"seed", std::to_string(opt.seed)});
  common::add_timing_metadata(meta, opt.timing, opt.warm_l2,
                              "CUDA events around the launcher, median of the repetitions", true, &opt.flush);
  meta.push_back({"bytes_counted", "n x value size (the input read once)"});

  if (!opt.run_once) {
    std::cout << common::device_banner("Histogram stages", device,
                                       {common::l2_detail(device), common::peak_detail(device)})
              << "\n"
              << bin_count(opt.bins) << " bins of " << (opt.bins == Bins::b256 ? "bytes" : "16-bit values (bin v >> 4)")
              << ", input " << opt.offset << " bytes past a 16-byte boundary, seed " << opt.seed << ", median of up to "
              << opt.timing.reps << " repetitions per row, L2 " << common::l2_state(opt.warm_l2, opt.flush, true)
              << "\n\n";
  }
  common::TablePrinter table(std::cout, table_columns());
  if (!opt.run_once) table.header();
  std::vector<common::Record> records;
  bool all_ok = true;
  bool any_capped = false;
  for (const Input input_kind : opt.inputs) {
    if (n_max >= (std::uint64_t{1} << 26)) std::cerr << "making the " << input_name(input_kind) << " input...\n";
    const std::vector<unsigned char> values = make_values(input_kind, opt.bins, opt.seed, n_max);
    common::copy_to_device(input.get() + opt.offset, values.data(), values.size());
    std::vector<unsigned> want(bin_count(opt.bins), 0);
    std::uint64_t counted = 0;
    for (const std::uint64_t n : opt.sizes) {
      count_values(values, opt.bins, counted, n, want);  // sizes ascend: the reference grows
      counted = n;
      // CUB first: every row is compared with it as it is printed.
      std::vector<Row> rows;
      double t_cub = NAN;
      if (!opt.run_once) {
        rows.push_back(run_row(*cub, in, n, hist.get(), want, opt, device, stream.get(), flusher.get()));
        if (rows.back().timing) t_cub = rows.back().timing->us.median;
      }
      double t_prev = NAN;
      for (const Stage* s : opt.selected) {
        if (s == cub && !opt.run_once) continue;
        rows.insert(rows.end() - (opt.run_once ? 0 : 1),
                    run_row(*s, in, n, hist.get(), want, opt, device, stream.get(), flusher.get()));
      }
      for (const Row& r : rows) {
        const bool ok = r.verdict.empty();
        all_ok = all_ok && ok;
        if (opt.run_once) {
          std::cout << stage_key(*r.stage) << " " << r.stage->id << " n = " << n << " " << input_name(input_kind)
                    << ": " << (ok ? "ok" : "FAIL: " + r.verdict) << "\n";
          continue;
        }
        const double us = r.timing ? r.timing->us.median : NAN;
        const double bytes = static_cast<double>(n * width);
        const double gbs = common::gb_per_s(bytes, us);
        any_capped = any_capped || (r.timing && r.timing->capped);
        common::Record rec = {
            common::number_field("n", static_cast<double>(n)),
            common::number_field("bytes", bytes),
            common::number_field("bins", bin_count(opt.bins)),
            common::text_field("input", input_name(input_kind)),
            common::text_field("key", stage_key(*r.stage)),
            common::text_field("id", r.stage->id),
            common::text_field("stage", r.stage->title),
            common::text_field("kind", r.stage->kind == Kind::stage ? "stage" : "baseline"),
            common::number_field("grid", r.plan.grid > 0 ? static_cast<double>(r.plan.grid) : NAN),
            common::number_field("block", r.plan.block > 0 ? static_cast<double>(r.plan.block) : NAN),
        };
        common::append(rec, common::timing_fields(r.timing ? &*r.timing : nullptr));
        common::append(rec, {
                                common::number_field("gbs", gbs),
                                common::number_field("pct_peak", 100.0 * gbs / device.peak_bandwidth_gbs()),
                                common::number_field("vs_previous",
                                                     r.stage->kind == Kind::stage ? common::ratio(t_prev, us) : NAN),
                                common::number_field("vs_cub", common::ratio(t_cub, us)),
                                common::text_field("single_launch", r.stage->single_launch ? "yes" : "no"),
                                common::text_field("check", ok ? "ok" : "FAIL"),
                                common::text_field("check_detail", ok ? "every count exact" : r.verdict),
                            });
        if (r.stage->kind == Kind::stage) t_prev = us;
        rec.insert(rec.begin(), common::text_field("n_text", common::format_count(n)));
        table.row(rec);
        rec.erase(rec.begin());
        if (!ok) std::cout << "  " << stage_key(*r.stage) << " failed its check: " << r.verdict << "\n";
        records.push_back(std::move(rec));
      }
    }
    if (!opt.run_once) table.rule();
  }
  if (opt.run_once) return all_ok ? 0 : 1;
  std::cout << "\nGB/s = n x " << width << " byte" << (width > 1 ? "s" : "")
            << " / median time; %peak against the theoretical " << std::lround(device.peak_bandwidth_gbs())
            << " GB/s; vs-CUB = CUB's median time / this row's (above 1 is faster than CUB).\n";
  if (any_capped) std::cout << "reps marked * were cut short by the time budget per row (--budget-ms).\n";
  return common::finish_run(opt.csv, opt.json, meta, records, all_ok);
}

std::vector<std::uint64_t> parse_sizes(const std::string& text) {
  std::vector<std::uint64_t> sizes;
  for (const auto& item : common::split_list(text)) sizes.push_back(common::parse_count(item, "--n", 0, 1, kMaxValues));
  if (sizes.empty()) throw common::UsageError("--n '" + text + "' names no size: write one, such as 2^26.");
  return sizes;
}

}  // namespace

int histogram_main(int argc, const char* const* argv) {
  Options opt;
  opt.timing.reps = 50;
  opt.timing.budget_ms = 500;
  std::vector<std::uint64_t> sweep;
  common::ArgParser args("histogram",
                         "Verifies and times every histogram stage, and CUB's HistogramEven on the same buffer, on "
                         "the GPU, and prints the table.");
  args.option("--n", "N[,N...]",
              "values to count (default 2^26), or several sizes, comma-separated: 67108864, 2^26, 64M, 1000003",
              [&](const std::string& v) { opt.sizes = parse_sizes(v); });
  args.option("--sweep", "LO:HI[:F]", "every size from LO to HI, multiplying by F (default 2)",
              [&](const std::string& v) {
                sweep = common::parse_sweep(v);
                if (sweep.back() > kMaxValues)
                  throw common::UsageError("--sweep '" + v + "' goes past " + std::to_string(kMaxValues) +
                                           " values, where a 32-bit count could overflow.");
              });
  args.option("--stages", "LIST", "stages to run: numbers (5, 05), ids, ranges (3-6), all, stages, baselines",
              [&](const std::string& v) { opt.selected = select_stages(v); });
  args.option("--input", "LIST", "uniform (default), skewed, one, or several, comma-separated",
              [&](const std::string& v) { opt.inputs = parse_inputs(v); });
  args.option("--bins", "B", "256 (bytes, default) or 4096 (16-bit values, bin v >> 4)",
              [&](const std::string& v) { opt.bins = parse_bins(v); });
  args.option(
      "--offset", "BYTES", "start the input this many bytes past a 16-byte boundary, 0 to 15 (default 0)",
      [&](const std::string& v) { opt.offset = static_cast<unsigned>(common::parse_int(v, "--offset", 0, 15)); });
  common::add_timing_options(args, opt.timing, opt.warm_l2, true);
  common::add_seed_option(args, opt.seed, "inputs");
  common::add_device_option(args, opt.device);
  common::add_output_options(args, opt.csv, opt.json, "every row");
  common::add_flush_option(args, opt.flush);
  common::add_run_once_option(args, opt.run_once,
                              "one checked launch of each stage and nothing timed (for sanitizers)");
  args.flag("--list", "print the selected stages (key, id, kind, title, source, chapter), tab-separated, and exit",
            &opt.list);
  args.epilog(
      "n counts values: bytes for 256 bins, 16-bit values for 4096 bins; at most 2^32 - 1, so that no 32-bit count "
      "can overflow. Inputs: uniform values; skewed floor(2^w u^8) for w-bit values (bin 0 holds half of the bytes); "
      "one (every value in "
      "bin 42). CUB is always timed too (vs-CUB).\n"
      "Exit codes: 0 all rows verified, 1 a row failed its check or a CUDA error occurred, 2 bad usage, 3 no CUDA "
      "device.");
  args.after_parse([&] {
    if (args.given("--sweep") && args.given("--n"))
      throw common::UsageError("--n and --sweep cannot be combined: drop one of them.");
    if (!sweep.empty()) opt.sizes = sweep;
    std::sort(opt.sizes.begin(), opt.sizes.end());
    opt.sizes.erase(std::unique(opt.sizes.begin(), opt.sizes.end()), opt.sizes.end());
    if (opt.bins == Bins::b4096 && opt.offset % 2 != 0)
      throw common::UsageError("--offset " + std::to_string(opt.offset) +
                               " would split 16-bit values: with --bins 4096 write an even offset.");
  });
  return common::run_program("histogram", [&] {
    if (!args.parse(argc, argv)) return 0;
    if (!args.given("--stages")) opt.selected = select_stages("all");
    if (opt.list) {
      std::cout << registry_listing(opt.selected);
      return 0;
    }
    return run(opt);
  });
}

}  // namespace histogram
