// A clock domain defined by its frequency. Edge n lies at floor(n * ticks_per_second / f)
// resolution ticks, computed exactly in 128-bit integers, so cycle times never drift, even
// after billions of cycles, when the period is not a whole number of ticks (1312 MHz at
// 1 ps: edges 762 or 763 ps apart, cycle 1e9 exactly at 762195121951 ps).
//
// The time resolution must be set (the platform sets 1 ps) before a domain is built; the
// domain reads it once. Pure arithmetic: no process, no event, no sc_module.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

namespace gpuvp {

// sc_core::sc_time_stamp() without its out-of-line library call: the memory system and the SMs
// read the time per request and per wake.
inline const sc_core::sc_time& current_time() { return sc_core::sc_get_curr_simcontext()->time_stamp(); }

class ClockDomain {
public:
    // Throws std::invalid_argument when frequency_hz is 0 or above the time resolution
    // (at most one edge per tick).
    ClockDomain(std::string name, std::uint64_t frequency_hz);

    const std::string& name() const noexcept { return name_; }
    std::uint64_t frequency_hz() const noexcept { return frequency_hz_; }
    // Nominal period rounded down to the resolution (the exact mean period is 1/f).
    sc_core::sc_time period() const;

    // Time of rising edge n (edge 0 at time zero).
    sc_core::sc_time time_of_cycle(std::uint64_t n) const;
    // The same in resolution ticks (time_of_cycle(n).value()), inline for the memory side's
    // per-request wake-ups: no sc_time built.
    std::uint64_t ticks_of_cycle(std::uint64_t n) const {
        return n <= max_fast_cycle_ ? n * ticks_per_second_ / frequency_hz_ : time_of_cycle(n).value();
    }
    // Nanoseconds of simulated time at rising edge n (what %globaltimer reads at an issue).
    std::uint64_t ns_of_cycle(std::uint64_t n) const {
        const std::uint64_t ticks = ticks_of_cycle(n);
        return ticks_per_second_ >= 1'000'000'000 ? ticks / (ticks_per_second_ / 1'000'000'000)
                                                  : ticks * (1'000'000'000 / ticks_per_second_);
    }
    // Index of the last edge at or before t.
    std::uint64_t cycle_at(const sc_core::sc_time& t) const;
    // Index / time of the first edge at or after t.
    std::uint64_t next_cycle(const sc_core::sc_time& t) const;
    sc_core::sc_time next_edge(const sc_core::sc_time& t) const;
    // Delay from t to the edge `cycles` edges after next_edge(t): what a module waits to
    // act `cycles` cycles from now on this clock (cycles = 0: align to the next edge).
    sc_core::sc_time delay_until(const sc_core::sc_time& t, std::uint64_t cycles) const;

private:
    std::string name_;
    std::uint64_t frequency_hz_;
    std::uint64_t ticks_per_second_;  // 1 / time resolution
    std::uint64_t max_fast_cycle_ = 0;  // n * ticks_per_second_ fits 64 bits up to here
};

}  // namespace gpuvp
