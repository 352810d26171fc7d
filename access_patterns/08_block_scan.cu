// Access patterns 08: a block-level prefix sum in shared memory, with and without
// bank-conflict padding.
//
// Idea: each block of 512 threads turns its tile of 1024 numbers into their exclusive
// prefix sums (out[i] = in[0] + ... + in[i - 1] within the tile) in two sweeps over a
// balanced tree in shared memory:
//   up-sweep    the reduction tree of the reduction stages: at distance d = 1, 2, 4,
//               ..., thread k adds element d(2k + 1) - 1 into element d(2k + 2) - 1,
//               so the last element ends up holding the tile's total;
//   down-sweep  clear the last element, then from d = 512 back to 1 each thread swaps
//               its pair and adds: the left one receives the right's value, the right
//               one the sum of both.
// The lanes of a warp touch words 2d apart: a 2-way bank conflict at d = 1, doubling
// with each level up to 32-way at d = 16, as long as a warp has 32 busy lanes.
// padding: element i at slot i + i / 32 (access_index.hpp), which moves each row of 32
// words one bank along and spreads those columns over the banks.
// The inputs are whole numbers below 2^16, so every sum is exact and both versions
// must match the host's prefix sums bit for bit.
// Expect: padding lowers the shared-memory wavefronts per load (wf-pred predicts them
// from the bank arithmetic, bank_wavefronts()) and the time with them; the gain is
// bounded because the tree's deep levels keep few threads busy either way.
// Bytes counted: 4 read + 4 written per element.
// Nsight Compute: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum /
// smsp__inst_executed_op_shared_ld.sum against wf-pred, and
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum.
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

constexpr unsigned kBlock = 512;
constexpr unsigned kTile = 2 * kBlock;

template <bool kPad>
__device__ inline unsigned slot(unsigned i) {
  return kPad ? padded_slot(i) : i;
}

template <bool kPad>
__global__ void tile_scan(const unsigned* __restrict__ in, std::uint64_t n, unsigned* __restrict__ out) {
  __shared__ unsigned s[kTile + kTile / kBanks];
  const std::uint64_t start = std::uint64_t{blockIdx.x} * kTile;
  for (unsigned i = threadIdx.x; i < kTile; i += kBlock) s[slot<kPad>(i)] = start + i < n ? in[start + i] : 0u;

  unsigned d = 1;
  for (unsigned active = kTile / 2; active > 0; active /= 2, d *= 2) {
    __syncthreads();
    if (threadIdx.x < active) {
      const unsigned a = d * (2 * threadIdx.x + 1) - 1;
      s[slot<kPad>(a + d)] += s[slot<kPad>(a)];
    }
  }
  if (threadIdx.x == 0) s[slot<kPad>(kTile - 1)] = 0;  // this thread made the last up-sweep step
  for (unsigned active = 1; active < kTile; active *= 2) {
    d /= 2;
    __syncthreads();
    if (threadIdx.x < active) {
      const unsigned a = d * (2 * threadIdx.x + 1) - 1;
      const unsigned left = s[slot<kPad>(a)];
      s[slot<kPad>(a)] = s[slot<kPad>(a + d)];
      s[slot<kPad>(a + d)] += left;
    }
  }
  __syncthreads();
  for (unsigned i = threadIdx.x; i < kTile; i += kBlock)
    if (start + i < n) out[start + i] = s[slot<kPad>(i)];
}

class BlockScan : public Workload {
 public:
  explicit BlockScan(const Options& opt)
      : n_(opt.n),
        host_(make_scan_input(opt.n, opt.seed)),
        expected_(reference_tile_scan(host_, kTile)),
        in_(opt.n),
        out_(opt.n) {
    common::copy_to_device(in_.get(), host_.data(), in_.bytes());
  }

  void reset(const RowSpec&, cudaStream_t stream) override { poison_words(out_.get(), n_, stream); }

  Verdict verify(const RowSpec&, cudaStream_t stream) override {
    return compare_exact(copy_back(out_.get(), n_, stream), expected_, "prefix sums");
  }

  void launch(const RowSpec& row, cudaStream_t stream) override {
    const auto grid = static_cast<unsigned>(ceil_div(n_, kTile));
    if (row.variant == 0) tile_scan<false><<<grid, kBlock, 0, stream>>>(in_.get(), n_, out_.get());
    if (row.variant == 1) tile_scan<true><<<grid, kBlock, 0, stream>>>(in_.get(), n_, out_.get());
    CUDA_CHECK_LAUNCH();
  }

 private:
  std::uint64_t n_;
  std::vector<unsigned> host_;
  std::vector<unsigned> expected_;
  common::DeviceBuffer<unsigned> in_;
  common::DeviceBuffer<unsigned> out_;
};

// Wavefronts of one shared-memory access by the lanes [first, first + 32) of the
// threads below `active`, element index e(k) for thread k.
template <typename Element>
unsigned warp_wavefronts(unsigned first, unsigned active, bool pad, Element e) {
  std::vector<unsigned> slots;
  for (unsigned k = first; k < first + kWarp && k < active; ++k) slots.push_back(pad ? padded_slot(e(k)) : e(k));
  return bank_wavefronts(slots);
}

}  // namespace

std::vector<unsigned> make_scan_input(std::uint64_t n, std::uint64_t seed) {
  std::vector<unsigned> v(n);
  common::parallel_chunks(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) v[i] = static_cast<unsigned>(common::hash64(seed, i) >> 48);
  });
  return v;
}

std::vector<unsigned> reference_tile_scan(const std::vector<unsigned>& in, std::size_t tile) {
  std::vector<unsigned> out(in.size());
  unsigned sum = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i % tile == 0) sum = 0;
    out[i] = sum;
    sum += in[i];
  }
  return out;
}

double predicted_scan_wavefronts(bool pad) {
  // Every shared-memory load the kernel makes, warp by warp: two per step of each sweep
  // and one per element at the end.
  double wavefronts = 0.0;
  double loads = 0.0;
  auto add_loads = [&](unsigned active, unsigned d) {
    for (unsigned first = 0; first < active; first += kWarp) {
      wavefronts += warp_wavefronts(first, active, pad, [d](unsigned k) { return d * (2 * k + 1) - 1; });
      wavefronts += warp_wavefronts(first, active, pad, [d](unsigned k) { return d * (2 * k + 2) - 1; });
      loads += 2;
    }
  };
  for (unsigned active = kTile / 2, d = 1; active > 0; active /= 2, d *= 2) add_loads(active, d);
  for (unsigned active = 1, d = kTile / 2; active < kTile; active *= 2, d /= 2) add_loads(active, d);
  for (unsigned half = 0; half < 2; ++half)
    for (unsigned first = 0; first < kBlock; first += kWarp) {
      wavefronts += warp_wavefronts(first, kBlock, pad, [half](unsigned k) { return half * kBlock + k; });
      loads += 1;
    }
  return wavefronts / loads;
}

ProgramSpec block_scan_program() {
  ProgramSpec p;
  p.name = "08_block_scan";
  p.summary =
      "Computes the exclusive prefix sums of every tile of 1024 unsigned integers, one tile per block of 512 "
      "threads, with a two-sweep tree in shared memory, without and with bank-conflict padding; verifies every sum "
      "exactly and times both.";
  p.epilog = "Each tile is scanned on its own: out[i] sums the elements before i in i's tile of 1024.";
  p.default_n = std::uint64_t{1} << 26;
  p.max_n = std::uint64_t{1} << 32;
  p.bytes_note = "(4 bytes read + 4 written per element)";
  p.param_columns = {{"padded", "pad", 3, 0}, {"wavefronts_pred", "wf-pred", 7, 2}};
  p.plan = [](const Options& opt) {
    std::vector<RowSpec> rows;
    for (int pad = 0; pad <= 1; ++pad) {
      RowSpec r;
      r.key = pad ? "padding" : "no-padding";
      r.label = pad ? "slot i + i / 32" : "slot i";
      r.variant = pad;
      r.base = pad ? "no-padding" : "";
      r.bytes = 8.0 * static_cast<double>(opt.n);
      r.params = {common::number_field("padded", pad),
                  common::number_field("wavefronts_pred", predicted_scan_wavefronts(pad == 1))};
      rows.push_back(r);
    }
    return rows;
  };
  p.device_bytes = [](const Options& opt) { return 8 * opt.n; };
  p.prepare = [](const Options& opt, const common::DeviceInfo&) { return std::make_unique<BlockScan>(opt); };
  return p;
}

}  // namespace access_patterns
