// Access patterns 07: kernel fusion, z = (x + y) x s as two kernels against one.
//
// Idea: a memory-bound kernel's time is the bytes it moves divided by the bandwidth,
// so the way to make a chain of such kernels faster is to move fewer bytes.
//   two-kernels  t = x + y, then z = t x s: t is written to DRAM by the first kernel
//                and read back by the second. 8 + 4 + 4 + 4 = 20 bytes per element.
//   fused        z = (x + y) x s in one kernel: t lives in a register. 12 bytes.
// Both compute the same float operations in the same order, so z must match the host
// bit for bit.
// Expect: the two rows run at about the same moved-GB/s, so the fused one takes about
// 12/20 of the time; its effective GB/s (counting 12 bytes for both) is the higher.
// Bytes counted: 12 per element (x and y read, z written), for both rows; moved-GB/s
// counts what each row moves (20 and 12 bytes per element).
// Nsight Compute: dram__bytes_read.sum + dram__bytes_write.sum summed over the row's
// kernels, about 20n and 12n.
// Chapter: chapters/24_global_memory_access.md
#include <string>
#include <vector>

#include "access_check.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "programs.hpp"

namespace access_patterns {
namespace {

constexpr unsigned kBlock = 256;
constexpr float kFactor = 0.75f;
enum Variant { kTwoKernels, kFused };

__global__ void add(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ t, std::uint64_t n) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) t[i] = x[i] + y[i];
}

__global__ void scale(const float* __restrict__ t, float s, float* __restrict__ z, std::uint64_t n) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) z[i] = t[i] * s;
}

__global__ void add_scale(const float* __restrict__ x, const float* __restrict__ y, float s, float* __restrict__ z,
                          std::uint64_t n) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    z[i] = (x[i] + y[i]) * s;
}

class Fusion : public Workload {
 public:
  Fusion(const Options& opt, const common::DeviceInfo& device)
      : n_(opt.n),
        grid_(static_cast<unsigned>(std::min<std::uint64_t>(ceil_div(opt.n, kBlock), 8ull * device.sm_count))),
        x_host_(common::make_input(common::Pattern::mixed_signs, opt.seed, opt.n)),
        y_host_(common::make_input(common::Pattern::mixed_signs, opt.seed + 1, opt.n)),
        expected_(reference_add_scale(x_host_, y_host_, kFactor)),
        x_(opt.n),
        y_(opt.n),
        t_(opt.n),
        z_(opt.n) {
    common::copy_to_device(x_.get(), x_host_.data(), x_.bytes());
    common::copy_to_device(y_.get(), y_host_.data(), y_.bytes());
  }

  void reset(const RowSpec&, cudaStream_t stream) override {
    poison_words(t_.get(), n_, stream);
    poison_words(z_.get(), n_, stream);
  }

  Verdict verify(const RowSpec&, cudaStream_t stream) override {
    return compare_exact(copy_back(z_.get(), n_, stream), expected_, "outputs");
  }

  void launch(const RowSpec& row, cudaStream_t stream) override {
    if (row.variant == kTwoKernels) {
      add<<<grid_, kBlock, 0, stream>>>(x_.get(), y_.get(), t_.get(), n_);
      CUDA_CHECK_LAUNCH();
      scale<<<grid_, kBlock, 0, stream>>>(t_.get(), kFactor, z_.get(), n_);
    }
    if (row.variant == kFused) add_scale<<<grid_, kBlock, 0, stream>>>(x_.get(), y_.get(), kFactor, z_.get(), n_);
    CUDA_CHECK_LAUNCH();
  }

 private:
  std::uint64_t n_;
  unsigned grid_;
  std::vector<float> x_host_;
  std::vector<float> y_host_;
  std::vector<float> expected_;
  common::DeviceBuffer<float> x_;
  common::DeviceBuffer<float> y_;
  common::DeviceBuffer<float> t_;
  common::DeviceBuffer<float> z_;
};

}  // namespace

std::vector<float> reference_add_scale(const std::vector<float>& x, const std::vector<float>& y, float s) {
  std::vector<float> z(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float t = x[i] + y[i];  // rounded to float first, as both kernels do
    z[i] = t * s;
  }
  return z;
}

ProgramSpec fusion_program() {
  ProgramSpec p;
  p.name = "07_fusion";
  p.summary =
      "Computes z = (x + y) x 0.75 over n floats as two kernels (t = x + y, then z = t x 0.75) and as one fused "
      "kernel; verifies z bit for bit and times both.";
  p.epilog = "GB/s counts the 12 bytes per element the computation needs; moved-GB/s what each row moves.";
  p.default_n = std::uint64_t{1} << 26;
  p.max_n = std::uint64_t{1} << 32;
  p.bytes_note = "(8 bytes read + 4 written per element)";
  p.param_columns = {{"kernels", "kernels", 7, 0}};
  p.plan = [](const Options& opt) {
    const double n = static_cast<double>(opt.n);
    RowSpec two;
    two.key = "two-kernels";
    two.label = "t = x + y; z = t x s";
    two.variant = kTwoKernels;
    two.bytes = 12.0 * n;
    two.moved_bytes = 20.0 * n;
    two.params = {common::number_field("kernels", 2)};
    RowSpec fused;
    fused.key = "fused";
    fused.label = "z = (x + y) x s";
    fused.variant = kFused;
    fused.bytes = 12.0 * n;
    fused.moved_bytes = 12.0 * n;
    fused.base = "two-kernels";
    fused.params = {common::number_field("kernels", 1)};
    return std::vector<RowSpec>{two, fused};
  };
  p.device_bytes = [](const Options& opt) { return 16 * opt.n; };
  p.prepare = [](const Options& opt, const common::DeviceInfo& device) {
    return std::make_unique<Fusion>(opt, device);
  };
  return p;
}

}  // namespace access_patterns
