// The measuring loop of the peer programs (peers/cub_modes, peers/ceiling): the same
// options, inputs, checked run, L2-flushed timing, table and CSV/JSON as the reduce
// runner, for rows that are not stages of the registry. Their CSVs have the runner's
// columns, with kind "peer" (or "ceiling"), so a sweep can be read next to them.
//
// A peer row is not linked against the stage library: cub_modes is built against a
// newer CCCL than the stages, and the two must not meet in one program.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "device_info.hpp"
#include "verify.hpp"

namespace peers {

// What the row's launch may use; everything is allocated before the timed region.
struct LaunchArgs {
  const float* in = nullptr;
  std::size_t n = 0;
  void* out = nullptr;  // a float for a sum, an unsigned int for a bit-pattern check
  void* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  cudaStream_t stream = nullptr;
  bool checked = false;  // the checked run (a ceiling row then writes its bit-pattern sum)
};

// How a row's checked run is judged.
//   float_sum:   out is a float, checked against the double reference with the row's bound.
//   bit_pattern: out is an unsigned int that the checked run sets to the wrapping sum of
//                the 32-bit patterns of the elements it read; equal to the host's sum only
//                if every element was read (a skipped or doubled element changes it).
enum class Verify { float_sum, bit_pattern };

struct PeerRow {
  std::string id;     // CSV key and id, e.g. "cub_gpu_to_gpu"
  std::string title;  // the table's stage column
  std::string kind = "peer";
  bool deterministic = false;
  bool single_launch = false;
  Verify verify = Verify::float_sum;
  std::function<std::size_t(std::size_t n)> scratch_bytes = [](std::size_t) { return std::size_t{0}; };
  std::function<common::ErrorBound(std::size_t n)> bound;  // float_sum rows
  std::function<int(std::size_t n)> grid;                  // optional: the grid it launches, for the table
  std::function<int()> block;                              // optional: its threads per block
  std::function<void(const LaunchArgs&)> launch;
};

struct PeerProgram {
  const char* program = "";
  std::string summary;  // --help's first line
  std::string epilog;   // extra --help text
  // Rows for the device found (built after the device is known).
  std::function<std::vector<PeerRow>(const common::DeviceInfo&)> rows;
  // Extra "# key: value" metadata (the CCCL version, what the ceiling kernel does).
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Parses the command line, runs every row at every size and writes the table (stdout)
// and --csv/--json. Exit codes as the reduce runner: 0 all verified, 1 a check failed
// or a CUDA error, 2 bad usage (nothing written), 3 no CUDA device.
int peer_main(int argc, const char* const* argv, const PeerProgram& program);

// The wrapping sum of the elements' 32-bit patterns (the ceiling's check), on the host.
std::uint32_t bit_pattern_sum(const float* x, std::size_t n);

}  // namespace peers
