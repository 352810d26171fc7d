// `mixed_precision`: every dot-product variant, verified and timed, as one table.
#include "dot_runner.hpp"

int main(int argc, char** argv) {
  return mixed_precision::mixed_precision_main(argc, argv, "mixed_precision", nullptr);
}
