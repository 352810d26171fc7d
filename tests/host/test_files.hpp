// Files for host tests: the repository's, found from the source directory the build was
// configured with (a compile definition), so the tests pass from any working
// directory; and a scratch directory of their own for the files they write.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef REDUCTION_TEST_SOURCE_DIR
#error "REDUCTION_TEST_SOURCE_DIR must name the repository (tests/CMakeLists.txt sets it)"
#endif

namespace test_support {

// `relative` (a path such as "reduction/05_sequential_addressing.cu") in the repository.
inline std::string repo_path(const std::string& relative) {
  return std::string(REDUCTION_TEST_SOURCE_DIR) + "/" + relative;
}

// A new empty directory under the system's temporary directory, removed with
// everything in it when the object goes.
class ScratchDir {
 public:
  ScratchDir() {
    const std::string pattern = (std::filesystem::temp_directory_path() / "reduction_test.XXXXXX").string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (mkdtemp(name.data()) == nullptr) throw std::runtime_error("cannot create a scratch directory");
    path_ = name.data();
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace test_support
