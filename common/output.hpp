// Results as records: a readable table printed row by row, and CSV / JSON files
// with the run's metadata.
#pragma once

#include <cmath>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "device_info.hpp"

namespace common {

struct Field {
  std::string key;
  std::string text;     // used when !is_number
  double number = NAN;  // NaN prints as empty (CSV), null (JSON) and "-" (table)
  bool is_number = false;
};

using Record = std::vector<Field>;

Field text_field(std::string key, std::string text);
Field number_field(std::string key, double value);

// Ordered key/value pairs describing a run (device, driver, commit, date, n, ...).
using Metadata = std::vector<std::pair<std::string, std::string>>;

// Device, driver, CUDA versions, git commit and date (UTC) of this run.
Metadata base_metadata(const DeviceInfo& device);
std::string git_commit();
std::string utc_now_iso8601();

struct Column {
  std::string key;
  std::string title;
  int width = 10;
  int precision = 2;  // digits after the point for numbers
  bool left = false;  // left-align (for names)
};

// A fixed-width table that prints each row as soon as it is known.
class TablePrinter {
 public:
  TablePrinter(std::ostream& out, std::vector<Column> columns);
  void header();
  void row(const Record& record);
  void rule();
  static std::string format_number(double v, int precision);

 private:
  std::ostream& out_;
  std::vector<Column> columns_;
};

// Metadata as "# key: value" lines, then a header row and one line per record
// (keys of the first record define the columns).
std::string to_csv(const Metadata& meta, const std::vector<Record>& records);
// {"metadata": {...}, "rows": [{...}, ...]}
std::string to_json(const Metadata& meta, const std::vector<Record>& records);

// The end of every timing program's run: writes `csv` and `json` (each where not empty),
// prints `failed` after an empty line when a row failed its check, and returns the exit
// code (0 every row passed, 1 not).
int finish_run(const std::string& csv, const std::string& json, const Metadata& meta,
               const std::vector<Record>& records, bool all_ok,
               const std::string& failed = "Some rows FAILED their check.");

std::string csv_escape(const std::string& s);
std::string json_escape(const std::string& s);

}  // namespace common
