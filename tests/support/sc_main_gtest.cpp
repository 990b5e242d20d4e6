// Entry point for GoogleTest binaries that link SystemC. libsystemc.so defines main(),
// which calls sc_main(); depending on link order that main or gtest_main's runs. Both end
// up running all tests.
#include <gtest/gtest.h>

#include <systemc>  // declares sc_main extern "C"

int sc_main(int argc, char* argv[]) {
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

// Sanitizer builds (GPUVP_SANITIZE): LeakSanitizer cannot scan SystemC's coroutine stacks
// (the stack switches of SystemC 2.3.4 as packaged by Debian are not annotated for the
// sanitizers) and crashes at exit now and then; leak checking is off in SystemC tests.
// AddressSanitizer and UBSan stay on. Ignored in normal builds.
extern "C" const char* __lsan_default_options();
extern "C" const char* __lsan_default_options() { return "detect_leaks=0"; }
