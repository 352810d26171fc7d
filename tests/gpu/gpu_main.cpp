// main() for GPU test binaries: exit 77 (ctest: Skipped) only when there is no CUDA
// device, so a machine without a GPU never counts these tests as passed. Any other
// CUDA failure at start (a driver too old for the runtime, say) fails the binary with
// CUDA's own message: such a machine has a GPU that the tests could not check.
#define CATCH_CONFIG_RUNNER
#include <exception>
#include <iostream>

#include "catch.hpp"
#include "device_info.hpp"

int main(int argc, char** argv) {
  int devices = 0;
  try {
    devices = common::cuda_device_count();
  } catch (const std::exception& e) {
    std::cerr << "GPU tests cannot run: " << e.what() << "\n";
    return 1;
  }
  if (devices == 0) {
    std::cerr << "No CUDA device: GPU tests skipped.\n";
    return common::kExitSkipTest;
  }
  return Catch::Session().run(argc, argv);
}
