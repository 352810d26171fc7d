// main() of each access-pattern program; ACCESS_PROGRAM is set in access_patterns/CMakeLists.txt.
#include "programs.hpp"

#ifndef ACCESS_PROGRAM
#error "ACCESS_PROGRAM must name the program's spec function (for example stride_offset_program)"
#endif

int main(int argc, char** argv) {
  return access_patterns::run_access_program(argc, argv, access_patterns::ACCESS_PROGRAM());
}
