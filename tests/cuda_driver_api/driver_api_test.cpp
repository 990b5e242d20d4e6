// End to end: driver-API and NVRTC programs (tests/cuda_driver_api/programs) under `gpuvp run`
// with gpuvp's libcuda.so.1, each checking its results against the CPU. Every run is bounded in
// time (process.h).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace gpuvp::test {
namespace {

using std::chrono::seconds;

const std::string kGpuvp = GPUVP_BINARY;
const std::string kPrograms = GPUVP_DRIVER_PROGRAM_DIR;
const std::string kLibraryDir = GPUVP_LIBRARY_DIR;

ProcessResult gpuvp_run(const std::vector<std::string>& program) {
  std::vector<std::string> argv = {kGpuvp, "run", "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  return run(argv, seconds(300));
}

std::string describe(const ProcessResult& r) {
  std::ostringstream text;
  text << "exit " << r.exit_code << (r.timed_out ? " (timed out)" : "") << "\n--- stdout\n" << r.out
       << "--- stderr\n" << r.err;
  return text.str();
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(DriverApi, PtxAndFatbinModulesLaunchOnTheTimingModel) {
  const ProcessResult r =
      gpuvp_run({kPrograms + "/driver_api", "run", kPrograms + "/kernels.ptx", kPrograms + "/kernels.fatbin"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS run"), std::string::npos) << describe(r);
  // saxpy twice from the PTX module; affine (packed parameters) and saxpy from the fatbin; saxpy
  // through cuGetProcAddress's per-thread-stream cuLaunchKernel.
  EXPECT_NE(r.err.find("5 kernel launch(es)"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("timing model"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("not supported"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("no program connected"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("does not link"), std::string::npos) << describe(r);
}

TEST(DriverApi, BadInputsGetTheDocumentedErrorsAndTheDeviceKeepsServing) {
  const ProcessResult r = gpuvp_run({kPrograms + "/driver_api", "bad", kPrograms + "/kernels.ptx"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS bad"), std::string::npos) << describe(r);
  // The malformed PTX's message names its line; the unimplemented call names itself once.
  EXPECT_NE(r.err.find("rejected the program's PTX: module1.ptx:5:3: unsupported instruction 'frobnicate.u32'"),
            std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("cannot load the module: the image is a cubin"), std::string::npos) << describe(r);
  EXPECT_EQ(occurrences(r.err, "cuArrayDestroy is not supported by gpuvp's libcuda.so.1"), 1u) << describe(r);
  EXPECT_NE(r.err.find("1 kernel launch(es)"), std::string::npos) << describe(r);
}

TEST(DriverApi, EveryDeviceAttributeAnswersFromThePreset) {
  const ProcessResult r = gpuvp_run({kPrograms + "/driver_api", "attributes"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS attributes"), std::string::npos) << describe(r);
  EXPECT_GT(occurrences(r.out, "attribute CU_DEVICE_ATTRIBUTE_"), 140u) << describe(r);
  EXPECT_EQ(r.out.find(" error "), std::string::npos) << describe(r);
  // configs/v100.yaml, answered by the same table as cudaDeviceGetAttribute.
  for (const char* line : {"CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 84\n", "CU_DEVICE_ATTRIBUTE_CLOCK_RATE 1312000\n",
                           "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 7\n",
                           "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 0\n",
                           "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR 98304\n",
                           "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE 0\n", "CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING 1\n",
                           "CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED 0\n"}) {
    EXPECT_NE(r.out.find(std::string("attribute ") + line), std::string::npos) << line << describe(r);
  }
}

TEST(DriverApi, NvrtcCompiledKernelRuns) {
  if (!GPUVP_NVRTC_AVAILABLE) GTEST_SKIP() << "the toolkit has no libnvrtc.so";
  const ProcessResult r = gpuvp_run({kPrograms + "/nvrtc_program"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS nvrtc"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("1 kernel launch(es)"), std::string::npos) << describe(r);
}

// nvcc's default static runtime loads gpuvp's libcuda.so.1 (when started through a wrapper:
// gpuvp run refuses it up front), gets through cuGetProcAddress, cuInit and the private tables
// gpuvp provides, and stops at the driver integrity check it cannot be given: every runtime call
// then fails, before any kernel. Should a toolkit change that, this test says so.
TEST(DriverApi, StaticRuntimeStopsAtTheDriverIntegrityCheck) {
  const ProcessResult refused = gpuvp_run({kPrograms + "/static_runtime"});
  EXPECT_EQ(refused.exit_code, 1) << describe(refused);
  EXPECT_NE(refused.err.find("private integrity check"), std::string::npos) << describe(refused);
  const ProcessResult r = gpuvp_run({"env", kPrograms + "/static_runtime"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("cudaMalloc: cudaErrorSymbolNotFound"), std::string::npos) << describe(r);
  EXPECT_EQ(occurrences(r.err, "cuGetExportTable(d4082055-bde6-704b-8d34-ba123c66e1f2), an integrity check"), 1u)
      << describe(r);
  EXPECT_NE(r.err.find("0 kernel launch(es)"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("static_runtime is linked with the static CUDA runtime"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("not supported by gpuvp's libcuda.so.1"), std::string::npos) << describe(r);
}

TEST(DriverApi, WithoutAPlatformCuInitIsNoDevice) {
  const ProcessResult r = run({kPrograms + "/driver_api", "attributes"}, seconds(60),
                              {{"LD_LIBRARY_PATH", kLibraryDir}, {"GPUVP_SOCKET", ""}});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("cuInit(0) returned CUDA_ERROR_NO_DEVICE"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("GPUVP_SOCKET is not set"), std::string::npos) << describe(r);
}

}  // namespace
}  // namespace gpuvp::test
