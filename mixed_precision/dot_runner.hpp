// The `mixed_precision` runner: verifies and times the registered dot-product
// variants and prints the table. Every per-variant executable is this runner with
// one variant preselected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "variant.hpp"

namespace mixed_precision {

// Empty when every variant accepts n; otherwise the sentence the runner prints.
std::string n_limit_error(std::uint64_t n, const std::vector<const Variant*>& variants);

// How the table shows a relative error or bound: two significant digits in
// scientific notation ("1.4e-03"), so no non-zero value reads as 0.0; "0" for an
// exact zero and "-" for NaN.
std::string relative_text(double v);
// How it shows a condition number: "4.0", or "3.2e+04" from 1000 on; "inf", "-".
std::string condition_text(double v);

// `preselected` is a --variants value used when the user gives none (nullptr: all).
// Exit codes: 0 every row verified or no-bound (timed, not verified: its error bound
// could not tell the result from 0), 1 a row failed its check or a CUDA error
// occurred, 2 bad usage (one sentence on stderr, no output file), 3 no CUDA device.
int mixed_precision_main(int argc, const char* const* argv, const char* program, const char* preselected);

}  // namespace mixed_precision
