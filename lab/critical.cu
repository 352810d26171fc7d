// critical: shorter paths from the last block's data to the result, n = 2^14 .. 2^22,
// beside stage15 and ticket (each on its own zeroed scratch).
// Chapter: lab/notes/90_lab_notes.md. Run: build/lab/critical [--csv FILE]
//
//   shuffle      the tagged ticket kernel with the block sum the generic library had
//                before block_reduce_one_round (two rounds of shuffles), for both sums
//   no-shuffle   block_reduce_one_round without its shuffles: the lanes' sums also go
//                through shared memory
//   poll-start   the ticket taken at the start; blocks store their slot and leave; the
//                last block to start has all its threads read their slot at once until
//                it carries the tag, then adds
//   u8-2x512     the ticket kernel with 8 loads in flight, 2 blocks of 512 per SM
//   no-finish    DIAGNOSTIC, wrong sum: no combine at all (lab.cuh)
#include "lab.cuh"

namespace {

namespace g = reduction::generic;
using lab::block_sum_one_round;
using lab::Experiment;
using lab::load_slot;
using lab::publish;
using lab::slots_of;
using lab::store_slot;
using lab::take_ticket;
using lab::thread_collect;

// As block_reduce_one_round, but the 32 lanes' sums also go through shared memory (lane
// 0 reads them as eight float4s and adds them pairwise) instead of five shuffles.
template <int kBlock>
__device__ __forceinline__ float no_shuffle_sum(float v) {
  __shared__ __align__(16) float lanes[32];
  return g::block_reduce_lanes<kBlock>(v, g::Sum{}, [](float s) {
    lanes[threadIdx.x] = s;
    __syncwarp();
    float w = 0.0f;
    if (threadIdx.x == 0) {
      float t[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float4 q = reinterpret_cast<const float4*>(lanes)[j];
        t[j] = (q.x + q.y) + (q.z + q.w);
      }
      w = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
    }
    return w;
  });
}

// The two block sums compared with block_reduce_one_round, as types for other_sum_ticket.
//   TwoRounds ("shuffle"): shuffles in every warp, one value per warp through shared
//     memory, shuffles again in warp 0 (g::block_reduce).
//   NoShuffle ("no-shuffle"): no_shuffle_sum above.
struct TwoRounds {
  template <int kBlock>
  __device__ static float sum(float v) {
    return g::block_reduce<kBlock>(v, g::Sum{});
  }
};
struct NoShuffle {
  template <int kBlock>
  __device__ static float sum(float v) {
    return no_shuffle_sum<kBlock>(v);
  }
};

// The tagged ticket kernel with another block sum for both of the sums on the last
// block's path (its own, and the slots').
template <int kBlock, int kUnroll, typename Tree>
__global__ void __launch_bounds__(kBlock)
    other_sum_ticket(const float* __restrict__ in, std::size_t n, std::size_t chunk, float* __restrict__ out,
                     unsigned char* __restrict__ scratch) {
  const unsigned tag = lab::read_launch_tag(scratch);
  const float v =
      Tree::template sum<kBlock>(g::thread_chunk_reduce<float, g::Sum, kBlock, kUnroll>(in, n, chunk, g::Sum{}));
  auto* slots = slots_of(scratch);
  __shared__ bool is_last;
  __shared__ unsigned launch_tag;
  if (threadIdx.x == 0) {
    store_slot(slots, blockIdx.x, tag, v);
    is_last = take_ticket(scratch) == gridDim.x - 1;
    launch_tag = tag;
  }
  __syncthreads();
  if (!is_last) return;
  const float w = Tree::template sum<kBlock>(thread_collect<kBlock>(slots, 1, launch_tag));
  if (threadIdx.x == 0) publish(out, w, scratch, launch_tag);
}

// "poll-start": the ticket is taken when a block starts, so no block waits for an atomic
// at its end: a block stores its tagged slot and leaves. The block that took the last
// ticket knows that every other block is running, so it may wait for them: after its
// own sum, each of its threads reads its own slot until the slot carries the tag, all
// threads at once, and the block adds them.
template <int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock) poll_start_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk,
                                                         float* __restrict__ out, unsigned char* __restrict__ scratch) {
  unsigned started = 0;
  if (threadIdx.x == 0) started = take_ticket(scratch);
  const unsigned tag = lab::read_launch_tag(scratch);
  const float mine = g::thread_chunk_reduce<float, g::Sum, kBlock, kUnroll>(in, n, chunk, g::Sum{});
  __shared__ bool collects;
  __shared__ unsigned launch_tag;
  __shared__ float own;
  if (threadIdx.x == 0) {  // seen by every thread after the barrier inside block_sum_one_round
    collects = started == gridDim.x - 1;
    launch_tag = tag;
  }
  const float v = block_sum_one_round<kBlock>(mine);
  auto* slots = slots_of(scratch);
  if (!collects) {
    if (threadIdx.x == 0) store_slot(slots, blockIdx.x, tag, v);
    return;
  }
  if (threadIdx.x == 0) own = v;
  __syncthreads();
  const unsigned expected = launch_tag;
  float w = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
    if (b == blockIdx.x) {
      w += own;
      continue;
    }
    unsigned long long word = load_slot(slots, b);
    while (static_cast<unsigned>(word >> 32) != expected) word = load_slot(slots, b);
    w += g::untag_value<float>(word);
  }
  w = block_sum_one_round<kBlock>(w);
  if (threadIdx.x == 0) publish(out, w, scratch, expected);
}

std::vector<common::Record> critical(Experiment& e) {
  lab::over_ticket_sizes(e, [&e](unsigned, std::size_t, unsigned char*, const auto& run) {
    run("shuffle", other_sum_ticket<512, g::kDefaultUnroll, TwoRounds>, false);
    run("no-shuffle", other_sum_ticket<512, g::kDefaultUnroll, NoShuffle>, false);
    run("poll-start", poll_start_sum<512, g::kDefaultUnroll>, false);
    lab::run_shape<512, 8>(e, 2, 2, "u8-2x512");
  });
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"critical",
       "n = 2^14 .. 2^22: shorter paths from the last block's data to the result.\n"
       "Designs: stage15, ticket, shuffle, no-shuffle, poll-start, u8-2x512, no-finish (diagnostic, wrong sum).\n"
       "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.",
       std::size_t{1} << 22, critical});
}
