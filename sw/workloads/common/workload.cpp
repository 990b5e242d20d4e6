#include "common/workload.h"

#include <exception>
#include <ostream>

namespace gpuvp::workloads {

WorkloadResult run_and_report(const std::string& name, WorkloadFunction run, Device& device,
                              std::ostream& out) {
  WorkloadResult result;
  try {
    result = run(device);
  } catch (const DeviceError& error) {
    result = {false, std::string("device error: ") + error.what()};
  } catch (const std::exception& error) {
    result = {false, std::string("error: ") + error.what()};
  }
  out << (result.passed ? "PASS " : "FAIL ") << name << ": " << result.summary << std::endl;
  return result;
}

}  // namespace gpuvp::workloads
