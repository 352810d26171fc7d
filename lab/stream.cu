// stream: how close a single pass comes to the ceiling where the reading dominates,
// n = 2^22 .. 2^26 (or --sweep), with the ceiling's own kernel in the same process.
// Chapter: lab/notes/92_lab_notes_reading.md (and 93 for stage 18).
// Run: build/lab/stream [--sweep LO:HI] [--csv FILE]
//
//   stage15          stage 15 as the generic library runs it (the tagged ticket here)
//   ticket           the tagged ticket kernel on its own grid: 3 blocks of 512 per SM
//                    (its registers allow no more), a contiguous chunk per block
//   no-finish        DIAGNOSTIC, wrong sum: the same grid and loads, nobody adds the partials
//   chunk-4x512-nf   DIAGNOSTIC: no-finish held to 32 registers, so that 4 blocks of 512
//                    fit on an SM (2048 threads, the ceiling kernel's occupancy); the
//                    ticket kernel itself spills at 32 registers
//   stride-4x512     the ceiling's order (float4 i of the grid's threads, then i + threads,
//                    ...), 4 loads in flight, float additions, 4 blocks of 512 per SM, the
//                    tagged ticket
//   stride-4x512-flag  the same order and grid, finish's "flag": block 0 polls the blocks'
//                    {launch, partial} words
//   stride-4x512-nf  DIAGNOSTIC: the same with no finish
//   stride-8x256     the same order with 8 blocks of 256 per SM
//   ceiling-512x4    DIAGNOSTIC, no sum: peers/ceiling's kernel (peers/stream_only.cuh),
//                    4 blocks of 512 per SM
//   ceiling-256x4    DIAGNOSTIC, no sum: the same, 8 blocks of 256 per SM
//   stage18          stage 18 itself (reduction/18_stream_order.cu, from the registry),
//                    blocks of 512, its own plan: the design above, as a stage
#include <algorithm>

#include "cli.hpp"
#include "lab.cuh"
#include "peers/stream_only.cuh"
#include "reduction/grid.hpp"
#include "reduction/prepared_stage.hpp"
#include "reduction/registry.hpp"
#include "sm_limits.hpp"

namespace {

namespace g = reduction::generic;
using lab::block_sum_one_round;
using lab::chunk_sum;
using lab::Experiment;

// The ceiling's loop with float accumulators: thread i of the grid reads float4s i,
// i + threads, ... (kUnroll in flight), then the scalar tail. The input is 16-byte
// aligned (cudaMalloc'd).
template <int kBlock, int kUnroll>
__device__ __forceinline__ float stride_sum(const float* __restrict__ in, std::size_t n) {
  const float4* in4 = reinterpret_cast<const float4*>(in);
  const std::size_t n4 = n / 4;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kBlock;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float acc[kUnroll] = {};
  std::size_t i = tid;
  for (; i + (kUnroll - 1) * threads < n4; i += kUnroll * threads) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(in4 + i + u * threads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < n4; i += threads) {
    const float4 v = __ldg(in4 + i);
    acc[0] += (v.x + v.y) + (v.z + v.w);
  }
  if (tid < n - 4 * n4) acc[0] += in[4 * n4 + tid];
  float s = acc[0];
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) s += acc[u];
  return block_sum_one_round<kBlock>(s);
}

// How the blocks' partials become the sum.
enum class Finish {
  ticket,  // the tagged ticket (stage 14's finish): the last block adds the slots
  flag,    // finish's "flag": {launch, partial} words, block 0 polls them (only it waits)
  none     // DIAGNOSTIC, wrong sum: every block stores its partial, block 0 writes its own
};

// Either order, then the finish, with __launch_bounds__ asking for kMinBlocks blocks per SM
// (one on sm_100 and sm_120, whose ptxas spills some of these kernels at the registers
// kMinBlocks leaves; run() launches what the occupancy API says fits).
template <int kBlock, int kUnroll, int kMinBlocks, bool kStrided, Finish kFinish>
__global__ void __launch_bounds__(kBlock,
                                  common::one_block_on(100, 120) ? 1 : common::blocks_per_sm_bound(kBlock, kMinBlocks))
    shaped_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
               unsigned char* __restrict__ scratch, float* __restrict__ partials,
               unsigned long long* __restrict__ words, unsigned launch) {
  float v = 0.0f;
  if constexpr (kStrided) {
    v = stride_sum<kBlock, kUnroll>(in, n);
  } else {
    v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  }
  if constexpr (kFinish == Finish::ticket) {
    g::finish_with_ticket<float, g::Sum, kBlock>(v, out, scratch, g::Sum{});
  } else if constexpr (kFinish == Finish::flag) {
    lab::flag_finish<kBlock>(v, words, launch, out);
  } else if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    if (blockIdx.x == 0) *out = v;
  }
}

// One wave of `per_sm` blocks of `block` threads on every SM, no more blocks than have at
// least `min_vectors` float4s per thread (reduction/grid.hpp, as the stages size theirs).
unsigned grid_of(const Experiment& e, int block, int per_sm, std::size_t min_vectors) {
  return static_cast<unsigned>(
      reduction::resident_grid(per_sm, e.device().sm_count, e.n(), static_cast<std::size_t>(block) * 4 * min_vectors));
}

// flag's words (a launch's number is never 0, so zeroed words carry no launch) and the
// launches so far.
struct Flags {
  common::DeviceBuffer<unsigned long long> words{1 << 14};
  unsigned launches = 0;
  Flags() { CUDA_CHECK(cudaMemset(words.get(), 0, words.bytes())); }
};

template <int kBlock, int kUnroll, int kMinBlocks, bool kStrided, Finish kFinish>
void run(Experiment& e, Flags& flags, const std::string& design) {
  const auto kernel = shaped_sum<kBlock, kUnroll, kMinBlocks, kStrided, kFinish>;
  int resident = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kBlock, 0));
  const unsigned grid = grid_of(e, kBlock, std::min(resident, kMinBlocks), kStrided ? kUnroll : 2);
  const std::size_t n = e.n();
  const std::size_t chunk = g::chunk_for<float, kBlock>(e.in(), n, grid);
  e.measure(
      design, kBlock, grid,
      [&e, &flags, kernel, grid, n, chunk] {
        kernel<<<grid, kBlock, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.ticket_scratch(), e.partials(),
                                                flags.words.get(), ++flags.launches);
        CUDA_CHECK_LAUNCH();
      },
      kFinish == Finish::none);
}

template <int kBlock, int kUnroll>
void run_ceiling(Experiment& e, unsigned* sink) {
  const int per_sm = e.device().max_threads_per_sm / kBlock;
  const unsigned grid = grid_of(e, kBlock, per_sm, kUnroll);
  const std::size_t n = e.n();
  e.measure(
      "ceiling-" + std::to_string(kBlock) + "x" + std::to_string(kUnroll), kBlock, grid,
      [&e, grid, n, sink] {
        ceiling::stream_only<kUnroll><<<grid, kBlock, 0, e.stream()>>>(e.in(), n, sink, false);
        CUDA_CHECK_LAUNCH();
      },
      true);
}

// "stage18": the registered stage, prepared as the runner prepares it (its plan, its
// scratch zeroed), writing the experiment's output.
void run_stage18(Experiment& e) {
  const reduction::PreparedStage stage18(*reduction::find_stage("stream_order"), e.in(), e.n(), 512, e.device(),
                                         e.stream(), e.out());
  e.measure("stage18", 512, stage18.args().grid, [&stage18] { stage18.launch(); });
}

std::vector<common::Record> stream(Experiment& e) {
  const int sms = e.device().sm_count;
  g::Workspace ws;
  common::DeviceBuffer<unsigned> sink(1);
  Flags flags;
  for (const std::uint64_t size : e.sizes()) {
    const auto n = static_cast<std::size_t>(size);
    e.set_n(n);
    lab::stage15_and_ticket(e, ws);
    const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
    const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
    lab::measure_no_finish(e, grid, chunk);
    run<512, 4, 4, false, Finish::none>(e, flags, "chunk-4x512-nf");
    run<512, 4, 4, true, Finish::ticket>(e, flags, "stride-4x512");
    run<512, 4, 4, true, Finish::flag>(e, flags, "stride-4x512-flag");
    run<512, 4, 4, true, Finish::none>(e, flags, "stride-4x512-nf");
    run<256, 4, 8, true, Finish::ticket>(e, flags, "stride-8x256");
    run_ceiling<512, 4>(e, sink.get());
    run_ceiling<256, 4>(e, sink.get());
    run_stage18(e);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"stream",
       "n = 2^22 .. 2^26 (or --sweep): a single pass against the ceiling's kernel, in one process.\n"
       "Designs: stage15, ticket, no-finish (diagnostic), chunk-4x512-nf (diagnostic), stride-4x512,\n"
       "stride-4x512-flag, stride-4x512-nf (diagnostic), stride-8x256, ceiling-512x4 and ceiling-256x4 (diagnostic, no "
       "sum),\nstage18 (the registered stage).\n"
       "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.",
       std::size_t{1} << 26, stream, common::parse_sweep("2^22:2^26")});
}
