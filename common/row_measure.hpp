// How every runner measures one row of its table, the same way in each program:
//   1. checked(): one launch whose result is checked, inside an NVTX range named after
//      the row (what --run-once, Nsight Compute and Nsight Systems see); poisoned_run()
//      is that launch: poison the output, launch, copy the output back, wait;
//   2. timed(): the timed repetitions, inside the range "<name> (timed)", with the L2
//      flushed before each unless warm_l2. A row whose checked run took over 100 ms
//      gets no second warm-up: the checked run already warmed everything up.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "timing.hpp"

namespace common {

// Writes `poison` to the `count` values at `out` (device memory), enqueues
// launch(args...) on `stream`, copies the values back and waits for them. A launch that
// does not write its output leaves the poison there, which no check accepts.
template <typename T, typename Launch, typename... Args>
std::vector<T> poisoned_run(T* out, std::size_t count, T poison, Launch&& launch, cudaStream_t stream, Args&&... args) {
  const std::vector<T> fill(count, poison);
  CUDA_CHECK(cudaMemcpyAsync(out, fill.data(), count * sizeof(T), cudaMemcpyHostToDevice, stream));
  launch(args...);
  std::vector<T> result(count);
  CUDA_CHECK(cudaMemcpyAsync(result.data(), out, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

// One value: a sum, a dot product, a bit pattern.
template <typename T, typename Launch>
T poisoned_run(T* out, T poison, Launch&& launch, cudaStream_t stream) {
  return poisoned_run(out, 1, poison, launch, stream).front();
}

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

  // checked() of the poisoned_run of one value, whose launch is launch(args...) (a
  // stage's launcher and its arguments, say): no closure between the row and the launch.
  template <typename T, typename Launch, typename... Args>
  T checked_run(T* out, T poison, cudaStream_t stream, Launch&& launch, Args&&... args) {
    const auto t0 = std::chrono::steady_clock::now();
    nvtxRangePushA(name_);
    const T result = poisoned_run(out, 1, poison, launch, stream, args...).front();
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
