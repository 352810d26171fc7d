// Scan stage 07 (experiment): stage 06 with its tile in shared memory instead of registers.
//
// Idea: stage 06 holds its tile in registers, 64 a thread, which caps an SM at two blocks
// of 512. Here the tile goes from global memory to shared memory by cp.async (no register
// holds it in flight), the warps scan their rows there, and the stores read it back: a
// thread needs about 40 registers, and three blocks of 512 share an SM (three 64 KiB
// tiles), so while one block waits for its look-back two others can load.
// Chapter: chapters/28_scan.md
#include <algorithm>
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
constexpr int kRows = 8;                        // 16-byte vectors per thread
constexpr unsigned kTile = kBlock * kRows * 4;  // 16384
constexpr unsigned kTileVectors = kTile / 4;
constexpr unsigned kSegmentVectors = kRows * 32;  // a warp's
constexpr int kTileBytes = kTileVectors * 16;     // 64 KiB
constexpr unsigned kTileLines = kTile * 4 / 128;

template <typename V>
__device__ __forceinline__ void copy_async(V* to, const V* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(from) : "memory");
#else
  *to = *from;
#endif
}
__device__ __forceinline__ void copies_landed() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

template <typename T>
__device__ __forceinline__ void add4(Vec4<T>& q, T offset) {
  q.x = offset + q.x;
  q.y = offset + q.y;
  q.z = offset + q.z;
  q.w = offset + q.w;
}

template <typename T, bool kInclusive, bool kVectorStores, int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    shared_tile_scan(const T* in, T* out, std::size_t n, unsigned shift, unsigned char* scratch, unsigned capacity,
                     unsigned ahead) {
  extern __shared__ uint4 tile_words[];
  auto* tile = reinterpret_cast<Vec4<T>*>(tile_words);
  auto* header = reinterpret_cast<LookbackHeader*>(scratch);
  auto* descriptors = reinterpret_cast<unsigned long long*>(scratch + kDescriptorsOffset);
  const TileTicket t = begin_tile(header);
  const unsigned mine = (threadIdx.x / 32) * kSegmentVectors + threadIdx.x % 32;
  const std::size_t first_vec = static_cast<std::size_t>(t.tile) * kTileVectors + mine;
  const auto* vectors = reinterpret_cast<const Vec4<T>*>(reinterpret_cast<std::uintptr_t>(in) - 4 * shift);
  const std::size_t later = (static_cast<std::size_t>(t.tile) + ahead) * kTileVectors;
#pragma unroll
  for (unsigned k = 0; k < kTileLines / kBlock; ++k) {
    const std::size_t vec = later + 8 * (threadIdx.x + k * kBlock);
    if (4 * vec < n + shift) asm volatile("prefetch.global.L2 [%0];" ::"l"(vectors + vec));
  }
  const long long tile_first = static_cast<long long>(t.tile) * kTile - shift;
  const bool whole_tile = tile_first >= 0 && static_cast<std::size_t>(tile_first) + kTile <= n;
  if (whole_tile) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) copy_async(tile + mine + 32 * r, vectors + first_vec + 32 * r);
    copies_landed();
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      T v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const long long i = 4 * static_cast<long long>(first_vec + 32 * r) - shift + k;
        v[k] = i >= 0 && static_cast<std::size_t>(i) < n ? in[i] : T(0);
      }
      tile[mine + 32 * r] = Vec4<T>{v[0], v[1], v[2], v[3]};
    }
  }
  // The warp's rows, scanned in place: each thread reads and writes its own vectors only.
  T carry = T(0);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    Vec4<T> q = tile[mine + 32 * r];
    const T x0 = q.x, x1 = q.x + q.y, x2 = x1 + q.z, x3 = x2 + q.w;
    const T lanes = warp_inclusive_scan(x3);
    const T before = carry + shift_up_one(lanes);
    carry += __shfl_sync(kFullMask, lanes, 31);
    if constexpr (kInclusive) {
      q = Vec4<T>{before + x0, before + x1, before + x2, before + x3};
    } else {
      q = Vec4<T>{before, before + x0, before + x1, before + x2};
    }
    tile[mine + 32 * r] = q;
  }
  T aggregate;
  const T warp_offset = block_warp_offsets<kBlock / 32>(carry, aggregate);
  __shared__ T tile_prefix;
  if (threadIdx.x < 32) {
    const T prefix = tile_exclusive_prefix(descriptors, t, aggregate);
    if (threadIdx.x == 0) tile_prefix = prefix;
  }
  __syncthreads();
  end_tile(header, descriptors, t, capacity);
  const T offset = tile_prefix + warp_offset;
  if (kVectorStores && whole_tile) {
    auto* dst = reinterpret_cast<Vec4<T>*>(reinterpret_cast<std::uintptr_t>(out) - 4 * shift) + first_vec;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      Vec4<T> q = tile[mine + 32 * r];
      add4(q, offset);
      __stcs(dst + 32 * r, q);
    }
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      Vec4<T> q = tile[mine + 32 * r];
      add4(q, offset);
      const T v[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const long long i = 4 * static_cast<long long>(first_vec + 32 * r) - shift + k;
        if (i >= 0 && static_cast<std::size_t>(i) < n) out[i] = v[k];
      }
    }
  }
}

std::size_t tiles_of(std::size_t n, unsigned shift) { return ceil_div(n + shift, kTile); }

template <typename Kernel>
void allow_tile(Kernel* kernel) {
  CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  kTileBytes));
}

int variant() {
  static const int v = std::getenv("SCAN07") ? std::atoi(std::getenv("SCAN07")) : 0;
  return v;
}

ScanPlan plan(std::size_t n, ValueType, const common::DeviceInfo& device) {
  ScanPlan p;
  p.grid = static_cast<unsigned>(tiles_of(n, 0));
  p.scratch_bytes = lookback_scratch_bytes(tiles_of(n, 3));
  p.zero_scratch_once = true;
  p.depth = {64, 8, kTile};
  // A quarter of a wave ahead, as stage 06: three blocks per SM here (two with SCAN07=1).
  const int blocks = variant() == 1 ? 2 : 3;
  const int quarter = variant() == 2 ? 2 : 4;
  p.prefetch_tiles = static_cast<unsigned>(std::max(1, device.sm_count * blocks / quarter));
  return p;
}

void launch(const ScanArgs& a) {
  const unsigned shift = shift_of(a.in);
  const std::size_t tiles = tiles_of(a.n, shift);
  require_scratch(a, lookback_scratch_bytes(tiles), "07");
  const auto capacity = static_cast<unsigned>((a.scratch_bytes - kDescriptorsOffset) / 8);
  const bool vector_stores = shift_of(a.out) == shift;
  dispatch(a.type, a.kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr bool kInclusive = decltype(tag)::inclusive;
    static const bool allowed = [] {
      allow_tile(shared_tile_scan<T, kInclusive, true, 3>);
      allow_tile(shared_tile_scan<T, kInclusive, false, 3>);
      allow_tile(shared_tile_scan<T, kInclusive, true, 2>);
      allow_tile(shared_tile_scan<T, kInclusive, false, 2>);
      return true;
    }();
    (void)allowed;
    auto kernel = vector_stores ? shared_tile_scan<T, kInclusive, true, 3> : shared_tile_scan<T, kInclusive, false, 3>;
    if (variant() == 1)
      kernel = vector_stores ? shared_tile_scan<T, kInclusive, true, 2> : shared_tile_scan<T, kInclusive, false, 2>;
    kernel<<<static_cast<unsigned>(tiles), kBlock, kTileBytes, a.stream>>>(
        static_cast<const T*>(a.in), static_cast<T*>(a.out), a.n, shift, static_cast<unsigned char*>(a.scratch),
        capacity, a.prefetch_tiles);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

ScanStage describe_shared_tile() {
  ScanStage s;
  s.number = 7;
  s.id = "shared_tile";
  s.title = "look-back, tile in shared";
  s.source = "scan/07_shared_tile.cu";
  s.plan = plan;
  s.launch = launch;
  return s;
}

}  // namespace scan
