#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace common {

std::size_t l2_flush_bytes(std::size_t l2_bytes) {
  const std::size_t at_least = std::size_t{4} << 20;  // a sensible floor if the L2 size reads 0
  return std::max(2 * l2_bytes, at_least);
}

bool parse_flush_mode(const char* text, FlushMode* mode) {
  const std::string s = text == nullptr ? "" : text;
  if (s == "read") {
    *mode = FlushMode::read;
  } else if (s == "write") {
    *mode = FlushMode::write;
  } else {
    return false;
  }
  return true;
}

const char* flush_mode_name(FlushMode mode) { return mode == FlushMode::read ? "read" : "write"; }

L2Flusher::L2Flusher(std::size_t l2_bytes, FlushMode mode) : buffer_(l2_flush_bytes(l2_bytes)), sink_(1), mode_(mode) {
  // Defined contents, so the read flush never reads uninitialised memory.
  CUDA_CHECK(cudaMemset(buffer_.get(), 0x5a, buffer_.bytes()));
  CUDA_CHECK(cudaDeviceSynchronize());
}

void L2Flusher::flush(cudaStream_t stream) {
  // A different byte each time, so no layer can treat the write as a no-op, and a
  // different key each time for the read kernel's (never taken) store.
  value_ = static_cast<unsigned char>(value_ + 1);
  if (mode_ == FlushMode::write) {
    CUDA_CHECK(cudaMemsetAsync(buffer_.get(), value_, buffer_.bytes(), stream));
  } else {
    launch_read_flush(buffer_.get(), buffer_.bytes(), sink_.get(), value_, stream);
  }
}

int planned_repetitions(double one_rep_ms, const TimingOptions& options) {
  const int wanted = std::max(options.reps, 1);
  const int floor_reps = std::min(std::max(options.min_reps, 1), wanted);
  if (!(one_rep_ms > 0.0)) return wanted;
  const double fit = std::floor(options.budget_ms / one_rep_ms);
  if (fit >= wanted) return wanted;
  return std::max(floor_reps, static_cast<int>(fit));
}

Timing time_gpu_work(const GpuWork& work, cudaStream_t stream, const TimingOptions& options, L2Flusher* flusher) {
  const bool flush = options.flush_l2 && flusher != nullptr;
  for (int i = 0; i < options.warmup; ++i) {
    if (flush) flusher->flush(stream);
    work(stream);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));

  CudaEvent start;
  CudaEvent stop;
  std::vector<double> samples;
  auto one_rep = [&] {
    if (flush) flusher->flush(stream);
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    work(stream);
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    samples.push_back(static_cast<double>(ms) * 1e3);
  };

  // The first repetition also measures what one repetition costs in wall time.
  const auto t0 = std::chrono::steady_clock::now();
  one_rep();
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const int reps = planned_repetitions(first_ms, options);
  while (static_cast<int>(samples.size()) < reps) one_rep();

  Timing t;
  t.us = summarize(samples);
  t.reps_run = reps;
  t.capped = reps < std::max(options.reps, 1);
  return t;
}

}  // namespace common
