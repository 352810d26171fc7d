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

// A count of elements: "16777216", "2^24", "16M" (K, M, G, T: binary multiples of
// elements) or "64MiB" (B, KiB, MiB, GiB, TiB: bytes, divided by element_bytes).
// `what` names the option in error messages. Result is in [min_value, max_value].
std::uint64_t parse_count(const std::string& text, const std::string& what, std::size_t element_bytes = 4,
                          std::uint64_t min_value = 1, std::uint64_t max_value = UINT64_MAX);

// A whole number in [min_value, max_value].
long long parse_int(const std::string& text, const std::string& what, long long min_value, long long max_value);

// A finite decimal number in [min_value, max_value].
double parse_double(const std::string& text, const std::string& what, double min_value, double max_value);

// Comma-separated list, empty items dropped.
std::vector<std::string> split_list(const std::string& text);

// Human form of a count: 16777216 -> "2^24", 1000 -> "1000".
std::string format_count(std::uint64_t n);

// Throws UsageError if `path` cannot be created for writing (checked before any work).
void require_writable(const std::string& path, const std::string& what);

// Writes `contents` to `path` through a temporary file and a rename, so a failed
// run never leaves a partial file.
void write_file_atomically(const std::string& path, const std::string& contents);

class ArgParser {
 public:
  ArgParser(std::string program, std::string summary);

  // --name (no value)
  void flag(const std::string& name, const std::string& help, bool* target);
  // --name VALUE or --name=VALUE; `apply` parses and may throw UsageError.
  void option(const std::string& name, const std::string& metavar, const std::string& help,
              std::function<void(const std::string&)> apply);
  // Free text appended to --help.
  void epilog(const std::string& text) { epilog_ = text; }

  // Returns false when --help was given (the help has been printed to stdout).
  bool parse(int argc, const char* const* argv);
  std::string help() const;

 private:
  struct Spec {
    std::string name;
    std::string metavar;  // empty for flags
    std::string help;
    bool* flag = nullptr;
    std::function<void(const std::string&)> apply;
  };
  const Spec* find(const std::string& name) const;

  std::string program_;
  std::string summary_;
  std::string epilog_;
  std::vector<Spec> specs_;
};

// The options the timing programs share, bound to the caller's fields.
// --csv FILE and --json FILE ("also write <what> and the run's metadata as CSV").
void add_output_options(ArgParser& args, std::string& csv, std::string& json, const std::string& what);
// --device D.
void add_device_option(ArgParser& args, int& device);
// --seed S ("seed of the <inputs> (default 1)").
void add_seed_option(ArgParser& args, std::uint64_t& seed, const std::string& inputs);
// --reps R, --min-reps R (when with_min_reps) and --budget-ms MS, whose help shows the
// defaults already in `timing`, and --warm-l2.
void add_timing_options(ArgParser& args, TimingOptions& timing, bool& warm_l2, bool with_min_reps);

}  // namespace common
