// Order statistics of repeated timings.
#pragma once

#include <vector>

namespace common {

struct Stats {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  int count = 0;
};

// Median of an even count is the mean of the two middle values. Throws on an empty sample.
Stats summarize(std::vector<double> samples);

}  // namespace common
