#include <sstream>

#include "platform/sweep/sweep_runner.h"

namespace gpuvp::sweep {
namespace {

// Single-quoted for sh.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string slurm_script(const SweepSpec& spec, const std::string& gpuvp, const std::filesystem::path& spec_path,
                         const std::filesystem::path& out_dir) {
  const std::string out = std::filesystem::absolute(out_dir).lexically_normal().string();
  const std::string spec_file = std::filesystem::absolute(spec_path).lexically_normal().string();
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# gpuvp sweep '" << spec.name << "': " << spec.points.size() << " points, one per array task.\n"
    << "# Submit:   sbatch " << quoted(out + "/sweep.slurm") << "\n"
    << "# Then:     " << quoted(gpuvp) << " sweep --merge " << quoted(spec_file) << " -o " << quoted(out) << "\n"
    << "#   (or in one go: sbatch --dependency=afterany:<array job id> --wrap \"" << gpuvp << " sweep --merge "
    << spec_file << " -o " << out << "\")\n"
    << "# A task whose point already has a record does nothing, so resubmitting the array resumes the sweep.\n"
    << "#SBATCH --job-name=gpuvp-sweep-" << spec.name << "\n"
    << "#SBATCH --array=0-" << (spec.points.empty() ? 0 : spec.points.size() - 1) << "\n"
    << "#SBATCH --ntasks=1\n"
    << "#SBATCH --cpus-per-task=1\n"
    << "#SBATCH --output=" << out << "/slurm/%A_%a.out\n";
  if (spec.timeout_s > 0) {
    const long minutes = static_cast<long>(spec.timeout_s / 60) + 2;  // the point's own timeout ends it first
    s << "#SBATCH --time=" << minutes << "\n";
  }
  s << "set -euo pipefail\n"
    << ": \"${SLURM_ARRAY_TASK_ID:?run this script with sbatch (or set SLURM_ARRAY_TASK_ID)}\"\n"
    << "exec " << quoted(gpuvp) << " sweep " << quoted(spec_file) << " -o " << quoted(out)
    << " --point \"$SLURM_ARRAY_TASK_ID\" --quiet\n";
  return s.str();
}

}  // namespace gpuvp::sweep
