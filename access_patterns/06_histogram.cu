// Access patterns 06: a 256-bin histogram of bytes, four ways, on uniform and on
// skewed data.
//
// Idea: counting is a read-modify-write of a shared counter, so threads that hit the
// same bin must take turns. The same count four ways:
//   global         one atomicAdd on the global histogram per byte;
//   global-match   the lanes of a warp that hold the same byte find each other with
//                  __match_any_sync, and one of them adds the group's size: one global
//                  atomic per distinct byte per warp step;
//   shared         each block counts into its own histogram in shared memory
//                  ("privatised"), then adds its 256 counts to the global one;
//   shared-match   privatised and warp-aggregated.
// Each thread loads 4 bytes at a time; a warp steps through the data together, so
// every lane reaches __match_any_sync (lanes past the end carry a bin no byte has).
// Data: "uniform" bytes spread evenly over the 256 bins; "skewed" bytes are
// floor(256 u^8) for u uniform in [0, 1): half of them fall in bin 0.
// Expect: global slowest, and much slower on skewed data, where the atomics queue at
// one address in the L2; warp aggregation there turns up to 32 colliding atomics into
// one and helps most on skewed data. Privatising moves the counting into the SM and is
// fastest by far, the same on both data. Aggregation makes the shared count several
// times slower, not faster: the compiler already turns atomicAdd(&hist[bin], 1u) on
// shared memory into ATOMS.POPC.INC, an increment by the number of lanes sharing an
// address, so __match_any_sync only adds its own cost, which grows with the distinct
// bytes in the warp (uniform data about 30 of 32 lanes, skewed about 15; chapter 25).
// Bytes counted: 1 per byte read plus the 1 KiB histogram written.
// Nsight Compute: smsp__inst_executed_op_global_red.sum (global atomics without a
// return value) against smsp__inst_executed_op_shared_atom.sum, per variant.
// Chapter: chapters/25_shared_memory_and_atomics.md
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

constexpr unsigned kBlock = 256;
constexpr unsigned kNoBin = kBins;  // the bin of a lane with no byte
enum Variant { kGlobal, kGlobalMatch, kShared, kSharedMatch };

// Adds one byte's bin to `hist` (global or shared), alone or as its warp's group.
template <bool kMatch>
__device__ inline void count(unsigned* hist, unsigned bin) {
  if (kMatch) {
    const unsigned peers = __match_any_sync(0xffffffffu, bin);
    const unsigned leader = __ffs(peers) - 1;
    if (bin != kNoBin && threadIdx.x % kWarp == leader) atomicAdd(&hist[bin], __popc(peers));
  } else if (bin != kNoBin) {
    atomicAdd(&hist[bin], 1u);
  }
}

template <bool kShared, bool kMatch>
__global__ void histogram(const unsigned* __restrict__ words, std::uint64_t n, unsigned* __restrict__ hist) {
  __shared__ unsigned private_hist[kBins];
  unsigned* target = hist;
  if (kShared) {
    for (unsigned b = threadIdx.x; b < kBins; b += blockDim.x) private_hist[b] = 0;
    __syncthreads();
    target = private_hist;
  }
  const std::uint64_t word_count = (n + 3) / 4;
  const std::uint64_t warps = std::uint64_t{gridDim.x} * blockDim.x / kWarp;
  const std::uint64_t warp = (std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  // The loop bound depends on the warp only, so all 32 lanes take every step together.
  for (std::uint64_t first = warp * kWarp; first < word_count; first += warps * kWarp) {
    const std::uint64_t w = first + lane;
    const unsigned word = w < word_count ? words[w] : 0;
    for (unsigned k = 0; k < 4; ++k) {
      const bool valid = w < word_count && 4 * w + k < n;
      count<kMatch>(target, valid ? (word >> (8 * k)) & 0xffu : kNoBin);
    }
  }
  if (kShared) {
    __syncthreads();
    for (unsigned b = threadIdx.x; b < kBins; b += blockDim.x)
      if (private_hist[b] != 0) atomicAdd(&hist[b], private_hist[b]);
  }
}

class Histogram : public Workload {
 public:
  Histogram(const Options& opt, const common::DeviceInfo& device)
      : n_(opt.n),
        grid_(static_cast<unsigned>(
            std::min<std::uint64_t>(ceil_div(ceil_div(opt.n, 4), kBlock), 8ull * device.sm_count))),
        hist_(kBins) {
    for (int skewed = 0; skewed <= 1; ++skewed) {
      std::vector<unsigned char> bytes = make_histogram_data(opt.n, opt.seed, skewed == 1);
      expected_[skewed] = reference_histogram(bytes);
      bytes.resize(4 * ceil_div(opt.n, 4), 0);  // whole words; the kernel ignores bytes past n
      data_[skewed] = common::DeviceBuffer<unsigned>(bytes.size() / 4);
      common::copy_to_device(data_[skewed].get(), bytes.data(), bytes.size());
    }
  }

  void reset(const RowSpec&, cudaStream_t stream) override { poison_words(hist_.get(), kBins, stream); }

  Verdict verify(const RowSpec& row, cudaStream_t stream) override {
    return compare_exact(copy_back(hist_.get(), kBins, stream), expected_[row.param], "bin counts");
  }

  void launch(const RowSpec& row, cudaStream_t stream) override {
    CUDA_CHECK(cudaMemsetAsync(hist_.get(), 0, hist_.bytes(), stream));
    const unsigned* words = data_[row.param].get();
    unsigned* hist = hist_.get();
    switch (row.variant) {
      case kGlobal: histogram<false, false><<<grid_, kBlock, 0, stream>>>(words, n_, hist); break;
      case kGlobalMatch: histogram<false, true><<<grid_, kBlock, 0, stream>>>(words, n_, hist); break;
      case kShared: histogram<true, false><<<grid_, kBlock, 0, stream>>>(words, n_, hist); break;
      case kSharedMatch: histogram<true, true><<<grid_, kBlock, 0, stream>>>(words, n_, hist); break;
    }
    CUDA_CHECK_LAUNCH();
  }

 private:
  std::uint64_t n_;
  unsigned grid_;
  common::DeviceBuffer<unsigned> data_[2];
  std::vector<unsigned> expected_[2];
  common::DeviceBuffer<unsigned> hist_;
};

}  // namespace

std::vector<unsigned char> make_histogram_data(std::uint64_t n, std::uint64_t seed, bool skewed) {
  std::vector<unsigned char> bytes(n);
  common::parallel_chunks(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t h = common::hash64(seed, i);
      if (!skewed) {
        bytes[i] = static_cast<unsigned char>(h >> 56);
      } else {
        const double u = static_cast<double>(h >> 11) * 0x1p-53;
        bytes[i] = static_cast<unsigned char>(std::min(255.0, std::floor(256.0 * std::pow(u, 8.0))));
      }
    }
  });
  return bytes;
}

std::vector<unsigned> reference_histogram(const std::vector<unsigned char>& bytes) {
  std::vector<unsigned> hist(kBins, 0);
  for (const unsigned char b : bytes) ++hist[b];
  return hist;
}

ProgramSpec histogram_program() {
  ProgramSpec p;
  p.name = "06_histogram";
  p.summary =
      "Counts n bytes into 256 bins with global atomics, warp-aggregated global atomics, per-block shared-memory "
      "histograms, and both together, on uniform and on skewed data; verifies every count and times each.";
  p.epilog =
      "Data: uniform bytes, and skewed bytes floor(256 u^8) (half in bin 0). n is at most 2^32 - 1 so that "
      "no 32-bit count can overflow.";
  p.n_unit = "bytes";
  p.n_element_bytes = 1;
  p.default_n = std::uint64_t{1} << 26;
  p.max_n = (std::uint64_t{1} << 32) - 1;
  p.bytes_note = "(1 byte per byte read + the 1 KiB histogram written)";
  p.param_columns = {{"data", "data", 6, 0, true}};
  p.plan = [](const Options& opt) {
    const char* names[] = {"global", "global-match", "shared", "shared-match"};
    const char* labels[] = {"one global atomic per byte", "warp-aggregated global atomics",
                            "per-block shared histogram", "shared and warp-aggregated"};
    std::vector<RowSpec> rows;
    for (int skewed = 0; skewed <= 1; ++skewed)
      for (int v = kGlobal; v <= kSharedMatch; ++v) {
        const std::string data = skewed ? "skewed" : "uniform";
        RowSpec r;
        r.key = data + "-" + names[v];
        r.label = labels[v];
        r.variant = v;
        r.param = skewed;
        r.base = v == kGlobal ? "" : data + "-global";
        r.bytes = static_cast<double>(opt.n) + 4.0 * kBins;
        r.params = {common::text_field("data", data)};
        rows.push_back(r);
      }
    return rows;
  };
  p.device_bytes = [](const Options& opt) { return 2 * 4 * ceil_div(opt.n, 4) + 4 * kBins; };
  p.prepare = [](const Options& opt, const common::DeviceInfo& device) {
    return std::make_unique<Histogram>(opt, device);
  };
  return p;
}

}  // namespace access_patterns
