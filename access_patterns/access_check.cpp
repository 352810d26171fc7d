#include "access_check.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "access_index.hpp"
#include "verify.hpp"

namespace access_patterns {

Verdict check_sums(const std::vector<float>& got, const std::vector<SumRef>& want, const std::string& what) {
  Verdict v;
  if (got.size() != want.size()) {
    v.detail = what + ": " + std::to_string(got.size()) + " values, expected " + std::to_string(want.size());
    return v;
  }
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const SumRef& w = want[i];
    const std::size_t terms = std::max<std::size_t>(w.terms, 1);
    // common::check_sum's bound, without building its message for each of millions of
    // sums; it runs (and explains) only for a value outside the bound.
    const double error = std::fabs(static_cast<double>(got[i]) - w.sum);
    const double bound = common::gamma_float(w.depth) * w.sum_abs + common::gamma_double(terms) * w.sum_abs;
    if (!(error <= bound) || common::is_poison(got[i]) || !std::isfinite(w.sum)) {
      const common::Check c = common::check_sum(got[i], common::Reference{w.sum, w.sum_abs}, w.depth, terms);
      if (!c.ok) {
        v.detail = what + "[" + std::to_string(i) + "]: " + c.detail;
        return v;
      }
    }
    if (w.sum != 0.0 && std::isfinite(w.sum)) worst = std::max(worst, error / std::fabs(w.sum));
  }
  v.ok = true;
  v.max_rel_error = worst;
  v.detail = std::to_string(got.size()) + " " + what + " within their error bounds";
  return v;
}

std::size_t distinct_sectors(const std::vector<std::uint64_t>& byte_addresses) {
  std::set<std::uint64_t> sectors;
  for (const auto a : byte_addresses) sectors.insert(a / kSectorBytes);
  return sectors.size();
}

unsigned bank_wavefronts(const std::vector<unsigned>& word_slots) {
  std::set<unsigned> words(word_slots.begin(), word_slots.end());
  unsigned per_bank[kBanks] = {};
  unsigned most = 0;
  for (const unsigned w : words) most = std::max(most, ++per_bank[w % kBanks]);
  return most;
}

}  // namespace access_patterns
