#include "peer_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "measure.hpp"
#include "output.hpp"
#include "row_measure.hpp"
#include "timing.hpp"

namespace peers {
namespace {

struct Outcome {
  common::Check check;
  double result = NAN;
  double reference = NAN;
  bool timed = false;
  common::Timing timing;
};

// The checked run: poison (or zero) the output, launch once, read the output back, judge it.
Outcome run_checked(const PeerRow& row, LaunchArgs args, const common::Reference& ref, std::uint32_t bits_expected) {
  Outcome o;
  args.checked = true;
  const auto launch = [&] {
    row.launch(args);
    CUDA_CHECK_LAUNCH();
  };
  if (row.verify == Verify::float_sum) {
    const float result =
        common::poisoned_run(static_cast<float*>(args.out), common::poison_value(), launch, args.stream);
    o.result = result;
    o.reference = ref.sum;
    o.check = common::check_sum(result, ref, row.bound(args.n), args.n);
    return o;
  }
  // The bit-pattern sum accumulates into its output, so it starts from zero.
  const std::uint32_t bits = common::poisoned_run(static_cast<std::uint32_t*>(args.out), 0u, launch, args.stream);
  o.result = bits;
  o.reference = bits_expected;
  o.check.ok = bits == bits_expected;
  o.check.abs_error = bits == bits_expected ? 0.0 : NAN;
  o.check.rel_error = NAN;
  if (!o.check.ok) {
    std::ostringstream why;
    why << "the wrapping sum of the bit patterns it read is " << bits << ", but the input's is " << bits_expected
        << ": it did not read every element exactly once";
    o.check.detail = why.str();
  }
  return o;
}

common::Record make_record(const PeerRow& row, const Outcome& o, std::size_t n, const common::DeviceInfo& d) {
  using common::number_field;
  using common::text_field;
  const double us = o.timed ? o.timing.us.median : NAN;
  const double gbs = o.timed ? common::gb_per_s(static_cast<double>(n) * sizeof(float), us) : NAN;
  const bool float_sum = row.verify == Verify::float_sum;
  // The columns and their order are the reduce runner's (reduction/runner.cpp), so one
  // reader takes both files; the ratios to stage 01, the previous stage and CUB are the
  // runner's to compute and stay empty here.
  common::Record rec = {
      number_field("n", static_cast<double>(n)),
      text_field("key", row.id),
      text_field("id", row.id),
      text_field("stage", row.title),
      text_field("kind", row.kind),
      row.block ? number_field("block", row.block()) : text_field("block", "-"),
      number_field("grid", row.grid ? static_cast<double>(row.grid(n)) : NAN),
  };
  common::append(rec, common::timing_fields(o.timed ? &o.timing : nullptr));
  common::append(rec, {
                          number_field("gbs", gbs),
                          number_field("pct_peak", 100.0 * gbs / d.peak_bandwidth_gbs()),
                          number_field("speedup_vs_01", NAN),
                          number_field("vs_previous", NAN),
                          number_field("vs_cub", NAN),
                          number_field("result", float_sum ? o.result : NAN),
                          number_field("reference", float_sum ? o.reference : NAN),
                          number_field("abs_error", float_sum ? o.check.abs_error : NAN),
                          number_field("rel_error", float_sum ? o.check.rel_error : NAN),
                          number_field("tolerance", float_sum ? o.check.tolerance : NAN),
                          text_field("check", o.check.verdict()),
                          text_field("deterministic", row.deterministic ? "yes" : "no"),
                          text_field("single_launch", row.single_launch ? "yes" : "no"),
                          number_field("book_v100_ms", NAN),
                      });
  return rec;
}

std::vector<common::Column> table_columns() {
  return {
      {"n_text", "n", 7, 0, false},  {"key", "#", 24, 0, true},         {"stage", "peer", 34, 0, true},
      {"reps", "reps", 5, 0, false}, {"median_us", "median-us", 10, 1}, {"gbs", "GB/s", 7, 0, false},
      {"pct_peak", "%peak", 6, 1},   {"rel_error", "rel-error", 9, 1},  {"check", "check", 5, 0, false},
  };
}

int run(const common::MeasureOptions& opt, const PeerProgram& program) {
  const std::vector<std::uint64_t> sizes = opt.sweep.empty() ? std::vector<std::uint64_t>{opt.n} : opt.sweep;
  const std::uint64_t n_max = sizes.back();
  const common::DeviceInfo device = common::query_device(opt.device);
  const std::vector<PeerRow> rows = program.rows(device);

  std::size_t scratch = 0;
  for (const PeerRow& r : rows) scratch = std::max(scratch, r.scratch_bytes(n_max));
  const std::size_t flush_bytes = opt.warm_l2 ? 0 : common::l2_flush_bytes(device.l2_bytes);
  const common::SumInput input = common::prepare_sum_input(opt, n_max, scratch, flush_bytes, device);
  common::DeviceBuffer<unsigned char> scratch_buffer(scratch);
  common::DeviceBuffer<float> out(1);
  std::unique_ptr<common::L2Flusher> flusher;
  if (!opt.warm_l2) flusher = std::make_unique<common::L2Flusher>(device.l2_bytes, opt.flush);
  common::CudaStream stream;

  common::Metadata meta = common::base_metadata(device);
  meta.push_back({"n", opt.sweep.empty() ? std::to_string(opt.n) : "sweep"});
  meta.push_back({"pattern", opt.pattern});
  meta.push_back({"seed", std::to_string(opt.seed)});
  common::add_timing_metadata(meta, opt.timing, opt.warm_l2, "CUDA events around the call, median of the repetitions",
                              true, &opt.flush);
  meta.insert(meta.end(), program.metadata.begin(), program.metadata.end());

  std::cout << common::device_banner(program.program, device, {common::peak_detail(device)}) << "\n";
  for (const auto& [key, value] : program.metadata) std::cout << key << ": " << value << "\n";
  std::cout << sizes.size() << " size(s) from " << common::format_count(sizes.front()) << " to "
            << common::format_count(n_max) << ", " << opt.pattern << " inputs (seed " << opt.seed
            << "), median of up to " << opt.timing.reps << " repetitions per row, L2 "
            << common::l2_state(opt.warm_l2, opt.flush, true) << "\n\n";

  common::TablePrinter table(std::cout, table_columns());
  table.header();
  std::vector<common::Record> records;
  common::Tally tally;
  for (const std::uint64_t n : sizes) {
    const common::Reference ref = input.reference(n);
    const std::uint32_t bits = bit_pattern_sum(input.host.data(), n);
    for (const PeerRow& row : rows) {
      LaunchArgs args;
      args.in = input.device.get();
      args.n = n;
      args.out = out.get();
      args.scratch = scratch_buffer.get();
      args.scratch_bytes = row.scratch_bytes(n);
      args.stream = stream.get();
      common::RowMeasure measure(row.id.c_str());
      Outcome o = measure.checked([&] { return run_checked(row, args, ref, bits); });
      if (o.check.acceptable()) {
        o.timing = measure.timed(
            [&] {
              row.launch(args);
              CUDA_CHECK_LAUNCH();
            },
            opt.timing, opt.warm_l2, stream.get(), flusher.get());
        o.timed = true;
      }
      common::Record rec = make_record(row, o, n, device);
      rec.insert(rec.begin(), common::text_field("n_text", common::format_count(n)));
      table.row(rec);
      rec.erase(rec.begin());
      if (!o.check.ok) std::cout << "  " << row.id << " failed its check: " << o.check.detail << "\n";
      tally.add(o.check, o.timed ? &o.timing : nullptr);
      records.push_back(std::move(rec));
    }
    if (sizes.size() > 1) table.rule();
  }
  std::cout << "\nGB/s = n x 4 bytes / median time; %peak against the theoretical "
            << static_cast<long>(device.peak_bandwidth_gbs()) << " GB/s.\n";
  common::print_capped_note(std::cout, tally);
  return common::finish_run(opt.csv, opt.json, meta, records, tally.all_ok);
}

}  // namespace

std::uint32_t bit_pattern_sum(const float* x, std::size_t n) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &x[i], sizeof bits);
    sum += bits;
  }
  return sum;
}

int peer_main(int argc, const char* const* argv, const PeerProgram& program) {
  common::MeasureOptions opt;
  common::ArgParser args(program.program, program.summary);
  common::add_size_options(args, opt.n, opt.sweep);
  common::add_measure_options(args, opt);
  args.epilog(program.epilog +
              "Exit codes: 0 all rows verified, 1 a row failed its check or a CUDA error occurred, 2 bad usage, 3 no "
              "CUDA device.");
  return common::run_program(program.program, [&] {
    if (!args.parse(argc, argv)) return 0;
    return run(opt, program);
  });
}

}  // namespace peers
