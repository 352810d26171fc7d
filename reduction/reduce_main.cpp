// `reduce`: every stage and baseline, verified and timed, as one table.
#include "runner.hpp"

int main(int argc, char** argv) { return reduction::reduce_main(argc, argv, "reduce", nullptr); }
