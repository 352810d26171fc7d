// A per-variant executable (build/mixed_precision/NN_name): the `mixed_precision`
// runner with this variant preselected. MP_VARIANT is set by add_variant() in
// mixed_precision/CMakeLists.txt.
#include "dot_runner.hpp"

#ifndef MP_VARIANT
#error "MP_VARIANT must name the variant (for example \"03\")"
#endif

int main(int argc, char** argv) { return mixed_precision::mixed_precision_main(argc, argv, MP_PROGRAM, MP_VARIANT); }
