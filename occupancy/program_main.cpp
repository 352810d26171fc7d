// main() of each occupancy program; OCCUPANCY_ENTRY is set in occupancy/CMakeLists.txt.
#include "programs.hpp"

#ifndef OCCUPANCY_ENTRY
#error "OCCUPANCY_ENTRY must name the program's entry point (for example thread_hierarchy_main)"
#endif

int main(int argc, char** argv) { return occupancy::OCCUPANCY_ENTRY(argc, argv); }
