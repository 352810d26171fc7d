#include "registry.hpp"

int main(int argc, char** argv) { return histogram::histogram_main(argc, argv); }
