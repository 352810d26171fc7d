#include "report.hpp"

#include <cmath>

#include "cli.hpp"
#include "measure.hpp"

namespace multi_gpu {

std::vector<common::Column> table_columns() {
  return {
      {"gpus", "GPUs", 4, 0, false},
      {"n_text", "n/GPU", 7, 0, false},
      {"key", "method", 22, 0, true},
      {"reps", "reps", 5, 0, false},
      {"median_us", "median-us", 10, 1, false},
      {"gbs", "GB/s", 7, 0, false},
      {"gbs_per_gpu", "GB/s/GPU", 8, 0, false},
      {"pct_peak", "%peak", 6, 1, false},
      {"efficiency", "eff", 5, 2, false},
      {"rel_error", "rel-error", 9, 1, false},
      {"check", "check", 5, 0, false},
  };
}

common::Record make_record(const RowFacts& row) {
  using common::number_field;
  using common::text_field;
  const Outcome& o = *row.outcome;
  const common::Timing* timing = row.timed != nullptr ? &row.timed->timing : nullptr;
  const double us = timing != nullptr ? timing->us.median : NAN;
  const double total_values = static_cast<double>(row.gpus) * static_cast<double>(row.n);
  const bool streams = !method_latency_only(row.method);
  const double gbs = streams ? common::gb_per_s(total_values * sizeof(float), us) : NAN;
  const double efficiency = streams ? common::ratio(row.one_gpu_us, us) : NAN;
  common::Record rec = {
      number_field("n", static_cast<double>(row.n)),  number_field("gpus", row.gpus),
      number_field("n_total", total_values),          text_field("key", method_id(row.method)),
      text_field("method", method_title(row.method)),
  };
  common::append(rec, common::timing_fields(timing));
  common::append(rec, {
                          number_field("gbs", gbs),
                          number_field("gbs_per_gpu", gbs / row.gpus),
                          number_field("pct_peak", 100.0 * gbs / row.gpus / row.peak_gbs),
                          number_field("efficiency", efficiency),
                          number_field("result", o.results.empty() ? NAN : static_cast<double>(o.results.front())),
                          number_field("reference", row.reference.sum),
                          number_field("abs_error", o.check.abs_error),
                          number_field("rel_error", o.check.rel_error),
                          number_field("tolerance", o.check.tolerance),
                          number_field("error_depth", static_cast<double>(o.bound.depth)),
                          text_field("check", o.check.verdict()),
                          text_field("deterministic", method_deterministic(row.method) ? "yes" : "no"),
                          text_field("same_bits_on_gpus", o.results.size() > 1 ? (o.same_bits ? "yes" : "no") : "-"),
                          text_field("copy_path", row.method == Method::copy_to_one ? row.copy_path : "-"),
                          text_field("start", timing == nullptr ? "-" : row.start),
                      });
  return rec;
}

common::Record table_record(const common::Record& record, std::uint64_t n) {
  common::Record rec = record;
  rec.insert(rec.begin(), common::text_field("n_text", common::format_count(n)));
  return rec;
}

std::string failure_line(const RowFacts& row) {
  const common::Check& c = row.outcome->check;
  if (c.ok) return "";
  return std::string("  ") + method_id(row.method) + (c.unbounded ? " is not verified: " : " failed its check: ") +
         c.detail;
}

}  // namespace multi_gpu
