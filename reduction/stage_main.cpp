// A per-stage executable (build/reduction/NN_name): the `reduce` runner with this
// stage preselected. REDUCTION_STAGE is set by add_stage() in reduction/CMakeLists.txt.
#include "runner.hpp"

#ifndef REDUCTION_STAGE
#error "REDUCTION_STAGE must name the stage (for example \"05\")"
#endif

int main(int argc, char** argv) { return reduction::reduce_main(argc, argv, REDUCTION_PROGRAM, REDUCTION_STAGE); }
