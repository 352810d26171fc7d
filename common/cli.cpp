#include "cli.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "device_info.hpp"
#include "timing.hpp"

namespace common {

int run_program(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return kExitUsage;
  } catch (const NoDeviceError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return kExitNoDevice;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Digits to uint64; false on overflow.
bool to_u64(const std::string& digits, std::uint64_t& out) {
  out = 0;
  for (char c : digits) {
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (out > (UINT64_MAX - d) / 10) return false;
    out = out * 10 + d;
  }
  return true;
}

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return true;
  out = a * b;
  return false;
}

std::string count_forms() {
  return "a whole number such as 16777216, a power such as 2^24, a count with K, M, G or T (16M), or bytes with B, "
         "KiB, MiB, GiB or TiB (64MiB)";
}

}  // namespace

std::string format_count(std::uint64_t n) {
  if (n != 0 && (n & (n - 1)) == 0 && n >= 1024) {
    int k = 0;
    while ((std::uint64_t{1} << k) != n) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(n);
}

std::uint64_t parse_count(const std::string& raw, const std::string& what, std::size_t element_bytes,
                          std::uint64_t min_value, std::uint64_t max_value) {
  const std::string text = trim(raw);
  const std::string quoted = what + " '" + raw + "'";
  if (text.empty()) throw UsageError(what + " needs a value: " + count_forms() + ".");
  if (text[0] == '-')
    throw UsageError(quoted + " is negative; it must be a count of at least " + std::to_string(min_value) + ".");

  std::uint64_t value = 0;
  bool overflow = false;
  const auto caret = text.find('^');
  if (caret != std::string::npos) {
    const std::string base = text.substr(0, caret);
    const std::string exp = text.substr(caret + 1);
    std::uint64_t b = 0;
    std::uint64_t e = 0;
    if (!all_digits(base) || !all_digits(exp))
      throw UsageError(quoted + " is not a count: expected " + count_forms() + ".");
    if (!to_u64(base, b) || !to_u64(exp, e)) {
      overflow = true;
    } else {
      value = 1;
      for (std::uint64_t i = 0; i < e && !overflow; ++i) overflow = mul_overflows(value, b, value);
    }
  } else {
    std::size_t digits_end = 0;
    while (digits_end < text.size() && text[digits_end] >= '0' && text[digits_end] <= '9') ++digits_end;
    const std::string digits = text.substr(0, digits_end);
    const std::string suffix = text.substr(digits_end);
    if (digits.empty()) throw UsageError(quoted + " is not a count: expected " + count_forms() + ".");
    std::uint64_t mult = 1;
    bool bytes = false;
    if (suffix.empty()) {
    } else if (suffix == "K" || suffix == "k") {
      mult = 1ull << 10;
    } else if (suffix == "M") {
      mult = 1ull << 20;
    } else if (suffix == "G") {
      mult = 1ull << 30;
    } else if (suffix == "T") {
      mult = 1ull << 40;
    } else if (suffix == "B") {
      bytes = true;
    } else if (suffix == "KiB") {
      mult = 1ull << 10, bytes = true;
    } else if (suffix == "MiB") {
      mult = 1ull << 20, bytes = true;
    } else if (suffix == "GiB") {
      mult = 1ull << 30, bytes = true;
    } else if (suffix == "TiB") {
      mult = 1ull << 40, bytes = true;
    } else {
      throw UsageError(quoted + " is not a count: expected " + count_forms() + ".");
    }
    if (!to_u64(digits, value) || mul_overflows(value, mult, value)) overflow = true;
    if (!overflow && bytes) {
      if (value % element_bytes != 0)
        throw UsageError(quoted + " is " + std::to_string(value) + " bytes, not a whole number of " +
                         std::to_string(element_bytes) + "-byte elements.");
      value /= element_bytes;
    }
  }
  if (overflow || value > max_value)
    throw UsageError(quoted + " is too large: the largest allowed is " + format_count(max_value) + " (" +
                     std::to_string(max_value) + ").");
  if (value < min_value)
    throw UsageError(quoted + " is too small: it must be at least " + std::to_string(min_value) + ".");
  return value;
}

long long parse_int(const std::string& raw, const std::string& what, long long min_value, long long max_value) {
  const std::string text = trim(raw);
  const std::string range = "a whole number from " + std::to_string(min_value) + " to " + std::to_string(max_value);
  const std::string body = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? text.substr(1) : text;
  if (!all_digits(body)) throw UsageError(what + " '" + raw + "' is not " + range + ".");
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < min_value || v > max_value)
    throw UsageError(what + " '" + raw + "' is out of range: expected " + range + ".");
  return v;
}

double parse_double(const std::string& raw, const std::string& what, double min_value, double max_value) {
  const std::string text = trim(raw);
  std::ostringstream range;
  range << "a number from " << min_value << " to " << max_value;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    throw UsageError(what + " '" + raw + "' is not " + range.str() + ".");
  if (errno == ERANGE || !std::isfinite(v) || v < min_value || v > max_value)
    throw UsageError(what + " '" + raw + "' is out of range: expected " + range.str() + ".");
  return v;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

void require_writable(const std::string& path, const std::string& what) {
  const std::string probe = path + ".tmp";
  std::FILE* f = std::fopen(probe.c_str(), "w");
  if (f == nullptr) throw UsageError("cannot write " + what + " file '" + path + "': " + std::strerror(errno) + ".");
  std::fclose(f);
  std::remove(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write '" + tmp + "': " + std::strerror(errno));
    out << contents;
    if (!out.flush()) throw std::runtime_error("writing '" + tmp + "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
  }
}

ArgParser::ArgParser(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void ArgParser::flag(const std::string& name, const std::string& help, bool* target) {
  specs_.push_back(Spec{name, "", help, target, nullptr});
}

void ArgParser::option(const std::string& name, const std::string& metavar, const std::string& help,
                       std::function<void(const std::string&)> apply) {
  specs_.push_back(Spec{name, metavar, help, nullptr, std::move(apply)});
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

bool ArgParser::parse(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << help();
      return false;
    }
    if (arg.rfind("--", 0) != 0)
      throw UsageError("unexpected argument '" + arg + "': options start with -- (see " + program_ + " --help).");
    std::string value;
    bool has_inline_value = false;
    const auto eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_inline_value = true;
    }
    const Spec* spec = find(arg);
    if (spec == nullptr) throw UsageError("unknown option '" + arg + "' (see " + program_ + " --help).");
    if (spec->flag != nullptr) {
      if (has_inline_value) throw UsageError("option " + arg + " takes no value (got '" + value + "').");
      *spec->flag = true;
      continue;
    }
    if (!has_inline_value) {
      const bool next_is_option = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) == 0;
      if (i + 1 >= argc || next_is_option)
        throw UsageError("option " + arg + " needs a value (" + spec->metavar + ").");
      value = argv[++i];
    }
    spec->apply(value);
  }
  return true;
}

std::string ArgParser::help() const {
  std::ostringstream out;
  out << "usage: " << program_ << " [options]\n\n" << summary_ << "\n\noptions:\n";
  for (const auto& s : specs_) {
    std::string left = "  " + s.name + (s.metavar.empty() ? "" : " " + s.metavar);
    if (left.size() < 24)
      left.resize(24, ' ');
    else
      left += "\n" + std::string(24, ' ');
    out << left << s.help << "\n";
  }
  out << "  --help, -h              print this help\n";
  if (!epilog_.empty()) out << "\n" << epilog_ << "\n";
  return out.str();
}

void add_output_options(ArgParser& args, std::string& csv, std::string& json, const std::string& what) {
  args.option("--csv", "FILE", "also write " + what + " and the run's metadata as CSV", [&csv](const std::string& v) {
    require_writable(v, "--csv");
    csv = v;
  });
  args.option("--json", "FILE", "also write them as JSON", [&json](const std::string& v) {
    require_writable(v, "--json");
    json = v;
  });
}

void add_device_option(ArgParser& args, int& device) {
  args.option("--device", "D", "CUDA device ordinal (default 0)",
              [&device](const std::string& v) { device = static_cast<int>(parse_int(v, "--device", 0, 1023)); });
}

void add_seed_option(ArgParser& args, std::uint64_t& seed, const std::string& inputs) {
  args.option("--seed", "S", "seed of the " + inputs + " (default 1)", [&seed](const std::string& v) {
    seed = static_cast<std::uint64_t>(parse_int(v, "--seed", 0, INT64_MAX));
  });
}

void add_timing_options(ArgParser& args, TimingOptions& timing, bool& warm_l2, bool with_min_reps) {
  args.option("--reps", "R", "timed repetitions per row, at most (default " + std::to_string(timing.reps) + ")",
              [&timing](const std::string& v) { timing.reps = static_cast<int>(parse_int(v, "--reps", 1, 1000000)); });
  if (with_min_reps)
    args.option("--min-reps", "R",
                "repetitions per row however slow it is (default " + std::to_string(timing.min_reps) + ")",
                [&timing](const std::string& v) {
                  timing.min_reps = static_cast<int>(parse_int(v, "--min-reps", 1, 1000000));
                });
  const std::string floor = with_min_reps ? "" : ", never fewer than " + std::to_string(timing.min_reps);
  args.option("--budget-ms", "MS",
              "time budget per row; fewer repetitions for slow rows" + floor + " (default " +
                  std::to_string(static_cast<long long>(timing.budget_ms)) + ")",
              [&timing](const std::string& v) { timing.budget_ms = parse_double(v, "--budget-ms", 1, 3.6e6); });
  args.flag("--warm-l2", "do not flush the L2 cache before each timed repetition", &warm_l2);
}

}  // namespace common
