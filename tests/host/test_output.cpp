// Table, CSV and JSON output.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <cuda_runtime.h>

#include "catch.hpp"
#include "cli.hpp"
#include "output.hpp"
#include "test_files.hpp"

namespace {
std::vector<common::Record> two_rows() {
  return {
      {common::text_field("stage", "naive, \"global\""), common::number_field("us", 12.5),
       common::number_field("x", NAN)},
      {common::text_field("stage", "cub"), common::number_field("us", 3.25), common::number_field("x", 1.0)},
  };
}
}  // namespace

TEST_CASE("CSV has the metadata, a header and escaped cells", "[output]") {
  const std::string csv = common::to_csv({{"device", "Test GPU"}, {"n", "1024"}}, two_rows());
  CHECK(csv ==
        "# device: Test GPU\n# n: 1024\n"
        "stage,us,x\n"
        "\"naive, \"\"global\"\"\",12.5,\n"
        "cub,3.25,1\n");
}

TEST_CASE("CSV refuses records with different columns", "[output]") {
  auto rows = two_rows();
  rows[1].pop_back();
  CHECK_THROWS_AS(common::to_csv({}, rows), std::logic_error);
}

TEST_CASE("JSON has metadata and rows, NaN as null, strings escaped", "[output]") {
  const std::string json = common::to_json({{"device", "A \"B\""}}, two_rows());
  CHECK(json.find("\"device\": \"A \\\"B\\\"\"") != std::string::npos);
  CHECK(json.find("\"x\": null") != std::string::npos);
  CHECK(json.find("\"us\": 3.25") != std::string::npos);
  CHECK(json.find("\"stage\": \"naive, \\\"global\\\"\"") != std::string::npos);
}

TEST_CASE("the table prints a header and each row at once, in column order", "[output]") {
  std::ostringstream out;
  common::TablePrinter t(out, {{"stage", "stage", 8, 0, true}, {"us", "us", 6, 1, false}, {"x", "x", 4, 2, false}});
  t.header();
  t.row(two_rows()[0]);
  const std::string text = out.str();
  CHECK(text.find("stage        us    x") != std::string::npos);
  CHECK(text.find("12.5") != std::string::npos);
  CHECK(text.find("   -\n") != std::string::npos);  // NaN shows as "-"
}

TEST_CASE("numbers are formatted for reading", "[output]") {
  CHECK(common::TablePrinter::format_number(1234.567, 1) == "1234.6");
  CHECK(common::TablePrinter::format_number(2.5e-7, 1) == "2.5e-07");
  CHECK(common::TablePrinter::format_number(NAN, 1) == "-");
}

TEST_CASE("files are written whole or not at all", "[output]") {
  test_support::ScratchDir dir;
  const std::string path = dir.file("reduction_output_test.csv");
  common::write_file_atomically(path, "a,b\n1,2\n");
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == "a,b\n1,2\n");
  CHECK_THROWS(common::write_file_atomically("/nonexistent/dir/x.csv", "x"));
}

TEST_CASE("a name up to the file system's limit is written; a longer one is refused by name", "[output]") {
  test_support::ScratchDir dir;
  for (const std::size_t length : {246, 250, 255}) {
    const std::string path = dir.file(std::string(length, 'n'));
    CHECK(common::output_path_problem(path, "--csv").empty());
    common::write_file_atomically(path, "a\n");
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK(ss.str() == "a\n");
  }
  const std::string problem = common::output_path_problem(dir.file(std::string(256, 'n')), "--csv");
  CHECK(problem.find("its name is 256 bytes long") != std::string::npos);
}

TEST_CASE("theoretical bandwidth is 2 x clock x bus bytes", "[output]") {
  // The H200's attributes: 3201 MHz, 6016-bit bus -> 4814 GB/s (ANCHORS.md).
  CHECK(common::DeviceInfo::theoretical_bandwidth_gbs(3201000, 6016) == Approx(4814.3).epsilon(1e-4));
}

TEST_CASE("only \"no device\" and \"no driver at all\" mean no GPU; other start errors are errors", "[output]") {
  CHECK(common::means_no_device(cudaErrorNoDevice, 12080));
  CHECK(common::means_no_device(cudaErrorNoDevice, 0));
  // No driver library: the runtime says "insufficient driver" and the driver version is 0.
  CHECK(common::means_no_device(cudaErrorInsufficientDriver, 0));
  // A driver that is there but too old for the runtime is a machine with a problem.
  CHECK_FALSE(common::means_no_device(cudaErrorInsufficientDriver, 11040));
  CHECK_FALSE(common::means_no_device(cudaErrorStubLibrary, 0));
  CHECK_FALSE(common::means_no_device(cudaErrorInitializationError, 13000));
}
