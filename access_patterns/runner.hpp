// What every access-pattern program shares: its command line, the order of work
// (refuse bad input, find the GPU, prepare the inputs, then for each row a checked run
// and the timed runs), and the table, CSV and JSON it prints and writes.
//
// A program describes itself with a ProgramSpec: the rows it measures (pure: known
// from the options alone, so --list and --only work without a GPU) and a Workload,
// created once the device is known, that checks and launches a row.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "device_info.hpp"
#include "output.hpp"
#include "timing.hpp"

namespace access_patterns {

// The options of every program; a program adds its own through ProgramSpec::add_options.
struct Options {
  std::uint64_t n = 0;  // what n counts is the program's (ProgramSpec::n_unit)
  std::uint64_t seed = 1;
  int device = 0;
  common::TimingOptions timing;
  bool warm_l2 = false;
  bool run_once = false;
  bool list = false;
  std::string only;  // comma-separated row keys; empty: every row
  std::string csv;
  std::string json;
};

// One row of a program's table.
struct RowSpec {
  std::string key;                    // what --only takes and the CSV's key column: "stride-4"
  std::string label;                  // the table's description of the row
  double bytes = 0.0;                 // bytes the algorithm must move: the numerator of GB/s
  double moved_bytes = 0.0;           // bytes this variant actually moves, where it differs (0: the same)
  std::string base;                   // key of the row this one is compared with (vs-base); empty: none
  std::vector<common::Field> params;  // program-specific columns, the same keys in every row
  int variant = 0;                    // program-specific: which kernel
  long long param = 0;                // program-specific: its parameter (stride, offset, ...)
};

// The outcome of a checked run.
struct Verdict {
  bool ok = false;
  std::string detail;         // what was compared, or the first mismatch
  double max_rel_error = -1;  // largest relative error of a float result; negative when exact
};

// A program's device state. A checked run is reset(), launch(), verify().
class Workload {
 public:
  virtual ~Workload() = default;
  // Makes the outputs unable to pass unless the next launch writes them: poisons them,
  // or restores an input the row updates in place.
  virtual void reset(const RowSpec& row, cudaStream_t stream) = 0;
  // Enqueues the row's work on `stream` and nothing else: this is what is timed.
  virtual void launch(const RowSpec& row, cudaStream_t stream) = 0;
  // Copies the results back (waiting for the stream) and compares them with the host
  // reference.
  virtual Verdict verify(const RowSpec& row, cudaStream_t stream) = 0;
};

// reset(), launch(), verify(): one checked run.
Verdict run_checked(Workload& work, const RowSpec& row, cudaStream_t stream);

struct ProgramSpec {
  std::string name;                 // "01_stride_offset"
  std::string summary;              // the first paragraph of --help
  std::string epilog;               // program notes for --help (limits, what the bytes count)
  std::string n_unit = "elements";  // what --n counts
  std::uint64_t default_n = 0;
  std::uint64_t max_n = 0;
  std::size_t n_element_bytes = 4;  // --n given in bytes (64MiB) is divided by this
  std::string bytes_note;           // the table's footnote: what GB/s counts
  // What %peak is measured against; by default the theoretical DRAM bandwidth.
  std::string peak_note;                                      // empty: DRAM
  std::function<double(const common::DeviceInfo&)> peak_gbs;  // may be empty
  std::vector<common::Column> param_columns;                  // how the table shows RowSpec::params
  std::function<void(common::ArgParser&)> add_options;        // may be empty
  std::function<void(const Options&)> check_options;          // may throw common::UsageError
  std::function<std::vector<RowSpec>(const Options&)> plan;   // every row, in table order
  std::function<std::size_t(const Options&)> device_bytes;    // GPU memory of inputs and outputs
  std::function<common::Metadata(const Options&)> metadata;   // extra "# key: value" lines; may be empty
  std::function<std::unique_ptr<Workload>(const Options&, const common::DeviceInfo&)> prepare;
};

// Runs a program: parses argv, then runs, lists or times the rows. Returns the exit
// code: 0 every row verified, 1 a row failed its check or a CUDA error, 2 bad usage,
// 3 no CUDA device.
int run_access_program(int argc, const char* const* argv, const ProgramSpec& spec);

// The rows of `plan` that --only selects, in plan order (all when `only` is empty or "all").
// Throws common::UsageError naming an unknown key and listing the known ones.
std::vector<RowSpec> select_rows(const std::vector<RowSpec>& plan, const std::string& only);

// Fills `words` 32-bit words at `ptr` with the poison pattern of common::poison_value()
// (0xCAFEBABE) on `stream`: an output the kernel never writes cannot pass its check.
void poison_words(void* ptr, std::size_t words, cudaStream_t stream);

}  // namespace access_patterns
