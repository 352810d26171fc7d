// Reference sums and the tolerance model every result is checked against.
//
// Tolerance model. Summing floats x_1..x_n in any order in which no element passes
// through more than d float additions gives a result s' with
//     |s' - s| <= gamma(d) * sum |x_i|,   gamma(d) = d u / (1 - d u),   u = 2^-24
// (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., section 4.2).
// The depth d is a property of the summation order, so each stage states it:
//   - a tree over n values:                     d = ceil(log2 n)
//   - each of T threads first adds k values:    d = k + ceil(log2 T)
//   - one running sum over n values (one thread,
//     or n atomics into one address):           d = n
// A compensated sum (stage 17) is held to a tighter bound that no plain order meets on
// inputs that cancel: u |sum x| for its one final rounding plus a second-order term,
//     |s' - s| <= u (sum_units |sum x| + abs_units sum |x_i|)      (ErrorBound below).
// The double-precision reference is itself a compensated (Neumaier) sum of the same
// float inputs, so its own error, which the tolerance also includes, is at most
// 2 u_d |sum| + 4 (m u_d)^2 sum |x_i| (u_d = 2^-53, m the longest run it adds in order).
// A NaN reference requires a NaN result; an infinite reference requires the same
// infinity. When d u >= 1 the bound is infinite and says nothing: the result is
// then reported as unbounded (not ok, and not a failure of the stage's code):
// a one-thread float sum of 2^28 values is not a result anyone can vouch for.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace common {

struct Reference {
  double sum = 0.0;
  double sum_abs = 0.0;  // sum of |x_i|, the scale of every error bound
};

// Sum in double, in fixed chunks whose order does not depend on the thread count.
Reference reference_sum(const std::vector<float>& x);

// Depths of the common summation orders (see above).
std::size_t tree_depth(std::size_t n);
std::size_t blocked_depth(std::size_t n, std::size_t threads);
std::size_t sequential_depth(std::size_t n);

// gamma(d) for float (u = 2^-24) and double (u = 2^-53).
double gamma_float(std::size_t depth);
double gamma_double(std::size_t depth);

struct Check {
  bool ok = false;
  double abs_error = 0.0;
  double rel_error = 0.0;  // |result - sum| / |sum|; NaN when sum is 0 or not finite
  double tolerance = 0.0;  // allowed |result - sum|
  bool unbounded = false;  // no finite error bound at this depth (not ok, shown as "no-bound")
  std::string detail;      // why it failed, empty when ok

  // Not a failure: verified, or a row no bound can judge (timed and shown, not failed).
  bool acceptable() const { return ok || unbounded; }
  // The check column's word.
  const char* verdict() const { return ok ? "ok" : (unbounded ? "no-bound" : "FAIL"); }
};

// How far a result may be from the exact sum: gamma(depth) sum|x| for a plain order, or,
// when sum_units > 0, the compensated form u (sum_units |sum x| + abs_units sum|x|).
struct ErrorBound {
  std::size_t depth = 0;
  double sum_units = 0.0;
  double abs_units = 0.0;
};

// The compensated bound for a sum whose s part (the plain float sum it carries) has depth
// d_s and whose compensation term c has depth 2 d_s (chapters/17_compensated.md derives it).
ErrorBound compensated_bound(double d_s);

Check check_sum(float result, const Reference& ref, std::size_t depth, std::size_t n);
Check check_sum(float result, const Reference& ref, const ErrorBound& bound, std::size_t n);

// A float bit pattern no correct sum of our inputs produces by chance; written into
// the output before every checked run so an unwritten result can never pass.
float poison_value();
bool is_poison(float value);

}  // namespace common
