// CUDA-event timing of one piece of enqueued GPU work.
//
// Every timed repetition is: flush the L2 (by default a kernel that reads a buffer of
// twice its size, outside the events), record start, enqueue the work, record stop,
// wait. The work must be
// everything that produces the answer and nothing else. The number of repetitions
// adapts to the work's speed: at most `reps`, at least `min_reps`, and no more than
// fit in `budget_ms` (a row whose repetitions were cut is marked `capped`).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

#include "device_buffer.hpp"
#include "stats.hpp"

namespace common {

struct TimingOptions {
  int reps = 100;           // repetitions wanted
  int min_reps = 3;         // never fewer, whatever the budget
  double budget_ms = 1000;  // wall-clock budget per measured item
  int warmup = 1;           // untimed runs first
  bool flush_l2 = true;     // --warm-l2 turns this off
};

struct Timing {
  Stats us;          // per-repetition time in microseconds
  int reps_run = 0;  // how many repetitions were timed
  bool capped = false;
};

// How the L2 is emptied of the input before a timed repetition.
//   read:  a kernel reads a buffer of twice the L2 size. The L2 is left holding that
//          buffer's lines, all clean, so evicting them during the timed work costs
//          nothing. The default.
//   write: a memset of the same buffer. It leaves the L2 full of dirty lines, and the
//          timed work pays to write them back to DRAM (measured on the H200: about
//          10 us per repetition, 1 % of a 2^30 sum and 4 % of a 2^28 one; chapter 00).
enum class FlushMode { read, write };

// Parses "read" or "write"; false for anything else.
bool parse_flush_mode(const char* text, FlushMode* mode);
const char* flush_mode_name(FlushMode mode);

// Evicts the input from L2 by reading or writing a buffer of at least twice its size.
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes, FlushMode mode = FlushMode::read);
  void flush(cudaStream_t stream);
  std::size_t bytes() const { return buffer_.bytes(); }
  FlushMode mode() const { return mode_; }

 private:
  DeviceBuffer<unsigned char> buffer_;
  DeviceBuffer<unsigned int> sink_;
  FlushMode mode_;
  unsigned char value_ = 0;
};

// Enqueues a kernel that reads `bytes` (a multiple of 16) of `buffer` and stores to
// `sink` only if what it read folds to a value that depends on `key` (never, for the
// flusher's constant buffer): the loads cannot be optimised away. common/l2_flush.cu.
void launch_read_flush(const unsigned char* buffer, std::size_t bytes, unsigned int* sink, unsigned int key,
                       cudaStream_t stream);

// Bytes the flush buffer takes for a given L2 size.
std::size_t l2_flush_bytes(std::size_t l2_bytes);

using GpuWork = std::function<void(cudaStream_t)>;

// Times `work` on `stream`. `flusher` may be null when options.flush_l2 is false.
Timing time_gpu_work(const GpuWork& work, cudaStream_t stream, const TimingOptions& options, L2Flusher* flusher);

// Number of repetitions to run given the cost of one (including the flush), clamped
// to [min_reps, reps] (pure, tested on the host).
int planned_repetitions(double one_rep_ms, const TimingOptions& options);

}  // namespace common
