#include "sweep.hpp"

#include <cmath>
#include <sstream>

#include "verify.hpp"

namespace occupancy {

std::size_t sweep_error_depth(std::size_t n, std::size_t grid, std::size_t block, std::size_t final_block) {
  // Each thread adds its grid-stride share in order, the block combines its threads in a
  // tree, and the second launch does the same over the partials.
  return common::blocked_depth(n, grid * block) + common::blocked_depth(grid, final_block);
}

namespace {

std::string describe(const SweepPoint& p) {
  std::ostringstream o;
  o << "block " << p.block << " x " << p.per_sm << "/SM (" << std::lround(100.0 * p.occupancy) << "% occupancy, "
    << std::fixed;
  o.precision(1);
  o << p.median_us << " us)";
  return o.str();
}

}  // namespace

SweepVerdict judge_sweep(const std::vector<SweepPoint>& points) {
  SweepVerdict v;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& p = points[i];
    if (!p.ok) continue;
    if (!v.any || p.median_us < points[v.fastest].median_us) v.fastest = i;
    if (!v.any || p.occupancy > v.max_occupancy) v.max_occupancy = p.occupancy;
    v.any = true;
  }
  if (!v.any) {
    v.text = "No configuration was verified, so there is no verdict.";
    return v;
  }
  // Occupancies are ratios of small integers; compare them with a little slack.
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].ok || std::fabs(points[i].occupancy - v.max_occupancy) > 1e-9) continue;
    if (v.max_occupancy_rows.empty() || points[i].median_us < points[v.fastest_at_max].median_us) v.fastest_at_max = i;
    v.max_occupancy_rows.push_back(i);
  }
  v.agree = false;
  for (std::size_t i : v.max_occupancy_rows) v.agree = v.agree || i == v.fastest;
  v.slowdown = points[v.fastest_at_max].median_us / points[v.fastest].median_us;

  std::ostringstream o;
  o << "Fastest: " << describe(points[v.fastest]) << ". Highest occupancy: " << std::lround(100.0 * v.max_occupancy)
    << "% (" << v.max_occupancy_rows.size() << " configuration" << (v.max_occupancy_rows.size() == 1 ? "" : "s")
    << "). ";
  if (v.agree) {
    o << "They agree: the fastest configuration is one of the highest-occupancy ones.";
  } else {
    o.precision(2);
    o << "They do not agree: the fastest of the highest-occupancy configurations, "
      << describe(points[v.fastest_at_max]) << ", takes " << std::fixed << v.slowdown << "x the fastest one's time.";
  }
  v.text = o.str();
  return v;
}

}  // namespace occupancy
