#include "stats.hpp"

#include <algorithm>
#include <stdexcept>

namespace common {

Stats summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  std::sort(samples.begin(), samples.end());
  Stats s;
  s.count = static_cast<int>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  const std::size_t mid = samples.size() / 2;
  s.median = samples.size() % 2 == 1 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
  return s;
}

}  // namespace common
