// The lab's measuring harness: what every program in lab/ shares.
//
// An experiment measures designs that were tried for the single-pass stages (13 to 16)
// and were kept or left out; lab/notes/90_lab_notes.md reports what they decided. Each
// experiment is one program (build/lab/<name>) that times its designs on one
// input (uniform in [0, 1), seed 1) at a fixed list of sizes, each row next to CUB's
// DeviceReduce::Sum at the same n in the same process. A row is measured as the
// runner measures a stage (common/row_measure.hpp): one checked launch, poisoned
// output first, against the double-precision reference; then timed repetitions with
// the L2 flushed (read) before each, median of CUDA-event times. A DIAGNOSTIC row
// computes a wrong sum on purpose (it says so) and is timed without a check.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "device_buffer.hpp"
#include "device_info.hpp"
#include "output.hpp"
#include "row_measure.hpp"
#include "timing.hpp"
#include "verify.hpp"

namespace lab {

// One row of an experiment's table and CSV.
struct Row {
  std::string design;
  std::size_t n = 0;
  int block = 0;
  unsigned grid = 0;
  double us = 0.0;      // median time
  double cub_us = 0.0;  // CUB's median at the same n
  std::string check;    // ok, FAIL, or diagnostic
};

// The CSV and JSON columns of a row: key, n, block, grid, median_us, cub_us, vs_cub, check.
common::Record row_record(const Row& row);

class Experiment {
 public:
  // The input (max_n floats), the output, two zeroed scratch areas and CUB's temporary
  // storage, all on `device`. `name` heads the table.
  Experiment(const char* name, const common::DeviceInfo& device, std::size_t max_n,
             std::vector<std::uint64_t> sizes = {});
  // The sizes of a program that has them (Program::sizes or --sweep), in increasing order.
  const std::vector<std::uint64_t>& sizes() const { return sizes_; }

  // The rows that follow are at n: the double reference of the first n inputs, and
  // CUB's sum at n, checked and timed.
  void set_n(std::size_t n);
  // The reference only, for an experiment without a CUB column.
  void set_reference(std::size_t n);

  // Measures one design (checked unless `diagnostic`, then timed), prints its table
  // line and keeps the row. `launch` enqueues the design's whole work on stream().
  void measure(const std::string& design, int block, unsigned grid, const std::function<void()>& launch,
               bool diagnostic = false);

  // Writes common::poison_value() into out(); check_output() then reads out() back and
  // checks it against the reference at n(), so a design that writes nothing fails.
  void poison_output();
  common::Check check_output() const;
  // Counts a failed check that is not a row of the table (printed).
  void fail(const std::string& what);
  bool all_ok() const { return failures_ == 0; }
  const std::vector<Row>& rows() const { return rows_; }

  const float* in() const { return input_.get(); }
  float* out() const { return out_.get(); }
  std::size_t n() const { return n_; }
  cudaStream_t stream() const { return stream_.get(); }
  const common::DeviceInfo& device() const { return device_; }
  common::L2Flusher& flusher() { return flusher_; }
  // Plain scratch, zeroed once: a ticket counter at its start (the designs with a
  // ticket of their own put it back to zero), one float per block from byte 4096.
  unsigned* ticket() const { return reinterpret_cast<unsigned*>(scratch_.get()); }
  float* partials() const { return reinterpret_cast<float*>(scratch_.get() + 4096); }
  // The tagged ticket kernel's workspace (single_pass/single_pass.cuh): ticket, tag
  // and slots, zeroed once; every launch leaves it ready for the next.
  unsigned char* ticket_scratch() const { return ticket_scratch_.get(); }

 private:
  // One checked launch (poisoned output, common::poisoned_run) inside `measure`'s range,
  // checked against the reference at n().
  common::Check checked_run(common::RowMeasure& measure, const std::function<void()>& launch) const;

  std::string name_;
  const common::DeviceInfo& device_;
  common::CudaStream stream_;
  common::L2Flusher flusher_;
  std::vector<float> host_;
  common::DeviceBuffer<float> input_;
  common::DeviceBuffer<float> out_;
  common::DeviceBuffer<unsigned char> scratch_;
  common::DeviceBuffer<unsigned char> ticket_scratch_;
  common::DeviceBuffer<unsigned char> cub_temp_;
  std::size_t cub_bytes_ = 0;
  std::size_t n_ = 0;
  common::Reference ref_{};
  double cub_us_ = 0.0;
  std::vector<Row> rows_;
  int failures_ = 0;
  bool header_printed_ = false;
  std::vector<std::uint64_t> sizes_;
};

// One experiment program: its name (the program's and the CSV's "experiment"), the
// description its --help prints, the largest n it measures, and its body, which
// measures rows on the Experiment and returns any records of its own (written to
// the CSV before the rows).
struct Program {
  const char* name;
  std::string summary;
  std::size_t max_n;
  std::function<std::vector<common::Record>(Experiment&)> body;
  // Sizes the body walks through Experiment::sizes(), when it does: the program then
  // takes --sweep LO:HI (2^10 to 2^30) to change them; empty: fixed sizes, no --sweep.
  std::vector<std::uint64_t> sizes = {};
};

// The whole program: options (--csv FILE, --json FILE, --device D, --help) through
// common/cli.hpp, every refusal before the GPU is looked for; then the body, the
// result files and the exit code: 0 every check passed, 1 a check failed or a CUDA
// error occurred, 2 bad usage, 3 no CUDA device.
int experiment_main(int argc, const char* const* argv, const Program& program);

}  // namespace lab
