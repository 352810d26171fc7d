// A single-pass reduction, header-only and generic: value types of 4 or 8 bytes
// (float, double, int32, uint32, int64, uint64) and any associative, commutative
// operator (Sum, Min, Max below, or your own functor with identity()).
//
// One kernel launch does everything:
//   1. every block reads one contiguous chunk of the input as 16-byte vectors,
//      each thread kUnroll vectors in flight at a time (plus a scalar head up to
//      the first 16-byte boundary and a scalar tail);
//   2. each block combines its threads (warp shuffles, then one value per warp);
//   3. each block writes its partial and takes a ticket from an atomic counter; the
//      block that takes the last ticket combines the partials in index order, writes
//      the result and resets the ticket to zero for the next call. (How the last block
//      knows every partial has landed: tagged slots, at single_pass_kernel.)
// When one block can take n in a single round of loads (n up to 32 x the block
// size for floats), a leaner one-block kernel does steps 1-2 and writes the result.
// On Hopper, for n up to 16 x the block size x 16 floats (2^17 for 512 threads), the
// grid is one thread-block cluster instead, and the blocks add their partials through
// distributed shared memory rather than the ticket (cluster_kernel).
// For a fixed grid and block size the order of operations is fixed, so the result
// is bitwise identical run to run. Stages 13 to 15 (reduction/13_last_block.cu,
// 14_tagged_slots.cu, 15_one_cluster.cu) teach its ideas one at a time for float sums;
// chapters 13 to 15 explain them.
//
// Usage (README.md beside this file has the API, the guarantees and the known limits):
//   reduction::generic::Workspace ws(device, stream);  // zeroed ticket + partials, bound to `stream`
//   reduction::generic::reduce<float, reduction::generic::Sum>(in, n, out, ws, stream);
// A Workspace serves one stream: the stream given to its constructor, or else the stream
// of its first call. A call on any other stream throws std::invalid_argument naming both
// streams, because two sums in flight on one ticket could hang the GPU. Give each stream
// its own Workspace.
//
// Any number of source files may include this header and call reduce: each .cu file
// compiles its own copy of each kernel (nvcc gives template kernels internal linkage),
// so the per-kernel set-up is remembered per kernel address and device (KernelAnswers).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cuda/atomic>

#include <atomic>
#include <cfloat>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "workspace_layout.hpp"

namespace reduction::generic {

// ---- operators -----------------------------------------------------------------

struct Sum {
  template <typename T>
  __host__ __device__ static T identity() {
    return T(0);
  }
  template <typename T>
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      // Wrap-around (two's complement) instead of signed overflow, which C++ leaves undefined.
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};

// The identities of Max and Min: the smallest and largest value of T (minus and plus
// infinity for floating-point types).
template <typename T>
__host__ __device__ constexpr T lowest_value() {
  if constexpr (std::numeric_limits<T>::has_infinity)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}

template <typename T>
__host__ __device__ constexpr T highest_value() {
  if constexpr (std::numeric_limits<T>::has_infinity)
    return std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::max();
}

// Min and Max ignore NaN only as far as `<` does: they are meant for ordered data.
struct Min {
  template <typename T>
  __host__ __device__ static T identity() {
    return highest_value<T>();
  }
  template <typename T>
  __host__ __device__ T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};

struct Max {
  template <typename T>
  __host__ __device__ static T identity() {
    return lowest_value<T>();
  }
  template <typename T>
  __host__ __device__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

// ---- device building blocks -------------------------------------------------------

// The value types the kernels take: 4 or 8 bytes (a tagged slot holds a 4-byte value
// beside its 32-bit tag; the warp shuffles move 4 or 8 bytes), trivially copyable.
template <typename T>
constexpr void check_value_type() {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8,
                "reduction::generic: the value type must be 4 or 8 bytes (float, double, int32, uint32, int64, "
                "uint64); 1-, 2- and 16-byte types are not supported");
  static_assert(std::is_trivially_copyable_v<T>, "reduction::generic: the value type must be trivially copyable");
}

template <typename T>
struct alignas(16) Pack {
  static constexpr int kCount = 16 / static_cast<int>(sizeof(T));
  T v[kCount];
};

// One 16-byte load through the read-only (non-coherent) path.
template <typename T>
__device__ __forceinline__ Pack<T> load_pack(const Pack<T>* p) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  Pack<T> out;
  memcpy(&out, &raw, sizeof out);
  return out;
}

// The values of one vector combined pairwise: ((v0 op v1) op (v2 op v3)) for four.
template <typename T, typename Op>
__device__ __forceinline__ T pack_reduce(const Pack<T>& p, Op op) {
  if constexpr (Pack<T>::kCount == 1) {
    return p.v[0];
  } else if constexpr (Pack<T>::kCount == 2) {
    return op(p.v[0], p.v[1]);
  } else if constexpr (Pack<T>::kCount == 4) {
    return op(op(p.v[0], p.v[1]), op(p.v[2], p.v[3]));
  } else {
    T v = p.v[0];
#pragma unroll
    for (int w = 1; w < Pack<T>::kCount; ++w) v = op(v, p.v[w]);
    return v;
  }
}

template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread of the block must call it; thread 0 gets the block's value. Stage 08's
// block_sum (reduction/primitives.cuh) for any type and operator: the same two levels of
// shuffles, written again so that this header stands alone.
template <int kBlock, typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, Op op) {
  static_assert(kBlock % 32 == 0 && kBlock <= 1024, "block size must be a multiple of 32, at most 1024");
  constexpr int kWarps = kBlock / 32;
  __shared__ T warp_values[kWarps];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  v = warp_reduce(v, op);
  if constexpr (kWarps == 1) return v;
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_values[lane] : Op::template identity<T>();
    v = warp_reduce(v, op);
  }
  return v;
}

// block_reduce_one_round (below) with the last step left open, so that other ways of
// adding the 32 lanes can be tried (the "critical" experiment does): every thread of the
// block must call it; in warp 0, lane l adds the values of threads l, l + 32, l + 64, ...
// pairwise, and the warp's 32 lanes call lanes(that value), whose thread 0 result is the
// block's. Other threads return their own value.
template <int kBlock, typename T, typename Op, typename Lanes>
__device__ __forceinline__ T block_reduce_lanes(T v, Op op, Lanes lanes) {
  static_assert(kBlock % 32 == 0 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
                "block size must be a power of two from 32 to 1024");
  if constexpr (kBlock == 32) {
    return lanes(v);
  } else {
    constexpr int kPerLane = kBlock / 32;
    // 16-byte vectors when each lane takes a whole number of them, else single values.
    constexpr int kWidth = kPerLane % Pack<T>::kCount == 0 ? Pack<T>::kCount : 1;
    constexpr int kReads = kPerLane / kWidth;
    __shared__ alignas(16) T values[kBlock];
    values[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
      T s[kReads];
#pragma unroll
      for (int j = 0; j < kReads; ++j) {
        if constexpr (kWidth == Pack<T>::kCount && kWidth > 1) {
          s[j] = pack_reduce(reinterpret_cast<const Pack<T>*>(values)[j * 32 + threadIdx.x], op);
        } else {
          s[j] = values[j * 32 + threadIdx.x];
        }
      }
#pragma unroll
      for (int width = 1; width < kReads; width *= 2)
#pragma unroll
        for (int j = 0; j + width < kReads; j += 2 * width) s[j] = op(s[j], s[j + width]);
      v = lanes(s[0]);
    }
    return v;
  }
}

// The same result in thread 0 with one barrier and one round of shuffles instead of
// two: every thread puts its value in shared memory, then warp 0 alone adds them. Lane
// l takes the values l, l + 32, l + 64, ... (read as 16-byte vectors where a lane has
// whole vectors, which keeps the reads free of bank conflicts), adds them pairwise, and
// five shuffles add the lanes. The last block of the ticket path has two block sums
// between its data and the result (its own, and the partials'), so this shortens the
// critical path; chapter 13 and the "critical" experiment
// (lab/critical.cu) have the measured difference. The order is
// fixed, so the result is as deterministic as block_reduce's, and just as deep:
// log2(kBlock) operations. Stage 13's block_sum_one_round (reduction/primitives.cuh) for
// any type and operator, written again so that this header stands alone; for floats the
// two give the same bits (tests/gpu/test_safety.cu).
template <int kBlock, typename T, typename Op>
__device__ __forceinline__ T block_reduce_one_round(T v, Op op) {
  return block_reduce_lanes<kBlock>(v, op, [op](T s) { return warp_reduce(s, op); });
}

// Where the 16-byte body of the input starts and ends: a scalar head up to the first
// 16-byte boundary, `packs` whole vectors, then a scalar tail. The host and the
// kernels compute it the same way.
template <typename T>
struct Split {
  std::size_t head;
  std::size_t packs;
  __host__ __device__ Split(const T* in, std::size_t n) {
    constexpr std::size_t kWidth = Pack<T>::kCount;
    const std::size_t misalign = (reinterpret_cast<std::uintptr_t>(in) % 16) / sizeof(T);
    head = misalign == 0 ? 0 : (kWidth - misalign < n ? kWidth - misalign : n);
    packs = (n - head) / kWidth;
  }
};

// Small n: one block, every thread issues all of its (at most kLoads) 16-byte loads
// at once, and no ticket. 32-bit indices and no division: below about 2^14 elements
// the kernel's own instructions are a visible part of the time.
template <typename T, typename Op, int kBlock, int kLoads>
__global__ void __launch_bounds__(kBlock)
    single_block_kernel(const T* __restrict__ in, unsigned n, T* __restrict__ out, Op op) {
  using P = Pack<T>;
  const Split<T> split(in, n);
  const unsigned head = static_cast<unsigned>(split.head);
  const unsigned packs = static_cast<unsigned>(split.packs);
  const P* body = reinterpret_cast<const P*>(in + head);
  // All loads first; a thread past the end holds the identity instead, so the
  // additions below need no condition.
  P p[kLoads];
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    const unsigned i = threadIdx.x + k * kBlock;
    if (i < packs) {
      p[k] = load_pack(body + i);
    } else {
#pragma unroll
      for (int w = 0; w < P::kCount; ++w) p[k].v[w] = Op::template identity<T>();
    }
  }
  T v = Op::template identity<T>();
#pragma unroll
  for (int k = 0; k < kLoads; ++k) v = op(v, pack_reduce(p[k], op));
  const unsigned tail_begin = head + packs * P::kCount;
  if (threadIdx.x < head) v = op(v, in[threadIdx.x]);
  if (threadIdx.x < n - tail_begin) v = op(v, in[tail_begin + threadIdx.x]);
  v = block_reduce_one_round<kBlock>(v, op);
  if (threadIdx.x == 0) *out = v;
}

// Step 1 for one thread: its share of the block's `chunk` vectors (a multiple of kBlock,
// computed on the host so that the kernel does no 64-bit division) and of the scalar
// head and tail. Every thread returns its own value.
template <typename T, typename Op, int kBlock, int kUnroll>
__device__ __forceinline__ T thread_chunk_reduce(const T* __restrict__ in, std::size_t n, std::size_t chunk, Op op) {
  using P = Pack<T>;
  constexpr int kWidth = P::kCount;
  const Split<T> split(in, n);
  const std::size_t head = split.head;
  const std::size_t packs = split.packs;
  const P* body = reinterpret_cast<const P*>(in + head);
  const std::size_t tail_begin = head + packs * kWidth;

  const std::size_t thread = blockIdx.x * static_cast<std::size_t>(kBlock) + threadIdx.x;

  T acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = Op::template identity<T>();

  // Each block reads one contiguous chunk, its threads side by side; measured on the
  // H200 this streams from DRAM better than a grid-wide stride at large n.
  constexpr std::size_t kStep = static_cast<std::size_t>(kBlock) * kUnroll;
  const std::size_t begin = blockIdx.x * chunk;
  const std::size_t end = begin + chunk < packs ? begin + chunk : packs;
  std::size_t i = begin + threadIdx.x;
  // kUnroll independent 16-byte loads are issued before any of them is used.
  for (; i + (kUnroll - 1) * kBlock < end; i += kStep) {
    P p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) p[u] = load_pack(body + i + u * kBlock);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int w = 0; w < kWidth; ++w) acc[u] = op(acc[u], p[u].v[w]);
  }
  // Fewer than kUnroll vectors are left for this thread: load them together too,
  // so that they cost one round trip to memory, not one each.
  if (i < end) {
    P p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i + u * kBlock < end) p[u] = load_pack(body + i + u * kBlock);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i + u * kBlock < end)
#pragma unroll
        for (int w = 0; w < kWidth; ++w) acc[u] = op(acc[u], p[u].v[w]);
  }
  if (thread < head) acc[0] = op(acc[0], in[thread]);
  if (thread < n - tail_begin) acc[0] = op(acc[0], in[tail_begin + thread]);

  T v = acc[0];
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) v = op(v, acc[u]);
  return v;
}

// Steps 1 and 2 for one block: the threads' values, then the block's combine. Thread 0
// returns the block's value.
template <typename T, typename Op, int kBlock, int kUnroll>
__device__ __forceinline__ T block_chunk_reduce(const T* __restrict__ in, std::size_t n, std::size_t chunk, Op op) {
  return block_reduce_one_round<kBlock>(thread_chunk_reduce<T, Op, kBlock, kUnroll>(in, n, chunk, op), op);
}

// Where the ticket path keeps its state, inside the caller's scratch (scratch_bytes):
// the ticket (a counter of finished blocks) at byte 0, and from byte kSlotsOffset (128:
// the ticket's cache line to itself) one slot per block; workspace_layout.hpp, beside
// this file, holds the layout that the stages and the lab share.
using workspace::kSlotsOffset;

// Values of 4 bytes travel in a tagged slot: one 64-bit word that is 0 when the slot is
// empty and holds the tag kFull (high half) and the value's bits (low half) when it is
// full. 8-byte values are stored plainly and published by the ticket's release
// (finish_with_ticket).
template <typename T>
constexpr bool kTaggedSlots = sizeof(T) == 4;
constexpr unsigned kFull = 1;

template <typename T>
__device__ __forceinline__ unsigned long long tag_value(T v) {
  unsigned bits = 0;
  memcpy(&bits, &v, sizeof v);
  return (static_cast<unsigned long long>(kFull) << 32) | bits;
}

template <typename T>
__device__ __forceinline__ T untag_value(unsigned long long word) {
  const auto bits = static_cast<unsigned>(word);
  T v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

// Any n: every block does steps 1-2, then the last block to finish adds the partials.
//
// The last block must see every other block's value. The plain way (8-byte values) is:
// store it, then take the ticket with a release (the store is visible device-wide before
// the ticket moves), and the last block's acquire on the ticket makes every released
// store visible to it: three trips to L2 in a row before the last block can start
// adding. For 4-byte values the kernel needs no release: each block stores {full, value}
// as one 64-bit word and takes its ticket at once. The last block may then read a word
// before its store has landed, so it reads each word until the word is full.
// The last block empties each slot after reading it, so every launch leaves every slot
// it used at 0, whatever its grid: a full slot can only be this launch's, for any number
// of launches with any mix of grids on one scratch area. It waits only for blocks that
// have taken their tickets, which are already running, so it needs no other block to be
// resident at the same time.
//
// Step 3 for a grid of more than one block: every thread of every block calls it, with
// the block's value in thread 0's `v`.
template <typename T, typename Op, int kBlock>
__device__ __forceinline__ void finish_with_ticket(T v, T* __restrict__ out, unsigned char* __restrict__ scratch,
                                                   Op op) {
  auto* ticket = reinterpret_cast<unsigned*>(scratch);
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    unsigned taken = 0;
    if constexpr (kTaggedSlots<T>) {
      auto* slots = reinterpret_cast<unsigned long long*>(scratch + kSlotsOffset);
      asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slots + blockIdx.x), "l"(tag_value(v)) : "memory");
      asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(taken) : "l"(ticket) : "memory");
    } else {
      // Release: this block's slot store happens before its ticket. Acquire: the block
      // that takes the last ticket reads from the ticket's release sequence (every
      // block's add), so every block's slot store happens before its reads below; the
      // __syncthreads() after this extends that to all of its threads.
      reinterpret_cast<T*>(scratch + kSlotsOffset)[blockIdx.x] = v;
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*ticket);
      taken = counter.fetch_add(1u, cuda::memory_order_acq_rel);
    }
    is_last = taken == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;

  // The last block adds the values in index order. Its reads go to L2 (relaxed.gpu
  // or __ldcg), never to a stale L1 line; what makes them see the other blocks' values
  // is the full tag (4-byte values) or the ticket's acquire (8-byte values).
  T w = Op::template identity<T>();
  if constexpr (kTaggedSlots<T>) {
    auto* slots = reinterpret_cast<unsigned long long*>(scratch + kSlotsOffset);
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
      unsigned long long word = 0;
      do {
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(slots + b) : "memory");
      } while (static_cast<unsigned>(word >> 32) != kFull);
      asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slots + b), "l"(0ull) : "memory");  // empty again
      w = op(w, untag_value<T>(word));
    }
  } else {
    const T* values = reinterpret_cast<const T*>(scratch + kSlotsOffset);
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) w = op(w, __ldcg(values + b));
  }
  w = block_reduce_one_round<kBlock>(w, op);
  if (threadIdx.x == 0) {
    *out = w;
    *ticket = 0;  // ready for the next launch
  }
}

template <typename T, typename Op, int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    single_pass_kernel(const T* __restrict__ in, std::size_t n, std::size_t chunk, T* __restrict__ out,
                       unsigned char* __restrict__ scratch, Op op) {
  const T v = block_chunk_reduce<T, Op, kBlock, kUnroll>(in, n, chunk, op);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = v;
    return;
  }
  finish_with_ticket<T, Op, kBlock>(v, out, scratch, op);
}

// Mid-size n on Hopper (sm_90) and later: the grid is one thread-block cluster of
// kMaxCluster blocks or fewer, on as many SMs. Each block pushes its value into
// block 0's shared memory (distributed shared memory), one cluster barrier makes
// the pushes visible, and block 0 adds them in rank order: no global memory, no
// fence and no atomic between the blocks.
constexpr int kMaxCluster = 16;

template <typename T, typename Op, int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    cluster_kernel(const T* __restrict__ in, std::size_t n, std::size_t chunk, T* __restrict__ out, Op op) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ T partials[kMaxCluster];
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  // A block may write into another block's shared memory only once that block is
  // running: arrive at the cluster barrier now, wait for the others before the push
  // (the loads in between hide the wait).
  auto started = cluster.barrier_arrive();
  const T v = block_chunk_reduce<T, Op, kBlock, kUnroll>(in, n, chunk, op);
  const unsigned rank = cluster.block_rank();
  cluster.barrier_wait(std::move(started));
  if (threadIdx.x == 0) cluster.map_shared_rank(partials, 0)[rank] = v;
  cluster.sync();  // every push has landed; no block touches another's memory after this
  if (rank == 0 && threadIdx.x < 32) {
    T w = threadIdx.x < cluster.num_blocks() ? partials[threadIdx.x] : Op::template identity<T>();
    w = warp_reduce(w, op);
    if (threadIdx.x == 0) *out = w;
  }
#else
  __trap();  // the host launches this only on devices of compute capability 9.0 or later
#endif
}

// ---- host side --------------------------------------------------------------------

constexpr int kDefaultBlock = 512;
constexpr int kDefaultUnroll = 4;
// The single-block path takes n up to kBlock x kSmallLoads vectors.
constexpr int kSmallLoads = 8;
// Below this many vectors per thread the grid grows instead: a mid-size n is spread
// over as many SMs as it can use, two vectors per thread at least.
constexpr int kMinPacksPerThread = 2;

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Threads per SM to aim for. On the H200, 3 blocks of 512 per SM streamed a 4 GiB
// array faster than 4 blocks of 512 (full occupancy): more resident warps added
// contention for DRAM without adding useful bytes in flight. On the H100 it is the
// fastest shape or within a percent of it from 2^26 to 2^29 (lab/notes/90_lab_notes.md).
// Try others with `reduce --stages 13 --block B` and the occupancy sweep (occupancy/03).
constexpr int kTargetThreadsPerSm = 1536;

// True when n elements go through the single-block kernel.
template <typename T, int kBlock>
constexpr bool fits_one_block(std::size_t n) {
  return n <= static_cast<std::size_t>(kBlock) * kSmallLoads * Pack<T>::kCount;
}

// The cluster path takes n up to (blocks in the cluster) x kBlock x kClusterLoads
// vectors: 2^17 floats for 16 blocks of 512.
constexpr int kClusterLoads = 4;

template <typename T, int kBlock>
constexpr bool fits_cluster(std::size_t n, int cluster) {
  return !fits_one_block<T, kBlock>(n) &&
         n <= static_cast<std::size_t>(cluster) * kBlock * kClusterLoads * Pack<T>::kCount;
}

// A launch of `blocks` blocks as one cluster of that many (for cudaLaunchKernelEx and
// cudaOccupancyMaxActiveClusters). Not copyable: `config` points at `attribute`.
struct ClusterLaunch {
  cudaLaunchAttribute attribute = {};
  cudaLaunchConfig_t config = {};
  ClusterLaunch(unsigned blocks, int block, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = blocks;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(static_cast<unsigned>(block));
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// Answers about one kernel on one device (the cluster size it can take, the blocks per SM
// it can keep resident), asked once and remembered for later calls. They are keyed on the
// kernel's address, not on its template arguments: every .cu file that includes this
// header compiles its own copy of each kernel, at its own address, and an attribute set
// with cudaFuncSetAttribute holds only for the copy it was set on. A function-local
// static shared by all files (one per template instance) would set the attribute on the
// first file's copy and then let another file launch its own copy without it. So each
// launch site asks with the address it launches, and the table is shared: one mutex,
// a short list (one entry per kernel, question and device), looked up once per call.
enum class Question { cluster_blocks, blocks_per_sm };

class KernelAnswers {
 public:
  template <typename Ask>
  int get(const void* kernel, Question question, Ask ask) {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_)
      if (e.kernel == kernel && e.question == question && e.device == device) return e.answer;
    const int answer = ask(device);
    entries_.push_back(Entry{kernel, question, device, answer});
    return answer;
  }

 private:
  struct Entry {
    const void* kernel;
    Question question;
    int device;
    int answer;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

inline KernelAnswers& kernel_answers() {
  static KernelAnswers answers;
  return answers;
}

// Blocks per cluster that `kernel` (a cluster_kernel instance of kBlock threads) can be
// launched with on the current device: 16 where a cluster of 16 of its blocks can be
// resident (a non-portable size, allowed on the H100 and H200, after
// cudaFuncSetAttribute(kernel, NonPortableClusterSizeAllowed) on this very address), else
// 8 (the portable limit), else 0 (no clusters: a device without them, or this kernel's
// code compiled for an architecture before 9.0).
template <typename Kernel>
int cluster_blocks_for(Kernel kernel, int block) {
  const void* key = reinterpret_cast<const void*>(kernel);
  return kernel_answers().get(key, Question::cluster_blocks, [kernel, block](int) {
    // Chosen by what the loaded kernel image holds, not by the device: a build for
    // sm_80 runs on an H100 through the JIT compilation of its compute_80 PTX, whose
    // cluster_kernel is the __trap() branch. ptxVersion is the virtual architecture the
    // running code was compiled for (80 there, 90 for a build for sm_90).
    cudaFuncAttributes attributes{};
    check(cudaFuncGetAttributes(&attributes, kernel), "cudaFuncGetAttributes");
    if (attributes.ptxVersion < 90) return 0;
    for (int c : {16, 8}) {
      if (c > 8 && cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
        cudaGetLastError();  // not allowed here: try the portable size
        continue;
      }
      const ClusterLaunch probe(static_cast<unsigned>(c), block, nullptr);
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &probe.config) == cudaSuccess && clusters > 0) return c;
      cudaGetLastError();
    }
    return 0;
  });
}

// The same for the cluster kernel of these template arguments, as this file sees it.
template <typename T, typename Op, int kBlock, int kUnroll>
int cluster_blocks() {
  return cluster_blocks_for(cluster_kernel<T, Op, kBlock, kUnroll>, kBlock);
}

// Blocks of the ticket path for n elements: enough to fill the GPU (resident blocks
// per SM, from the occupancy API and capped at kTargetThreadsPerSm, times SMs), but no
// more than give each thread kMinPacksPerThread vectors.
// The resident blocks per SM are asked once per device and kernel, then remembered, so
// that reduce() costs no occupancy query after its first call on a device.
template <typename T, typename Op, int kBlock = kDefaultBlock, int kUnroll = kDefaultUnroll>
unsigned ticket_grid(std::size_t n, int sm_count) {
  const auto kernel = single_pass_kernel<T, Op, kBlock, kUnroll>;
  int per_sm = kernel_answers().get(reinterpret_cast<const void*>(kernel), Question::blocks_per_sm, [kernel](int) {
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kBlock, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
  });
  const int target = kTargetThreadsPerSm / kBlock > 0 ? kTargetThreadsPerSm / kBlock : 1;
  per_sm = per_sm < target ? per_sm : target;
  const std::size_t resident = static_cast<std::size_t>(per_sm > 0 ? per_sm : 1) * static_cast<std::size_t>(sm_count);
  const std::size_t per_block = static_cast<std::size_t>(kBlock) * kMinPacksPerThread * Pack<T>::kCount;
  const std::size_t useful = (n + per_block - 1) / per_block;
  const std::size_t grid = useful < resident ? useful : resident;
  return static_cast<unsigned>(grid > 0 ? grid : 1);
}

// Blocks for n elements, which also picks the path: one when a single block can take
// n in one round of loads; one cluster when the device has clusters and n fits the
// cluster path; otherwise the ticket path's grid.
template <typename T, typename Op, int kBlock = kDefaultBlock, int kUnroll = kDefaultUnroll>
unsigned grid_for(std::size_t n, int sm_count) {
  check_value_type<T>();
  if (fits_one_block<T, kBlock>(n)) return 1;
  const int cluster = cluster_blocks<T, Op, kBlock, kUnroll>();
  if (cluster > 0 && fits_cluster<T, kBlock>(n, cluster)) return static_cast<unsigned>(cluster);
  return ticket_grid<T, Op, kBlock, kUnroll>(n, sm_count);
}

// Vectors per block for a grid: an even share of the 16-byte body, rounded up to a
// whole number of kBlock.
template <typename T, int kBlock>
std::size_t chunk_for(const T* in, std::size_t n, unsigned grid) {
  const std::size_t chunk = (Split<T>(in, n).packs + grid - 1) / grid;
  return (chunk + kBlock - 1) / kBlock * kBlock;
}

// Enqueues cluster_kernel as one cluster of `blocks` blocks. The cluster sizes this
// kernel copy takes are asked (and the non-portable size allowed) with the address that
// is launched here, so that the set-up always belongs to the launched copy; a size above
// what the device allows is refused before the launch.
template <typename T, typename Op, int kBlock, int kUnroll>
void launch_cluster(const T* in, std::size_t n, T* out, unsigned blocks, cudaStream_t stream, Op op = Op{}) {
  const auto kernel = cluster_kernel<T, Op, kBlock, kUnroll>;
  const int most = cluster_blocks_for(kernel, kBlock);
  if (blocks == 0 || static_cast<int>(blocks) > most)
    throw std::invalid_argument("reduction::generic::launch_cluster: a cluster of " + std::to_string(blocks) +
                                " blocks is not possible here; this device takes 1 to " + std::to_string(most) +
                                " blocks of " + std::to_string(kBlock) + " threads per cluster.");
  const ClusterLaunch cluster(blocks, kBlock, stream);
  check(cudaLaunchKernelEx(&cluster.config, kernel, in, n, chunk_for<T, kBlock>(in, n, blocks), out, op),
        "cluster_kernel launch");
}

// Scratch of the ticket path: the ticket, then one slot per block.
template <typename T>
std::size_t scratch_bytes(unsigned grid) {
  return kSlotsOffset + static_cast<std::size_t>(grid) * (kTaggedSlots<T> ? 8 : sizeof(T));
}

// Enqueues the reduction with the grid from grid_for (which also picks the path: one
// block, one cluster, or the ticket). `scratch` holds scratch_bytes<T>(grid) bytes,
// zeroed once before the first launch; every launch leaves the ticket and every slot it
// used at zero again. One launch in flight per scratch area (Workspace says why).
template <typename T, typename Op, int kBlock = kDefaultBlock, int kUnroll = kDefaultUnroll>
void launch(const T* in, std::size_t n, T* out, void* scratch, unsigned grid, cudaStream_t stream, Op op = Op{}) {
  check_value_type<T>();
  if (grid == 1 && fits_one_block<T, kBlock>(n)) {
    single_block_kernel<T, Op, kBlock, kSmallLoads><<<1, kBlock, 0, stream>>>(in, static_cast<unsigned>(n), out, op);
    check(cudaGetLastError(), "single_block_kernel launch");
    return;
  }
  if ((grid == 8 || grid == 16) && fits_cluster<T, kBlock>(n, static_cast<int>(grid)) &&
      cluster_blocks<T, Op, kBlock, kUnroll>() == static_cast<int>(grid)) {
    launch_cluster<T, Op, kBlock, kUnroll>(in, n, out, grid, stream, op);
    return;
  }
  single_pass_kernel<T, Op, kBlock, kUnroll><<<grid, kBlock, 0, stream>>>(in, n, chunk_for<T, kBlock>(in, n, grid), out,
                                                                          static_cast<unsigned char*>(scratch), op);
  check(cudaGetLastError(), "single_pass_kernel launch");
}

// How a stream is named in an error message.
inline std::string stream_name(cudaStream_t stream) {
  if (stream == nullptr) return "the default stream (0)";
  if (stream == cudaStreamLegacy) return "cudaStreamLegacy";
  if (stream == cudaStreamPerThread) return "cudaStreamPerThread";
  std::ostringstream name;
  name << "stream " << static_cast<const void*>(stream);
  return name.str();
}

// Owns a zeroed scratch area big enough for any n on one device, and serves one stream.
//
// Why one stream: the ticket path keeps a counter and the partials in this memory. Two
// sums in flight at once on it (on two streams, say) would count each other's blocks:
// a last block could add slots that the other sum has not written yet, or wait for tags
// that never come, and hang the GPU. Sums on one stream run one after the other, so a
// Workspace bound to one stream is safe; a call on any other stream is refused with
// std::invalid_argument, before anything is enqueued. The stream is the constructor's,
// or else that of the first call. (cudaStreamPerThread names a different stream in each
// host thread: a Workspace used with it must stay in one host thread.)
class Workspace {
 public:
  // Not bound yet: the first call's stream becomes its stream.
  explicit Workspace(int device = 0) { allocate(device); }
  // Bound to `stream` from the start.
  Workspace(int device, cudaStream_t stream) {
    allocate(device);
    bound_.store(reinterpret_cast<std::uintptr_t>(stream), std::memory_order_relaxed);
  }
  ~Workspace() { cudaFree(ptr_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  int sm_count() const { return sm_count_; }
  int device() const { return device_; }

  // Binds the workspace to `stream` if it is not bound yet; throws std::invalid_argument
  // naming both streams if it is bound to another one. Thread-safe.
  void use_on(cudaStream_t stream) const {
    const auto wanted = reinterpret_cast<std::uintptr_t>(stream);
    std::uintptr_t current = kUnbound;
    if (bound_.compare_exchange_strong(current, wanted, std::memory_order_relaxed) || current == wanted) return;
    throw std::invalid_argument("reduction::generic::reduce: this Workspace is bound to " +
                                stream_name(reinterpret_cast<cudaStream_t>(current)) + " but was called on " +
                                stream_name(stream) +
                                "; two sums in flight on one workspace share its ticket, so give each stream its "
                                "own Workspace.");
  }

 private:
  static constexpr std::uintptr_t kUnbound = ~std::uintptr_t{0};  // no stream has this handle

  void allocate(int device) {
    int previous = 0;
    check(cudaGetDevice(&previous), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
    device_ = device;
    check(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    int max_threads = 0;
    check(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device),
          "cudaDeviceGetAttribute");
    // Never more resident blocks than threads per SM / 32 (the smallest block), times SMs;
    // 16 bytes per slot (wider than any value type takes).
    bytes_ = kSlotsOffset + static_cast<std::size_t>(sm_count_) * static_cast<std::size_t>(max_threads / 32) * 16;
    check(cudaMalloc(&ptr_, bytes_), "cudaMalloc");
    // Zeroed and waited for here, so that a first call on any stream (non-blocking ones
    // included) finds the memory zeroed.
    check(cudaMemsetAsync(ptr_, 0, bytes_, nullptr), "cudaMemsetAsync");
    check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
    check(cudaSetDevice(previous), "cudaSetDevice");
  }

  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  int sm_count_ = 0;
  int device_ = 0;
  mutable std::atomic<std::uintptr_t> bound_{kUnbound};
};

// The one-line API: reduce n values of `in` into *out (device pointers) with `op`, on
// `stream`, which must be the workspace's stream (Workspace).
template <typename T, typename Op = Sum>
void reduce(const T* in, std::size_t n, T* out, const Workspace& ws, cudaStream_t stream = nullptr, Op op = Op{}) {
  check_value_type<T>();
  if (n == 0) throw std::invalid_argument("reduction::generic::reduce: n must be at least 1");
  ws.use_on(stream);
  const unsigned grid = grid_for<T, Op>(n, ws.sm_count());
  launch<T, Op>(in, n, out, ws.get(), grid, stream, op);
}

}  // namespace reduction::generic
