// gpuvp_conformance [name...]: runs the named workloads (default: all) on the PTX functional
// model, prints one line per workload and "N passed, N failed"; exit status 0 when all pass.
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "common/workloads.h"
#include "ptx_device.h"

int main(int argc, char** argv) {
  using namespace gpuvp;
  std::vector<const workloads::WorkloadInfo*> selected;
  for (int i = 1; i < argc; ++i) {
    const workloads::WorkloadInfo* info = workloads::find_workload(argv[i]);
    if (info == nullptr) {
      std::cerr << "unknown workload " << argv[i] << "; known:";
      for (const auto& known : workloads::all_workloads()) std::cerr << " " << known.name;
      std::cerr << "\n";
      return 2;
    }
    selected.push_back(info);
  }
  if (selected.empty()) {
    for (const auto& info : workloads::all_workloads()) selected.push_back(&info);
  }

  int passed = 0;
  int failed = 0;
  for (const workloads::WorkloadInfo* info : selected) {
    const std::string name(info->name);
    const auto start = std::chrono::steady_clock::now();
    bool ok = false;
    std::uint64_t instructions = 0;
    try {
      conformance::PtxDevice device(conformance::workload_ptx_path(name));
      ok = workloads::run_and_report(name, info->run, device, std::cout).passed;
      instructions = device.thread_instructions();
    } catch (const workloads::DeviceError& error) {
      std::cout << "FAIL " << name << ": " << error.what() << std::endl;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "     " << name << ": " << instructions << " thread instructions, " << seconds << " s" << std::endl;
    (ok ? passed : failed) += 1;
  }
  std::cout << passed << " passed, " << failed << " failed" << std::endl;
  return failed == 0 ? 0 : 1;
}
