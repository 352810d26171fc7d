#include "cli.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "device_info.hpp"
#include "inputs.hpp"
#include "timing.hpp"

namespace common {

int exit_code_of_current_exception(const char* program) {
  try {
    throw;
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

int run_program(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (...) {
    return exit_code_of_current_exception(program);
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

std::string count_forms(bool bytes) {
  return bytes ? "such as 16777216, 2^24, 16M or 64MiB" : "such as 16777216, 2^24 or 16M";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Suffix {
  const char* name;
  int shift;  // the multiple is 2^shift
  bool bytes;
};

constexpr Suffix kSuffixes[] = {
    {"K", 10, false},  {"M", 20, false},  {"G", 30, false},  {"T", 40, false},  {"B", 0, true},
    {"KiB", 10, true}, {"MiB", 20, true}, {"GiB", 30, true}, {"TiB", 40, true},
};

// Why `text` (trimmed, not empty) is not a number of the grammar, when it looks like a
// common mistake; empty otherwise.
std::string mistake(const std::string& text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    return "hexadecimal is not taken: write the number in decimal";
  const std::string l = lower(text);
  if (l == "inf" || l == "infinity" || l == "nan") return "it is not a number";
  std::size_t digits_end = 0;
  while (digits_end < text.size() && std::isdigit(static_cast<unsigned char>(text[digits_end]))) ++digits_end;
  const std::string suffix = text.substr(digits_end);
  if (digits_end > 0 && !suffix.empty()) {
    for (const Suffix& s : kSuffixes)
      if (suffix != s.name && lower(suffix) == lower(s.name))
        return "multiples are written in upper case: " + text.substr(0, digits_end) + s.name;
    if ((suffix[0] == 'e' || suffix[0] == 'E') && all_digits(suffix.substr(1)))
      return "exponent notation is not taken: write a power such as 10^" + suffix.substr(1);
  }
  return "";
}

// The value of `text` (trimmed, not empty, no sign) in one of the whole-number forms,
// or in bytes when element_bytes > 0. Sets `overflow` instead of returning a value
// past 2^64 - 1; throws UsageError for anything that is not of the grammar.
std::uint64_t whole_value(const std::string& text, const std::string& quoted, const std::string& expected,
                          std::size_t element_bytes, bool& overflow) {
  overflow = false;
  const std::string hint = mistake(text);
  if (!hint.empty()) throw UsageError(quoted + " is not " + expected + " (" + hint + ").");
  std::uint64_t value = 0;
  const auto caret = text.find('^');
  if (caret != std::string::npos) {
    const std::string base_text = text.substr(0, caret);
    const std::string exp_text = text.substr(caret + 1);
    if (!all_digits(base_text) || !all_digits(exp_text)) throw UsageError(quoted + " is not " + expected + ".");
    std::uint64_t base = 0;
    std::uint64_t exp = 0;
    const bool base_fits = to_u64(base_text, base);
    if (base_fits && base < 2)
      throw UsageError(quoted + " is not " + expected + " (the base of a power must be at least 2).");
    if (!base_fits || !to_u64(exp_text, exp)) {
      overflow = true;
      return 0;
    }
    value = 1;
    for (std::uint64_t i = 0; i < exp && !overflow; ++i) overflow = mul_overflows(value, base, value);
    return value;
  }
  std::size_t digits_end = 0;
  while (digits_end < text.size() && text[digits_end] >= '0' && text[digits_end] <= '9') ++digits_end;
  const std::string digits = text.substr(0, digits_end);
  const std::string suffix = text.substr(digits_end);
  if (digits.empty()) throw UsageError(quoted + " is not " + expected + ".");
  const Suffix* found = nullptr;
  for (const Suffix& s : kSuffixes)
    if (suffix == s.name) found = &s;
  if (!suffix.empty() && found == nullptr) throw UsageError(quoted + " is not " + expected + ".");
  if (found != nullptr && found->bytes && element_bytes == 0)
    throw UsageError(quoted + " is not " + expected + " (bytes are only for sizes).");
  const std::uint64_t mult = found != nullptr ? (std::uint64_t{1} << found->shift) : 1;
  if (!to_u64(digits, value) || mul_overflows(value, mult, value)) {
    overflow = true;
    return 0;
  }
  if (found != nullptr && found->bytes) {
    if (value % element_bytes != 0)
      throw UsageError(quoted + " is " + std::to_string(value) + " bytes, not a whole number of " +
                       std::to_string(element_bytes) + "-byte elements.");
    value /= element_bytes;
  }
  return value;
}

// A number written with a fraction: digits, a point, digits.
bool is_fraction(const std::string& text) {
  const auto point = text.find('.');
  return point != std::string::npos && all_digits(text.substr(0, point)) && all_digits(text.substr(point + 1));
}

std::string format_real(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::string number_grammar() {
  return "Numbers: a whole number (16777216), a power B^E with B at least 2 (2^24), a multiple with K, M, G or T "
         "(16M = 16 x 2^20); sizes also in bytes with B, KiB, MiB, GiB or TiB (64MiB); times also with a fraction "
         "(2.5). No signs, hexadecimal, exponents or lower-case multiples.";
}

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
  const std::string expected = count_forms(element_bytes > 0);
  if (text.empty()) throw UsageError(what + " needs a value: a count " + expected + ".");
  if (text[0] == '-')
    throw UsageError(quoted + " is negative; it must be a count of at least " + std::to_string(min_value) + ".");
  bool overflow = false;
  const std::uint64_t value = whole_value(text, quoted, "a count " + expected, element_bytes, overflow);
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
  const std::string quoted = what + " '" + raw + "'";
  if (text.empty()) throw UsageError(what + " needs a value: " + range + ".");
  const bool negative = text[0] == '-';
  if (negative && min_value >= 0) throw UsageError(quoted + " is out of range: expected " + range + ".");
  const std::string body = negative ? trim(text.substr(1)) : text;
  if (body.empty()) throw UsageError(quoted + " is not " + range + ".");
  bool overflow = false;
  const std::uint64_t magnitude =
      whole_value(body, quoted, range + " written as digits, 2^E or with K, M, G, T", 0, overflow);
  const std::uint64_t limit =
      negative ? static_cast<std::uint64_t>(-(min_value + 1)) + 1 : static_cast<std::uint64_t>(max_value);
  if (overflow || magnitude > limit) throw UsageError(quoted + " is out of range: expected " + range + ".");
  const long long v = negative ? (magnitude == limit ? min_value : -static_cast<long long>(magnitude))
                               : static_cast<long long>(magnitude);
  if (v < min_value || v > max_value) throw UsageError(quoted + " is out of range: expected " + range + ".");
  return v;
}

double parse_double(const std::string& raw, const std::string& what, double min_value, double max_value) {
  const std::string text = trim(raw);
  const std::string range = "a number from " + format_real(min_value) + " to " + format_real(max_value);
  const std::string quoted = what + " '" + raw + "'";
  if (text.empty()) throw UsageError(what + " needs a value: " + range + ".");
  if (text[0] == '-' && min_value >= 0) throw UsageError(quoted + " is out of range: expected " + range + ".");
  double v = 0.0;
  if (is_fraction(text)) {
    v = std::strtod(text.c_str(), nullptr);
  } else {
    bool overflow = false;
    const std::uint64_t whole = whole_value(
        text, quoted, range + " written as digits (2.5 for a fraction), 2^E or with K, M, G, T", 0, overflow);
    v = overflow ? HUGE_VAL : static_cast<double>(whole);
  }
  if (!std::isfinite(v) || v < min_value || v > max_value)
    throw UsageError(quoted + " is out of range: expected " + range + ".");
  return v;
}

std::vector<std::uint64_t> parse_sweep(const std::string& text) {
  const auto first = text.find(':');
  if (first == std::string::npos)
    throw UsageError("--sweep '" + text + "' is not a range: write LO:HI (for example 2^10:2^30) or LO:HI:FACTOR.");
  const auto second = text.find(':', first + 1);
  const std::uint64_t lo = parse_count(text.substr(0, first), "--sweep start");
  const std::uint64_t hi = parse_count(
      text.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1), "--sweep end");
  const std::uint64_t factor =
      second == std::string::npos
          ? 2
          : static_cast<std::uint64_t>(parse_int(text.substr(second + 1), "--sweep factor", 2, 1024));
  if (lo > hi) throw UsageError("--sweep '" + text + "': the start is larger than the end.");
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t v = lo; v <= hi; v *= factor) {
    sizes.push_back(v);
    if (v > hi / factor) break;
  }
  return sizes;
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

namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The longest file name directory `dir` takes (255 when the system does not say).
std::size_t name_max(const std::string& dir) {
  const long limit = pathconf(dir.c_str(), _PC_NAME_MAX);
  return limit > 0 ? static_cast<std::size_t>(limit) : 255;
}

// A new, empty file of a unique name beside `path` (".NAME.XXXXXX" in its
// directory, NAME shortened where the whole would pass the file system's limit on a
// name), open for writing; -1 with errno set when it cannot be created.

int create_temp_beside(const std::string& path, std::string& temp) {
  const std::string dir = directory_of(path);
  std::string base = base_name(path);
  const std::size_t limit = name_max(dir);
  const std::size_t extra = std::string("..XXXXXX").size();
  if (base.size() + extra > limit) base.resize(limit > extra ? limit - extra : 0);
  temp = dir + "/." + base + ".XXXXXX";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd >= 0) temp = name.data();
  return fd;
}

}  // namespace

std::string output_path_problem(const std::string& path, const std::string& what) {
  if (path.empty()) return what + " '' is not a file name: give the path of the file to write.";
  const std::string quoted = what + " '" + path + "'";
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return quoted + " is a directory: give the path of a file in it.";
    if (!S_ISREG(st.st_mode))
      return quoted +
             " is not a regular file: the output is written to a new file beside it and renamed into place, so "
             "give the path of a regular file.";
    if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || access(path.c_str(), W_OK) != 0)
      return quoted + " is a read-only file: make it writable or give another name.";
  }
  if (path.back() == '/') return quoted + " ends in '/': give the path of a file, not a directory.";
  const std::string dir = directory_of(path);
  struct stat dst {};
  if (stat(dir.c_str(), &dst) != 0)
    return "cannot write " + what + " file '" + path + "': the directory '" + dir + "' does not exist.";
  if (!S_ISDIR(dst.st_mode)) return "cannot write " + what + " file '" + path + "': '" + dir + "' is not a directory.";
  const std::size_t limit = name_max(dir);
  if (base_name(path).size() > limit)
    return "cannot write " + what + " file '" + path + "': its name is " + std::to_string(base_name(path).size()) +
           " bytes long, and the directory '" + dir + "' takes names of at most " + std::to_string(limit) + ".";
  std::string temp;
  const int fd = create_temp_beside(path, temp);
  if (fd < 0)
    return "cannot write " + what + " file '" + path + "': the directory '" + dir + "' is not writable (" +
           std::strerror(errno) + ").";
  close(fd);
  unlink(temp.c_str());
  return "";
}

void require_writable(const std::string& path, const std::string& what) {
  const std::string problem = output_path_problem(path, what);
  if (!problem.empty()) throw UsageError(problem);
}

bool same_output_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  if (stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  // Not both there yet: the same name in the same directory.
  if (base_name(a) != base_name(b)) return false;
  struct stat da {};
  struct stat db {};
  if (stat(directory_of(a).c_str(), &da) != 0 || stat(directory_of(b).c_str(), &db) != 0)
    return directory_of(a) == directory_of(b);
  return da.st_dev == db.st_dev && da.st_ino == db.st_ino;
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  std::string temp;
  const int fd = create_temp_beside(path, temp);
  if (fd < 0) throw std::runtime_error("cannot create a file beside '" + path + "': " + std::strerror(errno));
  // mkstemp makes the file private; give it the mode a new file would get (or the
  // mode of the file it replaces).
  struct stat st {};
  mode_t mode = 0;
  if (stat(path.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  bool ok = fchmod(fd, mode) == 0;
  std::size_t written = 0;
  while (ok && written < contents.size()) {
    const ssize_t w = ::write(fd, contents.data() + written, contents.size() - written);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) written += static_cast<std::size_t>(w);
  }
  const int saved = errno;
  ok = (close(fd) == 0) && ok;
  if (!ok) {
    unlink(temp.c_str());
    throw std::runtime_error("writing '" + path + "' failed: " + std::strerror(saved));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    throw std::runtime_error("cannot rename '" + temp + "' to '" + path + "': " + std::strerror(err));
  }
}

ArgParser::ArgParser(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void ArgParser::flag(const std::string& name, const std::string& help, bool* target) {
  specs_.push_back(Spec{name, "", help, target, nullptr, ""});
}

void ArgParser::option(const std::string& name, const std::string& metavar, const std::string& help,
                       std::function<void(const std::string&)> apply) {
  specs_.push_back(Spec{name, metavar, help, nullptr, std::move(apply), ""});
}

void ArgParser::refuse(const std::string& name, const std::string& sentence) {
  Spec spec;
  spec.name = name;
  spec.refusal = sentence;
  specs_.push_back(spec);
}

void ArgParser::after_parse(std::function<void()> check) { checks_.push_back(std::move(check)); }

bool ArgParser::given(const std::string& name) const {
  return std::find(given_.begin(), given_.end(), name) != given_.end();
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

bool ArgParser::parse(int argc, const char* const* argv) {
  given_.clear();
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
    if (!spec->refusal.empty()) throw UsageError(spec->refusal);
    given_.push_back(arg);
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
  for (const auto& check : checks_) check();
  return true;
}

std::string ArgParser::help() const {
  std::ostringstream out;
  out << "usage: " << program_ << " [options]\n\n" << summary_ << "\n\noptions:\n";
  for (const auto& s : specs_) {
    if (!s.refusal.empty()) continue;
    std::string left = "  " + s.name + (s.metavar.empty() ? "" : " " + s.metavar);
    if (left.size() < 24)
      left.resize(24, ' ');
    else
      left += "\n" + std::string(24, ' ');
    out << left << s.help << "\n";
  }
  std::string help_left = "  --help, -h";  // in the same column as the options above
  help_left.resize(24, ' ');
  out << help_left << "print this help\n";
  out << "\n" << number_grammar() << "\n";
  if (!epilog_.empty()) out << "\n" << epilog_ << "\n";
  return out.str();
}

void add_output_options(ArgParser& args, std::string& csv, std::string& json, const std::string& what) {
  args.option("--csv", "FILE", "also write " + what + " and the run's metadata as CSV",
              [&csv](const std::string& v) { csv = v; });
  args.option("--json", "FILE", "also write them as JSON", [&json](const std::string& v) { json = v; });
  args.after_parse([&args, &csv, &json] {
    if (args.given("--csv")) require_writable(csv, "--csv");
    if (args.given("--json")) require_writable(json, "--json");
    if (args.given("--csv") && args.given("--json") && same_output_file(csv, json))
      throw UsageError("--csv '" + csv + "' and --json '" + json + "' name the same file: give two different files.");
  });
}

void add_device_option(ArgParser& args, int& device) {
  args.option("--device", "D", "CUDA device ordinal (default 0)",
              [&device](const std::string& v) { device = static_cast<int>(parse_int(v, "--device", 0, 1023)); });
}

void add_size_options(ArgParser& args, std::uint64_t& n, std::vector<std::uint64_t>& sweep) {
  args.option("--n", "N", "elements to sum (default 2^24); 16777216, 2^24, 16M or 64MiB",
              [&n](const std::string& v) { n = parse_count(v, "--n", 4, 1, std::uint64_t{1} << 40); });
  args.option("--sweep", "LO:HI[:F]", "time every size from LO to HI, multiplying by F (default 2)",
              [&sweep](const std::string& v) { sweep = parse_sweep(v); });
  args.after_parse([&args, &sweep] {
    if (args.given("--sweep") && args.given("--n"))
      throw UsageError("--n and --sweep cannot be combined: --sweep " + format_count(sweep.front()) +
                       ":... gives the sizes, so drop one of them.");
  });
}

void add_pattern_option(ArgParser& args, std::string& pattern) {
  args.option("--pattern", "P", "input pattern (default uniform): uniform, ones, mixed_signs, large, with_nan, ...",
              [&pattern](const std::string& v) {
                try {
                  parse_pattern(v);
                } catch (const std::invalid_argument& e) {
                  throw UsageError(std::string("--pattern: ") + e.what() + ".");
                }
                pattern = v;
              });
}

void add_flush_option(ArgParser& args, FlushMode& flush) {
  args.option("--flush", "MODE",
              "how the L2 is flushed: read (default; leaves clean lines) or write (a memset; leaves dirty lines "
              "that the timed work must write back)",
              [&flush](const std::string& v) {
                if (!parse_flush_mode(v.c_str(), &flush)) throw UsageError("--flush '" + v + "': write read or write.");
              });
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
  args.after_parse([&args, &timing] {
    if (args.given("--min-reps") && timing.min_reps > timing.reps)
      throw UsageError("--min-reps " + std::to_string(timing.min_reps) + " is more than --reps " +
                       std::to_string(timing.reps) + ": the least number of repetitions cannot exceed the most.");
    timing.min_reps = std::min(timing.min_reps, timing.reps);
  });
  const std::string floor = with_min_reps ? "" : ", never fewer than " + std::to_string(timing.min_reps);
  args.option("--budget-ms", "MS",
              "time budget per row; fewer repetitions for slow rows" + floor + " (default " +
                  std::to_string(static_cast<long long>(timing.budget_ms)) + ")",
              [&timing](const std::string& v) { timing.budget_ms = parse_double(v, "--budget-ms", 1, 3.6e6); });
  args.flag("--warm-l2", "do not flush the L2 cache before each timed repetition", &warm_l2);
}

}  // namespace common
