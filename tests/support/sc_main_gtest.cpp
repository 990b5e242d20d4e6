// Entry point for GoogleTest binaries that link SystemC. libsystemc.so defines main(),
// which calls sc_main(); depending on link order that main or gtest_main's runs. Both end
// up running all tests.
#include <gtest/gtest.h>

#include <systemc>  // declares sc_main extern "C"

int sc_main(int argc, char* argv[]) {
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
