#include "runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check.hpp"
#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "measure.hpp"
#include "output.hpp"
#include "row_measure.hpp"
#include "scan.hpp"
#include "timing.hpp"

namespace scan {
namespace {

constexpr std::uint64_t kMaxN = std::uint64_t{1} << 31;

struct Options {
  std::vector<std::uint64_t> sizes = {std::uint64_t{1} << 24};
  std::vector<const ScanStage*> selected;
  ValueType type = ValueType::i32;
  ScanKind kind = ScanKind::inclusive;
  common::TimingOptions timing;
  bool warm_l2 = false;
  std::uint64_t seed = 1;
  int device = 0;
  std::string csv;
  std::string json;
  bool run_once = false;
  bool list = false;
  bool bounds = false;
};

__global__ void fill_words(unsigned* p, std::size_t n, unsigned word) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) p[i] = word;
}

// The run's input and output on the device, and on the host the input and room for the
// outputs that come back (allocated once, for the largest n, and not initialised).
struct Buffers {
  std::vector<unsigned> int_in;
  std::vector<float> float_in;
  std::unique_ptr<unsigned[]> int_out;
  std::unique_ptr<float[]> float_out;
  common::DeviceBuffer<unsigned> in;
  common::DeviceBuffer<unsigned> out;
};

struct Row {
  const ScanStage* stage = nullptr;
  ScanPlan plan;
  ScanVerdict verdict;
  bool timed = false;
  common::Timing timing;
};

// One row at one n: a checked run on a poisoned output, then the timed repetitions.
Row run_row(const ScanStage& s, std::size_t n, const Options& opt, Buffers& b, const common::DeviceInfo& device,
            cudaStream_t stream, common::L2Flusher* flusher) {
  Row row;
  row.stage = &s;
  row.plan = s.plan(n, opt.type, device);
  common::DeviceBuffer<unsigned char> scratch(row.plan.scratch_bytes);
  if (row.plan.zero_scratch_once && scratch.bytes() > 0) {
    CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  ScanArgs a;
  a.in = b.in.get();
  a.out = b.out.get();
  a.n = n;
  a.type = opt.type;
  a.kind = opt.kind;
  a.scratch = scratch.get();
  a.scratch_bytes = scratch.bytes();
  a.stream = stream;
  a.prefetch_tiles = row.plan.prefetch_tiles;
  a.grid = row.plan.grid;

  // The outputs come back into host memory of their own type, and are checked there.
  const bool copies = checked_as_copy(s);
  void* host_out = opt.type == ValueType::f32 && !copies ? static_cast<void*>(b.float_out.get())
                                                         : static_cast<void*>(b.int_out.get());
  common::RowMeasure measure(s.id);
  measure.checked([&] {
    fill_words<<<1024, 256, 0, stream>>>(b.out.get(), n, kPoisonBits);
    CUDA_CHECK_LAUNCH();
    launch(s, a);
    CUDA_CHECK(cudaMemcpyAsync(host_out, b.out.get(), 4 * n, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return 0;
  });
  if (copies)
    row.verdict = check_copy(b.int_in.data(), b.int_out.get(), n);
  else if (opt.type == ValueType::i32)
    row.verdict = check_int_scan(b.int_in.data(), b.int_out.get(), n, opt.kind);
  else
    row.verdict = check_float_scan(b.float_in.data(), b.float_out.get(), n, opt.kind, row.plan.depth);
  if (!row.verdict.ok || opt.run_once) return row;
  row.timing = measure.timed([&] { s.launch(a); }, opt.timing, opt.warm_l2, stream, flusher);
  row.timed = true;
  return row;
}

common::Record make_record(const Row& r, std::size_t n, const Options& opt, const common::DeviceInfo& device,
                           double copy_us, double cub_us) {
  using common::number_field;
  using common::text_field;
  const ScanStage& s = *r.stage;
  const double us = r.timed ? r.timing.us.median : NAN;
  const double gbs = common::gb_per_s(8.0 * static_cast<double>(n), us);
  common::Record rec = {
      number_field("n", static_cast<double>(n)),
      text_field("type", type_name(opt.type)),
      text_field("kind", checked_as_copy(s) ? "-" : kind_name(opt.kind)),
      text_field("key", stage_key(s)),
      text_field("id", s.id),
      text_field("title", s.title),
      number_field("grid", r.plan.grid > 0 ? r.plan.grid : NAN),
  };
  common::append(rec, common::timing_fields(r.timed ? &r.timing : nullptr));
  common::append(rec, {
                          number_field("gbs", gbs),
                          number_field("pct_peak", 100.0 * gbs / device.peak_bandwidth_gbs()),
                          number_field("of_copy", common::ratio(copy_us, us)),
                          number_field("vs_cub", common::ratio(cub_us, us)),
                          number_field("max_error_ratio", r.verdict.max_error_ratio),
                          text_field("check", r.verdict.ok ? "ok" : "FAIL"),
                          text_field("check_detail", r.verdict.detail),
                      });
  return rec;
}

std::vector<common::Column> columns(bool many_sizes) {
  std::vector<common::Column> c;
  if (many_sizes) c.push_back({"n_text", "n", 10, 0, false});
  c.insert(c.end(), {{"key", "#", 13, 0, true},
                     {"title", "stage", 27, 0, true},
                     {"reps", "reps", 5, 0, false},
                     {"median_us", "median-us", 10, 1, false},
                     {"gbs", "GB/s", 7, 0, false},
                     {"pct_peak", "%peak", 6, 1, false},
                     {"of_copy", "of-copy", 7, 2, false},
                     {"vs_cub", "vs-CUB", 6, 2, false},
                     {"check", "check", 5, 0, false}});
  return c;
}

// The rows: the selection, with the CUB row of the kind and the copy row added (what
// vs-CUB and of-copy divide by) unless nothing is timed; with --bounds, the bounds after
// them.
std::vector<const ScanStage*> rows_of(const Options& opt) {
  std::vector<const ScanStage*> rows = opt.selected;
  if (!opt.run_once)
    for (const ScanStage& s : registry())
      if (s.entry != Entry::stage && computes(s, opt.kind) && std::find(rows.begin(), rows.end(), &s) == rows.end())
        rows.push_back(&s);
  std::sort(rows.begin(), rows.end());  // the registry's order
  if (opt.bounds)
    for (const ScanStage& s : bounds()) rows.push_back(&s);
  return rows;
}

int run(const Options& opt) {
  const std::uint64_t n_max = *std::max_element(opt.sizes.begin(), opt.sizes.end());
  const std::vector<const ScanStage*> rows = rows_of(opt);
  const common::DeviceInfo device = common::query_device(opt.device);
  std::size_t scratch_max = 0;
  for (const ScanStage* s : rows) scratch_max = std::max(scratch_max, s->plan(n_max, opt.type, device).scratch_bytes);
  const std::size_t flush_bytes = opt.warm_l2 || opt.run_once ? 0 : common::l2_flush_bytes(device.l2_bytes);
  common::MemoryNeed need;
  need.add("input", 4 * n_max).add("output", 4 * n_max).add("scratch", scratch_max).add("L2 flush", flush_bytes);
  common::require_memory(need, "n = " + common::format_count(n_max), device.name);

  Buffers b;
  if (n_max >= (std::uint64_t{1} << 26)) std::cerr << "making " << common::format_count(n_max) << " inputs...\n";
  b.int_in = make_int_input(n_max, opt.seed);  // the copy row's input, and the int scans'
  if (opt.type == ValueType::f32) {
    b.float_in = make_float_input(n_max, opt.seed);
    std::memcpy(b.int_in.data(), b.float_in.data(), 4 * n_max);
  }
  b.int_out.reset(new unsigned[n_max]);  // the copy row's, and the int scans'
  if (opt.type == ValueType::f32) b.float_out.reset(new float[n_max]);
  b.in = common::DeviceBuffer<unsigned>(n_max);
  b.out = common::DeviceBuffer<unsigned>(n_max);
  common::copy_to_device(b.in.get(), b.int_in.data(), 4 * n_max);
  common::CudaStream stream;
  std::unique_ptr<common::L2Flusher> flusher;
  if (flush_bytes > 0) flusher = std::make_unique<common::L2Flusher>(device.l2_bytes);

  if (opt.run_once) {
    bool ok = true;
    for (const std::uint64_t n : opt.sizes)
      for (const ScanStage* s : rows) {
        const Row r = run_row(*s, n, opt, b, device, stream.get(), nullptr);
        std::cout << stage_key(*s) << " " << s->id << " n=" << n << ": " << (r.verdict.ok ? "ok" : "FAIL") << " ("
                  << r.verdict.detail << ")\n";
        ok = ok && r.verdict.ok;
      }
    return ok ? 0 : 1;
  }

  const bool many = opt.sizes.size() > 1;
  std::cout << common::device_banner("GPU scan stages", device,
                                     {common::l2_detail(device), common::peak_detail(device)})
            << "\n"
            << type_name(opt.type) << " " << kind_name(opt.kind) << " sums of "
            << (many ? std::to_string(opt.sizes.size()) + " sizes" : "n = " + common::format_count(n_max)) << " (seed "
            << opt.seed << "), median of up to " << opt.timing.reps << " repetitions per row, L2 "
            << common::l2_state(opt.warm_l2, common::FlushMode::read, false) << "\n\n";
  common::TablePrinter table(std::cout, columns(many));
  table.header();
  std::vector<common::Record> records;
  bool all_ok = true;
  bool any_capped = false;
  for (const std::uint64_t n : opt.sizes) {
    // The copy and CUB rows first: every row is compared with them as it is printed.
    std::vector<std::optional<Row>> done(rows.size());
    double copy_us = NAN;
    double cub_us = NAN;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i]->entry == Entry::cub || rows[i]->entry == Entry::copy) {
        done[i] = run_row(*rows[i], n, opt, b, device, stream.get(), flusher.get());
        const double us = done[i]->timed ? done[i]->timing.us.median : NAN;
        (rows[i]->entry == Entry::copy ? copy_us : cub_us) = us;
      }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!done[i]) done[i] = run_row(*rows[i], n, opt, b, device, stream.get(), flusher.get());
      const Row& r = *done[i];
      common::Record rec = make_record(r, n, opt, device, copy_us, cub_us);
      if (many) rec.insert(rec.begin(), common::text_field("n_text", common::format_count(n)));
      table.row(rec);
      if (many) rec.erase(rec.begin());
      if (!r.verdict.ok) std::cout << "  " << stage_key(*r.stage) << " failed its check: " << r.verdict.detail << "\n";
      all_ok = all_ok && r.verdict.ok;
      any_capped = any_capped || (r.timed && r.timing.capped);
      records.push_back(std::move(rec));
    }
    if (many) table.rule();
  }
  std::cout << "\nGB/s = n x 8 bytes (4 read, 4 written) / median time; %peak against the theoretical "
            << static_cast<long>(device.peak_bandwidth_gbs())
            << " GB/s; of-copy = the copy's median time / this row's (1 is the copy bound); vs-CUB = CUB's median "
               "time / this row's (above 1 is faster than CUB).\n";
  if (any_capped) std::cout << "reps marked * were cut short by the time budget per row (--budget-ms).\n";

  common::Metadata meta = common::base_metadata(device);
  meta.push_back({"program", "scan"});
  meta.push_back({"type", type_name(opt.type)});
  meta.push_back({"kind", kind_name(opt.kind)});
  meta.push_back({"seed", std::to_string(opt.seed)});
  meta.push_back({"inputs", opt.type == ValueType::i32 ? "whole 32-bit words from the seed (sums wrap)"
                                                       : "uniform in [0, 1) from the seed"});
  meta.push_back({"bytes_counted", "8 per element (4 read, 4 written)"});
  common::add_timing_metadata(meta, opt.timing, opt.warm_l2,
                              "CUDA events around the launcher, median of the repetitions");
  return common::finish_run(opt.csv, opt.json, meta, records, all_ok);
}

// --n: one size or several, comma-separated, each in the project's number forms.
std::vector<std::uint64_t> parse_sizes(const std::string& text) {
  std::vector<std::uint64_t> sizes;
  for (const std::string& item : common::split_list(text))
    sizes.push_back(common::parse_count(item, "--n", 4, 1, kMaxN));
  if (sizes.empty()) throw common::UsageError("--n '" + text + "' gives no size.");
  return sizes;
}

}  // namespace

int scan_main(int argc, const char* const* argv) {
  const char* program = "scan";
  Options opt;
  std::string stages_spec;
  common::ArgParser args(program,
                         "Verifies and times the scan stages (prefix sums of int32 or float) on the GPU, with CUB's "
                         "DeviceScan and a device-to-device copy (the bound) in the same run, and prints the table.");
  args.option("--n", "N[,N...]",
              "elements to scan (default 2^24): one size or several, comma-separated; 16777216, 2^24, 16M or 64MiB; at "
              "most 2^31",
              [&](const std::string& v) { opt.sizes = parse_sizes(v); });
  args.option("--sweep", "LO:HI[:F]", "every size from LO to HI, multiplying by F (default 2)",
              [&](const std::string& v) {
                opt.sizes = common::parse_sweep(v);
                if (opt.sizes.back() > kMaxN)
                  throw common::UsageError("--sweep goes past 2^31 elements, the largest scan here.");
              });
  args.option("--stages", "LIST",
              "rows to run: numbers (5, 05), ids, ranges (1-5), cub_inclusive, cub_exclusive, copy, all, stages, "
              "baselines (default all)",
              [&](const std::string& v) {
                select_stages(v);  // refused here, with the option's name, when it names no stage
                stages_spec = v;
              });
  args.option("--type", "T", "int (int32, wrapping; the default) or float", [&](const std::string& v) {
    if (v != "int" && v != "float") throw common::UsageError("--type '" + v + "': write int or float.");
    opt.type = v == "int" ? ValueType::i32 : ValueType::f32;
  });
  args.option("--kind", "K", "inclusive (the default) or exclusive", [&](const std::string& v) {
    if (v != "inclusive" && v != "exclusive")
      throw common::UsageError("--kind '" + v + "': write inclusive or exclusive.");
    opt.kind = v == "inclusive" ? ScanKind::inclusive : ScanKind::exclusive;
  });
  common::add_timing_options(args, opt.timing, opt.warm_l2, true);
  common::add_seed_option(args, opt.seed, "inputs");
  common::add_device_option(args, opt.device);
  common::add_output_options(args, opt.csv, opt.json, "every column");
  common::add_run_once_option(args, opt.run_once, "one checked launch of each row and nothing timed (for profilers)");
  args.flag("--list", "print the selected rows (key, id, title, source), tab-separated, and exit", &opt.list);
  args.flag("--bounds",
            "also run the bounds of scan/bounds.cu: copies through stage 06's shape (copy_stream, copy_tiles, "
            "phases_tiles), each checked as a copy",
            &opt.bounds);
  args.epilog(
      "Every row is checked on a poisoned output: int sums exactly, float sums within their order's error bound "
      "(scan/check.hpp). Exit codes: 0 all rows verified, 1 a row failed its check or a CUDA error occurred, 2 bad "
      "usage, 3 no CUDA device.");
  args.after_parse([&] {
    if (args.given("--n") && args.given("--sweep"))
      throw common::UsageError("--n and --sweep cannot be combined: give the sizes with one of them.");
  });

  return common::run_program(program, [&] {
    if (!args.parse(argc, argv)) return 0;
    opt.selected = select_stages(stages_spec.empty() ? "all" : stages_spec);
    for (const std::string& item : common::split_list(stages_spec)) {
      const ScanStage* s = find_stage(item);
      if (s != nullptr && !computes(*s, opt.kind))
        throw common::UsageError(std::string(s->id) + " computes " + kind_name(static_cast<ScanKind>(s->only_kind)) +
                                 " sums only, and --kind is " + kind_name(opt.kind) + ": drop it or change --kind.");
    }
    opt.selected.erase(std::remove_if(opt.selected.begin(), opt.selected.end(),
                                      [&](const ScanStage* s) { return !computes(*s, opt.kind); }),
                       opt.selected.end());
    if (opt.list) {
      for (const ScanStage* s : rows_of(opt))
        std::cout << stage_key(*s) << '\t' << s->id << '\t' << s->title << '\t' << s->source << '\n';
      return 0;
    }
    return run(opt);
  });
}

}  // namespace scan
