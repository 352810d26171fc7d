// One command-line parser for every program in the project.
//
// Every bad input becomes a UsageError: one sentence naming the value and what is
// allowed. Programs print it and exit with kExitUsage (2), before writing any file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace common {

struct TimingOptions;  // timing.hpp

constexpr int kExitUsage = 2;

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs a program's body and turns what it throws into the exit codes every program
// shares, each with one line on stderr naming the program: UsageError 2,
// NoDeviceError (device_info.hpp) 3, anything else 1.
int run_program(const char* program, const std::function<int()>& body);
// Inside a catch block: prints the exception the way run_program does and returns its
// exit code (for a main that catches itself instead of wrapping its body).
int exit_code_of_current_exception(const char* program);

// Numbers: one grammar for every option of every program.
//
//   a whole number   16777216   decimal digits only
//   a power          2^24       B^E with a base B of at least 2
//   a multiple       16M        digits and K, M, G or T (x 2^10, 2^20, 2^30, 2^40)
//   bytes            64MiB      digits and B, KiB, MiB, GiB or TiB: only for counts of
//                               elements, divided by the element size
//   a fraction       2.5        digits, a point, digits: only where the option takes one
//
// Everything else is refused with a sentence naming it: a sign (unless the option takes
// negative values), hexadecimal (0x10), an exponent (1e6), a lower-case multiple (16k,
// 16m: write 16K, 16M), a power of 0 or 1 (0^0, 1^99), inf and nan. Spaces around the
// value are ignored.
std::string number_grammar();

// A count of elements in any whole-number form, or bytes (divided by element_bytes;
// element_bytes 0 refuses bytes). `what` names the option in error messages. Result is
// in [min_value, max_value].
std::uint64_t parse_count(const std::string& text, const std::string& what, std::size_t element_bytes = 4,
                          std::uint64_t min_value = 1, std::uint64_t max_value = UINT64_MAX);

// A whole number in [min_value, max_value], in any whole-number form (no bytes); a
// leading minus sign only when min_value is negative.
long long parse_int(const std::string& text, const std::string& what, long long min_value, long long max_value);

// A number in [min_value, max_value]: a fraction (2.5) or any whole-number form.
double parse_double(const std::string& text, const std::string& what, double min_value, double max_value);

// --sweep's value: "LO:HI" (every power of two from LO to HI) or "LO:HI:FACTOR", each
// bound in parse_count's forms. The sizes in increasing order.
std::vector<std::uint64_t> parse_sweep(const std::string& text);

// Comma-separated list, empty items dropped.
std::vector<std::string> split_list(const std::string& text);

// Human form of a count: 16777216 -> "2^24", 1000 -> "1000".
std::string format_count(std::uint64_t n);

// Output files (--csv, --json, --out).
//
// The empty sentence when `path` can be written as an output file, else one sentence
// naming it and what is wrong: an empty name, a directory, something that is not a
// regular file (/dev/stdout), a read-only file, a missing or unwritable directory.
// Checks by creating and removing a file of a unique name beside the target; touches
// nothing else.
std::string output_path_problem(const std::string& path, const std::string& what);

// Throws UsageError with output_path_problem's sentence (checked before any work).
void require_writable(const std::string& path, const std::string& what);

// True when the two paths name one file (the same file, or the same name in the same
// directory before it exists).
bool same_output_file(const std::string& a, const std::string& b);

// Writes `contents` to a new file of a unique name beside `path`, then renames it to
// `path`: a failed run never leaves a partial file and never touches another file (a
// user's path + ".tmp" included).
void write_file_atomically(const std::string& path, const std::string& contents);

class ArgParser {
 public:
  ArgParser(std::string program, std::string summary);

  // --name (no value)
  void flag(const std::string& name, const std::string& help, bool* target);
  // --name VALUE or --name=VALUE; `apply` parses and may throw UsageError.
  void option(const std::string& name, const std::string& metavar, const std::string& help,
              std::function<void(const std::string&)> apply);
  // An option this program does not take, refused with `sentence` rather than as an
  // unknown option (a per-stage program's --stages, say); not shown in --help.
  void refuse(const std::string& name, const std::string& sentence);
  // A check of the options together (--n with --sweep, say), run once every option is
  // read and before parse() returns; it may throw UsageError.
  void after_parse(std::function<void()> check);
  // Free text appended to --help.
  void epilog(const std::string& text) { epilog_ = text; }

  // Returns false when --help was given (the help has been printed to stdout).
  bool parse(int argc, const char* const* argv);
  std::string help() const;
  // Whether the last parse() saw option `name` (with any value).
  bool given(const std::string& name) const;

 private:
  struct Spec {
    std::string name;
    std::string metavar;  // empty for flags
    std::string help;
    bool* flag = nullptr;
    std::function<void(const std::string&)> apply;
    std::string refusal;  // non-empty: refuse() options
  };
  const Spec* find(const std::string& name) const;

  std::string program_;
  std::string summary_;
  std::string epilog_;
  std::vector<Spec> specs_;
  std::vector<std::function<void()>> checks_;
  std::vector<std::string> given_;
};

enum class FlushMode;  // timing.hpp

// The options the timing programs share, bound to the caller's fields.
// --n N and --sweep LO:HI[:F]: one size, or every size of a sweep; refused together.
void add_size_options(ArgParser& args, std::uint64_t& n, std::vector<std::uint64_t>& sweep);
// --pattern P: an input pattern of common/inputs.hpp, checked as it is parsed.
void add_pattern_option(ArgParser& args, std::string& pattern);
// --flush MODE: how the L2 is flushed before each timed repetition, read or write.
void add_flush_option(ArgParser& args, FlushMode& flush);
// --csv FILE and --json FILE ("also write <what> and the run's metadata as CSV"), each
// checked with require_writable once parsed, and refused when both name one file.
void add_output_options(ArgParser& args, std::string& csv, std::string& json, const std::string& what);
// --device D.
void add_device_option(ArgParser& args, int& device);
// --seed S ("seed of the <inputs> (default 1)").
void add_seed_option(ArgParser& args, std::uint64_t& seed, const std::string& inputs);
// --reps R, --min-reps R (when with_min_reps) and --budget-ms MS, whose help shows the
// defaults already in `timing`, and --warm-l2. A --min-reps above the --reps in effect
// is refused; without --min-reps the floor is lowered to --reps, so the run's metadata
// states what was run.
void add_timing_options(ArgParser& args, TimingOptions& timing, bool& warm_l2, bool with_min_reps);

}  // namespace common
