#include "dot_runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "dot_inputs.hpp"
#include "measure.hpp"
#include "output.hpp"
#include "prepared_variant.hpp"
#include "row_measure.hpp"
#include "timing.hpp"
#include "tolerance.hpp"
#include "variants.hpp"

namespace mixed_precision {
namespace {

struct Options : common::MeasureOptions {
  std::string variants = "all";
};

// One element type's vectors on the device and their reference.
struct Inputs {
  DeviceVectors vectors;
  DotReference ref;
};

struct Row {
  const Variant* variant = nullptr;
  unsigned grid = 0;
  std::size_t depth = 0;
  DotOutput output;
  common::Check check;
  bool timed = false;
  common::Timing timing;
};

// The float inputs of dot_inputs.hpp, before rounding to a type.
const char* const kFloatInputs = "magnitude uniform in [2^-7, 2^-6), negative with probability 1/4";

std::string input_description(ElementType t, int int8_magnitude) {
  if (t == ElementType::i8)
    return "non-zero whole numbers uniform in [-" + std::to_string(int8_magnitude) + ", " +
           std::to_string(int8_magnitude) + "]";
  return std::string(kFloatInputs) + ", rounded to " + element_name(t);
}

class VariantRunner {
 public:
  VariantRunner(const common::DeviceInfo& device, const Options& options, cudaStream_t stream,
                common::L2Flusher* flusher)
      : device_(device), options_(options), stream_(stream), flusher_(flusher) {}

  // The vectors of one element type, generated, uploaded and referenced on first use.
  const Inputs& inputs(ElementType t) {
    auto& slot = cache_[t];
    if (!slot) {
      const std::size_t n = options_.n;
      if (n >= (std::uint64_t{1} << 26))
        std::cerr << "generating 2 x " << common::format_count(n) << " " << element_name(t)
                  << " inputs and their reference..." << std::endl;
      const HostVectors host = make_inputs(t, options_.seed, n, int8_magnitude_limit(n));
      slot = std::make_unique<Inputs>();
      slot->ref = reference_dot(host);
      slot->vectors = upload(host);
    }
    return *slot;
  }

  Row run(const Variant& v) {
    const Inputs& in = inputs(v.element);
    PreparedVariant prepared(v, in.vectors, device_, stream_);
    Row row;
    row.variant = &v;
    row.grid = prepared.grid();
    row.depth = prepared.error_depth();

    common::RowMeasure measure(v.id);
    row.output = measure.checked([&] { return prepared.run_checked(); });
    row.check = prepared.check(row.output, in.ref);
    // An unbounded row (its bound cannot tell the result from 0) is still timed; the
    // table says "no-bound" and shows the measured error.
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
  std::map<ElementType, std::unique_ptr<Inputs>> cache_;
};

common::Record make_record(const Row& r, std::size_t n, const DotReference& ref, const common::DeviceInfo& d,
                           double t_fp32, int int8_magnitude) {
  using common::number_field;
  using common::text_field;
  const Variant& v = *r.variant;
  const double pair_bytes = 2.0 * static_cast<double>(element_bytes(v.element));
  const double us = r.timed ? r.timing.us.median : NAN;
  const double gbs = r.timed ? common::gb_per_s(static_cast<double>(n) * pair_bytes, us) : NAN;
  const double reference = ref.value();
  common::Record rec = {
      number_field("n", static_cast<double>(n)),
      text_field("key", variant_key(v)),
      text_field("id", v.id),
      text_field("variant", v.title),
      text_field("element", element_name(v.element)),
      text_field("accumulator", accumulator_name(v.accumulator)),
      text_field("inputs", input_description(v.element, int8_magnitude)),
      number_field("bytes_per_element", pair_bytes),
      number_field("grid", static_cast<double>(r.grid)),
      number_field("block", kBlock),
  };
  common::append(rec, common::timing_fields(r.timed ? &r.timing : nullptr));
  common::append(
      rec, {
               number_field("gbs", gbs),
               number_field("pct_peak", 100.0 * gbs / d.peak_bandwidth_gbs()),
               number_field("gmacs", r.timed ? static_cast<double>(n) / (us * 1e-6) / 1e9 : NAN),
               number_field("vs_fp32", common::ratio(t_fp32, us)),
               number_field("result", r.output.as_double()),
               number_field("reference", reference),
               number_field("sum_abs_products", ref.sum_abs),
               number_field("cond", ref.condition_number()),
               number_field("abs_error", r.check.abs_error),
               number_field("rel_error", r.check.rel_error),
               number_field("error_depth", v.accumulator == Accumulator::i32 ? NAN : static_cast<double>(r.depth)),
               number_field("tolerance", r.check.tolerance),
               number_field("rel_bound", reference != 0.0 ? r.check.tolerance / std::fabs(reference) : NAN),
               text_field("check", r.check.verdict()),
               text_field("deterministic", v.deterministic ? "yes" : "no"),
           });
  return rec;
}

std::vector<common::Column> table_columns() {
  return {
      {"key", "#", 2, 0, true},         {"variant", "variant", 32, 0, true}, {"bytes_per_element", "B/el", 4, 0},
      {"reps", "reps", 5, 0},           {"median_us", "median-us", 10, 1},   {"gbs", "GB/s", 7, 0},
      {"pct_peak", "%peak", 6, 1},      {"gmacs", "GMAC/s", 7, 0},           {"cond", "cond", 7, 0},
      {"rel_error", "rel-error", 9, 0}, {"rel_bound", "rel-bound", 9, 0},    {"vs_fp32", "vs-FP32", 7, 2},
      {"check", "check", 8, 0},
  };
}

// The record as the table shows it: the relative error, the relative bound and the
// condition number as text (the CSV and JSON keep the full numbers).
common::Record for_table(const common::Record& rec) {
  common::Record shown = rec;
  for (auto& f : shown) {
    if (!f.is_number) continue;
    if (f.key == "rel_error" || f.key == "rel_bound") f = common::text_field(f.key, relative_text(f.number));
    if (f.key == "cond") f = common::text_field(f.key, condition_text(f.number));
  }
  return shown;
}

int run(const Options& opt, const std::vector<const Variant*>& selected) {
  // Everything that can be refused without a device is refused first.
  const std::string too_large = n_limit_error(opt.n, selected);
  if (!too_large.empty()) throw common::UsageError(too_large);

  const common::DeviceInfo device = common::query_device(opt.device);
  const std::size_t n = opt.n;

  // FP32 is measured in the same run (shown only when selected) so every row has
  // its speed ratio; a --run-once pass measures nothing extra.
  std::vector<const Variant*> measured = selected;
  const Variant* fp32 = &baseline();
  const bool show_fp32 = std::find(selected.begin(), selected.end(), fp32) != selected.end();
  if (!opt.run_once && !show_fp32) measured.insert(measured.begin(), fp32);

  // Device memory: both vectors of every element type, the scratch, the flush buffer.
  std::vector<ElementType> types;
  for (const Variant* v : measured)
    if (std::find(types.begin(), types.end(), v->element) == types.end()) types.push_back(v->element);
  std::size_t input_bytes = 0;
  for (ElementType t : types) input_bytes += 2 * n * element_bytes(t);
  const std::size_t flush_bytes = opt.warm_l2 || opt.run_once ? 0 : common::l2_flush_bytes(device.l2_bytes);
  common::MemoryNeed need;
  need.add("vectors", input_bytes).add("L2 flush buffer", flush_bytes);
  need.add("scratch", dot_scratch_bytes(static_cast<unsigned>(device.sm_count) * 64));
  common::require_memory(need, "n = " + common::format_count(n), device.name);

  const int int8_magnitude = int8_magnitude_limit(n);
  const bool has_int8 = std::find(types.begin(), types.end(), ElementType::i8) != types.end();
  const bool has_float = std::any_of(types.begin(), types.end(), [](ElementType t) { return t != ElementType::i8; });

  common::CudaStream stream;
  std::unique_ptr<common::L2Flusher> flusher;
  if (flush_bytes > 0) flusher = std::make_unique<common::L2Flusher>(device.l2_bytes);
  VariantRunner runner(device, opt, stream.get(), flusher.get());

  if (opt.run_once) {
    // For profilers and sanitizers: exactly one checked launch of each variant.
    common::Tally tally;
    for (const Variant* v : selected) {
      const Row r = runner.run(*v);
      const DotReference& ref = runner.inputs(v->element).ref;
      std::cout.precision(9);
      std::cout << variant_key(*v) << " " << v->id << ": dot " << r.output.as_double() << " (reference " << ref.value()
                << ", condition number " << ref.condition_number() << ") "
                << (r.check.ok ? std::string("ok") : std::string(r.check.verdict()) + ": " + r.check.detail) << "\n";
      tally.add(r.check, nullptr);
    }
    return tally.all_ok ? 0 : 1;
  }

  common::Metadata meta = common::base_metadata(device);
  meta.push_back({"n", std::to_string(n)});
  meta.push_back({"seed", std::to_string(opt.seed)});
  if (has_float) meta.push_back({"float_inputs", std::string(kFloatInputs) + ", rounded to each row's type"});
  if (has_int8) meta.push_back({"int8_inputs", input_description(ElementType::i8, int8_magnitude)});
  meta.push_back({"reference", "double (int64 for int8) dot product of the same rounded values"});
  meta.push_back({"block", std::to_string(kBlock)});
  common::add_timing_metadata(meta, opt.timing, opt.warm_l2,
                              "CUDA events around the launcher, median of the repetitions");

  std::cout << common::device_banner("Dot products x . y", device,
                                     {common::l2_detail(device), common::peak_detail(device)})
            << "\n"
            << "n = " << common::format_count(n) << " elements per vector, seed " << opt.seed << ", median of up to "
            << opt.timing.reps << " repetitions per row, L2 " << common::l2_state(opt.warm_l2, opt.flush, false)
            << "\n";
  if (has_float)
    std::cout << "float inputs: " << kFloatInputs
              << ", rounded to each row's type on the host; about 3/8 of the products are negative, so the sum "
                 "cancels partly (cond near 4); no FP16 input or product underflows\n";
  if (has_int8)
    std::cout << "int8 inputs: " << input_description(ElementType::i8, int8_magnitude) << ", the widest range with n x "
              << int8_magnitude << "^2 <= 2^31 - 1, so no int32 partial sum can overflow\n";
  std::cout << "reference: double (int64 for int8) dot product of the same rounded values\n\n";

  common::TablePrinter table(std::cout, table_columns());
  table.header();
  std::vector<common::Record> records;
  common::Tally tally;
  double t_fp32 = NAN;
  for (const Variant* v : measured) {
    const Row r = runner.run(*v);
    if (v == fp32 && r.timed) t_fp32 = r.timing.us.median;
    if (!r.check.acceptable()) std::cout << "  " << variant_key(*v) << " failed its check: " << r.check.detail << "\n";
    if (v == fp32 && !show_fp32) {
      tally.all_ok = tally.all_ok && r.check.acceptable();
      continue;
    }
    tally.add(r.check, r.timed ? &r.timing : nullptr);
    common::Record rec = make_record(r, n, runner.inputs(v->element).ref, device, t_fp32, int8_magnitude);
    table.row(for_table(rec));
    records.push_back(std::move(rec));
  }

  std::cout << "\nB/el = bytes per element of both vectors; GB/s = n x B/el / median time; %peak against the "
               "theoretical "
            << static_cast<long>(device.peak_bandwidth_gbs())
            << " GB/s; GMAC/s = multiply-adds per second (n / median time);\n"
               "cond = sum |x_i y_i| / |sum x_i y_i| (how much the sum cancels); rel-error = |result - reference| / "
               "|reference|; rel-bound = the variant's worst-case error bound (mixed_precision/tolerance.hpp) / "
               "|reference|, about cond x gamma(depth); vs-FP32 = FP32 time / this row's time, same run.\n";
  if (tally.any_unbounded)
    std::cout << "no-bound: the row's error bound is at least |reference| (rel-bound >= 1) or infinite, so it could "
                 "not tell the result from 0; it is timed but not verified, and rel-error shows how far off it is.\n";
  common::print_capped_note(std::cout, tally);

  return common::finish_run(opt.csv, opt.json, meta, records, tally.all_ok);
}

}  // namespace

std::string relative_text(double v) {
  if (std::isnan(v)) return "-";
  if (v == 0.0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::string condition_text(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 1000.0 ? "%.1f" : "%.1e", v);
  return buf;
}

std::string n_limit_error(std::uint64_t n, const std::vector<const Variant*>& variants) {
  for (const Variant* v : variants) {
    if (n <= v->max_n) continue;
    const std::string count = common::format_count(n);
    std::string why = "--n " + count + (count != std::to_string(n) ? " (" + std::to_string(n) + ")" : "") +
                      " is larger than variant " + variant_key(*v) + " (" + v->id + ") supports: at most " +
                      std::to_string(v->max_n) + " elements";
    if (v->element == ElementType::i8)
      why += " (2^31 - 1: beyond it even products of +-1 could overflow the int32 accumulator)";
    return why + ".";
  }
  return "";
}

int mixed_precision_main(int argc, const char* const* argv, const char* program, const char* preselected) {
  Options opt;
  if (preselected != nullptr) {
    opt.variants = preselected;
    if (select_variants(preselected).front() != &baseline()) opt.variants = variant_key(baseline()) + "," + preselected;
  }
  common::ArgParser args(
      program, preselected != nullptr
                   ? std::string("Verifies and times mixed-precision dot-product variant ") + preselected +
                         " (and the FP32 baseline for comparison) on the GPU."
                   : "Verifies and times every mixed-precision dot-product variant (FP32, FP16, BF16, INT8) on the GPU "
                     "and prints the table.");
  args.option("--n", "N",
              "elements per vector (default 2^24); 16777216, 2^24, 16M, or bytes such as 64MiB counted in 4-byte "
              "FP32 elements",
              [&](const std::string& v) { opt.n = common::parse_count(v, "--n", 4, 1, std::uint64_t{1} << 40); });
  common::add_selection_option(args, program, preselected,
                               {"--variants", "variant", "FP32", "build/mixed_precision/mixed_precision",
                                "variants to run: numbers (3, 03), ids, ranges (2-4) or all"},
                               [&](const std::string& v) {
                                 select_variants(v);  // validate now
                                 opt.variants = v;
                               });
  common::MeasureOptionSet shared;
  shared.pattern = false;
  shared.flush = false;
  shared.seed_of = "inputs";
  common::add_measure_options(args, opt, shared);
  common::add_run_once_option(args, opt.run_once,
                              "one checked launch of each variant and nothing else (for ncu, nsys, compute-sanitizer)");
  args.flag(
      "--list",
      "print the selected variants (key, id, element, accumulator, title, source, chapter), tab-separated, and exit",
      &opt.list);
  args.epilog(
      "Inputs: floats with a magnitude uniform in [2^-7, 2^-6), negative with probability 1/4, rounded to each "
      "variant's type (the dot product's condition number stays near 4); int8 non-zero whole numbers in [-m, m] with "
      "m the largest value (at most 127) for which n x m^2 <= 2^31 - 1. The INT8 variant accepts n up to 2^31 - 1.\n"
      "A row whose error bound is at least |reference| (or infinite) is timed and shown as no-bound, not verified.\n"
      "Exit codes: 0 every row verified or no-bound, 1 a row failed its check or a CUDA error occurred, 2 bad usage, "
      "3 no CUDA device.");

  return common::run_program(program, [&] {
    if (!args.parse(argc, argv)) return 0;
    if (opt.list) {
      std::cout << registry_listing(select_variants(opt.variants));
      return 0;
    }
    return run(opt, select_variants(opt.variants));
  });
}

}  // namespace mixed_precision
