// bulk: Hopper's bulk-copy engine (cp.async.bulk, TMA) feeds shared memory instead of
// the threads loading through registers, n = 2^14 .. 2^24, beside stage15 and ticket.
// Needs compute capability 9.0 or later.
// Chapter: lab/notes/90_lab_notes.md. Run: build/lab/bulk [--csv FILE]
//
//   bulkBxT-SxK   B blocks of T threads per SM, S buffers of K KiB in flight per block,
//                 the tagged ticket (stage 14's finish) to combine the blocks
#include <algorithm>
#include <stdexcept>

#include "kernel_image.hpp"
#include "lab.cuh"

namespace {

namespace g = reduction::generic;
using lab::Experiment;

// One thread per block asks the copy engine for whole pieces of the block's chunk
// (cp.async.bulk, kStageBytes each, kStages in flight); an mbarrier per stage counts the
// bytes in; the block's threads add each piece from shared memory once it has landed,
// then a __syncthreads frees the stage for the next piece. The finish is the generic
// library's finish_with_ticket (tagged partials). The head (up to the first 16-byte
// boundary) and tail are scalar loads.
template <int kBlock, int kStages, int kStageBytes>
__global__ void __launch_bounds__(kBlock) bulk_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk,
                                                   float* __restrict__ out, unsigned char* __restrict__ scratch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(kStageBytes % 16 == 0, "bulk copies move whole 16-byte units");
  auto smem_address = [](const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); };
  extern __shared__ __align__(128) unsigned char stages[];   // kStages x kStageBytes
  __shared__ __align__(8) unsigned long long full[kStages];  // one mbarrier per stage
  const g::Split<float> split(in, n);
  const float4* body = reinterpret_cast<const float4*>(in + split.head);
  const std::size_t begin = blockIdx.x * chunk;
  const std::size_t end = begin + chunk < split.packs ? begin + chunk : split.packs;
  constexpr std::size_t kPiece = kStageBytes / 16;  // float4s per piece
  const std::size_t pieces = begin < end ? (end - begin + kPiece - 1) / kPiece : 0;

  auto issue = [&](std::size_t piece) {  // thread 0 only
    const int s = static_cast<int>(piece % kStages);
    const std::size_t first = begin + piece * kPiece;
    const unsigned bytes = static_cast<unsigned>((end - first < kPiece ? end - first : kPiece) * 16);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(&full[s])), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_address(stages + s * kStageBytes)),
                 "l"(body + first), "r"(bytes), "r"(smem_address(&full[s]))
                 : "memory");
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&full[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the copy engine
    for (std::size_t p = 0; p < pieces && p < kStages; ++p) issue(p);
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them

  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (std::size_t p = 0; p < pieces; ++p) {
    const int s = static_cast<int>(p % kStages);
    const unsigned parity = static_cast<unsigned>((p / kStages) & 1);
    unsigned done = 0;
    do {
      asm volatile(
          "{\n .reg .pred ready;\n mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2;\n"
          " selp.u32 %0, 1, 0, ready;\n}"
          : "=r"(done)
          : "r"(smem_address(&full[s])), "r"(parity)
          : "memory");
    } while (!done);
    const std::size_t first = begin + p * kPiece;
    const int count = static_cast<int>(end - first < kPiece ? end - first : kPiece);
    const float4* piece = reinterpret_cast<const float4*>(stages + s * kStageBytes);
    for (int i = threadIdx.x; i < count; i += kBlock) {
      const float4 v = piece[i];
      a0 += v.x;
      a1 += v.y;
      a2 += v.z;
      a3 += v.w;
    }
    __syncthreads();  // every thread is done with stage s
    if (threadIdx.x == 0 && p + kStages < pieces) issue(p + kStages);
  }
  const std::size_t thread = blockIdx.x * static_cast<std::size_t>(kBlock) + threadIdx.x;
  const std::size_t tail_begin = split.head + split.packs * 4;
  if (thread < split.head) a0 += in[thread];
  if (thread < n - tail_begin) a0 += in[tail_begin + thread];
  const float v = lab::block_sum_one_round<kBlock>((a0 + a1) + (a2 + a3));
  g::finish_with_ticket<float, g::Sum, kBlock>(v, out, scratch, g::Sum{});
#else
  __trap();  // launched only on compute capability 9.0 and later
#endif
}

// A bulk-copy design: kBlock threads, kStages pieces of kStageBytes in flight per block,
// at most `per_sm` blocks per SM (fewer if shared memory allows fewer), and at least
// 8 KiB per block so that a small n is not spread thinner than one piece a block.
template <int kBlock, int kStages, int kStageBytes>
void run_bulk(Experiment& e, int per_sm) {
  const auto kernel = bulk_sum<kBlock, kStages, kStageBytes>;
  constexpr int kSmem = kStages * kStageBytes;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  int resident = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kBlock, kSmem));
  if (resident < 1) throw std::runtime_error("bulk design does not fit on an SM");
  per_sm = std::min(per_sm, resident);
  const std::size_t n = e.n();
  const std::size_t packs = g::Split<float>(e.in(), n).packs;
  constexpr std::size_t kMinPacks = 8192 / 16;
  const std::size_t useful = std::max<std::size_t>(1, (packs + kMinPacks - 1) / kMinPacks);
  const auto grid =
      static_cast<unsigned>(std::min<std::size_t>(useful, static_cast<std::size_t>(per_sm) * e.device().sm_count));
  std::size_t chunk = (packs + grid - 1) / grid;
  chunk = (chunk + 7) / 8 * 8;  // whole 128-byte lines per block
  const std::string design = "bulk" + std::to_string(per_sm) + "x" + std::to_string(kBlock) + "-" +
                             std::to_string(kStages) + "x" + std::to_string(kStageBytes / 1024) + "K";
  e.measure(design, kBlock, grid, [&e, kernel, grid, n, chunk] {
    kernel<<<grid, kBlock, kSmem, e.stream()>>>(e.in(), n, chunk, e.out(), e.ticket_scratch());
    CUDA_CHECK_LAUNCH();
  });
}

std::vector<common::Record> bulk(Experiment& e) {
  // The bulk-copy engine needs code compiled for sm_90 or later, whatever the GPU.
  if (common::compiled_arch_of(bulk_sum<512, 4, 32768>) < 90)
    throw std::runtime_error(
        "the bulk experiment needs code compiled for compute capability 9.0 or later (this "
        "build's code for the GPU is for " +
        std::to_string(common::compiled_arch_of(bulk_sum<512, 4, 32768>) / 10) + "." +
        std::to_string(common::compiled_arch_of(bulk_sum<512, 4, 32768>) % 10) +
        "): build with -DCMAKE_CUDA_ARCHITECTURES=90 or native on a Hopper GPU");
  g::Workspace ws;
  for (int k = 14; k <= 24; ++k) {
    const std::size_t n = std::size_t{1} << k;
    e.set_n(n);
    lab::stage15_and_ticket(e, ws);
    run_bulk<512, 4, 32768>(e, 1);
    run_bulk<512, 8, 16384>(e, 1);
    run_bulk<1024, 6, 32768>(e, 1);
    run_bulk<256, 4, 16384>(e, 2);
    run_bulk<512, 3, 32768>(e, 2);
    run_bulk<256, 4, 8192>(e, 4);
    run_bulk<128, 4, 8192>(e, 8);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  return lab::experiment_main(
      argc, argv,
      {"bulk",
       "n = 2^14 .. 2^24, compute capability 9.0 or later: the input reaches shared memory through the\n"
       "bulk-copy engine (cp.async.bulk, TMA). Designs: stage15, ticket, and bulkBxT-SxK: B blocks of T\n"
       "threads per SM, S buffers of K KiB in flight per block.\n"
       "Every row beside CUB's DeviceReduce::Sum in the same process, L2 flushed (read), median.",
       std::size_t{1} << 24, bulk});
}
