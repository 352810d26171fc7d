// The combine through NVLink peer stores (peer_store.hpp). Chapter: chapters/26_multi_gpu.md
//
// One GPU's sum is stage 18's shape over stage 13's chunks: thread 0 of each block draws a
// start number, the block sums its chunk (primitives.cuh), and every block but the last
// to start stores {full, partial} into its slot (stage 14's tagged slot, emptied by the
// reader) and leaves. The last to start adds every block's slot in block order: it
// waits only for blocks that had started before it, and none of them waits, so it
// finishes however few blocks fit at once. Then that block does the exchange.
//
// The exchange. GPU r of G keeps an area in its own memory: two banks of slots, slot p
// of a bank for GPU p's word. The host numbers the team's launches from 1 (a 64-bit
// count passed as a kernel argument, the same on every GPU), and launch L uses bank
// L mod 2. In launch L the finishing block's thread p (p != r) stores the word
// {tag = L mod 2^32, partial} into slot r of bank L mod 2 on GPU p, over NVLink, then
// reads slot p of its own bank until the word there carries L's tag; thread 0 adds the
// G partials in rank order, so every GPU adds the same G floats in the same order and
// holds the same bits.
//
// A slot is never overwritten before it is read. GPU A stores into its slot on GPU B in
// launch L and next in launch L + 2 (L + 1 uses the other bank). A gets to launch L + 2
// only after its launch L + 1 has finished, which needed B's word of L + 1; B stores
// that word in its launch L + 1, which starts only after its launch L has finished (one
// stream per GPU: a launch starts once the one before it has completed with all its
// memory operations performed), and B's launch L read A's word of L before it finished,
// since that word went into the sum it wrote. So B reads A's word of L before A's word
// of L + 2 can be stored, for any number of launches and any speeds: a GPU is held back
// by the words it waits for, never more than one launch ahead of the slowest.
//
// A value is never taken for another launch's. When B reads A's slot of bank L mod 2 in
// launch L, the slot holds A's word of L - 2 or of L (or the zero of a cleared area,
// before launch 3): L + 2's cannot have come (above), launches of the other parity use
// the other bank, and every GPU of the team stores into every peer in every launch, so
// no older word can linger. The tags of L - 2 and L differ (mod 2^32), and a zero's tag
// is 0, which no launch below 2^32 has and which launches from 2^32 on never see. That
// is why a launch-number tag is safe here but not in stage 14's block slots: a block
// slot can sit unwritten through many launches whose grids are smaller, so a tag could
// come round again after 2^32 launches, and stage 14 empties its slots instead. The tag
// also guards the order above: were it ever broken, the reader would see L + 2's tag,
// not L's, and wait (until the deadline below), never add a wrong value.
//
// Memory order. The partial and its tag are one 8-byte word, stored and loaded whole
// (st.relaxed.sys / ld.relaxed.sys: strong at system scope, so a store from another GPU
// is seen, and an 8-byte access is single-copy atomic), so the value arrives with its
// tag and no fence is needed to publish it (stage 14's argument, at system scope). The
// reuse of a slot rests on stream order (above), not on a fence, so the exchange costs
// one store per peer and the polling, nothing else. Peer memory is plain cudaMalloc on
// the peer, reached through cudaDeviceEnablePeerAccess; nothing here uses NVLink
// multicast.
//
// Progress and the deadline. Every GPU's finishing block stores its words before it
// waits, and waits only for peers' finishing blocks, which wait for nothing else of
// its own; so the exchange completes once every GPU of the team runs the launch. A GPU
// that never runs it (a bug, a host that enqueued one GPU only, a tool that serialises
// kernels across GPUs) would leave the others waiting forever: each waiting thread
// gives up after limit_ns instead, sets a word in host memory and takes NaN, so the
// launch fails its check; the host then clears the areas (PeerExchange::reset).
#include "peer_store.hpp"

#include "cuda_check.hpp"
#include "reduction/grid.hpp"
#include "reduction/primitives.cuh"
#include "verify.hpp"
#include "workspace_layout.hpp"

#include <set>
#include <utility>

namespace multi_gpu {
namespace {

constexpr int kUnroll = 4;
// The fused sum's scratch (single_pass/workspace_layout.hpp): the start counter at byte 0,
// one 8-byte slot per block from byte kSlotsOffset (the counter's 128-byte line to itself).
using reduction::workspace::kSlotsOffset;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A peer word: the launch's tag (its number mod 2^32) in the high half, the float's
// bits in the low half.
__device__ __forceinline__ unsigned long long peer_word(std::uint64_t launch, float v) {
  return (static_cast<unsigned long long>(static_cast<unsigned>(launch)) << 32) | __float_as_uint(v);
}

__device__ __forceinline__ void store_sys(unsigned long long* slot, unsigned long long word) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(slot), "l"(word) : "memory");
}

__device__ __forceinline__ unsigned long long load_sys(const unsigned long long* slot) {
  unsigned long long word;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(word) : "l"(slot) : "memory");
  return word;
}

// The exchange, by one block whose every thread calls it with this GPU's partial in
// `mine`: thread p < count handles GPU p (stores to it, then waits for its word), and
// thread 0 writes the rank-order sum to *out.
__device__ __forceinline__ void exchange(float mine, const PeerView& view, std::uint64_t launch,
                                         unsigned long long limit_ns, unsigned* gave_up, float* out) {
  __shared__ float partial_of[kMostPeerGpus];
  const int p = static_cast<int>(threadIdx.x);
  const std::size_t bank = (launch & 1) * kMostPeerGpus;
  if (p < view.count) {
    if (p == view.rank) {
      partial_of[p] = mine;
    } else {
      store_sys(view.areas[p] + bank + view.rank, peer_word(launch, mine));
      const unsigned tag = static_cast<unsigned>(launch);
      const unsigned long long* slot = view.areas[view.rank] + bank + p;
      unsigned long long word = load_sys(slot);
      if (static_cast<unsigned>(word >> 32) != tag) {
        const unsigned long long start = global_ns();
        do {
          word = load_sys(slot);
          if (static_cast<unsigned>(word >> 32) != tag && global_ns() - start > limit_ns) {
            *reinterpret_cast<volatile unsigned*>(gave_up) = 1;
            word = peer_word(launch, __int_as_float(0x7fc00000));  // NaN: the launch fails its check
            break;
          }
        } while (static_cast<unsigned>(word >> 32) != tag);
      }
      partial_of[p] = __uint_as_float(static_cast<unsigned>(word));
    }
  }
  __syncthreads();
  if (p == 0) {
    float sum = partial_of[0];
    for (int r = 1; r < view.count; ++r) sum += partial_of[r];
    *out = sum;
  }
}

template <int kBlock>
__global__ void __launch_bounds__(kBlock)
    peer_store_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                   unsigned char* __restrict__ scratch, const __grid_constant__ PeerView view,
                   const std::uint64_t launch, const unsigned long long limit_ns, unsigned* gave_up) {
  auto* started = reinterpret_cast<unsigned*>(scratch);
  auto* slots = reinterpret_cast<unsigned long long*>(scratch + kSlotsOffset);
  unsigned order = 0;  // how many blocks started before this one (thread 0 only)
  if (threadIdx.x == 0)
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(order) : "l"(started) : "memory");
  const float block_total =
      reduction::block_sum_one_round<kBlock>(reduction::chunk_thread_sum<kBlock, kUnroll>(in, n, chunk));

  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    is_last = order == gridDim.x - 1;
    if (!is_last) reduction::store_tagged(slots + blockIdx.x, block_total);
  }
  __syncthreads();
  if (!is_last) return;  // store the word and leave: these blocks never wait

  // The last block to start: every block's total in block order (its own in place of
  // its slot), each slot read until full and emptied, then the block's tree.
  __shared__ float own;
  if (threadIdx.x == 0) own = block_total;
  __syncthreads();
  float v = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock)
    v += b == blockIdx.x ? own : reduction::await_tagged(slots + b);
  v = reduction::block_sum_one_round<kBlock>(v);
  __shared__ float gpu_total;
  if (threadIdx.x == 0) {
    gpu_total = v;
    *started = 0;  // every block has drawn its number: ready for the next launch
  }
  __syncthreads();
  exchange(gpu_total, view, launch, limit_ns, gave_up, out);
}

__global__ void __launch_bounds__(32)
    peer_store_exchange(const float* __restrict__ partial, float* __restrict__ out,
                        const __grid_constant__ PeerView view, const std::uint64_t launch,
                        const unsigned long long limit_ns, unsigned* gave_up) {
  __shared__ float mine;
  if (threadIdx.x == 0) mine = *partial;
  __syncthreads();
  exchange(mine, view, launch, limit_ns, gave_up, out);
}

void check_view(const PeerView& view) {
  if (view.count < 1 || view.count > kMostPeerGpus || view.rank < 0 || view.rank >= view.count)
    throw std::logic_error("a peer view of " + std::to_string(view.count) + " GPUs with rank " +
                           std::to_string(view.rank));
}

}  // namespace

PeerSumPlan plan_peer_sum(const float* in, std::size_t n, int sm_count) {
  PeerSumPlan p;
  const int per_sm = reduction::blocks_per_sm(peer_store_sum<kPeerSumBlock>, kPeerSumBlock);
  p.grid = reduction::ticket_grid(n, kPeerSumBlock, per_sm, sm_count);
  p.chunk = reduction::chunk_vectors(in, n, p.grid, kPeerSumBlock);
  p.scratch_bytes = kSlotsOffset + p.grid * sizeof(unsigned long long);
  // As stage 14's multi-block path (stage 13's loads and trees, then the last block's
  // chain over the slots and its tree).
  const std::size_t b = kPeerSumBlock;
  p.error_depth = common::blocked_depth(n, p.grid * b) + 5 * kUnroll + 2 + common::tree_depth(b) +
                  (p.grid + b - 1) / b + common::tree_depth(b);
  return p;
}

void launch_peer_sum(const float* in, std::size_t n, const PeerSumPlan& plan, void* scratch, float* out,
                     const PeerView& view, const PeerLaunch& launch, cudaStream_t stream) {
  check_view(view);
  peer_store_sum<kPeerSumBlock>
      <<<plan.grid, kPeerSumBlock, 0, stream>>>(in, n, plan.chunk, out, static_cast<unsigned char*>(scratch), view,
                                                launch.number, launch.limit_ns, launch.gave_up);
  CUDA_CHECK_LAUNCH();
}

void launch_peer_exchange(const float* partial, float* out, const PeerView& view, const PeerLaunch& launch,
                          cudaStream_t stream) {
  check_view(view);
  peer_store_exchange<<<1, 32, 0, stream>>>(partial, out, view, launch.number, launch.limit_ns, launch.gave_up);
  CUDA_CHECK_LAUNCH();
}

void enable_peer(int self, int peer) {
  // Access stays enabled for the life of the process, so each pair is enabled once: a
  // second cudaDeviceEnablePeerAccess would fail (cudaErrorPeerAccessAlreadyEnabled),
  // which compute-sanitizer reports as an error even when it is cleared.
  static std::set<std::pair<int, int>> enabled;
  if (enabled.count({self, peer}) != 0) return;
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  CUDA_CHECK(cudaSetDevice(self));
  const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled)
    (void)cudaGetLastError();  // enabled by code outside this file
  else
    CUDA_CHECK(e);
  CUDA_CHECK(cudaSetDevice(current));
  enabled.insert({self, peer});
}

std::string enable_peer_access(const std::vector<int>& devices) {
  if (devices.size() > static_cast<std::size_t>(kMostPeerGpus))
    return "the peer-store combine takes at most " + std::to_string(kMostPeerGpus) + " GPUs, not " +
           std::to_string(devices.size());
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  std::string problem;
  for (const int self : devices) {
    for (const int peer : devices) {
      if (peer == self) continue;
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, self, peer));
      if (can == 0) {
        problem = "GPU " + std::to_string(self) + " cannot access GPU " + std::to_string(peer) +
                  "'s memory (cudaDeviceCanAccessPeer)";
        break;
      }
      enable_peer(self, peer);
    }
    if (!problem.empty()) break;
  }
  CUDA_CHECK(cudaSetDevice(current));
  return problem;
}

PeerExchange::PeerExchange(std::vector<int> devices, unsigned limit_ms)
    : devices_(std::move(devices)), limit_ms_(limit_ms) {
  if (devices_.empty() || devices_.size() > static_cast<std::size_t>(kMostPeerGpus))
    throw std::logic_error("PeerExchange takes 1 to " + std::to_string(kMostPeerGpus) + " GPUs");
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  for (const int d : devices_) {
    CUDA_CHECK(cudaSetDevice(d));
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, kPeerAreaWords * sizeof(unsigned long long)));
    areas_.push_back(static_cast<unsigned long long*>(p));
  }
  void* flag = nullptr;
  CUDA_CHECK(cudaHostAlloc(&flag, sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable));
  flag_host_ = static_cast<unsigned*>(flag);
  void* d = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&d, flag, 0));
  flag_device_ = static_cast<unsigned*>(d);
  CUDA_CHECK(cudaSetDevice(current));
  reset();
}

PeerExchange::~PeerExchange() {
  // No throw from a destructor; each area is freed with its own GPU current.
  int current = 0;
  cudaGetDevice(&current);
  for (std::size_t r = 0; r < areas_.size(); ++r) {
    cudaSetDevice(devices_[r]);
    cudaFree(areas_[r]);
  }
  if (flag_host_ != nullptr) cudaFreeHost(flag_host_);
  cudaSetDevice(current);
}

PeerView PeerExchange::view(int rank) const {
  PeerView v;
  for (std::size_t r = 0; r < areas_.size(); ++r) v.areas[r] = areas_[r];
  v.count = count();
  v.rank = rank;
  return v;
}

PeerLaunch PeerExchange::next() {
  PeerLaunch l;
  l.number = ++launches_;
  l.limit_ns = static_cast<unsigned long long>(limit_ms_) * 1000000ull;
  l.gave_up = flag_device_;
  return l;
}

bool PeerExchange::gave_up() const { return __atomic_load_n(flag_host_, __ATOMIC_SEQ_CST) != 0; }

void PeerExchange::reset() {
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  for (std::size_t r = 0; r < areas_.size(); ++r) {
    CUDA_CHECK(cudaSetDevice(devices_[r]));
    CUDA_CHECK(cudaMemset(areas_[r], 0, kPeerAreaWords * sizeof(unsigned long long)));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaSetDevice(current));
  __atomic_store_n(flag_host_, 0u, __ATOMIC_SEQ_CST);
  launches_ = 0;
}

}  // namespace multi_gpu
