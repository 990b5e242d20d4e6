// SystemC alone, no gpuvp code: a process that waits on `a | b` when its simulation context is
// deleted (as the platform's bridge service thread does whenever a platform ends). SystemC 2.3.4
// never frees that wait's event list; LeakSanitizer reports it from sc_event_expr's constructor.
// The sanitizer tree runs this to show the leak is the library's (gpuvp's binaries suppress
// exactly that allocation); once a SystemC release frees the list, the test fails and the
// suppression in platform/cli/main.cpp can go.
#include <systemc>

namespace {

struct Waiter : sc_core::sc_module {
  sc_core::sc_event a, b;
  explicit Waiter(sc_core::sc_module_name name) : sc_module(name) {
    sc_core::sc_spawn([this] {
      for (;;) sc_core::wait(a | b);
    });
  }
};

}  // namespace

int sc_main(int, char**) {
  auto* context = new sc_core::sc_simcontext();
  sc_core::sc_curr_simcontext = context;
  sc_core::sc_default_global_context = context;
  {
    Waiter waiter("waiter");
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_NS));
  }
  delete context;
  sc_core::sc_curr_simcontext = nullptr;
  sc_core::sc_default_global_context = nullptr;
  return 0;
}
