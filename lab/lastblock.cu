// lastblock: other ways for the tagged ticket kernel's last block to get the
// partials, n = 2^14 .. 2^22, beside stage15 and ticket (each on its own zeroed scratch).
// Chapter: lab/notes/90_lab_notes.md. Run: build/lab/lastblock [--csv FILE]
//
//   prefetch          the ticket and the block's slot asked into L2 at the start
//   sector            each slot a whole 32-byte sector, written by one request
//   touch             the slot and the ticket loaded at the start (real loads)
//   speculate         every block loads the slots beside its atomic; only the last
//                     block uses what it read
//   clusterC-ticket   clusters of C blocks meet on an mbarrier in their first block,
//                     then one ticket per cluster (one cluster: no ticket); Hopper only
//   hint256           prefetch, with the data loads asking L2 for 256 bytes at a time
//   warp              only warp 0 goes on after a block's sum; the last block's warp 0
//                     alone reads and adds the slots
//   last-start        the ticket taken at the start; the last block to start waits for
//                     the slots (its warp 0), nobody waits for an atomic
//   store-atomic      DIAGNOSTIC, wrong sum: the store and the ticket, no slot read
//   no-finish         DIAGNOSTIC, wrong sum: no combine at all (lab.cuh)
#include <cooperative_groups.h>

#include <cstdint>
#include <cstdio>
#include <utility>

#include "kernel_image.hpp"
#include "lab.cuh"

namespace {

namespace g = reduction::generic;
using lab::block_collect;
using lab::block_sum_one_round;
using lab::chunk_sum;
using lab::Experiment;
using lab::load_slot;
using lab::publish;
using lab::slots_of;
using lab::store_slot;
using lab::take_ticket;

// "prefetch", "sector", "touch", "hint256": the flush before each timed launch also
// evicts the ticket and the slots. A slot written with 8 bytes is then a partly written
// 32-byte sector in L2, and reading it back might cost a trip to DRAM. These test that.
//   prefetch: thread 0 asks L2 for the ticket's sector and the block's slot at the start,
//             while the data loads are in flight.
//   sector:   each slot is a whole 32-byte sector, written at once by two lanes.

template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    prefetch_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                        unsigned char* __restrict__ scratch) {
  if (threadIdx.x == 0) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(scratch) : "memory");
    asm volatile("prefetch.global.L2 [%0];" ::"l"(scratch + lab::kSlotsOffset + 8 * blockIdx.x) : "memory");
  }
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  g::finish_with_ticket<float, g::Sum, kBlock>(v, out, scratch, g::Sum{});
}

template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    sector_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                      unsigned char* __restrict__ scratch) {
  const unsigned tag = lab::read_launch_tag(scratch);
  float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  auto* slots = slots_of(scratch);  // 4 words per block
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  if (threadIdx.x < 32) {
    v = __shfl_sync(0xffffffffu, v, 0);
    const unsigned t = __shfl_sync(0xffffffffu, tag, 0);
    const unsigned long long word = lab::tag_value(t, v);
    if (threadIdx.x < 2)  // lanes 0 and 1: 16 bytes each, one request for the whole sector
      asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %1};" ::"l"(slots + 4 * blockIdx.x + 2 * threadIdx.x),
                   "l"(word)
                   : "memory");
    __syncwarp();
    if (threadIdx.x == 0) {
      is_last = take_ticket(scratch) == gridDim.x - 1;
      launch_tag = t;
    }
  }
  __syncthreads();
  if (!is_last) return;
  const float w = block_collect<kBlock>(slots, 4, launch_tag);
  if (threadIdx.x == 0) publish(out, w, scratch, launch_tag);
}

// "hint256": the prefetch kernel with the data loads asking L2 to fetch 256 bytes at a
// time (ld.global.nc.L2::256B). Only for aligned input whose length is a multiple of 4,
// as in this experiment; the kernel checks that and leaves *out alone otherwise.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    hint_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                    unsigned char* __restrict__ scratch) {
  if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0 || n % 4 != 0) return;
  if (threadIdx.x == 0) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(scratch) : "memory");
    asm volatile("prefetch.global.L2 [%0];" ::"l"(scratch + lab::kSlotsOffset + 8 * blockIdx.x) : "memory");
  }
  const float4* body = reinterpret_cast<const float4*>(in);
  const std::size_t packs = n / 4;
  const std::size_t begin = blockIdx.x * chunk;
  const std::size_t end = begin + chunk < packs ? begin + chunk : packs;
  float acc[kUnroll] = {};
  for (std::size_t i = begin + threadIdx.x; i < end; i += static_cast<std::size_t>(kBlock) * kUnroll) {
    float4 p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t j = i + static_cast<std::size_t>(u) * kBlock;
      if (j < end) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                     : "=f"(p[u].x), "=f"(p[u].y), "=f"(p[u].z), "=f"(p[u].w)
                     : "l"(body + j));
#else
        p[u] = __ldg(body + j);  // the L2 fetch-size hint exists from sm_80: the same load without it
#endif
      } else {
        p[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += (p[u].x + p[u].y) + (p[u].z + p[u].w);
  }
  float v = acc[0];
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) v += acc[u];
  v = block_sum_one_round<kBlock>(v);
  g::finish_with_ticket<float, g::Sum, kBlock>(v, out, scratch, g::Sum{});
}

// Warp 0 of the finishing block reads the tagged slots of all `grid` blocks: lane l adds
// slots l, l + 32, ... in that order (16 loads in flight per lane), re-reading any slot
// that does not carry the launch's tag yet, then the lanes are added by shuffles.
__device__ __forceinline__ float warp_collect(const unsigned long long* slots, unsigned grid, unsigned expected) {
  const unsigned lane = threadIdx.x % 32;
  constexpr int kBatch = 16;
  float w = 0.0f;
  for (unsigned b0 = 0; b0 < grid; b0 += 32 * kBatch) {
    unsigned long long word[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const unsigned b = b0 + 32 * j + lane;
      word[j] = 0;
      if (b < grid) word[j] = load_slot(slots, b);
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const unsigned b = b0 + 32 * j + lane;
      if (b < grid) {
        while (static_cast<unsigned>(word[j] >> 32) != expected) word[j] = load_slot(slots, b);
        w += g::untag_value<float>(word[j]);
      }
    }
  }
  return g::warp_reduce(w, g::Sum{});
}

// Warp 0 of a block, with the ticket its thread 0 took and the launch's tag: in the block
// that took the last ticket, the warp adds the slots and writes the result.
__device__ __forceinline__ void warp_finish(unsigned taken, unsigned tag, float* out, unsigned char* scratch) {
  taken = __shfl_sync(0xffffffffu, taken, 0);
  if (taken != gridDim.x - 1) return;
  tag = __shfl_sync(0xffffffffu, tag, 0);
  const float w = warp_collect(slots_of(scratch), gridDim.x, tag);
  if (threadIdx.x == 0) publish(out, w, scratch, tag);
}

// "warp" and "last-start": only warp 0 of each block goes on after the block's own sum
// (no __syncthreads in the finish), and the last block's warp 0 alone adds the slots.
//   warp (kAtStart false): the tagged ticket, taken after the block's slot is stored.
//   last-start (kAtStart true): the ticket is taken when a block starts. The block that
//     takes the last one knows at its start that every other block is already running
//     (so waiting for them cannot hang) and finishes: its warp 0 reads the slots until
//     all carry the tag. The other blocks store their slot and leave; nobody waits for
//     an atomic at the end.
template <int kBlock, int kUnroll, bool kAtStart>
__global__ void __launch_bounds__(kBlock)
    warp_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                    unsigned char* __restrict__ scratch) {
  unsigned taken = 0;
  if (kAtStart && threadIdx.x == 0) taken = take_ticket(scratch);
  const unsigned tag = lab::read_launch_tag(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  if (threadIdx.x >= 32) return;
  if (threadIdx.x == 0) {
    store_slot(slots_of(scratch), blockIdx.x, tag, v);
    if (!kAtStart) taken = take_ticket(scratch);
  }
  warp_finish(taken, tag, out, scratch);
}

// "speculate": every block's threads load the slots as soon as the block has taken its
// ticket, before they know whether they are the last block, so that the last block's
// reads travel alongside its atomic instead of after it. Only the last block uses what
// it read (re-reading the slots whose tag is not there yet).
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    speculate_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                         unsigned char* __restrict__ scratch) {
  const unsigned tag = lab::read_launch_tag(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  auto* slots = slots_of(scratch);
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  unsigned taken = 0;
  if (threadIdx.x == 0) {
    store_slot(slots, blockIdx.x, tag, v);
    taken = take_ticket(scratch);
  }
  unsigned long long first = 0;
  if (threadIdx.x < gridDim.x) first = load_slot(slots, threadIdx.x);
  if (threadIdx.x == 0) {
    is_last = taken == gridDim.x - 1;
    launch_tag = tag;
  }
  __syncthreads();
  if (!is_last) return;
  const float w = block_collect<kBlock>(slots, 1, launch_tag, first);
  if (threadIdx.x == 0) publish(out, w, scratch, launch_tag);
}

// "clusterC-ticket": two levels. The grid is cut into thread-block clusters of C blocks.
// Inside a cluster, every block but the first writes its value into the first block's
// shared memory and arrives on an mbarrier there (release at cluster scope); the first
// block's warp 0 waits on that barrier alone (no cluster-wide barrier at the end), adds
// the C values in rank order, and takes the ticket for the cluster. Between clusters it
// is the tagged ticket with the speculative slot reads above (few slots: one per
// cluster). A grid of one cluster skips the ticket: the first block writes the result.
// Hopper only.
template <int kBlock, int kUnroll, int kCluster>
__global__ void __launch_bounds__(kBlock)
    cluster_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                       unsigned char* __restrict__ scratch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ float partials[kCluster];
  __shared__ __align__(8) unsigned long long arrived;
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const unsigned rank = cluster.block_rank();
  const auto arrived_addr = static_cast<unsigned>(__cvta_generic_to_shared(&arrived));
  if (rank == 0 && threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(arrived_addr), "r"(kCluster - 1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  auto started = cluster.barrier_arrive();
  const unsigned tag = rank == 0 ? lab::read_launch_tag(scratch) : 0;
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  cluster.barrier_wait(std::move(started));  // the leader runs and its mbarrier is ready
  if (rank != 0) {
    if (threadIdx.x == 0) {
      cluster.map_shared_rank(partials, 0)[rank] = v;
      unsigned remote = 0;
      asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(remote) : "r"(arrived_addr));
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
    }
    return;
  }
  if (threadIdx.x >= 32) return;
  const unsigned lane = threadIdx.x;
  unsigned ready = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(ready)
        : "r"(arrived_addr)
        : "memory");
  } while (!ready);
  float c = lane == 0 ? v : (lane < kCluster ? partials[lane] : 0.0f);
  c = g::warp_reduce(c, g::Sum{});
  if (gridDim.x == kCluster) {  // one cluster: its sum is the result, no ticket
    if (lane == 0) *out = c;
    return;
  }

  auto* slots = slots_of(scratch);
  const unsigned leaders = gridDim.x / kCluster;
  const unsigned expected = __shfl_sync(0xffffffffu, tag, 0);
  unsigned taken = 0;
  if (lane == 0) {
    store_slot(slots, blockIdx.x / kCluster, expected, c);
    taken = take_ticket(scratch);
  }
  unsigned long long first = 0;
  if (lane < leaders) first = load_slot(slots, lane);
  taken = __shfl_sync(0xffffffffu, taken, 0);
  if (taken != leaders - 1) return;
  float w = 0.0f;
  for (unsigned b = lane; b < leaders; b += 32) {
    unsigned long long word = first;
    if (b != lane) word = load_slot(slots, b);
    while (static_cast<unsigned>(word >> 32) != expected) word = load_slot(slots, b);
    w += g::untag_value<float>(word);
  }
  w = g::warp_reduce(w, g::Sum{});
  if (lane == 0) {
    publish(out, w, scratch, expected);
  }
#else
  __trap();
#endif
}

// "touch": as prefetch, but with real loads: thread 0 reads its block's slot and the
// ticket at the start, so that both sectors are in L2 (whole) before anything is stored.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    touch_ticket_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                     unsigned char* __restrict__ scratch) {
  unsigned long long seen = 0;
  unsigned ticket_seen = 0;
  if (threadIdx.x == 0) {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                 : "=l"(seen)
                 : "l"(scratch + lab::kSlotsOffset + 8 * blockIdx.x)
                 : "memory");
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(ticket_seen) : "l"(scratch) : "memory");
  }
  float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  // Never true (the ticket never holds more than the grid size), but the compiler cannot
  // know: the loads above stay.
  if (threadIdx.x == 0 && ticket_seen >= 0x80000000u && seen == ~0ull) v = -v;
  g::finish_with_ticket<float, g::Sum, kBlock>(v, out, scratch, g::Sum{});
}

// "store-atomic": DIAGNOSTIC, wrong sum. The tagged store and ticket, but the last block
// writes only its own partial: the finish without reading the slots back.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    store_atomic_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                     unsigned char* __restrict__ scratch) {
  const unsigned tag = lab::read_launch_tag(scratch);
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  if (threadIdx.x == 0) {
    auto* slots = slots_of(scratch);
    store_slot(slots, blockIdx.x, tag, v);
    unsigned taken = 0;
    taken = take_ticket(scratch);
    if (taken == gridDim.x - 1) {
      publish(out, v, scratch, tag);
    }
  }
}

// The two-level design with clusters of kCluster blocks: the ticket path's grid rounded
// down to whole clusters (one cluster at least), skipped where the device cannot place
// a cluster of that size.
template <int kCluster>
void run_cluster_ticket(Experiment& e, unsigned char* scratch, unsigned ticket_grid) {
  const auto kernel = cluster_ticket_sum<512, g::kDefaultUnroll, kCluster>;
  if (kCluster > 8) CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const unsigned grid = std::max<unsigned>(kCluster, ticket_grid / kCluster * kCluster);
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = kCluster;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(512);
  config.stream = e.stream();
  config.attrs = &attribute;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess || clusters < 1) {
    cudaGetLastError();
    std::printf("cluster%d-ticket: no cluster of %d blocks fits this device; skipped\n", kCluster, kCluster);
    return;
  }
  CUDA_CHECK(cudaMemset(scratch, 0, 4096));
  const std::size_t n = e.n();
  const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
  e.measure("cluster" + std::to_string(kCluster) + "-ticket", 512, grid,
            [&] { CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, e.in(), n, chunk, e.out(), scratch)); });
}

std::vector<common::Record> lastblock(Experiment& e) {
  lab::over_ticket_sizes(e, [&e](unsigned grid, std::size_t, unsigned char* scratch, const auto& run) {
    run("prefetch", prefetch_ticket_sum<512, g::kDefaultUnroll>, false);
    run("sector", sector_ticket_sum<512, g::kDefaultUnroll>, false);
    run("touch", touch_ticket_sum<512, g::kDefaultUnroll>, false);
    run("speculate", speculate_ticket_sum<512, g::kDefaultUnroll>, false);
    // Clusters need code compiled for sm_90 or later, whatever the GPU (common/kernel_image.hpp).
    if (common::compiled_arch_of(cluster_ticket_sum<512, g::kDefaultUnroll, 4>) >= 90) {
      run_cluster_ticket<4>(e, scratch, grid);
      run_cluster_ticket<8>(e, scratch, grid);
      run_cluster_ticket<16>(e, scratch, grid);
    }
    run("hint256", hint_ticket_sum<512, g::kDefaultUnroll>, false);
    run("warp", warp_ticket_sum<512, g::kDefaultUnroll, false>, false);
    run("last-start", warp_ticket_sum<512, g::kDefaultUnroll, true>, false);
    run("store-atomic", store_atomic_sum<512, g::kDefaultUnroll>, true);
  });
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"lastblock",
       "n = 2^14 .. 2^22: other ways for the tagged ticket kernel's last block to get the partials.\n"
       "Designs: stage15, ticket, prefetch, sector, touch, speculate, cluster4/8/16-ticket (Hopper), hint256,\n"
       "warp, last-start, store-atomic and no-finish (diagnostics, wrong sums).\n"
       "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.",
       std::size_t{1} << 22, lastblock});
}
