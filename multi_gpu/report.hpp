// The table and the CSV/JSON records of the multi-GPU sum, one format for both programs
// (multi_gpu_sum: one process drives every GPU; multi_gpu_mpi: one process per GPU), so
// their result files read the same. Chapter: chapters/26_multi_gpu.md
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "methods.hpp"
#include "output.hpp"
#include "verify.hpp"

namespace multi_gpu {

std::vector<common::Column> table_columns();

// Everything one row reports.
struct RowFacts {
  int gpus = 1;
  std::uint64_t n = 0;  // per GPU
  Method method = Method::shard_then_one_float;
  const Outcome* outcome = nullptr;     // the checked run
  const TimedOutcome* timed = nullptr;  // null when the row was not timed
  common::Reference reference;          // of the whole array
  double one_gpu_us = 0.0;              // shard_then_one_float on 1 GPU at this n in this run, or NaN
  double peak_gbs = 0.0;                // one GPU's theoretical bandwidth
  std::string copy_path = "-";          // copy_to_one's path ("peer", "host", "nccl", ...)
  std::string start = "gate";           // how a timed row's repetitions started: "gate", "host", ...
};

// The row's record: n, gpus, n_total, key, method, the timing fields, gbs, gbs_per_gpu,
// pct_peak, efficiency, result, reference, abs_error, rel_error, tolerance, error_depth,
// check, deterministic, same_bits_on_gpus, copy_path, start (the CSV's columns).
common::Record make_record(const RowFacts& row);
// The table's row: the record with n_text in front.
common::Record table_record(const common::Record& record, std::uint64_t n);
// The line under a failed row ("  <method> failed its check: <detail>"), or "" when it passed.
std::string failure_line(const RowFacts& row);

}  // namespace multi_gpu
