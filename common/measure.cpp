#include "measure.hpp"

#include <cmath>
#include <iostream>
#include <ostream>
#include <sstream>

#include "inputs.hpp"

namespace common {

void add_measure_options(ArgParser& args, MeasureOptions& opt, const MeasureOptionSet& set) {
  add_timing_options(args, opt.timing, opt.warm_l2, true);
  if (set.pattern) add_pattern_option(args, opt.pattern);
  add_seed_option(args, opt.seed, set.seed_of);
  add_device_option(args, opt.device);
  add_output_options(args, opt.csv, opt.json, "every column");
  if (set.flush) add_flush_option(args, opt.flush);
}

void add_run_once_option(ArgParser& args, bool& run_once, const std::string& help) {
  args.flag("--run-once", help, &run_once);
  args.after_parse([&args, &run_once] {
    if (run_once && args.given("--sweep")) throw UsageError("--sweep and --run-once cannot be combined.");
    if (run_once && (args.given("--csv") || args.given("--json")))
      throw UsageError(std::string("--run-once times nothing, so there is no table to write: drop ") +
                       (args.given("--csv") ? "--csv" : "--json") + " or --run-once.");
  });
}

void add_selection_option(ArgParser& args, const char* program, const char* preselected, const SelectionOption& o,
                          std::function<void(const std::string&)> apply) {
  if (preselected == nullptr) {
    args.option(o.option, "LIST", o.help, std::move(apply));
    return;
  }
  args.refuse(o.option, std::string(program) + " runs " + o.item + " " + preselected + " (and " + o.companion +
                            ") only, so it takes no " + o.option + ": run " + o.runner + " " + o.option +
                            " LIST for other " + o.item + "s.");
}

std::string device_banner(const std::string& what, const DeviceInfo& device, const std::vector<std::string>& details) {
  std::string out = what + " on " + device.name + " (sm_" + std::to_string(device.cc_major) +
                    std::to_string(device.cc_minor) + ", " + std::to_string(device.sm_count) + " SMs";
  for (const auto& d : details) out += ", " + d;
  return out + "), driver " + device.driver;
}

std::string l2_detail(const DeviceInfo& device) { return format_bytes(static_cast<double>(device.l2_bytes)) + " L2"; }

std::string peak_detail(const DeviceInfo& device) {
  return "theoretical " + std::to_string(static_cast<long>(device.peak_bandwidth_gbs())) + " GB/s";
}

std::string l2_state(bool warm_l2, FlushMode flush, bool show_mode) {
  if (warm_l2) return "warm (not flushed)";
  std::string s = "flushed before each repetition";
  if (show_mode) s += std::string(" (") + flush_mode_name(flush) + " flush)";
  return s;
}

void add_timing_metadata(Metadata& meta, const TimingOptions& timing, bool warm_l2, const std::string& timed, bool full,
                         const FlushMode* flush_mode) {
  meta.push_back({"max_reps", std::to_string(timing.reps)});
  if (full) {
    meta.push_back({"min_reps", std::to_string(timing.min_reps)});
    meta.push_back({"budget_ms_per_row", std::to_string(timing.budget_ms)});
  }
  meta.push_back({"l2_flushed", warm_l2 ? "no" : "yes"});
  if (flush_mode != nullptr) meta.push_back({"l2_flush", warm_l2 ? "none" : flush_mode_name(*flush_mode)});
  meta.push_back({"timing", timed});
}

MemoryNeed& MemoryNeed::add(std::string what, std::size_t bytes) {
  parts_.emplace_back(std::move(what), bytes);
  return *this;
}

std::size_t MemoryNeed::total() const {
  std::size_t sum = kSlack;
  for (const auto& part : parts_) sum += part.second;
  return sum;
}

std::string MemoryNeed::shortfall(const std::string& subject, std::size_t free_bytes, const std::string& device) const {
  if (total() <= free_bytes) return "";
  std::string parts;
  for (const auto& [what, bytes] : parts_) parts += what + " " + std::to_string(bytes) + ", ";
  return subject + " needs " + std::to_string(total()) + " bytes of GPU memory (" + parts + "output and slack " +
         std::to_string(kSlack) + ") but only " + std::to_string(free_bytes) + " bytes are free on " + device + ".";
}

void require_memory(const MemoryNeed& need, const std::string& subject, const std::string& device) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  device_memory(free_bytes, total_bytes);
  const std::string shortfall = need.shortfall(subject, free_bytes, device);
  if (!shortfall.empty()) throw UsageError(shortfall);
}

Reference SumInput::reference(std::uint64_t n) const {
  if (n == host.size()) return reference_sum(host);
  return reference_sum(std::vector<float>(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(n)));
}

SumInput prepare_sum_input(const MeasureOptions& opt, std::uint64_t n_max, std::size_t scratch_bytes,
                           std::size_t flush_bytes, const DeviceInfo& device) {
  MemoryNeed need;
  need.add("input", n_max * sizeof(float)).add("scratch", scratch_bytes).add("L2 flush buffer", flush_bytes);
  require_memory(need, "n = " + format_count(n_max), device.name);

  const Pattern pattern = parse_pattern(opt.pattern);
  if (n_max >= (std::uint64_t{1} << 26))
    std::cerr << "generating " << format_count(n_max) << " " << opt.pattern << " floats (seed " << opt.seed
              << ") and their double-precision reference..." << std::endl;
  SumInput in{make_input(pattern, opt.seed, n_max), DeviceBuffer<float>(n_max)};
  copy_to_device(in.device.get(), in.host.data(), in.device.bytes());
  return in;
}

double ratio(double num, double den) { return (den > 0.0 && num > 0.0) ? num / den : NAN; }

double gb_per_s(double bytes, double us) { return bytes / (us * 1e-6) / 1e9; }

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

std::string reps_text(const Timing* timing) {
  if (timing == nullptr) return "-";
  return std::to_string(timing->reps_run) + (timing->capped ? "*" : "");
}

std::vector<Field> timing_fields(const Timing* timing) {
  return {
      text_field("reps", reps_text(timing)),
      number_field("median_us", timing != nullptr ? timing->us.median : NAN),
      number_field("min_us", timing != nullptr ? timing->us.min : NAN),
      number_field("max_us", timing != nullptr ? timing->us.max : NAN),
  };
}

void append(Record& record, const std::vector<Field>& fields) {
  record.insert(record.end(), fields.begin(), fields.end());
}

void Tally::add(const Check& check, const Timing* timing) {
  all_ok = all_ok && check.acceptable();
  any_unbounded = any_unbounded || check.unbounded;
  any_capped = any_capped || (timing != nullptr && timing->capped);
}

void print_capped_note(std::ostream& out, const Tally& tally) {
  if (tally.any_capped) out << "reps marked * were cut short by the time budget per row (--budget-ms).\n";
}

}  // namespace common
