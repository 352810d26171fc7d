#include "output.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "cli.hpp"

#ifndef REDUCTION_SOURCE_DIR
#define REDUCTION_SOURCE_DIR "."
#endif

namespace common {

Field text_field(std::string key, std::string text) {
  Field f;
  f.key = std::move(key);
  f.text = std::move(text);
  return f;
}

Field number_field(std::string key, double value) {
  Field f;
  f.key = std::move(key);
  f.number = value;
  f.is_number = true;
  return f;
}

namespace {

std::string run_command(const std::string& cmd) {
  std::string out;
  std::FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr) out += buf.data();
  pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string exact_number(double v) {
  if (std::isnan(v)) return "";
  std::ostringstream s;
  s << std::setprecision(10) << v;
  return s.str();
}

}  // namespace

std::string git_commit() {
  // A copy of the sources on another machine (without .git, or with a .git that is not
  // the one the sources came from) is told its commit through the environment; that
  // takes precedence over asking git.
  const char* env = std::getenv("REDUCTION_COMMIT");
  if (env != nullptr && *env != '\0') return env;
  const std::string dir = REDUCTION_SOURCE_DIR;
  const std::string commit = run_command("git -C '" + dir + "' rev-parse --short=12 HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  const std::string dirty =
      run_command("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null | head -n 1");
  return dirty.empty() ? commit : commit + "-dirty";
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Metadata base_metadata(const DeviceInfo& d) {
  std::ostringstream peak;
  peak << std::fixed << std::setprecision(1) << d.peak_bandwidth_gbs();
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  return {
      {"device", d.name},
      {"compute_capability", d.compute_capability()},
      {"sm_count", std::to_string(d.sm_count)},
      {"l2_bytes", std::to_string(d.l2_bytes)},
      {"memory_clock_khz", std::to_string(d.memory_clock_khz)},
      {"memory_bus_bits", std::to_string(d.memory_bus_bits)},
      {"peak_gbs", peak.str()},
      {"driver", d.driver},
      {"cuda_runtime", version(d.cuda_runtime_version)},
      {"cuda_driver_api", version(d.cuda_driver_version)},
      {"commit", git_commit()},
      {"date", utc_now_iso8601()},
  };
}

TablePrinter::TablePrinter(std::ostream& out, std::vector<Column> columns) : out_(out), columns_(std::move(columns)) {}

std::string TablePrinter::format_number(double v, int precision) {
  if (std::isnan(v)) return "-";
  std::ostringstream s;
  if (v != 0.0 && (std::fabs(v) < 1e-3 || std::fabs(v) >= 1e9)) {
    s << std::scientific << std::setprecision(1) << v;
  } else {
    s << std::fixed << std::setprecision(precision) << v;
  }
  return s.str();
}

void TablePrinter::header() {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    const auto& c = columns_[i];
    out_ << (i ? " " : "") << (c.left ? std::left : std::right) << std::setw(c.width) << c.title;
  }
  out_ << std::right << "\n";
  rule();
}

void TablePrinter::rule() {
  std::size_t total = 0;
  for (const auto& c : columns_) total += static_cast<std::size_t>(c.width) + 1;
  out_ << std::string(total > 0 ? total - 1 : 0, '-') << "\n" << std::flush;
}

void TablePrinter::row(const Record& record) {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    const auto& c = columns_[i];
    std::string cell = "-";
    for (const auto& f : record) {
      if (f.key != c.key) continue;
      cell = f.is_number ? format_number(f.number, c.precision) : f.text;
    }
    out_ << (i ? " " : "") << (c.left ? std::left : std::right) << std::setw(c.width) << cell;
  }
  out_ << std::right << "\n" << std::flush;
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string to_csv(const Metadata& meta, const std::vector<Record>& records) {
  std::ostringstream out;
  for (const auto& [k, v] : meta) out << "# " << k << ": " << v << "\n";
  if (records.empty()) return out.str();
  const Record& first = records.front();
  for (std::size_t i = 0; i < first.size(); ++i) out << (i ? "," : "") << csv_escape(first[i].key);
  out << "\n";
  for (const auto& r : records) {
    if (r.size() != first.size()) throw std::logic_error("to_csv: records have different columns");
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (r[i].key != first[i].key) throw std::logic_error("to_csv: records have different columns");
      out << (i ? "," : "") << (r[i].is_number ? exact_number(r[i].number) : csv_escape(r[i].text));
    }
    out << "\n";
  }
  return out.str();
}

std::string to_json(const Metadata& meta, const std::vector<Record>& records) {
  std::ostringstream out;
  out << "{\n  \"metadata\": {";
  for (std::size_t i = 0; i < meta.size(); ++i)
    out << (i ? "," : "") << "\n    \"" << json_escape(meta[i].first) << "\": \"" << json_escape(meta[i].second)
        << "\"";
  out << "\n  },\n  \"rows\": [";
  for (std::size_t r = 0; r < records.size(); ++r) {
    out << (r ? "," : "") << "\n    {";
    for (std::size_t i = 0; i < records[r].size(); ++i) {
      const Field& f = records[r][i];
      out << (i ? ", " : "") << "\"" << json_escape(f.key) << "\": ";
      if (f.is_number)
        out << (std::isfinite(f.number) ? exact_number(f.number) : "null");
      else
        out << "\"" << json_escape(f.text) << "\"";
    }
    out << "}";
  }
  out << "\n  ]\n}\n";
  return out.str();
}

int finish_run(const std::string& csv, const std::string& json, const Metadata& meta,
               const std::vector<Record>& records, bool all_ok, const std::string& failed) {
  if (!csv.empty()) write_file_atomically(csv, to_csv(meta, records));
  if (!json.empty()) write_file_atomically(json, to_json(meta, records));
  if (!all_ok) std::cout << "\n" << failed << "\n";
  return all_ok ? 0 : 1;
}

}  // namespace common
