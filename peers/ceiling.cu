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
// exactly once. The timed runs skip that and keep only the guarded store. The kernel is
// in stream_only.cuh (lab/stream.cu times it too).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "peer_bench.hpp"
#include "stream_only.cuh"

namespace {

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
  ceiling::stream_only<Unroll><<<grid, block, 0, a.stream>>>(a.in, a.n, static_cast<unsigned int*>(a.out), a.checked);
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
