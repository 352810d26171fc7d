// The measuring core every timing program shares (reduce, mixed_precision, the
// occupancy programs, the peers and the lab's experiments): the options they have in common,
// the device banner, the run's metadata, the GPU memory check, the text and fields of a
// timed row, and the notes under a table. How one row is measured (checked run, then
// timed repetitions) is row_measure.hpp; how results are written is output.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "output.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace common {

// ---- options -------------------------------------------------------------------------

// The options of a timing program, bound to its command line by the add_* functions below.
struct MeasureOptions {
  std::uint64_t n = std::uint64_t{1} << 24;
  std::vector<std::uint64_t> sweep;  // non-empty: --sweep sizes
  std::string csv;
  std::string json;
  bool warm_l2 = false;
  FlushMode flush = FlushMode::read;
  std::string pattern = "uniform";
  std::uint64_t seed = 1;
  int device = 0;
  TimingOptions timing;
  bool run_once = false;
  bool list = false;

  // The sizes to run: the sweep, or n alone.
  std::vector<std::uint64_t> sizes() const { return sweep.empty() ? std::vector<std::uint64_t>{n} : sweep; }
};

// Which of the shared options a program takes besides the timing, seed, device and output ones.
struct MeasureOptionSet {
  bool pattern = true;            // --pattern
  bool flush = true;              // --flush
  std::string seed_of = "input";  // "--seed S: seed of the <seed_of>"
};

// In this order: the timing options (add_timing_options, with --min-reps), --pattern,
// --seed, --device, --csv and --json, --flush.
void add_measure_options(ArgParser& args, MeasureOptions& opt, const MeasureOptionSet& set = {});

// --run-once: one checked launch of each row and nothing timed (for profilers). Refused
// with --sweep and with --csv or --json, once every option is read.
void add_run_once_option(ArgParser& args, bool& run_once, const std::string& help);

// The option that picks a runner's rows (--stages, --variants), given to `apply`. A
// program with one row preselected (`preselected` not null) refuses it instead: "<program>
// runs <item> <preselected> (and <companion>) only, so it takes no <option>: run
// <runner> <option> LIST for other <item>s."
struct SelectionOption {
  std::string option;     // --stages
  std::string item;       // stage
  std::string companion;  // CUB
  std::string runner;     // build/reduction/reduce
  std::string help;
};
void add_selection_option(ArgParser& args, const char* program, const char* preselected, const SelectionOption& o,
                          std::function<void(const std::string&)> apply);

// ---- the header of a run -----------------------------------------------------------------

// "<what> on <device> (sm_XY, N SMs, <details, comma-separated>), driver D".
std::string device_banner(const std::string& what, const DeviceInfo& device, const std::vector<std::string>& details);
// "50 MiB L2" and "theoretical 4022 GB/s": the details most banners give.
std::string l2_detail(const DeviceInfo& device);
std::string peak_detail(const DeviceInfo& device);

// How the L2 is treated, for a header line: "warm (not flushed)", or "flushed before each
// repetition", followed by " (read flush)" or " (write flush)" when show_mode.
std::string l2_state(bool warm_l2, FlushMode flush, bool show_mode);

// The timing lines of a run's metadata: max_reps, then (when full) min_reps and
// budget_ms_per_row; l2_flushed; (when with_flush_mode) l2_flush; and timing = `timed`.
void add_timing_metadata(Metadata& meta, const TimingOptions& timing, bool warm_l2, const std::string& timed,
                         bool full = true, const FlushMode* flush_mode = nullptr);

// ---- GPU memory --------------------------------------------------------------------------

// The device memory a run needs, by purpose, plus 1 MiB for outputs and slack.
class MemoryNeed {
 public:
  static constexpr std::size_t kSlack = std::size_t{1} << 20;
  MemoryNeed& add(std::string what, std::size_t bytes);
  std::size_t total() const;
  // Empty when the need fits in free_bytes; otherwise the sentence a program prints:
  // "<subject> needs T bytes of GPU memory (input I, ..., output and slack 1048576) but
  // only F bytes are free on <device>."
  std::string shortfall(const std::string& subject, std::size_t free_bytes, const std::string& device) const;

 private:
  std::vector<std::pair<std::string, std::size_t>> parts_;
};

// Throws UsageError with shortfall()'s sentence when the current device has too little free memory.
void require_memory(const MemoryNeed& need, const std::string& subject, const std::string& device);

// ---- the input of a float sum ----------------------------------------------------------------

// n_max floats of opt.pattern from opt.seed, on the host and copied to the device.
struct SumInput {
  std::vector<float> host;
  DeviceBuffer<float> device;
  // The double-precision reference of the first n values.
  Reference reference(std::uint64_t n) const;
};

// Refuses the run unless the input, `scratch_bytes` and `flush_bytes` fit in the device's
// free memory ("n = <n_max> needs ..."), then makes the input (saying so on stderr from
// 2^26 values on, where that takes a while).
SumInput prepare_sum_input(const MeasureOptions& opt, std::uint64_t n_max, std::size_t scratch_bytes,
                           std::size_t flush_bytes, const DeviceInfo& device);

// ---- rows --------------------------------------------------------------------------------

// num / den, or NaN unless both are positive (a speed ratio of two times).
double ratio(double num, double den);
// Bytes at `us` microseconds in GB/s (NaN for NaN times).
double gb_per_s(double bytes, double us);
// 52428800 -> "50 MiB" (three significant digits; B, KiB, MiB or GiB).
std::string format_bytes(double bytes);

// A timed row's reps ("100", or "37*" when the time budget cut it short) and times: the
// fields reps, median_us, min_us and max_us; "-" and NaN for a row that was not timed.
std::string reps_text(const Timing* timing);
std::vector<Field> timing_fields(const Timing* timing);
// The fields appended to `record`.
void append(Record& record, const std::vector<Field>& fields);

// What the rows of a table add up to, for its exit code and the notes under it.
struct Tally {
  bool all_ok = true;
  bool any_capped = false;
  bool any_unbounded = false;
  void add(const Check& check, const Timing* timing);
};

// The note under a table when a row's repetitions were cut short (Tally::any_capped).
void print_capped_note(std::ostream& out, const Tally& tally);

}  // namespace common
