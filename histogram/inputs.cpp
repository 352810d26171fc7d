// The ladder's inputs, the host reference count, and a stage prepared for one input.
#include <algorithm>
#include <cmath>
#include <mutex>

#include "cli.hpp"
#include "cuda_check.hpp"
#include "inputs.hpp"
#include "registry.hpp"
#include "row_measure.hpp"

namespace histogram {

const std::vector<Input>& all_inputs() {
  static const std::vector<Input> inputs = {Input::uniform, Input::skewed, Input::one};
  return inputs;
}

std::string input_name(Input input) {
  switch (input) {
    case Input::uniform: return "uniform";
    case Input::skewed: return "skewed";
    case Input::one: return "one";
  }
  return "?";
}

std::vector<Input> parse_inputs(const std::string& text) {
  std::vector<Input> chosen;
  for (const auto& item : common::split_list(text)) {
    const auto& all = all_inputs();
    const auto it = std::find_if(all.begin(), all.end(), [&](Input i) { return input_name(i) == item; });
    if (it == all.end())
      throw common::UsageError("--input '" + item +
                               "' is not an input: write uniform, skewed or one (or a "
                               "comma-separated list of them).");
    if (std::find(chosen.begin(), chosen.end(), *it) == chosen.end()) chosen.push_back(*it);
  }
  if (chosen.empty()) throw common::UsageError("--input '" + text + "' names no input: write uniform, skewed or one.");
  return chosen;
}

Bins parse_bins(const std::string& text) {
  if (text == "256") return Bins::b256;
  if (text == "4096") return Bins::b4096;
  throw common::UsageError("--bins '" + text +
                           "' is not a histogram of the ladder: write 256 (bytes) or 4096 "
                           "(16-bit values, bin v >> 4).");
}

std::vector<unsigned char> make_values(Input input, Bins bins, std::uint64_t seed, std::size_t n) {
  const std::size_t width = value_bytes(bins);
  const double range = bins == Bins::b256 ? 256.0 : 65536.0;
  const unsigned one = bins == Bins::b256 ? 42u : 42u * 16u + 5u;
  std::vector<unsigned char> out(n * width);
  common::parallel_chunks(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t h = common::hash64(seed, i);
      unsigned v = one;
      if (input == Input::uniform) {
        v = static_cast<unsigned>(h >> 48);
      } else if (input == Input::skewed) {
        const double u = static_cast<double>(h >> 11) * 0x1p-53;
        const double u2 = u * u;
        const double u4 = u2 * u2;
        v = static_cast<unsigned>(std::min(range - 1.0, std::floor(range * u4 * u4)));
      }
      out[i * width] = static_cast<unsigned char>(v);
      if (width == 2) out[i * width + 1] = static_cast<unsigned char>(v >> 8);
    }
  });
  return out;
}

void count_values(const std::vector<unsigned char>& values, Bins bins, std::size_t begin, std::size_t end,
                  std::vector<unsigned>& hist) {
  std::mutex merge;
  common::parallel_chunks(end - begin, [&](std::size_t lo, std::size_t hi) {
    std::vector<unsigned> part(bin_count(bins), 0);
    if (bins == Bins::b256) {
      for (std::size_t i = begin + lo; i < begin + hi; ++i) ++part[values[i]];
    } else {
      for (std::size_t i = begin + lo; i < begin + hi; ++i) ++part[(values[2 * i] | values[2 * i + 1] << 8) >> 4];
    }
    const std::lock_guard<std::mutex> lock(merge);
    for (std::size_t b = 0; b < part.size(); ++b) hist[b] += part[b];
  });
}

std::string compare_counts(const std::vector<unsigned>& got, const std::vector<unsigned>& want) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " counts instead of " + std::to_string(want.size());
  std::size_t wrong = 0;
  std::size_t first = 0;
  for (std::size_t b = 0; b < got.size(); ++b)
    if (got[b] != want[b] && wrong++ == 0) first = b;
  if (wrong == 0) return "";
  return "bin " + std::to_string(first) + " holds " + std::to_string(got[first]) + " instead of " +
         std::to_string(want[first]) + (got[first] == kPoison ? " (the poison: never written)" : "") + "; " +
         std::to_string(wrong) + " of " + std::to_string(got.size()) + " bins wrong";
}

PreparedStage::PreparedStage(const Stage& stage, const void* in, std::size_t n, Bins bins, unsigned* hist,
                             const common::DeviceInfo& device, cudaStream_t stream)
    : stage_(&stage), plan_(stage.plan(n, bins, device)), scratch_(plan_.scratch_bytes) {
  if (plan_.zero_scratch_once && plan_.scratch_bytes > 0) {
    CUDA_CHECK(cudaMemsetAsync(scratch_.get(), 0, plan_.scratch_bytes, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  args_.in = in;
  args_.n = n;
  args_.bins = bins;
  args_.hist = hist;
  args_.scratch = scratch_.get();
  args_.scratch_bytes = plan_.scratch_bytes;
  args_.grid = plan_.grid;
  args_.stream = stream;
}

std::vector<unsigned> PreparedStage::checked_run() const {
  return common::poisoned_run(
      args_.hist, bin_count(args_.bins), kPoison, [this] { launch(); }, args_.stream);
}

}  // namespace histogram
