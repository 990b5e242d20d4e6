// WakeQueue and WakeDomain: the order wakes run in at one simulated time, which the memory side's
// determinism rests on (a trace replay repeats a run only if the memory side acts in the same
// order at each time, whatever else SystemC has scheduled then).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/memory/wake_queue.h"
#include "tests/support/testbench.h"

namespace gpuvp::memory {
namespace {

struct Entry {
  std::string what;
  uint64_t ps;
  uint64_t delta;
};

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

TEST(WakeDomain, SameTimeWakesRunInJoinOrderThenKeyOrderInOnePass) {
  testbench::Simulation sim;
  std::vector<Entry> log;
  WakeDomain domain("domain");
  WakeQueue* first_ptr = nullptr;
  WakeQueue* second_ptr = nullptr;
  auto note = [&](const std::string& what) { log.push_back({what, now_ps(), sc_core::sc_delta_count()}); };
  WakeQueue first("first", 2, [&](uint32_t key) {
    note("first" + std::to_string(key));
    if (key == 1 && now_ps() == 20000) second_ptr->at(0, now_ps());  // asked of another module, for now
  }, &domain);
  WakeQueue second("second", 2, [&](uint32_t key) { note("second" + std::to_string(key)); }, &domain);
  first_ptr = &first;
  second_ptr = &second;
  sim.run([&] {
    // Asked in the opposite order: the domain's order decides, not the order of the requests.
    second.at(1, 10000);
    second.at(0, 10000);
    first.at(0, 10000);
    first.at(1, 20000);
    sc_core::wait(sc_core::sc_time(30, sc_core::SC_NS));
    first_ptr->at(0, now_ps());  // from outside the domain's process, for now: the next delta
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_NS));
  });
  std::string seen;
  for (const auto& e : log) seen += e.what + "@" + std::to_string(e.ps) + " ";
  ASSERT_EQ(log.size(), 6u) << seen;
  const char* expected[] = {"first0", "second0", "second1", "first1", "second0", "first0"};
  const uint64_t times[] = {10000, 10000, 10000, 20000, 20000, 30000};
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].what, expected[i]) << i;
    EXPECT_EQ(log[i].ps, times[i]) << i;
  }
  // One pass per time: every wake of 10 ns in one delta, and at 20 ns the wake first1 asked of
  // the second queue ran in first1's pass; one asked from outside for now ran a delta later.
  EXPECT_EQ(log[0].delta, log[2].delta);
  EXPECT_EQ(log[3].delta, log[4].delta);
}

TEST(WakeDomain, AnEarlierWakeReplacesALaterOneAndALaterOneIsIgnored) {
  testbench::Simulation sim;
  std::vector<uint64_t> runs;
  WakeDomain domain("domain");
  WakeQueue queue("queue", 1, [&](uint32_t) { runs.push_back(now_ps()); }, &domain);
  sim.run([&] {
    queue.at(0, 50000);
    queue.at(0, 20000);  // earlier: replaces
    queue.at(0, 40000);  // later than the pending one: ignored
    EXPECT_EQ(queue.due(0), 20000u);
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_NS));
  });
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0], 20000u);
}

// Off SystemC (a partition's own time): no process runs the wakes; the owner takes them one by
// one, earliest first, then in join order and key order, as the SystemC domain does.
TEST(WakeDomain, OffSystemCTheOwnerRunsTheWakesInTheSameOrder) {
  testbench::Simulation sim;
  std::vector<std::string> log;
  WakeDomain domain(WakeDomain::kOffSystemC);
  WakeQueue first("first", 2, [&](uint32_t key) { log.push_back("first" + std::to_string(key)); }, &domain);
  WakeQueue second("second", 2, [&](uint32_t key) { log.push_back("second" + std::to_string(key)); }, &domain);
  EXPECT_EQ(domain.next_time(), WakeDomain::kNever);
  second.at(1, 5000);
  second.at(0, 3000);
  first.at(1, 3000);
  first.at(0, 9000);
  first.at(0, 4000);  // earlier: replaces 9000
  sim.run([] { sc_core::wait(sc_core::sc_time(20, sc_core::SC_NS)); });
  EXPECT_TRUE(log.empty()) << "a SystemC process ran a wake of an off-SystemC domain";
  std::vector<uint64_t> times;
  while (domain.next_time() != WakeDomain::kNever) {
    times.push_back(domain.next_time());
    domain.run_next();
  }
  EXPECT_EQ(log, (std::vector<std::string>{"first1", "second0", "first0", "second1"}));
  EXPECT_EQ(times, (std::vector<uint64_t>{3000, 3000, 4000, 5000}));
}

}  // namespace
}  // namespace gpuvp::memory
