// Single-pass sums that stay right for any number of launches, any scheduling and any
// build (chapters 13, 14 and 18):
//   - every launch of a tagged-slot stage leaves every slot empty, so a later launch
//     with another grid on the same scratch can never read an old slot as its own;
//   - a stage whose finishing block waits for other blocks finishes even when the GPU
//     has room for only one of its blocks at a time (another kernel holds the rest);
//   - two prepared stages, each with its own scratch, on two streams at once are right;
//   - the paths that need a newer architecture follow what the kernel image holds;
//   - the shared block sums are right for any whole number of warps, and twice in a row.
// The stage lists come from the registry (single launch, scratch zeroed once).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gpu_fixture.hpp"
#include "inputs.hpp"
#include "kernel_image.hpp"
#include "reduction/prepared_stage.hpp"
#include "reduction/primitives.cuh"
#include "reduction/registry.hpp"
#include "single_pass.cuh"
#include "verify.hpp"
#include "wait_or_fail.hpp"

using common::Pattern;
using gpu_test::device;
using gpu_test::wait_or_fail;
using reduction::PreparedStage;
using reduction::Stage;

namespace {

struct Input {
  std::vector<float> host;
  common::DeviceBuffer<float> dev;
  common::Reference ref;
  Input(Pattern p, std::uint64_t seed, std::size_t n)
      : host(common::make_input(p, seed, n)), dev(n), ref(common::reference_sum(host)) {
    common::copy_to_device(dev.get(), host.data(), n * sizeof(float));
  }
};

// The stages whose finishing block reads what other blocks wrote into scratch.
// The registry's stages whose one launch keeps state in scratch at a large n (a ticket, a
// counter, slots): their plans ask for scratch zeroed once.
std::vector<const Stage*> single_pass_stages() {
  std::vector<const Stage*> out;
  for (const Stage& s : reduction::registry()) {
    if (s.kind != reduction::Kind::stage || !s.single_launch) continue;
    const int block = reduction::effective_block(s, 0, device());
    if (s.plan(std::size_t{1} << 22, block, device()).zero_scratch_once) out.push_back(&s);
  }
  return out;
}

bool uses_tagged_slots(const Stage& s) {
  return std::string(s.id) == "tagged_slots" || std::string(s.id) == "stream_order";
}

std::vector<unsigned char> read_back(const void* dev, std::size_t bytes) {
  std::vector<unsigned char> host(bytes);
  CUDA_CHECK(cudaMemcpy(host.data(), dev, bytes, cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace

TEST_CASE("tagged-slot stages leave every slot empty after each launch, whatever the grid", "[gpu][safety][tags]") {
  // Grids that grow and shrink on one scratch area: a launch with a smaller grid must
  // not leave the slots past it holding anything a later launch could take for its own.
  const std::vector<std::size_t> sizes = {std::size_t{1} << 24, (std::size_t{1} << 18) + 3, (std::size_t{3} << 20) + 7,
                                          (std::size_t{1} << 22) + 1, std::size_t{1} << 20};
  for (const Stage* s : single_pass_stages()) {
    if (!uses_tagged_slots(*s)) continue;
    const int block = 512;
    std::size_t most = 0;
    for (std::size_t n : sizes) most = std::max(most, s->plan(n, block, device()).scratch_bytes);
    REQUIRE(most > 0);
    common::DeviceBuffer<unsigned char> scratch(most);
    CUDA_CHECK(cudaMemset(scratch.get(), 0, most));
    common::DeviceBuffer<float> out(1);
    std::vector<unsigned> grids;
    for (int round = 0; round < 3; ++round) {
      for (std::size_t n : sizes) {
        const Input in(Pattern::uniform, 7 + n + round, n);
        const reduction::LaunchPlan plan = s->plan(n, block, device());
        if (plan.scratch_bytes == 0) continue;  // one block or one cluster: no slots
        grids.push_back(plan.grid);
        reduction::StageArgs a;
        a.in = in.dev.get();
        a.n = n;
        a.out = out.get();
        a.scratch = scratch.get();
        a.scratch_bytes = plan.scratch_bytes;
        a.block = block;
        a.grid = plan.grid;
        a.stream = gpu_test::stream();
        const float poison = common::poison_value();
        common::copy_to_device(out.get(), &poison, sizeof poison);
        s->launch(a);
        CUDA_CHECK(cudaStreamSynchronize(a.stream));
        float result = 0.0f;
        CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
        const auto check = common::check_sum(result, in.ref, plan.bound(), n);
        INFO(s->id << " round " << round << " n=" << n << " grid=" << plan.grid << ": " << check.detail);
        CHECK(check.ok);
        const std::vector<unsigned char> bytes = read_back(scratch.get(), most);
        std::size_t first_set = most;
        for (std::size_t i = 0; i < most && first_set == most; ++i)
          if (bytes[i] != 0) first_set = i;
        INFO("first non-zero scratch byte at offset " << first_set << " of " << most);
        CHECK(first_set == most);
      }
    }
    std::sort(grids.begin(), grids.end());
    INFO(s->id);
    CHECK(grids.front() < grids.back());  // the grids did change
  }
}

TEST_CASE("the library's tagged slots are empty after each launch, with any mix of grids", "[gpu][safety][tags]") {
  namespace g = reduction::generic;
  g::Workspace ws(0, gpu_test::stream());
  common::DeviceBuffer<float> out(1);
  const std::vector<std::size_t> sizes = {(std::size_t{1} << 24) + 1, (std::size_t{1} << 18) + 3,
                                          (std::size_t{1} << 22) + 5, (std::size_t{1} << 24) + 1};
  for (std::size_t n : sizes) {
    const Input in(Pattern::mixed_signs, 11 + n, n);
    const unsigned grid = g::grid_for<float, g::Sum>(n, ws.sm_count());
    REQUIRE(grid > 16u);  // the ticket path
    g::reduce<float>(in.dev.get(), n, out.get(), ws, gpu_test::stream());
    CUDA_CHECK(cudaStreamSynchronize(gpu_test::stream()));
    float result = 0.0f;
    CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
    INFO("n=" << n << " grid=" << grid << " result " << result << " reference " << in.ref.sum);
    CHECK(std::fabs(result - in.ref.sum) <= 64 * 0x1p-24 * in.ref.sum_abs);
    const std::vector<unsigned char> bytes = read_back(ws.get(), ws.bytes());
    std::size_t set = 0;
    for (unsigned char b : bytes) set += b != 0;
    CHECK(set == 0);
  }
}

namespace {

__device__ unsigned long long global_nanoseconds() {
  unsigned long long t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds one block slot until the host releases it (or `timeout_ns` passes, which it
// records: the kernel under test could not finish while the hog held the GPU).
__global__ void __launch_bounds__(512)
    hog(unsigned* started, const volatile unsigned* release, unsigned long long timeout_ns, unsigned* timed_out) {
  if (threadIdx.x == 0) {
    atomicAdd(started, 1u);
    const unsigned long long begin = global_nanoseconds();
    while (*release == 0) {
      if (global_nanoseconds() - begin > timeout_ns) {
        atomicExch(timed_out, 1u);
        break;
      }
      __nanosleep(2000);
    }
  }
  __syncthreads();
}

// Host memory the GPU reads and writes directly, so the host can watch and release the
// hog while it runs.
struct Mapped {
  unsigned* host = nullptr;
  unsigned* dev = nullptr;
  Mapped() {
    CUDA_CHECK(cudaHostAlloc(&host, 3 * sizeof(unsigned), cudaHostAllocMapped));
    std::memset(host, 0, 3 * sizeof(unsigned));
    CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  }
  ~Mapped() { cudaFreeHost(host); }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
};

}  // namespace

TEST_CASE("single-pass stages finish when only one of their blocks fits on the GPU at a time",
          "[gpu][safety][progress]") {
  // A hog of 512-thread blocks, few registers and no shared memory fills every SM's
  // threads but 512: one block slot is left for the stage, anywhere on the GPU. A stage
  // whose finishing block waits for blocks that have not started would wait for the
  // hog, which gives up after a few seconds and says so.
  // The hog asks for the largest shared-memory carveout, so that the SMs it runs on keep
  // room for a stage's shared memory (with the smallest, a stage whose block needs a few
  // KiB, such as 16's, could not use the free slot at all).
  CUDA_CHECK(cudaFuncSetAttribute(hog, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  int hog_per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&hog_per_sm, hog, 512, 0));
  REQUIRE(hog_per_sm * 512 == device().max_threads_per_sm);  // thread-limited, as planned
  const unsigned hog_blocks = static_cast<unsigned>(hog_per_sm * device().sm_count - 1);
  const std::size_t n = std::size_t{1} << 22;
  const Input in(Pattern::uniform, 99, n);
  common::CudaStream hog_stream;
  common::CudaStream stage_stream;
  for (const Stage* s : single_pass_stages()) {
    if (!reduction::block_size_error(*s, 512, device().max_threads_per_block).empty()) continue;
    // Everything that allocates, copies or zeroes is done before the hog starts: such
    // calls may wait for the whole device, and the hog holds it.
    common::DeviceBuffer<float> out(1);
    const float poison = common::poison_value();
    common::copy_to_device(out.get(), &poison, sizeof poison);
    PreparedStage stage(*s, in.dev.get(), n, 512, device(), stage_stream.get(), out.get());
    CUDA_CHECK(cudaStreamSynchronize(stage_stream.get()));  // its scratch is zeroed
    REQUIRE(stage.plan().grid > 1);
    Mapped m;  // [0] hog blocks started, [1] release, [2] timed out
    CUDA_CHECK(cudaDeviceSynchronize());
    hog<<<hog_blocks, 512, 0, hog_stream.get()>>>(m.dev, m.dev + 1, 3'000'000'000ull, m.dev + 2);
    CUDA_CHECK_LAUNCH();
    volatile unsigned* flags = m.host;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (flags[0] < hog_blocks && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    const unsigned resident = flags[0];
    if (resident != hog_blocks) {
      flags[1] = 1;
      CUDA_CHECK(cudaStreamSynchronize(hog_stream.get()));
    }
    INFO(s->id << ": " << resident << " of " << hog_blocks << " hog blocks resident");
    REQUIRE(resident == hog_blocks);
    stage.launch();
    wait_or_fail(stage_stream.get(), 30.0, std::string("stage ") + s->id + " beside the hog");
    const bool gave_up = flags[2] != 0;  // read before the release: the hog timed out on its own
    flags[1] = 1;
    CUDA_CHECK(cudaStreamSynchronize(hog_stream.get()));
    float result = poison;
    CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
    INFO(s->id << ": grid " << stage.plan().grid << " through one free block slot");
    CHECK_FALSE(gave_up);  // the stage finished while the hog still held every other slot
    const auto check = common::check_sum(result, in.ref, stage.plan().bound(), n);
    INFO(check.detail);
    CHECK(check.ok);
  }
}

TEST_CASE("two prepared stages, each with its own scratch, on two streams at once", "[gpu][safety][streams]") {
  const std::size_t n = (std::size_t{1} << 22) + 3;
  const Input a(Pattern::mixed_signs, 5, n);
  const Input b(Pattern::uniform, 6, n);
  common::CudaStream s1;
  common::CudaStream s2;
  for (const Stage* s : single_pass_stages()) {
    common::DeviceBuffer<float> out1(1);
    common::DeviceBuffer<float> out2(1);
    PreparedStage p1(*s, a.dev.get(), n, 0, device(), s1.get(), out1.get());
    PreparedStage p2(*s, b.dev.get(), n, 0, device(), s2.get(), out2.get());
    const float alone1 = p1.run_checked();
    const float alone2 = p2.run_checked();
    // Many launches on both streams, never waited for in between: they overlap.
    for (int i = 0; i < 50; ++i) {
      p1.launch();
      p2.launch();
    }
    wait_or_fail(s1.get(), 30.0, std::string(s->id) + " on stream 1");
    wait_or_fail(s2.get(), 30.0, std::string(s->id) + " on stream 2");
    float r1 = 0.0f;
    float r2 = 0.0f;
    CUDA_CHECK(cudaMemcpy(&r1, out1.get(), sizeof r1, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&r2, out2.get(), sizeof r2, cudaMemcpyDeviceToHost));
    INFO(s->id);
    CHECK(common::check_sum(r1, a.ref, p1.plan().bound(), n).ok);
    CHECK(common::check_sum(r2, b.ref, p2.plan().bound(), n).ok);
    if (s->deterministic) {
      CHECK(std::memcmp(&r1, &alone1, sizeof r1) == 0);
      CHECK(std::memcmp(&r2, &alone2, sizeof r2) == 0);
    }
  }
}

TEST_CASE("the paths follow what the kernel image holds", "[gpu][safety][arch]") {
  // ptxVersion is the virtual architecture the running code was compiled for: the value
  // every arch-dependent path (clusters, redux.sync) is chosen by.
  const int built = common::build_arch();
  INFO("build_arch " << built << ", device " << device().cc_major << "." << device().cc_minor);
  CHECK(common::running_cuda_arch() == 10 * built);
  CHECK(built <= 10 * device().cc_major + device().cc_minor);
  // Stage 15 takes a cluster between one block and its cluster limit only where the
  // build's code has clusters; elsewhere it is stage 14.
  const Stage& s14 = *reduction::find_stage("tagged_slots");
  const Stage& s15 = *reduction::find_stage("one_cluster");
  const std::size_t n = std::size_t{512} * 32 + 1;
  const auto p15 = s15.plan(n, 512, device());
  const auto p14 = s14.plan(n, 512, device());
  if (built >= 90) {
    CHECK(p15.scratch_bytes == 0);
    CHECK((p15.grid == 8 || p15.grid == 16));
  } else {
    CHECK(p15.grid == p14.grid);
    CHECK(p15.scratch_bytes == p14.scratch_bytes);
  }
  // And it sums right either way.
  const Input in(Pattern::mixed_signs, 3, n);
  PreparedStage prepared(s15, in.dev.get(), n, 512, device(), gpu_test::stream());
  CHECK(common::check_sum(prepared.run_checked(), in.ref, prepared.plan().bound(), n).ok);
}

namespace {

// tile_block_sum for a block of kBlock threads, any whole number of warps.
template <unsigned kBlock>
__global__ void tile_sum_kernel(const float* in, float* out) {
  const float v = reduction::tile_block_sum<kBlock>(in[threadIdx.x]);
  if (threadIdx.x == 0) *out = v;
}

// block_sum twice in a row, on two different values: both sums must be right.
__global__ void block_sum_twice(const float* in, float* out) {
  const float first = reduction::block_sum(in[threadIdx.x]);
  const float second = reduction::block_sum(2.0f * in[threadIdx.x] + 1.0f);
  if (threadIdx.x == 0) {
    out[0] = first;
    out[1] = second;
  }
}

template <unsigned kBlock>
void check_tile_sum() {
  std::vector<float> host(kBlock);
  for (unsigned i = 0; i < kBlock; ++i) host[i] = static_cast<float>(i % 7 + 1);  // small integers: exact
  double ref = 0.0;
  for (float x : host) ref += x;
  common::DeviceBuffer<float> in(kBlock);
  common::DeviceBuffer<float> out(1);
  common::copy_to_device(in.get(), host.data(), kBlock * sizeof(float));
  tile_sum_kernel<kBlock><<<1, kBlock>>>(in.get(), out.get());
  CUDA_CHECK_LAUNCH();
  float result = 0.0f;
  CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
  INFO("tile_block_sum<" << kBlock << ">");
  CHECK(result == static_cast<float>(ref));
}

}  // namespace

TEST_CASE("the shared block sums: any whole number of warps, and two calls in one kernel", "[gpu][safety][blocks]") {
  check_tile_sum<32>();
  check_tile_sum<64>();
  check_tile_sum<96>();  // three warps: the sum across tiles must not drop the third
  check_tile_sum<160>();
  check_tile_sum<224>();
  check_tile_sum<256>();
  check_tile_sum<992>();
  check_tile_sum<1024>();
  for (unsigned block : {64u, 256u, 1024u}) {
    std::vector<float> host(block);
    for (unsigned i = 0; i < block; ++i) host[i] = static_cast<float>(i % 5);
    double first = 0.0, second = 0.0;
    for (float x : host) {
      first += x;
      second += 2.0 * x + 1.0;
    }
    common::DeviceBuffer<float> in(block);
    common::DeviceBuffer<float> out(2);
    common::copy_to_device(in.get(), host.data(), block * sizeof(float));
    for (int rep = 0; rep < 200; ++rep) {
      block_sum_twice<<<1, block>>>(in.get(), out.get());
      CUDA_CHECK_LAUNCH();
      float r[2] = {0.0f, 0.0f};
      CUDA_CHECK(cudaMemcpy(r, out.get(), sizeof r, cudaMemcpyDeviceToHost));
      INFO("block " << block << " repetition " << rep);
      REQUIRE(r[0] == static_cast<float>(first));
      REQUIRE(r[1] == static_cast<float>(second));
    }
  }
}

namespace {

// The two meanings of a block sum, each written twice: once as a stage teaches it, for
// floats (primitives.cuh), and once in the generic library (single_pass.cuh, which
// includes nothing from reduction/). out[0] and out[1]: stage 13's block_sum_one_round
// and the library's block_reduce_one_round; out[2] and out[3]: stage 08's block_sum
// (two levels of shuffles) and the library's block_reduce.
template <int kBlock>
__global__ void __launch_bounds__(kBlock) both_block_sums(const float* in, float* out) {
  namespace g = reduction::generic;
  const float v = in[threadIdx.x];
  const float stage_one_round = reduction::block_sum_one_round<kBlock>(v);
  const float library_one_round = g::block_reduce_one_round<kBlock>(v, g::Sum{});
  const float stage_two_levels = reduction::block_sum(v);
  const float library_two_levels = g::block_reduce<kBlock>(v, g::Sum{});
  if (threadIdx.x == 0) {
    out[0] = stage_one_round;
    out[1] = library_one_round;
    out[2] = stage_two_levels;
    out[3] = library_two_levels;
  }
}

unsigned bits_of(float f) {
  unsigned u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

template <int kBlock>
bool check_both_block_sums(std::uint64_t seed) {
  // Mixed signs and magnitudes: a float sum of these depends on its order, so equal bits
  // mean the same additions in the same order.
  const std::vector<float> host = common::make_input(Pattern::mixed_signs, seed, kBlock);
  common::DeviceBuffer<float> in(kBlock);
  common::DeviceBuffer<float> out(4);
  common::copy_to_device(in.get(), host.data(), kBlock * sizeof(float));
  const float poisoned[4] = {common::poison_value(), common::poison_value(), common::poison_value(),
                             common::poison_value()};
  common::copy_to_device(out.get(), poisoned, sizeof poisoned);  // a sum never written fails its check
  both_block_sums<kBlock><<<1, kBlock>>>(in.get(), out.get());
  CUDA_CHECK_LAUNCH();
  float r[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  CUDA_CHECK(cudaMemcpy(r, out.get(), sizeof r, cudaMemcpyDeviceToHost));
  const common::Reference ref = common::reference_sum(host);
  INFO("block " << kBlock << ", seed " << seed << ": one round " << r[0] << " / " << r[1] << ", two levels " << r[2]
                << " / " << r[3] << ", exact " << ref.sum);
  // Depth log2(kBlock), and five more for a block of one warp, whose two-level sum adds
  // the warp's value to zeros in a second round.
  for (float x : r) CHECK(common::check_sum(x, ref, common::tree_depth(kBlock) + 5, kBlock).ok);
  CHECK(bits_of(r[0]) == bits_of(r[1]));
  CHECK(bits_of(r[2]) == bits_of(r[3]));
  // Whether the input told the two orders apart (the caller asks it of some seed).
  return bits_of(r[0]) != bits_of(r[2]);
}

}  // namespace

TEST_CASE("the stages' block sums and the library's: the same additions in the same order, bit for bit",
          "[gpu][safety][blocks]") {
  bool orders_differ = false;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    orders_differ |= check_both_block_sums<32>(seed);
    orders_differ |= check_both_block_sums<64>(seed);
    orders_differ |= check_both_block_sums<128>(seed);
    orders_differ |= check_both_block_sums<256>(seed);
    orders_differ |= check_both_block_sums<512>(seed);
    orders_differ |= check_both_block_sums<1024>(seed);
  }
  // The inputs can tell orders apart: one round and two levels differ in some last bit.
  CHECK(orders_differ);
}
