// single_pass/single_pass.cuh from two source files, file B of 2: both files include the
// header and run every path of reduce (single_pass_two_files.hpp), each with its own copy
// of the kernels. A client program with two .cu files used to fail from its second file
// on the cluster path, because the cluster set-up was remembered for the first file's
// kernel copy only; the library now does it for the address it launches.
#include "single_pass_two_files.hpp"

const void* cluster_kernel_address_from_file_b() { return two_files::cluster_kernel_address(); }
const void* cluster_kernel_address_from_file_a();

TEST_CASE("single_pass from two source files: every path from file B", "[gpu][generic][two_files]") {
  // Informational: whether this build gave each file its own kernel copy (nvcc's default
  // for template kernels) is what makes the other file's runs a test of the set-up.
  WARN("file B's cluster_kernel<float> is at " << cluster_kernel_address_from_file_b() << ", file A's at "
                                               << cluster_kernel_address_from_file_a());
  two_files::run_from("file B");
}
