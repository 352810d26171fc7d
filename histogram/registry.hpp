// The histogram ladder's one ordered list of stages, and the pieces the runner and the
// tests share: the inputs, the host reference, and a stage prepared for one input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "device_buffer.hpp"
#include "device_info.hpp"
#include "stage.hpp"

namespace histogram {

// ---- the registry ----------------------------------------------------------------------
// Stages in chapter order, then the baseline (cub).
const std::vector<Stage>& registry();
// A stage by number ("5", "05") or id ("lane_banks", "cub"); nullptr when there is none.
const Stage* find_stage(const std::string& key);
// A --stages value: keys, ranges of numbers ("1-6"), "all", "stages" or "baselines",
// comma-separated. Throws common::UsageError naming an unknown item.
std::vector<const Stage*> select_stages(const std::string& spec);
// One line per entry, tab-separated: key, id, kind, title, source, chapter.
std::string registry_listing(const std::vector<const Stage*>& selection);

// ---- inputs and the reference ------------------------------------------------------------
//   uniform: every value equally likely;
//   skewed:  floor(2^w u^8) for u uniform in [0, 1) and w the value's bits: a steep,
//            Zipf-like fall from bin 0, which holds half of the bytes (u < 2^-1) or 35 %
//            of the 16-bit values (u < 2^-1.5);
//   one:     every value in bin 42 (the byte 42; the 16-bit value 42 x 16 + 5).
enum class Input { uniform, skewed, one };
const std::vector<Input>& all_inputs();
std::string input_name(Input input);
// A comma-separated list of input names; throws common::UsageError naming an unknown one.
std::vector<Input> parse_inputs(const std::string& text);
// 256 or 4096; throws common::UsageError for anything else.
Bins parse_bins(const std::string& text);

// n values of `bins`' width from `seed`, as little-endian bytes (n x value_bytes(bins)).
// Value i depends on (input, seed, i) only: a longer input starts with a shorter one.
std::vector<unsigned char> make_values(Input input, Bins bins, std::uint64_t seed, std::size_t n);
// Adds the bins of values [begin, end) of `values` to `hist` (bin_count(bins) counters).
void count_values(const std::vector<unsigned char>& values, Bins bins, std::size_t begin, std::size_t end,
                  std::vector<unsigned>& hist);
// The empty string when every count matches, else the first wrong bin and how many are wrong.
std::string compare_counts(const std::vector<unsigned>& got, const std::vector<unsigned>& want);

// ---- a stage ready to launch -------------------------------------------------------------
// The poison an output holds before a checked run: no launch that skips a bin passes.
constexpr unsigned kPoison = 0xCAFEBABEu;

// A stage planned for n values at `in` and given its scratch (zeroed once when the plan
// asks), outside any timing; launch() is the timed work.
class PreparedStage {
 public:
  PreparedStage(const Stage& stage, const void* in, std::size_t n, Bins bins, unsigned* hist,
                const common::DeviceInfo& device, cudaStream_t stream);
  void launch() const { stage_->launch(args_); }
  const Plan& plan() const { return plan_; }
  // Poisons the histogram, launches once, copies the counts back and waits for them.
  std::vector<unsigned> checked_run() const;

 private:
  const Stage* stage_;
  Plan plan_;
  common::DeviceBuffer<unsigned char> scratch_;
  HistArgs args_;
};

// The runner's main (runner.cpp): parses argv, runs, returns the exit code.
int histogram_main(int argc, const char* const* argv);

}  // namespace histogram
