// The command line both multi-GPU programs share: the GPU (or rank) counts, the sizes,
// the input, the timing and the output files. multi_gpu_sum drives every GPU from one
// process; multi_gpu_mpi runs one process per GPU; their options differ only in --methods.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli.hpp"
#include "methods.hpp"
#include "timing.hpp"

namespace multi_gpu {

struct SumOptions {
  std::vector<int> gpus;  // counts, increasing; empty: 1 and every GPU (rank) present
  std::uint64_t n_total = 0;
  std::uint64_t n_per_gpu = std::uint64_t{1} << 24;
  std::vector<std::uint64_t> sweep;
  std::string pattern = "uniform";
  std::uint64_t seed = 1;
  common::TimingOptions timing;
  bool warm_l2 = false;
  common::FlushMode flush = common::FlushMode::read;
  std::vector<Method> methods;
  std::string csv;
  std::string json;
};

// What one shard belongs to in the help and the messages: "GPU" or "rank".
struct Unit {
  const char* one;   // "GPU"
  const char* many;  // "GPUs"
};

// "1,2,4".
std::string join(const std::vector<int>& v);

// --n N is the whole array: every count must divide it (a usage error otherwise).
void require_divisible(std::uint64_t n_total, const std::vector<int>& counts, const Unit& unit);

// The n per GPU that a count runs, and every n that any of `counts` runs, increasing.
std::vector<std::uint64_t> sizes_for(const SumOptions& opt, int count);
std::vector<std::uint64_t> all_sizes(const SumOptions& opt, const std::vector<int>& counts);

// The environment variable's value, or "-" when it is not set (for the run's metadata).
std::string env_or_dash(const char* name);

// --gpus, --n-per-gpu, --n and --sweep (the sizes), and the check after parsing that only
// one of --n, --n-per-gpu and --sweep is given and that --n splits evenly.
void add_size_options(common::ArgParser& args, SumOptions& opt, const Unit& unit);

// The timing, pattern, seed, output and flush options. `seed_note` says how each shard's
// seed follows from --seed.
void add_run_options(common::ArgParser& args, SumOptions& opt, const std::string& seed_note);

}  // namespace multi_gpu
