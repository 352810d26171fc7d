// Peer: CUB's DeviceReduce::Sum from a newer CCCL than the toolkit's (CCCL 3.5 from the
// nvidia-cuda-cccl wheel; scripts/get_cccl.sh), in each of its determinism modes and in
// both call styles, timed exactly as the stages are.
//
//   cub_two_phase       the classic call: ask for the temporary storage, allocate it once
//                       (outside the timed region), then reduce. Run-to-run deterministic.
//   cub_run_to_run      the single-phase call with an execution environment that requires
//   cub_not_guaranteed  that determinism; CUB allocates and frees its temporary storage
//   cub_gpu_to_gpu      inside the call (stream-ordered, from the device's default memory
//                       pool), so that cost is part of what a user of this call pays and
//                       part of the time. not_guaranteed zeroes the output and adds the
//                       blocks' sums into it with atomics; gpu_to_gpu sums through a
//                       reproducible floating-point accumulator, the same bits on any GPU.
//
// Built only with -DREDUCTION_CCCL_INCLUDE=<dir> (peers/CMakeLists.txt), never into the
// stage library, whose CUB stays the toolkit's.
#include <cub/device/device_reduce.cuh>
#include <cuda/execution>
#include <cuda/std/execution>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "peer_bench.hpp"

static_assert(CCCL_VERSION >= 3005000,
              "peers/cub_modes is written against CCCL 3.5's DeviceReduce::Sum with determinism requirements: point "
              "REDUCTION_CCCL_INCLUDE at CCCL 3.5 or newer (scripts/get_cccl.sh installs it)");

namespace {

namespace exec = cuda::execution;

// CUB documents no summation order. Each thread first adds its share, then trees
// combine threads and blocks; bounding it as if one block of 128 threads did all the
// work over-estimates the depth (as reduction/baselines/cub_sum.cu does). The
// reproducible accumulator is far more accurate than any plain order, so the same
// bound holds for it with room to spare.
common::ErrorBound tree_bound(std::size_t n) {
  common::ErrorBound b;
  b.depth = common::blocked_depth(n, 128) + 16;
  return b;
}

// not_guaranteed adds one partial per block into the output with atomics, in any
// order: on top of the tree bound, one addition per block, and the grid is at most a
// few blocks per resident block slot (8 x 32 blocks per SM bounds it).
common::ErrorBound atomic_bound(std::size_t n, const common::DeviceInfo& d) {
  common::ErrorBound b = tree_bound(n);
  b.depth += std::min<std::size_t>(n, static_cast<std::size_t>(d.sm_count) * 32 * 8);
  return b;
}

std::size_t two_phase_bytes(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
                                    static_cast<std::int64_t>(n)));
  return bytes;
}

template <typename Determinism>
void single_phase(const peers::LaunchArgs& a, Determinism mode) {
  const auto env = cuda::std::execution::env{cuda::stream_ref{a.stream}, exec::require(mode)};
  // CUB falls back to the default stream when an environment names none; the events
  // would then time nothing, so make sure it finds ours.
  if (cuda::get_stream(env).get() != a.stream)
    throw std::logic_error("cub_modes: CUB does not see the timing stream in the execution environment");
  CUDA_CHECK(cub::DeviceReduce::Sum(a.in, static_cast<float*>(a.out), static_cast<std::int64_t>(a.n), env));
}

std::vector<peers::PeerRow> rows(const common::DeviceInfo& device) {
  std::vector<peers::PeerRow> r(4);
  r[0].id = "cub_two_phase";
  r[0].title = "CUB Sum, two-phase call";
  r[0].deterministic = true;
  r[0].scratch_bytes = two_phase_bytes;
  r[0].bound = tree_bound;
  r[0].launch = [](const peers::LaunchArgs& a) {
    std::size_t bytes = a.scratch_bytes;
    CUDA_CHECK(cub::DeviceReduce::Sum(a.scratch, bytes, a.in, static_cast<float*>(a.out),
                                      static_cast<std::int64_t>(a.n), a.stream));
  };

  r[1].id = "cub_run_to_run";
  r[1].title = "CUB Sum, env run_to_run";
  r[1].deterministic = true;
  r[1].bound = tree_bound;
  r[1].launch = [](const peers::LaunchArgs& a) { single_phase(a, exec::determinism::run_to_run); };

  r[2].id = "cub_not_guaranteed";
  r[2].title = "CUB Sum, env not_guaranteed";
  r[2].deterministic = false;
  r[2].bound = [device](std::size_t n) { return atomic_bound(n, device); };
  r[2].launch = [](const peers::LaunchArgs& a) { single_phase(a, exec::determinism::not_guaranteed); };

  r[3].id = "cub_gpu_to_gpu";
  r[3].title = "CUB Sum, env gpu_to_gpu";
  r[3].deterministic = true;
  r[3].bound = tree_bound;
  r[3].launch = [](const peers::LaunchArgs& a) { single_phase(a, exec::determinism::gpu_to_gpu); };
  return r;
}

std::string cccl_version() {
  return std::to_string(CCCL_MAJOR_VERSION) + "." + std::to_string(CCCL_MINOR_VERSION) + "." +
         std::to_string(CCCL_PATCH_VERSION);
}

}  // namespace

int main(int argc, char** argv) {
  peers::PeerProgram p;
  p.program = "cub_modes";
  p.summary = "Verifies and times CUB " + cccl_version() +
              "'s DeviceReduce::Sum in its determinism modes and both call styles on the GPU.";
  p.epilog =
      "Rows: cub_two_phase (temporary storage allocated outside the timed region), cub_run_to_run, "
      "cub_not_guaranteed and cub_gpu_to_gpu (single-phase calls that allocate inside).\n";
  p.metadata = {
      {"cccl_version", cccl_version()},
      {"cccl_version_number", std::to_string(CCCL_VERSION)},
      {"peer", "cub::DeviceReduce::Sum, two-phase call and single-phase calls with a determinism requirement"}};
  p.rows = rows;
  return peers::peer_main(argc, argv, p);
}
