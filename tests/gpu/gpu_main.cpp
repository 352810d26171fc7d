// main() for GPU test binaries: exit 77 (ctest: Skipped) when there is no CUDA
// device, so a machine without a GPU never counts these tests as passed.
#define CATCH_CONFIG_RUNNER
#include <iostream>

#include "catch.hpp"
#include "device_info.hpp"

int main(int argc, char** argv) {
  if (common::cuda_device_count() == 0) {
    std::cerr << "No CUDA device: GPU tests skipped.\n";
    return common::kExitSkipTest;
  }
  return Catch::Session().run(argc, argv);
}
