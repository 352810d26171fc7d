// finish: how the blocks of one launch combine their partial sums, n = 2^14 .. 2^25.
// Chapter: lab/notes/90_lab_notes.md. Run: build/lab/finish [--csv FILE]
//
//   stage15         stage 15 as the generic library runs it: one block up to 2^14, one
//                   cluster on Hopper up to 2^17, else the tagged ticket
//   ticket          the tagged ticket kernel at every n (stage 14's finish): tagged
//                   partials, an atomic ticket, the last block adds the partials
//   fence           DIAGNOSTIC, racy: the partial published by __threadfence() before
//                   the ticket (stage 13's release side), but the last block reads the
//                   partials without stage 13's acquire fence, so the memory model does
//                   not promise it sees them; the time of the release side alone, not a
//                   finish to use (stage 13 has both fences)
//   acqrel          the fence folded into the atomic: atom.add.acq_rel.gpu
//   flag            each block stores {launch number, partial} as one 64-bit word;
//                   block 0 polls the words (only block 0 waits)
//   one-block-1024  (2^15 only) one block of 1024 threads, eight loads each
//   cluster8/16     one thread-block cluster of 8 or 16 blocks of 1024 threads adds the
//                   partials through distributed shared memory (n <= 2^18)
//   no-finish       DIAGNOSTIC, wrong sum: block 0 writes its own partial and nobody
//                   adds the rest; the time a perfect combine would take
#include "lab.cuh"

namespace {

namespace g = reduction::generic;
using lab::block_sum_one_round;
using lab::chunk_sum;
using lab::Experiment;

// "flag": one 64-bit word per block, {launch number, partial}; block 0 polls.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    flag_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
             unsigned long long* __restrict__ words, unsigned launch) {
  lab::flag_finish<kBlock>(chunk_sum<kBlock, kUnroll>(in, n, chunk), words, launch, out);
}

// "fence" and "acqrel": the ticket with the partials published the plain way.
// fence:  the partial is stored, __threadfence() waits until it is visible device-wide,
//         then atomicAdd takes the ticket.
// acqrel: the partial is stored, then one atom.add.acq_rel.gpu both publishes it and
//         takes the ticket.
template <int kBlock, int kUnroll, bool kAcqRel>
__global__ void __launch_bounds__(kBlock)
    published_ticket(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                     float* __restrict__ partials, unsigned* __restrict__ ticket) {
  const float v = chunk_sum<kBlock, kUnroll>(in, n, chunk);
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    unsigned taken = 0;
    if constexpr (kAcqRel) {
      asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(taken) : "l"(ticket) : "memory");
    } else {
      __threadfence();
      taken = atomicAdd(ticket, 1u);
    }
    is_last = taken == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) w += __ldcg(partials + b);
  w = block_sum_one_round<kBlock>(w);
  if (threadIdx.x == 0) {
    *out = w;
    *ticket = 0;
  }
}

// The generic library's cluster kernel with 1024-thread blocks, as one cluster of `blocks`.
void run_cluster(Experiment& e, unsigned blocks) {
  const std::size_t n = e.n();
  e.measure("cluster" + std::to_string(blocks), 1024, blocks,
            [&e, blocks, n] { g::launch_cluster<float, g::Sum, 1024, 4>(e.in(), n, e.out(), blocks, e.stream()); });
}

std::vector<common::Record> finish(Experiment& e) {
  const int sms = e.device().sm_count;
  g::Workspace ws;
  // flag's words; a launch's number is never 0, so zeroed words carry no launch.
  common::DeviceBuffer<unsigned long long> words(1 << 14);
  CUDA_CHECK(cudaMemset(words.get(), 0, words.bytes()));
  unsigned launches = 0;
  // Cluster sizes this device takes for 1024-thread blocks (16 only where it allows that).
  const int most = g::cluster_blocks<float, g::Sum, 1024, 4>();
  for (int k = 14; k <= 25; ++k) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    lab::stage15_and_ticket(e, ws);
    // The ticket path's grid and chunks, for the designs that replace its finish.
    const unsigned grid = g::ticket_grid<float, g::Sum>(n, sms);
    const std::size_t chunk = g::chunk_for<float, 512>(e.in(), n, grid);
    e.measure("fence", 512, grid, [&] {
      published_ticket<512, g::kDefaultUnroll, false>
          <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.partials(), e.ticket());
      CUDA_CHECK_LAUNCH();
    });
    e.measure("acqrel", 512, grid, [&] {
      published_ticket<512, g::kDefaultUnroll, true>
          <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), e.partials(), e.ticket());
      CUDA_CHECK_LAUNCH();
    });
    e.measure("flag", 512, grid, [&] {
      flag_sum<512, g::kDefaultUnroll>
          <<<grid, 512, 0, e.stream()>>>(e.in(), n, chunk, e.out(), words.get(), ++launches);
      CUDA_CHECK_LAUNCH();
    });
    if (k == 15) {
      e.measure("one-block-1024", 1024, 1, [&] {
        g::single_block_kernel<float, g::Sum, 1024, 8>
            <<<1, 1024, 0, e.stream()>>>(e.in(), static_cast<unsigned>(n), e.out(), g::Sum{});
        CUDA_CHECK_LAUNCH();
      });
    }
    if (k <= 18) {
      if (most >= 8) run_cluster(e, 8);
      if (most >= 16) run_cluster(e, 16);
    }
    lab::measure_no_finish(e, grid, chunk);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"finish",
       "n = 2^14 .. 2^25: how the blocks of one launch combine their partial sums.\n"
       "Designs: stage15, ticket, acqrel, flag, one-block-1024 (2^15), cluster8 and cluster16 (to 2^18),\n"
       "fence (diagnostic, racy: its last block reads without an acquire), no-finish (diagnostic, wrong sum).\n"
       "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.",
       std::size_t{1} << 25, finish});
}
