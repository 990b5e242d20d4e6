// A fresh SystemC simulation context for the lifetime of the object (as the platform server
// makes one per platform), so a measurement starts from time zero and cold models and its
// results do not depend on what ran before in the same process.
#pragma once

#include <systemc>

namespace gpuvp::cli {

class FreshSimContext {
 public:
  FreshSimContext() : context_(new sc_core::sc_simcontext()) {
    sc_core::sc_curr_simcontext = context_;
    sc_core::sc_default_global_context = context_;
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  }
  ~FreshSimContext() {
    delete context_;
    sc_core::sc_curr_simcontext = nullptr;
    sc_core::sc_default_global_context = nullptr;
  }
  FreshSimContext(const FreshSimContext&) = delete;
  FreshSimContext& operator=(const FreshSimContext&) = delete;

 private:
  sc_core::sc_simcontext* context_;
};

}  // namespace gpuvp::cli
