// tiles: how stage 16 (reproducible) hands fixed tiles to threads, n = 2^26, 2^28, 2^30,
// beside stage15.
// Chapter: lab/notes/90_lab_notes.md. Run: build/lab/tiles [--csv FILE]
//
//   warp-8192-fixed      one warp per 8192-float tile, each block a fixed run of tiles
//                        (stage 16's first design)
//   warp-16384-counter   one warp per 16384-float tile, tiles from an atomic counter
//   team-32768-counter   four warps per 32768-float tile, from the counter (stage 16)
//
// Only what decides the speed is kept: full tiles (n a multiple of the tile), aligned
// input, tile sums stored, and the last block adding them (in index order here).
#include "lab.cuh"

namespace {

namespace g = reduction::generic;
using lab::Experiment;

template <int kThreads, int kTile>  // kThreads lanes (one warp or a team) sum one tile
__device__ __forceinline__ float tile_lane_sum(const float* tile, unsigned rank) {
  constexpr int kPerThread = kTile / 4 / kThreads;
  constexpr int kBatch = 8;
  const float4* p = reinterpret_cast<const float4*>(tile) + rank;
  float ax = 0.0f, ay = 0.0f, az = 0.0f, aw = 0.0f;
  for (int k0 = 0; k0 < kPerThread; k0 += kBatch) {
    float4 v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) v[b] = __ldg(p + kThreads * (k0 + b));
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      ax += v[b].x;
      ay += v[b].y;
      az += v[b].z;
      aw += v[b].w;
    }
  }
  return g::warp_reduce((ax + ay) + (az + aw), g::Sum{});
}

// The last block to take the ticket adds the tile sums; ticket[32] is the tile counter,
// put back to zero with the ticket for the next launch.
__device__ void finish_tiles(const float* tile_sums, std::size_t tiles, unsigned* ticket, float* out) {
  __shared__ bool is_last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  // 32 loads in flight per thread, so that this pass stays a few microseconds long
  // for every design (2^17 tile sums at most), as stage 16's own final pass does.
  constexpr int kInFlight = 32;
  float w = 0.0f;
  for (std::size_t t0 = 0; t0 < tiles; t0 += kInFlight * blockDim.x) {
    float v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const std::size_t t = t0 + j * blockDim.x + threadIdx.x;
      v[j] = t < tiles ? __ldcg(tile_sums + t) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) w += v[j];
  }
  w = lab::block_sum_one_round<256>(w);
  if (threadIdx.x == 0) {
    *out = w;
    ticket[0] = 0;
    ticket[32] = 0;
  }
}

// One warp per tile; Counter: tiles from an atomic counter, else a fixed run per block.
template <int kTile, bool kCounter>
__global__ void __launch_bounds__(256)
    warp_tiles(const float* __restrict__ in, std::size_t n, float* tile_sums, unsigned* ticket, float* out) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t tiles = n / kTile;
  if constexpr (kCounter) {
    for (;;) {
      unsigned t = 0;
      if (lane == 0) t = atomicAdd(ticket + 32, 1u);
      t = __shfl_sync(0xffffffffu, t, 0);
      if (t >= tiles) break;
      const float s = tile_lane_sum<32, kTile>(in + static_cast<std::size_t>(t) * kTile, lane);
      if (lane == 0) tile_sums[t] = s;
    }
  } else {
    const std::size_t per = tiles / gridDim.x, extra = tiles % gridDim.x;
    const std::size_t first = blockIdx.x * per + (blockIdx.x < extra ? blockIdx.x : extra);
    const std::size_t end = first + per + (blockIdx.x < extra ? 1 : 0);
    for (std::size_t t = first + threadIdx.x / 32; t < end; t += blockDim.x / 32) {
      const float s = tile_lane_sum<32, kTile>(in + t * kTile, lane);
      if (lane == 0) tile_sums[t] = s;
    }
  }
  finish_tiles(tile_sums, tiles, ticket, out);
}

// A team of 128 threads per tile, tiles from the counter (stage 16's design).
template <int kTile>
__global__ void __launch_bounds__(256)
    team_tiles(const float* __restrict__ in, std::size_t n, float* tile_sums, unsigned* ticket, float* out) {
  __shared__ unsigned team_tile[2];
  __shared__ float warp_sums[2][4];
  const unsigned team = threadIdx.x / 128, rank = threadIdx.x % 128, lane = threadIdx.x % 32, warp = rank / 32;
  const std::size_t tiles = n / kTile;
  if (rank == 0) team_tile[team] = atomicAdd(ticket + 32, 1u);
  for (;;) {
    asm volatile("bar.sync %0, 128;" ::"r"(team + 1) : "memory");
    const unsigned t = team_tile[team];
    if (t >= tiles) break;
    const float s = tile_lane_sum<128, kTile>(in + static_cast<std::size_t>(t) * kTile, rank);
    if (lane == 0) warp_sums[team][warp] = s;
    asm volatile("bar.sync %0, 128;" ::"r"(team + 1) : "memory");
    if (rank == 0) {
      const float* w = warp_sums[team];
      tile_sums[t] = (w[0] + w[1]) + (w[2] + w[3]);
      team_tile[team] = atomicAdd(ticket + 32, 1u);
    }
  }
  finish_tiles(tile_sums, tiles, ticket, out);
}

// A tile design with as many 256-thread blocks as fit on the device at once.
template <typename Kernel>
void run_tiles(Experiment& e, const std::string& design, Kernel kernel, float* tile_sums) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
  const unsigned grid = static_cast<unsigned>(per_sm * e.device().sm_count);
  const std::size_t n = e.n();
  e.measure(design, 256, grid, [&e, kernel, grid, n, tile_sums] {
    kernel<<<grid, 256, 0, e.stream()>>>(e.in(), n, tile_sums, e.ticket(), e.out());
    CUDA_CHECK_LAUNCH();
  });
}

std::vector<common::Record> tiles(Experiment& e) {
  g::Workspace ws;
  common::DeviceBuffer<float> tile_sums(1 << 20);  // one per tile: 2^17 at most
  for (int k : {26, 28, 30}) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    e.measure("stage15", 512, g::grid_for<float, g::Sum>(n, e.device().sm_count),
              [&] { g::reduce<float>(e.in(), n, e.out(), ws, e.stream()); });
    run_tiles(e, "warp-8192-fixed", warp_tiles<8192, false>, tile_sums.get());
    run_tiles(e, "warp-16384-counter", warp_tiles<16384, true>, tile_sums.get());
    run_tiles(e, "team-32768-counter", team_tiles<32768>, tile_sums.get());
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"tiles",
       "n = 2^26, 2^28, 2^30: how stage 16 (reproducible) hands fixed tiles to threads.\n"
       "Designs: stage15, warp-8192-fixed, warp-16384-counter, team-32768-counter.\n"
       "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.",
       std::size_t{1} << 30, tiles});
}
