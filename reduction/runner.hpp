// The `reduce` runner: verifies and times the registered stages and prints the table.
// Every per-stage executable is this runner with one stage preselected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace reduction {

// `preselected` is a --stages value used when the user gives none (nullptr: all).
int reduce_main(int argc, const char* const* argv, const char* program, const char* preselected);

}  // namespace reduction
