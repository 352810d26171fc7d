// How every runner measures one row of its table, the same way in each program:
//   1. checked(): one launch whose result is checked, inside an NVTX range named after
//      the row (what --run-once, Nsight Compute and Nsight Systems see);
//   2. timed(): the timed repetitions, inside the range "<name> (timed)", with the L2
//      flushed before each unless warm_l2. A row whose checked run took over 100 ms
//      gets no second warm-up: the checked run already warmed everything up.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <string>

#include "timing.hpp"

namespace common {

class RowMeasure {
 public:
  explicit RowMeasure(const char* name) : name_(name) {}

  template <typename RunChecked>
  auto checked(RunChecked&& run_checked) {
    const auto t0 = std::chrono::steady_clock::now();
    nvtxRangePushA(name_);
    auto result = run_checked();
    nvtxRangePop();
    checked_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return result;
  }

  template <typename Launch>
  Timing timed(Launch&& launch, TimingOptions timing, bool warm_l2, cudaStream_t stream, L2Flusher* flusher) const {
    timing.flush_l2 = !warm_l2;
    if (checked_ms_ > 100.0) timing.warmup = 0;
    const std::string range = std::string(name_) + " (timed)";
    nvtxRangePushA(range.c_str());
    const Timing t = time_gpu_work([&](cudaStream_t) { launch(); }, stream, timing, flusher);
    nvtxRangePop();
    return t;
  }

 private:
  const char* name_;
  double checked_ms_ = 0.0;
};

}  // namespace common
