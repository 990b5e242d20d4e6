// A design-space sweep, as written in a YAML spec and expanded into points.
//
//   name: clocks                      # optional; default: the file's stem
//   base: v100                        # preset name or config file (relative to the spec)
//   set: {sim.kernel_model: timing}   # optional overrides of the base for every point
//   mode: execution                   # execution-driven; or replay: each program's path is a
//                                     # capture directory (gpuvp run --capture), replayed with
//                                     # gpuvp replay on each point's configuration
//   timeout: 10 min                   # per point; optional
//   knobs:                            # each entry one axis; axes combine as a Cartesian product
//     gpu.sm.clock: [500 MHz, 1312 MHz, 1800 MHz]
//     memory.l2.slice_size: {from: 48 KiB, to: 384 KiB, factor: 2}   # or step:, or count:
//     zip:                            # knobs that move together: one axis
//       memory.l2.clock: [500 MHz, 1312 MHz, 1800 MHz]
//   programs:
//     - {name: nbody, path: "${build}/sw/workloads/bin/workload_nbody", args: []}
//   metrics:
//     - gpu.cycles                                         # whole-run statistic
//     - {stat: kernels.time_ps, as: kernel_time}           # simulated time of every kernel
//     - {stat: gpu.sm[*].warp_instructions, kernel: nbody_accelerations}
//
// Every problem is reported with file:line:column before anything runs: unknown knobs (with a
// did-you-mean from the knob registry), values of the wrong unit or out of range, a combination
// the platform's rules reject, programs that do not exist, malformed metrics.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "platform/config/config.h"

namespace gpuvp::sweep {

// One problem in a spec: "spec.yaml:12:5: error: <message>".
class SpecError : public std::runtime_error {
 public:
  explicit SpecError(std::vector<std::string> messages);
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
};

struct KnobSetting {
  std::string knob;   // registry name
  std::string text;   // as passed to --set ("1312 MHz")
  double value = 0;   // canonical number (Hz, bytes, ...); 0 for choice/text knobs
};

struct Program {
  std::string name;
  std::string path;  // absolute: the program, or in replay mode its capture directory
  std::vector<std::string> args;
};

struct Metric {
  std::string column;  // result column name
  std::string stat;    // dotted statistic name
  std::string kernel;  // empty: the whole run; "*": summed over every kernel; else a kernel name
};

struct Point {
  size_t index = 0;                 // position in the sweep (program-major)
  std::string id;                   // stable hash of what defines the point
  size_t program = 0;               // index into SweepSpec::programs
  std::vector<KnobSetting> knobs;   // one per swept knob, in SweepSpec::knobs order
};

struct SweepSpec {
  std::string file;                    // the spec file as given
  std::string name;
  std::string base;                    // preset name or absolute config path
  std::vector<std::string> base_sets;  // "knob=value" applied to every point first
  double timeout_s = 0;                // 0: none
  bool replay = false;                 // mode: replay (points run gpuvp replay of a captured trace)
  std::vector<std::string> knobs;      // swept knob names, in axis order
  std::vector<std::vector<std::string>> axes;  // the knobs of each axis (several when zipped)
  std::vector<Program> programs;
  std::vector<Metric> metrics;
  std::vector<Point> points;

  // The --set overrides of one point (base_sets, then the swept knobs).
  std::vector<std::string> overrides(const Point& point) const;
};

// Values substituted into program paths and arguments as ${name}: "build" (the folder of the
// gpuvp executable), "spec_dir"; any other ${NAME} is read from the environment.
using Variables = std::map<std::string, std::string>;

// Reads, checks and expands a spec; throws SpecError listing every problem found.
SweepSpec load_spec(const std::filesystem::path& file, const config::ConfigLoader& loader,
                    const Variables& variables);
// The same from text, reported as `file_name` (tests).
SweepSpec load_spec_text(const std::string& text, const std::string& file_name, const std::filesystem::path& base_dir,
                         const config::ConfigLoader& loader, const Variables& variables);

}  // namespace gpuvp::sweep
