// A model that simulates in time of its own, behind SystemC time, so that a pool thread can run
// it beside the SMs' windows (platform/parallel/README.md, "Memory partitions"). Messages cross
// to and from it only at exchange(), each with its time stamp: what SystemC sends it at time t is
// simulated by a later advance() past t, and what it sends back is due at least its lookahead
// after the time that produced it, so it is handed back before SystemC time gets there.
//
// Who drives it: on its own (a SystemC process runs it just behind SystemC time) until attach();
// then the caller (SmStepper) runs exchange() and advance() at its phases, and detach() gives it
// back. Who runs advance() never changes what it computes: that depends only on the stamped
// messages it received.
#pragma once

#include <cstdint>

namespace gpuvp::parallel {

class TimePartition {
 public:
  virtual ~TimePartition() = default;
  // The SystemC thread, with no advance() running: hands over what SystemC sent since the last
  // exchange and takes back what the partition produced.
  virtual void exchange() = 0;
  // Any one thread, no SystemC calls: simulates everything stamped before `until_ps`.
  virtual void advance(uint64_t until_ps) = 0;
  // The SystemC thread: the caller drives the partition from now on / no longer (then its own
  // process catches up at once).
  virtual void attach() = 0;
  virtual void detach() = 0;
  // The SystemC thread, with no advance() running: simulates everything before now and hands it
  // back (before statistics are read).
  virtual void catch_up() = 0;
};

}  // namespace gpuvp::parallel
