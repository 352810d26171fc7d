// Access patterns 05: shared-memory bank conflicts at strides 1 to 33, with and
// without padding.
//
// Idea: shared memory is 32 banks of 4-byte words; word w sits in bank w % 32, and
// each bank delivers one word per cycle. A warp whose 32 lanes ask for words in 32
// different banks is served in one pass (one "wavefront"); k different words in one
// bank take k passes. Each block copies a 2048-word tile into shared memory, then lane
// l of every warp reads words l x s + 32 q (q = 0..31), 32 times over, adding them up:
// 1024 loads per thread, the lanes s words apart.
//   no padding:  word i at slot i. Lanes l and l + 32 / gcd(s, 32) share a bank, so a
//                load takes gcd(s, 32) wavefronts: 32 at s = 32, 1 at every odd s;
//   padding:     word i at slot i + i / 32 (one unused word after every 32; see
//                access_index.hpp), which shifts each row of 32 words by one bank.
//                Every power-of-two stride becomes conflict-free, but most odd
//                strides, free before, now take 2 wavefronts, and s = 31 takes 31:
//                padding cures the stride it was chosen for, not strides in general.
// Both versions run the same instructions (the inner loop steps 32 or 33 slots) and
// differ only in the banks they hit. wf-pred is the wavefronts per load the bank
// arithmetic predicts (bank_wavefronts() in access_check.hpp).
// Expect: time proportional to wf-pred once it is above 1.
// Bytes counted: the shared-memory words read (4 bytes each); %peak is against the
// shared-memory peak, 32 banks x 4 bytes x SM clock x SMs. n counts blocks of 256
// threads.
// Nsight Compute: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum divided by
// smsp__inst_executed_op_shared_ld.sum, against wf-pred (the ideal is 1).
// Chapter: chapters/25_shared_memory_and_atomics.md
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
constexpr unsigned kTileWords = 2048;  // 31 x 33 + 32 x 31 < 2048: no read leaves the tile
constexpr unsigned kTiles = 64;        // block b reads tile b % 64 of the input
constexpr unsigned kMaxStride = 33;
constexpr unsigned kPasses = 32;

template <bool kPad>
__global__ void strided_shared(const unsigned* __restrict__ in, unsigned stride, unsigned* __restrict__ out) {
  __shared__ unsigned tile[kTileWords + kTileWords / kBanks];
  const unsigned* src = in + (blockIdx.x % kTiles) * kTileWords;
  for (unsigned i = threadIdx.x; i < kTileWords; i += blockDim.x) tile[kPad ? padded_slot(i) : i] = src[i];
  __syncthreads();

  // Word i + 32 q is at slot(i) + 32 q, or slot(i) + 33 q with padding. volatile: each
  // pass must load again the words the previous pass loaded, not reuse registers.
  constexpr unsigned kRowSlots = kPad ? kBanks + 1 : kBanks;
  const volatile unsigned* words = tile;
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned base = kPad ? padded_slot(lane * stride) : lane * stride;
  unsigned sum = 0;
  for (unsigned pass = 0; pass < kPasses; ++pass) {
#pragma unroll
    for (unsigned q = 0; q < kBanks; ++q) sum += words[base + q * kRowSlots];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

class BankPadding : public Workload {
 public:
  explicit BankPadding(const Options& opt)
      : blocks_(opt.n), host_(make_tiles(opt.seed)), in_(host_.size()), out_(opt.n * kBlock) {
    common::copy_to_device(in_.get(), host_.data(), in_.bytes());
  }

  void reset(const RowSpec&, cudaStream_t stream) override { poison_words(out_.get(), out_.size(), stream); }

  Verdict verify(const RowSpec& row, cudaStream_t stream) override {
    const auto got = copy_back(out_.get(), out_.size(), stream);
    return compare_exact(got, reference_strided_sums(host_, static_cast<unsigned>(row.param), blocks_), "sums");
  }

  void launch(const RowSpec& row, cudaStream_t stream) override {
    const auto grid = static_cast<unsigned>(blocks_);
    const auto stride = static_cast<unsigned>(row.param);
    if (row.variant == 0) strided_shared<false><<<grid, kBlock, 0, stream>>>(in_.get(), stride, out_.get());
    if (row.variant == 1) strided_shared<true><<<grid, kBlock, 0, stream>>>(in_.get(), stride, out_.get());
    CUDA_CHECK_LAUNCH();
  }

 private:
  static std::vector<unsigned> make_tiles(std::uint64_t seed) {
    std::vector<unsigned> t(kTiles * kTileWords);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<unsigned>(common::hash64(seed, i) >> 32);
    return t;
  }

  std::uint64_t blocks_;
  std::vector<unsigned> host_;
  common::DeviceBuffer<unsigned> in_;
  common::DeviceBuffer<unsigned> out_;
};

}  // namespace

std::vector<unsigned> reference_strided_sums(const std::vector<unsigned>& tiles, unsigned stride,
                                             std::uint64_t blocks) {
  // Thread t's sum depends only on its tile and its lane; unsigned sums wrap like the kernel's.
  std::vector<unsigned> per_lane(kTiles * kWarp, 0u);
  for (unsigned b = 0; b < kTiles; ++b)
    for (unsigned lane = 0; lane < kWarp; ++lane)
      for (unsigned pass = 0; pass < kPasses; ++pass)
        for (unsigned q = 0; q < kBanks; ++q)
          per_lane[b * kWarp + lane] += tiles[b * kTileWords + lane * stride + kBanks * q];
  std::vector<unsigned> out(blocks * kBlock);
  for (std::size_t t = 0; t < out.size(); ++t) out[t] = per_lane[(t / kBlock) % kTiles * kWarp + t % kWarp];
  return out;
}

unsigned predicted_wavefronts(unsigned stride, bool pad) {
  // Every load of the kernel has the banks of q = 0, shifted alike for all lanes.
  std::vector<unsigned> slots;
  for (unsigned lane = 0; lane < kWarp; ++lane) slots.push_back(pad ? padded_slot(lane * stride) : lane * stride);
  return bank_wavefronts(slots);
}

ProgramSpec bank_padding_program() {
  ProgramSpec p;
  p.name = "05_bank_padding";
  p.summary =
      "Reads shared memory at strides 1 to 33 words between the lanes of a warp, with and without one word of "
      "padding every 32; verifies every thread's sum and times each stride.";
  p.epilog = "n counts blocks of 256 threads; each thread makes 1024 shared-memory loads.";
  p.n_unit = "blocks";
  p.default_n = 4096;
  p.max_n = std::uint64_t{1} << 20;
  p.n_element_bytes = kBlock * 4;
  p.bytes_note = "(4 bytes per shared-memory word read: 1024 per thread)";
  p.peak_note = "the shared-memory peak (32 banks x 4 bytes x SM clock x SMs)";
  p.peak_gbs = [](const common::DeviceInfo& d) {
    int clock_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d.ordinal));
    return static_cast<double>(d.sm_count) * kBanks * 4.0 * clock_khz * 1e3 / 1e9;
  };
  p.param_columns = {{"stride", "stride", 6, 0}, {"padded", "pad", 3, 0}, {"wavefronts_pred", "wf-pred", 7, 0}};
  p.plan = [](const Options& opt) {
    std::vector<RowSpec> rows;
    for (int pad = 0; pad <= 1; ++pad)
      for (unsigned s = 1; s <= kMaxStride; ++s) {
        RowSpec r;
        r.key = "stride-" + std::to_string(s) + (pad ? "-pad" : "");
        r.label = pad ? "one pad word per 32" : "no padding";
        r.variant = pad;
        r.param = s;
        r.base = r.key == "stride-1" ? "" : "stride-1";
        r.bytes = 4.0 * kBanks * kBanks * kBlock * static_cast<double>(opt.n);
        r.params = {common::number_field("stride", s), common::number_field("padded", pad),
                    common::number_field("wavefronts_pred", predicted_wavefronts(s, pad == 1))};
        rows.push_back(r);
      }
    return rows;
  };
  p.device_bytes = [](const Options& opt) { return 4 * (kTiles * kTileWords + kBlock * opt.n); };
  p.prepare = [](const Options& opt, const common::DeviceInfo&) { return std::make_unique<BankPadding>(opt); };
  return p;
}

}  // namespace access_patterns
