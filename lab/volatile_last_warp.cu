// volatile_last_warp: the "unrolled last warp" that older reduction code ends its block
// tree with, and two correct ways to end it, each in one small launch (one block) that
// compute-sanitizer's racecheck can watch:
//   compute-sanitizer --tool racecheck build/lab/volatile_last_warp --variant volatile
//
//   volatile   once 64 values are left, the first warp adds them with no barrier,
//              through a volatile pointer to shared memory, as if its 32 lanes moved in
//              lockstep. Since Volta (independent thread scheduling) nothing makes them
//              do so: a lane may read a neighbour's slot before or after the neighbour
//              has written it. volatile only keeps each access in memory; it orders
//              nothing between lanes.
//   syncwarp   the same steps, each split into a read, __syncwarp(), a write and
//              __syncwarp(), so every lane's write is ordered against every read of it.
//   shuffle    the last 64 values go through registers: one add, then stage 08's five
//              __shfl_down_sync steps (reduction::warp_sum). No shared memory, no race.
//
// Each variant's sum is checked against the double reference of the same floats (the
// bound of common/verify.hpp); a right sum does not show the absence of a race, which is
// what racecheck is for (scripts/device.sh warp_tools runs it on each variant).
// Chapter: chapters/08_warp_shuffles.md.
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "inputs.hpp"
#include "reduction/primitives.cuh"
#include "verify.hpp"

namespace {

constexpr const char* kProgram = "volatile_last_warp";
constexpr int kBlock = 256;
constexpr std::uint64_t kMaxN = std::uint64_t{1} << 20;

enum class Variant { volatile_warp, syncwarp, shuffle };

// One block: every thread adds its elements (i = tid, tid + kBlock, ...), then a tree in
// shared memory with a barrier per level down to 64 values; the last warp's part is
// what the variants differ in.
template <Variant kVariant>
__global__ void __launch_bounds__(kBlock) one_block_sum(const float* __restrict__ in, unsigned n, float* out) {
  __shared__ float s[kBlock];
  const unsigned tid = threadIdx.x;
  float v = 0.0f;
  for (unsigned i = tid; i < n; i += kBlock) v += in[i];
  s[tid] = v;
  __syncthreads();
  for (unsigned half = kBlock / 2; half > 32; half /= 2) {
    if (tid < half) s[tid] += s[tid + half];
    __syncthreads();
  }
  if (tid >= 32) return;

  if constexpr (kVariant == Variant::volatile_warp) {
    // The old idiom: no barrier, every lane runs every line. Lane t reads slot t + d
    // while lane t + d may be writing it.
    volatile float* vs = s;
    vs[tid] += vs[tid + 32];
    vs[tid] += vs[tid + 16];
    vs[tid] += vs[tid + 8];
    vs[tid] += vs[tid + 4];
    vs[tid] += vs[tid + 2];
    vs[tid] += vs[tid + 1];
    if (tid == 0) *out = vs[0];
  } else if constexpr (kVariant == Variant::syncwarp) {
    v = s[tid];
    for (unsigned d = 32; d > 0; d /= 2) {
      v += s[tid + d];
      __syncwarp();  // every lane has read before any lane writes
      s[tid] = v;
      __syncwarp();  // every lane has written before the next read
    }
    if (tid == 0) *out = v;
  } else {
    v = reduction::warp_sum(s[tid] + s[tid + 32]);
    if (tid == 0) *out = v;
  }
}

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::volatile_warp: return "volatile";
    case Variant::syncwarp: return "syncwarp";
    case Variant::shuffle: return "shuffle";
  }
  return "?";
}

void launch(Variant v, const float* in, unsigned n, float* out) {
  switch (v) {
    case Variant::volatile_warp: one_block_sum<Variant::volatile_warp><<<1, kBlock>>>(in, n, out); break;
    case Variant::syncwarp: one_block_sum<Variant::syncwarp><<<1, kBlock>>>(in, n, out); break;
    case Variant::shuffle: one_block_sum<Variant::shuffle><<<1, kBlock>>>(in, n, out); break;
  }
  CUDA_CHECK_LAUNCH();
}

int run(const std::vector<Variant>& variants, std::size_t n, int device) {
  const common::DeviceInfo info = common::query_device(device);  // also makes it the current device
  const std::vector<float> host = common::make_input(common::Pattern::uniform, 1, n);
  const common::Reference ref = common::reference_sum(host);
  common::DeviceBuffer<float> in(n);
  common::DeviceBuffer<float> out(1);
  common::copy_to_device(in.get(), host.data(), in.bytes());
  std::cout << kProgram << " on " << info.name << " (compute capability " << info.compute_capability() << "): n = " << n
            << ", one block of " << kBlock << " threads\n";
  bool all_ok = true;
  for (const Variant v : variants) {
    const float poison = common::poison_value();
    common::copy_to_device(out.get(), &poison, sizeof poison);
    launch(v, in.get(), static_cast<unsigned>(n), out.get());
    CUDA_CHECK(cudaDeviceSynchronize());
    float result = 0.0f;
    CUDA_CHECK(cudaMemcpy(&result, out.get(), sizeof result, cudaMemcpyDeviceToHost));
    const common::Check c = common::check_sum(result, ref, common::blocked_depth(n, kBlock), n);
    std::cout.precision(9);
    std::cout << variant_name(v) << ": sum " << result << ", reference " << ref.sum << ", "
              << (c.ok ? "ok" : "FAIL (" + c.detail + ")") << "\n";
    all_ok = all_ok && c.ok;
  }
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Variant> variants{Variant::volatile_warp, Variant::syncwarp, Variant::shuffle};
  std::size_t n = 4096;
  int device = 0;
  common::ArgParser args(kProgram,
                         "One block sums n floats (uniform in [0, 1)) with a shared-memory tree and ends it in the "
                         "first warp three ways:\nvolatile (the old unrolled last warp, no __syncwarp), syncwarp "
                         "(the same steps with __syncwarp between\nreads and writes) and shuffle (__shfl_down_sync). "
                         "One launch per variant, for compute-sanitizer --tool racecheck.");
  args.option(
      "--variant", "V", "volatile, syncwarp or shuffle (default: all three, in that order)",
      [&variants](const std::string& v) {
        if (v == "volatile")
          variants = {Variant::volatile_warp};
        else if (v == "syncwarp")
          variants = {Variant::syncwarp};
        else if (v == "shuffle")
          variants = {Variant::shuffle};
        else
          throw common::UsageError("--variant '" + v + "' is not a variant: write volatile, syncwarp or shuffle.");
      });
  args.option("--n", "N", "elements to sum, 1 to 2^20 (default 4096)",
              [&n](const std::string& v) { n = common::parse_count(v, "--n", 4, 1, kMaxN); });
  common::add_device_option(args, device);
  args.epilog(
      "Chapter: chapters/08_warp_shuffles.md. Exit codes: 0 every sum verified, 1 a sum failed its check or a CUDA "
      "error occurred, 2 bad usage, 3 no CUDA device.");
  return common::run_program(kProgram, [&] {
    if (!args.parse(argc, argv)) return 0;
    return run(variants, n, device);
  });
}
