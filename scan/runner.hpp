// The scan runner (build/scan/scan): parses the command line, verifies and times the
// selected stages with CUB and the copy bound beside them, prints the table and writes
// the CSV. scan_main(argc, argv) is main(); the tests call it too.
#pragma once

namespace scan {

int scan_main(int argc, const char* const* argv);

}  // namespace scan
