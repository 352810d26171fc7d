// build/scan/scan: the scan ladder's runner (scan/runner.cu).
#include "runner.hpp"

int main(int argc, char** argv) { return scan::scan_main(argc, argv); }
