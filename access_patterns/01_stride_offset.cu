// Access patterns 01: read bandwidth against the stride and the start offset.
//
// Idea: one read kernel, three address maps. Thread t of T adds up the elements
// j = t, t + T, t + 2T, ... (at most kPerThread of them) and writes its partial sum;
// element j is read from
//   stride-s:  in[j * s]   for j * s < n: the lanes of a warp read floats s apart;
//   offset-o:  in[o + j]   for j < n: consecutive floats starting o floats past a line;
//   random:    in[p(j)]    for j < n, p a random permutation computed by the kernel.
// Every stride row spans the same n floats, so it touches fewer of them as s grows.
// Expect: a warp's 32 floats fill 4 sectors of 32 bytes when consecutive; at stride s
// they fall in min(4s, 32) sectors, so from s = 2 to s = 8 the kernel moves as many
// sectors as at s = 1 for 1/s of the floats, and from s = 8 on every float costs a
// whole sector. An offset that is not a multiple of 8 floats adds a fifth sector per
// request (the neighbouring warp reads it too, so DRAM traffic barely grows). Random
// order costs a sector per float, like the largest strides, and defeats the caches.
// Bytes counted: 4 per float read plus 4 per partial sum written.
// Nsight Compute: l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum divided by
// l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum (the sect/req column predicts it),
// and dram__sectors_read.sum against the floats read.
// Chapter: chapters/24_global_memory_access.md
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "access_check.hpp"
#include "access_index.hpp"
#include "device_buffer.hpp"
#include "inputs.hpp"
#include "programs.hpp"

namespace access_patterns {
namespace {

constexpr unsigned kPerThread = 16;
constexpr unsigned kBlock = 256;
constexpr std::uint64_t kMaxOffset = 31;

enum Map { kStride, kOffset, kRandom };

ACCESS_HD inline std::uint64_t element_of(int map, std::uint64_t j, std::uint64_t reads, std::uint64_t param,
                                          unsigned bits) {
  if (map == kStride) return j * param;
  if (map == kOffset) return param + j;
  return random_index(j, reads, bits, param);  // param: the permutation's key
}

template <int kMap>
__global__ void read_sum(const float* __restrict__ in, std::uint64_t reads, std::uint64_t param, unsigned bits,
                         float* __restrict__ partials) {
  const std::uint64_t threads = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t t = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  float sum = 0.0f;
#pragma unroll
  for (unsigned r = 0; r < kPerThread; ++r) {
    const std::uint64_t j = t + r * threads;
    if (j < reads) sum += in[element_of(kMap, j, reads, param, bits)];
  }
  partials[t] = sum;
}

// Floats a row reads, and the key the random row's permutation uses.
std::uint64_t reads_of(const RowSpec& row, std::uint64_t n) {
  return row.variant == kStride ? ceil_div(n, static_cast<std::uint64_t>(row.param)) : n;
}
std::uint64_t threads_for(std::uint64_t reads) { return round_up(ceil_div(reads, kPerThread), kBlock); }
std::uint64_t param_of(const RowSpec& row, std::uint64_t seed) {
  return row.variant == kRandom ? common::hash64(seed, 0x5EED) : static_cast<std::uint64_t>(row.param);
}

void launch_row(const RowSpec& row, const float* in, std::uint64_t n, std::uint64_t seed, float* partials,
                cudaStream_t stream) {
  const std::uint64_t reads = reads_of(row, n);
  const unsigned grid = static_cast<unsigned>(threads_for(reads) / kBlock);
  const std::uint64_t param = param_of(row, seed);
  const unsigned bits = bits_for(reads);
  if (row.variant == kStride) read_sum<kStride><<<grid, kBlock, 0, stream>>>(in, reads, param, bits, partials);
  if (row.variant == kOffset) read_sum<kOffset><<<grid, kBlock, 0, stream>>>(in, reads, param, bits, partials);
  if (row.variant == kRandom) read_sum<kRandom><<<grid, kBlock, 0, stream>>>(in, reads, param, bits, partials);
  CUDA_CHECK_LAUNCH();
}

class StrideOffset : public Workload {
 public:
  StrideOffset(const Options& opt)
      : n_(opt.n),
        seed_(opt.seed),
        host_(common::make_input(common::Pattern::uniform, opt.seed, opt.n + kMaxOffset)),
        in_(host_.size()),
        partials_(threads_for(opt.n)) {
    common::copy_to_device(in_.get(), host_.data(), in_.bytes());
  }

  void reset(const RowSpec& row, cudaStream_t stream) override {
    poison_words(partials_.get(), threads_for(reads_of(row, n_)), stream);
  }

  Verdict verify(const RowSpec& row, cudaStream_t stream) override {
    const std::vector<float> got = copy_back(partials_.get(), threads_for(reads_of(row, n_)), stream);
    return check_sums(got, reference_read_sums(row, n_, seed_, host_), "partial sums");
  }

  void launch(const RowSpec& row, cudaStream_t stream) override {
    launch_row(row, in_.get(), n_, seed_, partials_.get(), stream);
  }

 private:
  std::uint64_t n_;
  std::uint64_t seed_;
  std::vector<float> host_;
  common::DeviceBuffer<float> in_;
  common::DeviceBuffer<float> partials_;
};

RowSpec make_row(const std::string& key, const std::string& label, int map, long long param, const Options& opt,
                 const std::string& base) {
  RowSpec r;
  r.key = key;
  r.label = label;
  r.variant = map;
  r.param = param;
  r.base = base;
  const std::uint64_t reads = reads_of(r, opt.n);
  r.bytes = 4.0 * static_cast<double>(reads + threads_for(reads));
  r.params = {common::text_field("map", map == kStride   ? "stride"
                                        : map == kOffset ? "offset"
                                                         : "random"),
              common::number_field("step", map == kRandom ? NAN : static_cast<double>(param)),
              common::number_field("reads", static_cast<double>(reads)),
              common::number_field("sectors_pred", predicted_sectors(r, opt.n, opt.seed))};
  return r;
}

}  // namespace

std::vector<SumRef> reference_read_sums(const RowSpec& row, std::uint64_t n, std::uint64_t seed,
                                        const std::vector<float>& in) {
  const std::uint64_t reads = reads_of(row, n);
  const std::uint64_t threads = threads_for(reads);
  const std::uint64_t param = param_of(row, seed);
  const unsigned bits = bits_for(reads);
  std::vector<SumRef> refs(threads);
  common::parallel_chunks(threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      SumRef& s = refs[t];
      for (std::uint64_t j = t; j < reads && s.terms < kPerThread; j += threads) {
        const double x = in[element_of(row.variant, j, reads, param, bits)];
        s.sum += x;
        s.sum_abs += std::fabs(x);
        ++s.terms;
      }
      s.depth = s.terms;
    }
  });
  return refs;
}

double predicted_sectors(const RowSpec& row, std::uint64_t n, std::uint64_t seed) {
  const std::uint64_t reads = reads_of(row, n);
  const std::uint64_t param = param_of(row, seed);
  const unsigned bits = bits_for(reads);
  // The kernel's warps read j = 32w .. 32w + 31; a random row is averaged over its first warps.
  const std::uint64_t warps = row.variant == kRandom ? std::min<std::uint64_t>(ceil_div(reads, kWarp), 256) : 1;
  double total = 0.0;
  for (std::uint64_t w = 0; w < warps; ++w) {
    std::vector<std::uint64_t> bytes;
    for (std::uint64_t j = w * kWarp; j < std::min(reads, (w + 1) * kWarp); ++j)
      bytes.push_back(4 * element_of(row.variant, j, reads, param, bits));
    total += static_cast<double>(distinct_sectors(bytes));
  }
  return total / static_cast<double>(warps);
}

ProgramSpec stride_offset_program() {
  ProgramSpec p;
  p.name = "01_stride_offset";
  p.summary =
      "Reads floats at strides 1 to 32, from start offsets 0 to 31 floats past a cache line, and in a random "
      "order; verifies every row's partial sums and times it.";
  p.epilog =
      "Every row reads from the same buffer of n + 31 floats; a stride-s row reads the ceil(n / s) floats "
      "at multiples of s.";
  p.default_n = std::uint64_t{1} << 26;
  p.max_n = std::uint64_t{1} << 32;
  p.bytes_note = "(4 bytes per float read + 4 per partial sum written)";
  p.param_columns = {{"step", "step", 4, 0}, {"sectors_pred", "sect/req", 8, 1}};
  p.plan = [](const Options& opt) {
    std::vector<RowSpec> rows;
    for (long long s = 1; s <= 32; s *= 2)
      rows.push_back(make_row("stride-" + std::to_string(s), "floats " + std::to_string(s) + " apart", kStride, s, opt,
                              s == 1 ? "" : "stride-1"));
    rows.push_back(make_row("random", "random permutation", kRandom, 0, opt, "stride-1"));
    for (long long o = 0; o <= static_cast<long long>(kMaxOffset); ++o)
      rows.push_back(make_row("offset-" + std::to_string(o), "start " + std::to_string(o) + " floats into a line",
                              kOffset, o, opt, o == 0 ? "" : "offset-0"));
    return rows;
  };
  p.device_bytes = [](const Options& opt) { return 4 * (opt.n + kMaxOffset + threads_for(opt.n)); };
  p.prepare = [](const Options& opt, const common::DeviceInfo&) { return std::make_unique<StrideOffset>(opt); };
  return p;
}

}  // namespace access_patterns
