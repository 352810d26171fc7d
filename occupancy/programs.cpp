#include "programs.hpp"

#include <exception>
#include <iostream>

#include "cli.hpp"
#include "device_info.hpp"

namespace occupancy {

int run_program(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const common::UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return common::kExitUsage;
  } catch (const common::NoDeviceError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return common::kExitNoDevice;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace occupancy
