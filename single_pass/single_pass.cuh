// A single-pass reduction, header-only and generic: any value type whose size
// divides 16 bytes (float, double, int32, ...) and any associative operator
// (Sum, Min, Max below, or your own functor with identity()).
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
//   reduction::generic::Workspace ws(device);   // one per device *and stream*: zeroed ticket + partials
//   reduction::generic::reduce<float, reduction::generic::Sum>(in, n, out, ws, stream);
// Two sums in flight at once on one Workspace (on two streams, say) share its ticket:
// the result can be wrong or the GPU can hang. Give each stream its own Workspace.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cfloat>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

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

// Every thread of the block must call it; thread 0 gets the block's value.
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
// (experiments/critical.cu) have the measured difference. The order is
// fixed, so the result is as deterministic as block_reduce's, and just as deep:
// log2(kBlock) operations.
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
// the ticket (a counter of finished blocks) at byte 0, the launch tag at byte 64 (its
// own 32-byte sector, so that reading it does not queue behind the ticket's atomics),
// and from byte 128 (its own cache lines) one slot per block.
constexpr std::size_t kTagOffset = 64;
constexpr std::size_t kSlotsOffset = 128;

// Values of 4 bytes or fewer travel in a tagged slot: one 64-bit word holding the
// launch's tag (high half) and the value's bits (low half). Wider values are stored
// plainly and published with a __threadfence before the ticket.
template <typename T>
constexpr bool kTaggedSlots = sizeof(T) <= 4;

template <typename T>
__device__ __forceinline__ unsigned long long tag_value(unsigned tag, T v) {
  unsigned bits = 0;
  memcpy(&bits, &v, sizeof v);
  return (static_cast<unsigned long long>(tag) << 32) | bits;
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
// The last block must see every other block's value. The plain way is: store it,
// __threadfence() (wait until the store is visible device-wide), then take the ticket,
// three trips to L2 in a row before the last block can start adding. For values of 4
// bytes or fewer the kernel skips the fence: each block stores {tag, value} as one
// 64-bit word and takes its ticket at once. The last block may then read a word before
// its store has landed, so it reads each word until the word carries this launch's tag.
// The tag comes from the scratch (one more than the last launch's), read at the start
// while the data loads are in flight; the last block writes it back for the next launch.
// Tags repeat only after 2^32 launches on one scratch area.
// The launch's tag, read by thread 0 at the start of a ticket-path kernel (other
// threads get 0, and so do values that keep the fence).
template <typename T>
__device__ __forceinline__ unsigned read_launch_tag(const unsigned char* scratch) {
  unsigned tag = 0;
  if (kTaggedSlots<T> && threadIdx.x == 0) {
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(tag) : "l"(scratch + kTagOffset) : "memory");
    tag = tag + 1 == 0 ? 1 : tag + 1;  // 0 is the zeroed scratch's tag: never used
  }
  return tag;
}

// Step 3 for a grid of more than one block: every thread of every block calls it, with
// the block's value in thread 0's `v` and its tag from read_launch_tag.
template <typename T, typename Op, int kBlock>
__device__ __forceinline__ void finish_with_ticket(T v, unsigned tag, T* __restrict__ out,
                                                   unsigned char* __restrict__ scratch, Op op) {
  auto* ticket = reinterpret_cast<unsigned*>(scratch);
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  if (threadIdx.x == 0) {
    unsigned taken = 0;
    if constexpr (kTaggedSlots<T>) {
      auto* slots = reinterpret_cast<unsigned long long*>(scratch + kSlotsOffset);
      asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slots + blockIdx.x), "l"(tag_value(tag, v)) : "memory");
      asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(taken) : "l"(ticket) : "memory");
      launch_tag = tag;
    } else {
      reinterpret_cast<T*>(scratch + kSlotsOffset)[blockIdx.x] = v;
      __threadfence();  // the value is visible device-wide before the ticket is taken
      taken = atomicAdd(ticket, 1u);
    }
    is_last = taken == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;

  // The last block adds the values in index order. Its reads go to L2 (relaxed.gpu
  // or __ldcg), never to a stale L1 line.
  T w = Op::template identity<T>();
  if constexpr (kTaggedSlots<T>) {
    const auto* slots = reinterpret_cast<const unsigned long long*>(scratch + kSlotsOffset);
    const unsigned expected = launch_tag;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
      unsigned long long word = 0;
      do {
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(slots + b) : "memory");
      } while (static_cast<unsigned>(word >> 32) != expected);
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
    if constexpr (kTaggedSlots<T>) *reinterpret_cast<unsigned*>(scratch + kTagOffset) = launch_tag;
  }
}

template <typename T, typename Op, int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    single_pass_kernel(const T* __restrict__ in, std::size_t n, std::size_t chunk, T* __restrict__ out,
                       unsigned char* __restrict__ scratch, Op op) {
  // The tag is read first, so that its trip to L2 overlaps the data loads.
  const unsigned tag = gridDim.x > 1 ? read_launch_tag<T>(scratch) : 0;
  const T v = block_chunk_reduce<T, Op, kBlock, kUnroll>(in, n, chunk, op);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = v;
    return;
  }
  finish_with_ticket<T, Op, kBlock>(v, tag, out, scratch, op);
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
// contention for DRAM without adding useful bytes in flight. Try others with
// `reduce --stages 13 --block B` and the occupancy sweep (occupancy/03).
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

// What `ask(device)` answers for the current device (a count, never negative), asked on
// the first call for each device and remembered in `known` (the answer + 1; 0 while not
// yet asked) for later calls. Devices past the first kRememberedDevices are asked each time.
constexpr int kRememberedDevices = 64;

template <typename Ask>
int once_per_device(std::atomic<int> (&known)[kRememberedDevices], Ask ask) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const bool remembered = device >= 0 && device < kRememberedDevices;
  if (remembered) {
    const int v = known[device].load(std::memory_order_relaxed);
    if (v != 0) return v - 1;
  }
  const int answer = ask(device);
  if (remembered) known[device].store(answer + 1, std::memory_order_relaxed);
  return answer;
}

// Blocks per cluster for the cluster path on the current device: 16 where a cluster of
// 16 of these blocks can be resident (a non-portable size, allowed on the H100 and
// H200), else 8 (the portable limit), else 0 (no clusters: compute capability below
// 9.0). Asked once per device and kernel, then remembered.
template <typename T, typename Op, int kBlock, int kUnroll>
int cluster_blocks() {
  static std::atomic<int> known[kRememberedDevices];
  return once_per_device(known, [](int device) {
    int major = 0;
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
    int blocks = 0;
    if (major >= 9) {
      const auto kernel = cluster_kernel<T, Op, kBlock, kUnroll>;
      for (int c : {16, 8}) {
        if (c > 8 && cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
          cudaGetLastError();  // not allowed here: try the portable size
          continue;
        }
        const ClusterLaunch probe(static_cast<unsigned>(c), kBlock, nullptr);
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &probe.config) == cudaSuccess && clusters > 0) {
          blocks = c;
          break;
        }
        cudaGetLastError();
      }
    }
    return blocks;
  });
}

// Blocks of the ticket path for n elements: enough to fill the GPU (resident blocks
// per SM, from the occupancy API and capped at kTargetThreadsPerSm, times SMs), but no
// more than give each thread kMinPacksPerThread vectors.
// The resident blocks per SM are asked once per device and kernel, then remembered, so
// that reduce() costs no occupancy query after its first call on a device.
template <typename T, typename Op, int kBlock = kDefaultBlock, int kUnroll = kDefaultUnroll>
unsigned ticket_grid(std::size_t n, int sm_count) {
  static std::atomic<int> known[kRememberedDevices];
  int per_sm = once_per_device(known, [](int) {
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, single_pass_kernel<T, Op, kBlock, kUnroll>, kBlock, 0),
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

// Enqueues cluster_kernel as one cluster of `blocks` blocks (8, or 16 where
// cluster_blocks() allowed it).
template <typename T, typename Op, int kBlock, int kUnroll>
void launch_cluster(const T* in, std::size_t n, T* out, unsigned blocks, cudaStream_t stream, Op op = Op{}) {
  const ClusterLaunch cluster(blocks, kBlock, stream);
  check(cudaLaunchKernelEx(&cluster.config, cluster_kernel<T, Op, kBlock, kUnroll>, in, n,
                           chunk_for<T, kBlock>(in, n, blocks), out, op),
        "cluster_kernel launch");
}

// Scratch of the ticket path: the ticket, the tag, then one slot per block.
template <typename T>
std::size_t scratch_bytes(unsigned grid) {
  return kSlotsOffset + static_cast<std::size_t>(grid) * (kTaggedSlots<T> ? 8 : sizeof(T));
}

// Enqueues the reduction with the grid from grid_for (which also picks the path: one
// block, one cluster, or the ticket). `scratch` holds scratch_bytes<T>(grid) bytes,
// zeroed once before the first launch; every launch leaves the ticket at zero and the
// tag ready for the next launch.
template <typename T, typename Op, int kBlock = kDefaultBlock, int kUnroll = kDefaultUnroll>
void launch(const T* in, std::size_t n, T* out, void* scratch, unsigned grid, cudaStream_t stream, Op op = Op{}) {
  static_assert(16 % sizeof(T) == 0, "the value type's size must divide 16 bytes");
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

// Owns a zeroed scratch area big enough for any n on this device.
class Workspace {
 public:
  explicit Workspace(int device = 0) {
    check(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    int max_threads = 0;
    check(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device),
          "cudaDeviceGetAttribute");
    // Never more resident blocks than threads per SM / 32 (the smallest block), times SMs;
    // 16 bytes per slot (the widest value type).
    bytes_ = kSlotsOffset + static_cast<std::size_t>(sm_count_) * static_cast<std::size_t>(max_threads / 32) * 16;
    check(cudaMalloc(&ptr_, bytes_), "cudaMalloc");
    check(cudaMemset(ptr_, 0, bytes_), "cudaMemset");
  }
  ~Workspace() { cudaFree(ptr_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  void* get() const { return ptr_; }
  int sm_count() const { return sm_count_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  int sm_count_ = 0;
};

// The one-line API: reduce n values of `in` into *out (device pointers) with `op`.
template <typename T, typename Op = Sum>
void reduce(const T* in, std::size_t n, T* out, const Workspace& ws, cudaStream_t stream = nullptr, Op op = Op{}) {
  if (n == 0) throw std::invalid_argument("reduction::generic::reduce: n must be at least 1");
  const unsigned grid = grid_for<T, Op>(n, ws.sm_count());
  launch<T, Op>(in, n, out, ws.get(), grid, stream, op);
}

}  // namespace reduction::generic
