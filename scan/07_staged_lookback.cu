// Scan stage 07: stage 06 with each block's next tile arriving while it waits.
//
// Idea: a block of stage 06 waits for its look-back with none of its own loads in flight;
// its L2 prefetch helps a later block, not itself. Here a grid of one wave keeps its
// blocks, and each takes tile after tile by ticket. As soon as a block has read its tile
// into registers it takes its next ticket and starts copying that tile into shared memory
// (`cp.async`, 16 bytes a copy, sm_80 on): the copy runs while the block scans, waits for
// its look-back and stores. Each thread copies, and later reads, only its own 8 vectors,
// so the staging needs no barrier. No register holds the next tile: two blocks of 512
// still fit an SM, each with a 64 KiB tile in shared memory.
// Safety: a block holds two tickets, and its second tile waits for its first. No hang
// follows: the smallest ticket without an aggregate belongs to a running block, whose
// current tile is either that one (summed without waiting) or a smaller one, whose
// look-back needs only smaller tickets, all of which have their aggregates.
// Before sm_80 (no cp.async) a block loads each tile into registers when it starts it.
// Fixes: stage 06's idle wait for its look-back.
// Measured: results/<gpu>/scan_int_exclusive.csv, chapter 28.
// Chapter: chapters/28_scan.md
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>

#include "cuda_check.hpp"
#include "dispatch.hpp"
#include "kernel_image.hpp"
#include "lookback.cuh"
#include "sm_limits.hpp"

namespace scan {
namespace {

constexpr int kBlock = 512;
constexpr int kRows = 8;  // 16-byte vectors per thread
template <typename T>
using Tile = RowTile<T, kBlock, kRows, 4>;
constexpr unsigned kTile = Tile<unsigned>::kTile;  // 16384
constexpr unsigned kTileVectors = kTile / 4;
constexpr int kStagedBytes = kTileVectors * 16;  // 64 KiB of shared memory a block
// The device pass: whether this image stages (the host asks the image, not the GPU).
constexpr bool kStaged = common::kCompiledArch >= 80;
// As stage 06: two blocks of 512 per SM, one on sm_100 and sm_120.
constexpr int kBlocksPerSm = common::one_block_on(100, 120) ? 1 : common::blocks_per_sm_bound(kBlock, 2);

// One 16-byte vector from global to shared memory, in flight until copies_landed().
template <typename V>
__device__ __forceinline__ void copy_async(V* to, const V* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(from) : "memory");
#else
  *to = *from;  // never reached: images before sm_80 do not stage
#endif
}
__device__ __forceinline__ void copies_landed() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");  // this thread's copies, visible to it
#endif
}

// A ticket from the counter begin_tile takes its first from (rule 1 of lookback.cuh),
// taken by thread 0 alone; its latency is hidden behind the block's scan.
__device__ __forceinline__ unsigned take_ticket(LookbackHeader* header) {
  unsigned tile;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(tile) : "l"(&header->ticket) : "memory");
  return tile;
}

// The look-back of lookback.cuh by the whole block, which has nothing else to do while
// it waits: thread i reads the descriptor i + 1 tiles back, so one round sees kBlock
// tiles where a warp sees 32. With every block of a wave at the same point of its own
// tile, the nearest inclusive prefix is about a wave back: one round here, eight or nine
// of a warp. Every thread gets the tile's exclusive prefix; thread 0 publishes P.
template <typename T>
__device__ __forceinline__ T block_exclusive_prefix(unsigned long long* descriptors, TileTicket t, T aggregate) {
  constexpr int kWarps = kBlock / 32;
  __shared__ unsigned first_p[kWarps];  // per warp: its nearest thread that read a P
  __shared__ T sums[kWarps];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if (gridDim.x == 1) return T(0);
  if (t.tile == 0) {
    if (threadIdx.x == 0) store_relaxed(descriptors, descriptor(t.epoch, kStatusP, aggregate));
    return T(0);
  }
  if (threadIdx.x == 0) store_relaxed(descriptors + t.tile, descriptor(t.epoch, kStatusA, aggregate));
  T prefix = T(0);
  for (long long end = t.tile;; end -= kBlock) {  // the window is end - kBlock .. end - 1
    const long long mine = end - 1 - static_cast<long long>(threadIdx.x);
    unsigned status = mine >= 0 ? kStatusX : kStatusP;  // before tile 0: an empty prefix
    unsigned long long word = 0;
    while (status == kStatusX) {  // tiles before this one: their blocks are running
      word = load_relaxed(descriptors + mine);
      status = status_of(word, t.epoch);
    }
    const unsigned with_p = __ballot_sync(kFullMask, status == kStatusP);
    if (lane == 0) first_p[warp] = with_p ? warp * 32 + __ffs(with_p) - 1 : kBlock;
    __syncthreads();
    unsigned nearest = kBlock;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) nearest = min(nearest, first_p[w]);
    // From this tile back to the nearest P, P included (the whole window when there is none).
    const T mine_value = mine >= 0 && threadIdx.x <= nearest ? from_bits<T>(static_cast<unsigned>(word)) : T(0);
    const T warp_sum = warp_total(mine_value);
    if (lane == 0) sums[warp] = warp_sum;
    __syncthreads();
    T window = T(0);
#pragma unroll
    for (int w = kWarps - 1; w >= 0; --w) window = sums[w] + window;  // the same order in every thread
    prefix = window + prefix;
    if (nearest < kBlock) break;
    __syncthreads();  // first_p and sums are read before the next round writes them
  }
  if (threadIdx.x == 0) store_relaxed(descriptors + t.tile, descriptor(t.epoch, kStatusP, prefix + aggregate));
  return prefix;
}

template <typename T, bool kInclusive, bool kVectorStores, int kVariant>
__global__ void __launch_bounds__(kBlock, kBlocksPerSm)
    staged_lookback_scan(const T* in, T* out, std::size_t n, unsigned shift, unsigned tiles, unsigned char* scratch,
                         unsigned capacity) {
  extern __shared__ uint4 staged_words[];  // kTileVectors vectors when kStaged
  auto* staged = reinterpret_cast<Vec4<T>*>(staged_words);
  auto* header = reinterpret_cast<LookbackHeader*>(scratch);
  auto* descriptors = reinterpret_cast<unsigned long long*>(scratch + kDescriptorsOffset);
  const auto* vectors = reinterpret_cast<const Vec4<T>*>(reinterpret_cast<std::uintptr_t>(in) - 4 * shift);
  // This thread's vector in row 0 of its warp's segment, counted from the tile's first.
  const unsigned mine = (threadIdx.x / 32) * (Tile<T>::kSegment / 4) + threadIdx.x % 32;
  // A tile wholly inside the array (all but the first and last, at most) is read as vectors.
  const auto whole = [&](unsigned tile) {
    const long long first = static_cast<long long>(tile) * kTile - shift;
    return first >= 0 && static_cast<std::size_t>(first) + kTile <= n;
  };
  const auto stage_tile = [&](unsigned tile) {
    const Vec4<T>* src = vectors + static_cast<std::size_t>(tile) * kTileVectors + mine;
#pragma unroll
    for (int r = 0; r < kRows; ++r) copy_async(staged + mine + 32 * r, src + 32 * r);
  };

  const TileTicket first = begin_tile(header);
  __shared__ unsigned epoch;  // the launch's, kept here: one register fewer (64 is the bound)
  __shared__ unsigned ticket_shared;
  unsigned current = first.tile;
  // A block that starts once every tile is taken (its grid is larger than what ran at
  // once) only counts itself done.
  if (current < tiles) {
    if (kStaged && whole(current)) stage_tile(current);
    if (threadIdx.x == 0) {
      epoch = first.epoch;
      ticket_shared = gridDim.x > 1 ? take_ticket(header) : UINT_MAX;
    }
    __syncthreads();
    unsigned next = ticket_shared;
    for (;;) {
      // Thread 0 asks for the tile after next now and shares it at the scan's barrier.
      const unsigned ticket = threadIdx.x == 0 && gridDim.x > 1 && next < tiles ? take_ticket(header) : UINT_MAX;
      const std::size_t first_vec = static_cast<std::size_t>(current) * kTileVectors + mine;
      const bool whole_tile = whole(current);
      Tile<T> tile;
      if (whole_tile) {
        if (kStaged) copies_landed();
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const Vec4<T> q = kStaged ? staged[mine + 32 * r] : __ldcs(vectors + first_vec + 32 * r);
          tile.v[r][0] = q.x;
          tile.v[r][1] = q.y;
          tile.v[r][2] = q.z;
          tile.v[r][3] = q.w;
        }
      } else {
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const long long i = 4 * static_cast<long long>(first_vec + 32 * r) - shift + k;
            tile.v[r][k] = i >= 0 && static_cast<std::size_t>(i) < n ? in[i] : T(0);
          }
      }
      __syncthreads();  // the staging read (and ticket_shared) before either is written again
      if (kStaged && next < tiles && whole(next)) stage_tile(next);
      const T segment = tile.template scan_segment<kInclusive>();
      if (threadIdx.x == 0) ticket_shared = ticket;
      T aggregate;
      const T warp_offset = block_warp_offsets<Tile<T>::kWarps>(segment, aggregate);  // one barrier
      const unsigned after = ticket_shared;
      if ((kVariant & 2) && after < tiles) {
        const std::size_t line = static_cast<std::size_t>(after) * kTileVectors + 8 * threadIdx.x;
        if (4 * line < n + shift) asm volatile("prefetch.global.L2 [%0];" ::"l"(vectors + line));
      }
      T prefix;
      if constexpr ((kVariant & 1) != 0) {
        prefix = block_exclusive_prefix(descriptors, TileTicket{current, epoch}, aggregate);
      } else {
        __shared__ T tile_prefix;
        if (threadIdx.x < 32) {
          const T p = tile_exclusive_prefix(descriptors, TileTicket{current, epoch}, aggregate);
          if (threadIdx.x == 0) tile_prefix = p;
        }
        __syncthreads();
        prefix = tile_prefix;
      }
      tile.add(prefix + warp_offset);

      if (kVectorStores && whole_tile) {
        auto* dst = reinterpret_cast<Vec4<T>*>(reinterpret_cast<std::uintptr_t>(out) - 4 * shift) + first_vec;
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          __stcs(dst + 32 * r, Vec4<T>{tile.v[r][0], tile.v[r][1], tile.v[r][2], tile.v[r][3]});
      } else {
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const long long i = 4 * static_cast<long long>(first_vec + 32 * r) - shift + k;
            if (i >= 0 && static_cast<std::size_t>(i) < n) out[i] = tile.v[r][k];
          }
      }
      if (next >= tiles) break;
      current = next;
      next = after;
    }
  }
  __syncthreads();  // every thread past its last look-back before thread 0 counts the block done
  end_tile(header, descriptors, TileTicket{current, epoch}, capacity);
}

std::size_t tiles_of(std::size_t n, unsigned shift) { return ceil_div(n + shift, kTile); }

// Shared memory the kernel's image asks for: a tile where it stages, none before sm_80.
template <typename Kernel>
int staged_bytes(Kernel* kernel) {
  const int bytes = common::compiled_arch_of(kernel) >= 80 ? kStagedBytes : 0;
  if (bytes > 0)
    CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    bytes));
  return bytes;
}

ScanPlan plan(std::size_t n, ValueType, const common::DeviceInfo& device) {
  ScanPlan p;
  // One wave (every block resident at once), or fewer blocks when there are fewer tiles;
  // room for any alignment of the input (3 elements more at most).
  const std::size_t wave = static_cast<std::size_t>(device.sm_count) * staged_lookback_blocks_per_sm(device);
  p.grid = static_cast<unsigned>(std::min(tiles_of(n, 0), wave));
  p.scratch_bytes = lookback_scratch_bytes(tiles_of(n, 3));
  p.zero_scratch_once = true;
  p.depth = {64, 8, kTile};  // as stages 05 and 06
  return p;
}

void launch(const ScanArgs& a) {
  const unsigned shift = shift_of(a.in);
  const std::size_t tiles = tiles_of(a.n, shift);
  require_scratch(a, lookback_scratch_bytes(tiles), "07");
  const auto capacity = static_cast<unsigned>((a.scratch_bytes - kDescriptorsOffset) / 8);
  // The plan's grid (a block a tile without one); one block only for one tile (a single
  // block takes no tickets).
  const auto grid =
      static_cast<unsigned>(tiles == 1 || a.grid == 0 ? tiles : std::clamp<std::size_t>(a.grid, 2, tiles));
  const bool vector_stores = shift_of(a.out) == shift;
  static const int variant = std::getenv("SCAN07") ? std::atoi(std::getenv("SCAN07")) : 0;
  dispatch(a.type, a.kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr bool kInclusive = decltype(tag)::inclusive;
    auto kernel = vector_stores ? staged_lookback_scan<T, kInclusive, true, 0> : staged_lookback_scan<T, kInclusive, false, 0>;
    if (variant == 1) kernel = vector_stores ? staged_lookback_scan<T, kInclusive, true, 1> : staged_lookback_scan<T, kInclusive, false, 1>;
    if (variant == 2) kernel = vector_stores ? staged_lookback_scan<T, kInclusive, true, 2> : staged_lookback_scan<T, kInclusive, false, 2>;
    if (variant == 3) kernel = vector_stores ? staged_lookback_scan<T, kInclusive, true, 3> : staged_lookback_scan<T, kInclusive, false, 3>;
    static const int bytes[2][4] = {{staged_bytes(staged_lookback_scan<T, kInclusive, false, 0>), staged_bytes(staged_lookback_scan<T, kInclusive, false, 1>), staged_bytes(staged_lookback_scan<T, kInclusive, false, 2>), staged_bytes(staged_lookback_scan<T, kInclusive, false, 3>)},
                                 {staged_bytes(staged_lookback_scan<T, kInclusive, true, 0>), staged_bytes(staged_lookback_scan<T, kInclusive, true, 1>), staged_bytes(staged_lookback_scan<T, kInclusive, true, 2>), staged_bytes(staged_lookback_scan<T, kInclusive, true, 3>)}};
    kernel<<<grid, kBlock, bytes[vector_stores][variant], a.stream>>>(static_cast<const T*>(a.in), static_cast<T*>(a.out), a.n,
                                                             shift, static_cast<unsigned>(tiles),
                                                             static_cast<unsigned char*>(a.scratch), capacity);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

int staged_lookback_blocks_per_sm(const common::DeviceInfo& device) {
  int blocks = std::min(device.cc_major == 10 || device.cc_major == 12 ? 1 : 2, device.max_threads_per_sm / kBlock);
  if (device.cc_major >= 8)  // a tile of shared memory a block, and the 1 KiB the runtime keeps
    blocks = std::min(blocks, static_cast<int>(device.shared_mem_per_sm / (kStagedBytes + 1024 + 256)));
  return std::max(blocks, 1);
}

int staged_lookback_occupancy() {
  auto* kernel = staged_lookback_scan<unsigned, true, true, 0>;
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kBlock, staged_bytes(kernel)));
  return blocks;
}

ScanStage describe_staged_lookback() {
  ScanStage s;
  s.number = 7;
  s.id = "staged_lookback";
  s.title = "look-back, next tile staged";
  s.source = "scan/07_staged_lookback.cu";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace scan
