// The ceiling: one launch that reads the same n floats as a sum and combines nothing.
// Each thread streams its share with float4 loads, several in flight, folds the bit
// patterns into one register (an integer add, so no floating-point latency chain), and
// stores it only if it equals a key it never equals in practice: the loads cannot be
// removed and no thread ever talks to another. No reduction reads fewer bytes in fewer
// launches, so a stage's time over the ceiling's at the same n is its distance from the
// limit. Several shapes are timed; the ceiling at an n is the fastest of them.
//
// The checked run adds every thread's fold into one word (atomics), which the host
// compares with the wrapping sum of the input's bit patterns: every element was read
// exactly once. The timed runs skip that and keep only the guarded store.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "peer_bench.hpp"

namespace {

// A key no thread's fold is expected to equal; if one ever does, it writes one word.
constexpr unsigned int kKey = 0xFFFFFFFFu;

__device__ __forceinline__ unsigned int fold(const float4 v) {
  return __float_as_uint(v.x) + __float_as_uint(v.y) + __float_as_uint(v.z) + __float_as_uint(v.w);
}

// in must be 16-byte aligned (a cudaMalloc'd buffer is).
template <int Unroll>
__global__ void stream_only(const float* __restrict__ in, std::size_t n, unsigned int* out, bool checked) {
  const float4* in4 = reinterpret_cast<const float4*>(in);
  const std::size_t n4 = n / 4;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned int acc = 0;
  std::size_t i = tid;
  for (; i + (Unroll - 1) * threads < n4; i += Unroll * threads) {
    float4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) v[u] = in4[i + u * threads];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc += fold(v[u]);
  }
  for (; i < n4; i += threads) acc += fold(in4[i]);
  if (tid < n - 4 * n4) acc += __float_as_uint(in[4 * n4 + tid]);
  if (checked)
    atomicAdd(out, acc);
  else if (acc == kKey)
    *out = acc;
}

struct Shape {
  int block;
  int unroll;
};

int grid_for(const Shape& s, std::size_t n, const common::DeviceInfo& d) {
  const std::size_t resident = static_cast<std::size_t>(d.sm_count) * (d.max_threads_per_sm / s.block);
  const std::size_t per_block = static_cast<std::size_t>(s.block) * 4 * s.unroll;
  const std::size_t needed = (n + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::size_t>(1, std::min(resident, needed)));
}

template <int Unroll>
void launch_shape(const peers::LaunchArgs& a, int grid, int block) {
  stream_only<Unroll><<<grid, block, 0, a.stream>>>(a.in, a.n, static_cast<unsigned int*>(a.out), a.checked);
  CUDA_CHECK_LAUNCH();
}

std::vector<peers::PeerRow> rows(const common::DeviceInfo& device) {
  const std::vector<Shape> shapes = {{256, 4}, {512, 4}, {512, 8}};
  std::vector<peers::PeerRow> r;
  for (const Shape s : shapes) {
    peers::PeerRow row;
    row.id = "ceiling_" + std::to_string(s.block) + "x" + std::to_string(s.unroll);
    row.title = "stream only, " + std::to_string(s.block) + " thr, " + std::to_string(s.unroll) + " float4";
    row.kind = "ceiling";
    row.deterministic = true;
    row.single_launch = true;
    row.verify = peers::Verify::bit_pattern;
    row.block = [s] { return s.block; };
    row.grid = [s, device](std::size_t n) { return grid_for(s, n, device); };
    row.launch = [s, device](const peers::LaunchArgs& a) {
      const int grid = grid_for(s, a.n, device);
      if (s.unroll == 8)
        launch_shape<8>(a, grid, s.block);
      else
        launch_shape<4>(a, grid, s.block);
    };
    r.push_back(row);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  peers::PeerProgram p;
  p.program = "ceiling";
  p.summary = "Times one launch that streams n floats and combines nothing: the limit a sum of n floats can reach.";
  p.epilog =
      "Rows: ceiling_BxU, B threads per block, U float4 loads in flight per thread, as many blocks as fit on "
      "the GPU at once (fewer when n is small). The ceiling at an n is the fastest row.\n";
  p.metadata = {{"ceiling", "one launch, float4 loads, per-thread integer fold of the bit patterns, no combining"}};
  p.rows = rows;
  return peers::peer_main(argc, argv, p);
}
