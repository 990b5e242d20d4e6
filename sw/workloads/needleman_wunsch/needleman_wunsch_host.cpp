#include <algorithm>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_needleman_wunsch(Device& device) {
  constexpr int kLength = 512;  // both sequences; a multiple of the 32-wide tile
  constexpr int kTile = 32;
  constexpr int kTiles = kLength / kTile;
  constexpr int kPenalty = 10;
  constexpr int kStride = kLength + 1;

  // Random sequences over a 24-letter alphabet and a symmetric substitution table in [-4, 11].
  Rng rng(0x5eed000a);
  std::vector<int> seq_a(kLength), seq_b(kLength), table(24 * 24);
  for (int& c : seq_a) c = rng.uniform_int(0, 23);
  for (int& c : seq_b) c = rng.uniform_int(0, 23);
  for (int i = 0; i < 24; ++i) {
    for (int j = 0; j <= i; ++j) table[i * 24 + j] = table[j * 24 + i] = (i == j) ? rng.uniform_int(4, 11) : rng.uniform_int(-4, 2);
  }
  std::vector<int> similarity(kLength * kLength);
  for (int i = 0; i < kLength; ++i) {
    for (int j = 0; j < kLength; ++j) similarity[i * kLength + j] = table[seq_a[i] * 24 + seq_b[j]];
  }
  std::vector<int> score(kStride * kStride, 0);
  for (int i = 0; i <= kLength; ++i) score[i * kStride] = score[i] = -kPenalty * i;

  DeviceBuffer<int> d_score(device, score), d_similarity(device, similarity);
  for (int wave = 0; wave < 2 * kTiles - 1; ++wave) {
    const int first = std::max(0, wave - (kTiles - 1));
    const int last = std::min(wave, kTiles - 1);
    device.launch("nw_tile_wave", static_cast<std::uint32_t>(last - first + 1), kTile, 0,
                  KernelArgs().ptr(d_score.ptr()).ptr(d_similarity.ptr()).i32(kLength).i32(kPenalty).i32(wave).i32(first));
  }
  device.synchronize();

  for (int i = 1; i <= kLength; ++i) {
    for (int j = 1; j <= kLength; ++j) {
      const int match = score[(i - 1) * kStride + j - 1] + similarity[(i - 1) * kLength + j - 1];
      const int gap = std::max(score[(i - 1) * kStride + j], score[i * kStride + j - 1]) - kPenalty;
      score[i * kStride + j] = std::max(match, gap);
    }
  }

  Check check;
  check.exact("score", d_score.download(), score);
  return check.result("512x512 alignment, 32x32 tiles in 31 waves");
}

}  // namespace gpuvp::workloads
