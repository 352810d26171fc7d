#include "runner.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "row_measure.hpp"

namespace access_patterns {
namespace {

__global__ void fill_words(unsigned* ptr, std::size_t words, unsigned value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride)
    ptr[i] = value;
}

std::string known_keys(const std::vector<RowSpec>& plan) {
  std::string out;
  for (const auto& r : plan) out += (out.empty() ? "" : ", ") + r.key;
  return out;
}

std::string format_mib(double bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / (1 << 20) << " MiB";
  return s.str();
}

int column_width(const std::vector<RowSpec>& rows, const std::string RowSpec::*field, int at_least) {
  std::size_t w = static_cast<std::size_t>(at_least);
  for (const auto& r : rows) w = std::max(w, (r.*field).size());
  return static_cast<int>(w);
}

}  // namespace

Verdict run_checked(Workload& work, const RowSpec& row, cudaStream_t stream) {
  work.reset(row, stream);
  work.launch(row, stream);
  return work.verify(row, stream);
}

void poison_words(void* ptr, std::size_t words, cudaStream_t stream) {
  if (words == 0) return;
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>((words + 255) / 256, 4096));
  fill_words<<<grid, 256, 0, stream>>>(static_cast<unsigned*>(ptr), words, 0xCAFEBABEu);
  CUDA_CHECK_LAUNCH();
}

std::vector<RowSpec> select_rows(const std::vector<RowSpec>& plan, const std::string& only) {
  if (only.empty()) return plan;
  const auto keys = common::split_list(only);
  if (keys.size() == 1 && keys[0] == "all") return plan;
  if (keys.empty()) throw common::UsageError("--only '" + only + "' names no row (known: " + known_keys(plan) + ").");
  for (const auto& k : keys)
    if (std::none_of(plan.begin(), plan.end(), [&](const RowSpec& r) { return r.key == k; }))
      throw common::UsageError("unknown row '" + k + "' in --only (known: " + known_keys(plan) + ", or all).");
  std::vector<RowSpec> chosen;
  for (const auto& r : plan)
    if (std::find(keys.begin(), keys.end(), r.key) != keys.end()) chosen.push_back(r);
  return chosen;
}

int run_access_program(int argc, const char* const* argv, const ProgramSpec& spec) {
  Options opt;
  opt.n = spec.default_n;
  opt.timing.reps = 50;
  opt.timing.budget_ms = 500;
  common::ArgParser args(spec.name, spec.summary);
  args.option(
      "--n", "N",
      spec.n_unit + " (default " + common::format_count(spec.default_n) + ", at most " +
          common::format_count(spec.max_n) + ")",
      [&](const std::string& v) { opt.n = common::parse_count(v, "--n", spec.n_element_bytes, 1, spec.max_n); });
  if (spec.add_options) spec.add_options(args);
  args.option("--only", "KEYS", "rows to run: keys, comma-separated, or all (the default; see --list)",
              [&](const std::string& v) { opt.only = v.empty() ? "," : v; });
  common::add_timing_options(args, opt.timing, opt.warm_l2, true);
  common::add_seed_option(args, opt.seed, "inputs");
  common::add_device_option(args, opt.device);
  common::add_output_options(args, opt.csv, opt.json, "every row");
  args.flag("--run-once", "one checked run of each row and nothing timed (for ncu, nsys, compute-sanitizer)",
            &opt.run_once);
  args.flag("--list", "print the selected rows (key, description), tab-separated, and exit", &opt.list);
  args.epilog(spec.epilog +
              "\nExit codes: 0 every row verified, 1 a row failed its check or a CUDA error occurred, 2 bad usage, "
              "3 no CUDA device.");

  return common::run_program(spec.name.c_str(), [&] {
    if (!args.parse(argc, argv)) return 0;
    if (spec.check_options) spec.check_options(opt);
    const std::vector<RowSpec> rows = select_rows(spec.plan(opt), opt.only);
    if (opt.list) {
      for (const auto& r : rows) std::cout << r.key << '\t' << r.label << '\n';
      return 0;
    }

    const common::DeviceInfo device = common::query_device(opt.device);
    const bool flush = !opt.warm_l2 && !opt.run_once;
    const std::size_t flush_bytes = flush ? common::l2_flush_bytes(device.l2_bytes) : 0;
    const std::size_t need = spec.device_bytes(opt) + flush_bytes + (std::size_t{64} << 20);
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    common::device_memory(free_bytes, total_bytes);
    if (need > free_bytes)
      throw common::UsageError("--n " + common::format_count(opt.n) + " needs " + std::to_string(need) +
                               " bytes of GPU memory (inputs and outputs " + std::to_string(spec.device_bytes(opt)) +
                               ", L2 flush buffer " + std::to_string(flush_bytes) + ", slack) but only " +
                               std::to_string(free_bytes) + " bytes are free on " + device.name + ".");

    const double peak = spec.peak_gbs ? spec.peak_gbs(device) : device.peak_bandwidth_gbs();
    const std::string peak_note = spec.peak_note.empty() ? "the theoretical DRAM bandwidth" : spec.peak_note;
    common::CudaStream stream;
    const std::unique_ptr<Workload> work = spec.prepare(opt, device);

    if (opt.run_once) {
      // For profilers and sanitizers: one checked run per row. Only the row's own
      // launch sits inside the NVTX range named after its key; the poisoning before it
      // does not.
      bool all_ok = true;
      for (const auto& r : rows) {
        common::RowMeasure measure(r.key.c_str());
        work->reset(r, stream.get());
        const Verdict v = measure.checked([&] {
          work->launch(r, stream.get());
          return work->verify(r, stream.get());
        });
        std::cout << r.key << ": " << (v.ok ? "ok" : "FAIL") << " (" << v.detail << ")\n";
        all_ok = all_ok && v.ok;
      }
      return all_ok ? 0 : 1;
    }

    std::unique_ptr<common::L2Flusher> flusher;
    if (flush) flusher = std::make_unique<common::L2Flusher>(device.l2_bytes);

    std::cout << spec.name << " on " << device.name << " (sm_" << device.cc_major << device.cc_minor << ", "
              << device.sm_count << " SMs, " << format_mib(static_cast<double>(device.l2_bytes)) << " L2, theoretical "
              << std::lround(device.peak_bandwidth_gbs()) << " GB/s), driver " << device.driver
              << "\nn = " << common::format_count(opt.n) << " " << spec.n_unit << ", seed " << opt.seed
              << ", median of up to " << opt.timing.reps << " repetitions per row, L2 "
              << (opt.warm_l2 ? "warm (not flushed)" : "flushed before each repetition") << "\n\n";

    const bool show_moved = std::any_of(rows.begin(), rows.end(), [](const RowSpec& r) { return r.moved_bytes > 0.0; });
    std::vector<common::Column> columns = {{"key", "row", column_width(rows, &RowSpec::key, 3), 0, true},
                                           {"label", "description", column_width(rows, &RowSpec::label, 11), 0, true}};
    columns.insert(columns.end(), spec.param_columns.begin(), spec.param_columns.end());
    columns.push_back({"reps", "reps", 5, 0});
    columns.push_back({"median_us", "median-us", 10, 1});
    columns.push_back({"gbs", "GB/s", 7, 0});
    columns.push_back({"pct_peak", "%peak", 6, 1});
    if (show_moved) columns.push_back({"moved_gbs", "moved-GB/s", 10, 0});
    columns.push_back({"vs_base", "vs-base", 7, 2});
    columns.push_back({"check", "check", 5, 0});
    common::TablePrinter table(std::cout, columns);
    table.header();

    std::vector<common::Record> records;
    std::vector<std::pair<std::string, double>> times;  // key -> median, for vs-base
    bool all_ok = true;
    bool any_capped = false;
    for (const auto& r : rows) {
      common::RowMeasure measure(r.key.c_str());
      work->reset(r, stream.get());
      const Verdict v = measure.checked([&] {
        work->launch(r, stream.get());
        return work->verify(r, stream.get());
      });
      common::Timing t;
      if (v.ok)
        t = measure.timed([&] { work->launch(r, stream.get()); }, opt.timing, opt.warm_l2, stream.get(), flusher.get());
      const double us = v.ok ? t.us.median : NAN;
      const double gbs = r.bytes / (us * 1e-6) / 1e9;
      const double moved = r.moved_bytes > 0.0 ? r.moved_bytes : r.bytes;
      double base_us = NAN;
      for (const auto& [key, median] : times)
        if (key == r.base) base_us = median;
      times.emplace_back(r.key, us);

      common::Record rec = {common::number_field("n", static_cast<double>(opt.n)), common::text_field("key", r.key),
                            common::text_field("label", r.label)};
      rec.insert(rec.end(), r.params.begin(), r.params.end());
      const common::Record tail = {
          common::number_field("bytes", r.bytes),
          common::number_field("moved_bytes", moved),
          common::text_field("reps", v.ok ? std::to_string(t.reps_run) + (t.capped ? "*" : "") : "-"),
          common::number_field("median_us", us),
          common::number_field("min_us", v.ok ? t.us.min : NAN),
          common::number_field("max_us", v.ok ? t.us.max : NAN),
          common::number_field("gbs", gbs),
          common::number_field("pct_peak", 100.0 * gbs / peak),
          common::number_field("moved_gbs", moved / (us * 1e-6) / 1e9),
          common::text_field("base", r.base),
          common::number_field("vs_base", base_us / us),
          common::number_field("max_rel_error", v.max_rel_error >= 0 ? v.max_rel_error : NAN),
          common::text_field("check", v.ok ? "ok" : "FAIL"),
          common::text_field("check_detail", v.detail),
      };
      rec.insert(rec.end(), tail.begin(), tail.end());
      table.row(rec);
      if (!v.ok) std::cout << "  " << r.key << " failed its check: " << v.detail << "\n";
      all_ok = all_ok && v.ok;
      any_capped = any_capped || (v.ok && t.capped);
      records.push_back(std::move(rec));
    }

    std::cout << "\nGB/s = " << spec.bytes_note << " / median time; %peak against " << peak_note << ", "
              << std::lround(peak) << " GB/s"
              << (show_moved ? "; moved-GB/s = the bytes the row's kernels actually move / median time" : "")
              << "; vs-base = the median time of the row's base row (CSV column base) / this row's (above 1: "
                 "faster).\n";
    if (any_capped) std::cout << "reps marked * were cut short by the time budget per row (--budget-ms).\n";

    common::Metadata meta = common::base_metadata(device);
    meta.push_back({"program", spec.name});
    meta.push_back({"n", std::to_string(opt.n)});
    meta.push_back({"n_counts", spec.n_unit});
    meta.push_back({"seed", std::to_string(opt.seed)});
    meta.push_back({"bytes_counted", spec.bytes_note});
    std::ostringstream peak_text;
    peak_text << peak;
    meta.push_back({"pct_peak_of", peak_note + ", " + peak_text.str() + " GB/s"});
    if (spec.metadata)
      for (auto& kv : spec.metadata(opt)) meta.push_back(kv);
    meta.push_back({"max_reps", std::to_string(opt.timing.reps)});
    meta.push_back({"min_reps", std::to_string(opt.timing.min_reps)});
    meta.push_back({"budget_ms_per_row", std::to_string(opt.timing.budget_ms)});
    meta.push_back({"l2_flushed", opt.warm_l2 ? "no" : "yes"});
    meta.push_back({"timing", "CUDA events around the row's launches, median of the repetitions"});
    return common::finish_run(opt.csv, opt.json, meta, records, all_ok);
  });
}

}  // namespace access_patterns
