// Baseline: NVIDIA CUB's cub::DeviceHistogram::HistogramEven, the library call a
// reader would use instead of writing a histogram: bins of equal width over
// [0, 256) for bytes and [0, 65536) for 16-bit values (width 16: bin v >> 4). Its
// temporary storage is sized by the planner and allocated by the runner, outside the
// timed region.
// Chapter: chapters/27_histogram.md
#include <cub/device/device_histogram.cuh>

#include <cstdint>

#include "cuda_check.hpp"
#include "stage.hpp"

namespace histogram {
namespace {

// One call of HistogramEven: with temp == nullptr it only sizes the temporary storage.
template <class T>
std::size_t cub_histogram(std::size_t n, unsigned bins, void* temp, std::size_t bytes, const T* in, unsigned* hist,
                          cudaStream_t stream) {
  const int upper = 1 << (8 * sizeof(T));
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp, bytes, in, hist, static_cast<int>(bins) + 1, 0, upper,
                                                 static_cast<std::int64_t>(n), stream));
  return bytes;
}

Plan plan(std::size_t n, Bins bins, const common::DeviceInfo&) {
  Plan p;
  p.scratch_bytes = bins == Bins::b256 ? cub_histogram<unsigned char>(n, 256, nullptr, 0, nullptr, nullptr, nullptr)
                                       : cub_histogram<unsigned short>(n, 4096, nullptr, 0, nullptr, nullptr, nullptr);
  return p;
}

void launch(const HistArgs& a) {
  if (a.bins == Bins::b256)
    cub_histogram(a.n, 256, a.scratch, a.scratch_bytes, static_cast<const unsigned char*>(a.in), a.hist, a.stream);
  else
    cub_histogram(a.n, 4096, a.scratch, a.scratch_bytes, static_cast<const unsigned short*>(a.in), a.hist, a.stream);
}

}  // namespace

Stage describe_cub() {
  Stage s;
  s.kind = Kind::baseline;
  s.id = "cub";
  s.title = "CUB HistogramEven";
  s.source = "histogram/baselines/cub_histogram.cu";
  s.chapter = "chapters/27_histogram.md";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace histogram
