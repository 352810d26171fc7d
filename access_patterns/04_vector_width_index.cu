// Access patterns 04: load width (float, float2, float4) and 32- against 64-bit indices.
//
// Idea: out[i] = a x in[i] over n floats, one kernel template instantiated five ways.
// Vec sets how many floats one load and one store instruction move (4, 8 or 16 bytes);
// Index is the type of the loop counter and the array index (unsigned int or
// std::size_t). A grid-stride loop over whole vectors, then the first threads of block
// 0 scale the last n mod width floats.
// Expect: wider loads issue 2 or 4 times fewer memory instructions for the same bytes;
// once enough of them are in flight the DRAM is the limit and the widths meet. A 32-bit
// index saves the instructions that carry the upper half of every 64-bit address and
// comparison (scripts/device.sh access dumps both with cuobjdump -sass), which
// matters only where the kernel is short of issue slots, not when it waits on DRAM.
// The 32-bit rows are correct for n <= 2^31 (i + stride stays below 2^32), the
// program's limit.
// Bytes counted: 4 read + 4 written per float.
// Nsight Compute: smsp__inst_executed.sum (instructions), and
// l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum (4, 2 or 1 requests per 32 floats).
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
constexpr float kScale = 3.0f;

__device__ inline float scaled(float v, float a) { return a * v; }
__device__ inline float2 scaled(float2 v, float a) { return make_float2(a * v.x, a * v.y); }
__device__ inline float4 scaled(float4 v, float a) { return make_float4(a * v.x, a * v.y, a * v.z, a * v.w); }

template <typename Vec, typename Index>
__global__ void scale_kernel(const float* __restrict__ in, float* __restrict__ out, Index n, float a) {
  constexpr Index kWidth = sizeof(Vec) / sizeof(float);
  const Index vectors = n / kWidth;
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  const Vec* vin = reinterpret_cast<const Vec*>(in);
  Vec* vout = reinterpret_cast<Vec*>(out);
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride)
    vout[i] = scaled(vin[i], a);
  const Index rest = vectors * kWidth + threadIdx.x;
  if (blockIdx.x == 0 && rest < n) out[rest] = a * in[rest];
}

enum Variant { kFloat64, kFloat32, kFloat2_64, kFloat4_64, kFloat4_32 };

class VectorWidth : public Workload {
 public:
  VectorWidth(const Options& opt, const common::DeviceInfo& device)
      : n_(opt.n),
        grid_(static_cast<unsigned>(std::min<std::uint64_t>(ceil_div(opt.n, kBlock), 8ull * device.sm_count))),
        host_(common::make_input(common::Pattern::mixed_signs, opt.seed, opt.n)),
        expected_(reference_scale(host_, kScale)),
        in_(opt.n),
        out_(opt.n) {
    common::copy_to_device(in_.get(), host_.data(), in_.bytes());
  }

  void reset(const RowSpec&, cudaStream_t stream) override { poison_words(out_.get(), n_, stream); }

  Verdict verify(const RowSpec&, cudaStream_t stream) override {
    return compare_exact(copy_back(out_.get(), n_, stream), expected_, "outputs");
  }

  void launch(const RowSpec& row, cudaStream_t stream) override {
    const float* in = in_.get();
    float* out = out_.get();
    const auto n32 = static_cast<unsigned>(n_);
    switch (row.variant) {
      case kFloat64: scale_kernel<float, std::size_t><<<grid_, kBlock, 0, stream>>>(in, out, n_, kScale); break;
      case kFloat32: scale_kernel<float, unsigned><<<grid_, kBlock, 0, stream>>>(in, out, n32, kScale); break;
      case kFloat2_64: scale_kernel<float2, std::size_t><<<grid_, kBlock, 0, stream>>>(in, out, n_, kScale); break;
      case kFloat4_64: scale_kernel<float4, std::size_t><<<grid_, kBlock, 0, stream>>>(in, out, n_, kScale); break;
      case kFloat4_32: scale_kernel<float4, unsigned><<<grid_, kBlock, 0, stream>>>(in, out, n32, kScale); break;
    }
    CUDA_CHECK_LAUNCH();
  }

 private:
  std::uint64_t n_;
  unsigned grid_;
  std::vector<float> host_;
  std::vector<float> expected_;
  common::DeviceBuffer<float> in_;
  common::DeviceBuffer<float> out_;
};

}  // namespace

std::vector<float> reference_scale(const std::vector<float>& in, float a) {
  std::vector<float> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = a * in[i];
  return out;
}

ProgramSpec vector_width_index_program() {
  ProgramSpec p;
  p.name = "04_vector_width_index";
  p.summary =
      "Scales n floats (out = 3 x in) with 4-, 8- and 16-byte loads and stores, and with 32- and 64-bit loop "
      "indices; verifies every output bit for bit and times each.";
  p.epilog = "n is at most 2^31 so that the 32-bit rows are correct.";
  p.default_n = std::uint64_t{1} << 26;
  p.max_n = std::uint64_t{1} << 31;
  p.bytes_note = "(4 bytes read + 4 written per float)";
  p.param_columns = {{"width_bytes", "width", 5, 0}, {"index_bits", "index", 5, 0}};
  p.plan = [](const Options& opt) {
    struct V {
      Variant v;
      const char* key;
      const char* label;
      int width;
      int bits;
    };
    const V variants[] = {{kFloat64, "float-i64", "float loads, 64-bit index", 4, 64},
                          {kFloat32, "float-i32", "float loads, 32-bit index", 4, 32},
                          {kFloat2_64, "float2-i64", "float2 loads, 64-bit index", 8, 64},
                          {kFloat4_64, "float4-i64", "float4 loads, 64-bit index", 16, 64},
                          {kFloat4_32, "float4-i32", "float4 loads, 32-bit index", 16, 32}};
    std::vector<RowSpec> rows;
    for (const V& v : variants) {
      RowSpec r;
      r.key = v.key;
      r.label = v.label;
      r.variant = v.v;
      r.bytes = 8.0 * static_cast<double>(opt.n);
      r.base = v.v == kFloat64 ? "" : "float-i64";
      r.params = {common::number_field("width_bytes", v.width), common::number_field("index_bits", v.bits)};
      rows.push_back(r);
    }
    return rows;
  };
  p.device_bytes = [](const Options& opt) { return 8 * opt.n; };
  p.prepare = [](const Options& opt, const common::DeviceInfo& device) {
    return std::make_unique<VectorWidth>(opt, device);
  };
  return p;
}

}  // namespace access_patterns
