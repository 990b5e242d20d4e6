#include <cmath>
#include <vector>

#include "common/check.h"
#include "common/reduction_order.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_backprop(Device& device) {
  constexpr int kInputs = 4096;
  constexpr int kHidden = 16;
  constexpr int kTile = 16;
  constexpr int kChunks = kInputs / kTile;
  const float eta = 0.3f;
  const float momentum = 0.3f;

  Rng rng(0x5eed000f);
  std::vector<float> input(kInputs), weights(kInputs * kHidden), previous(kInputs * kHidden), delta(kHidden);
  for (float& v : input) v = rng.uniform_float(0.0f, 1.0f);
  for (float& v : weights) v = rng.uniform_float(-0.05f, 0.05f);
  for (float& v : previous) v = rng.uniform_float(-0.01f, 0.01f);
  for (float& v : delta) v = rng.uniform_float(-0.5f, 0.5f);

  DeviceBuffer<float> d_input(device, input), d_weights(device, weights), d_previous(device, previous),
      d_delta(device, delta), d_partial(device, kChunks * kHidden), d_sums(device, kHidden), d_outputs(device, kHidden);
  device.launch("bp_layer_partial", kChunks, Dim3(kTile, kTile), 0,
                KernelArgs().ptr(d_input.ptr()).ptr(d_weights.ptr()).ptr(d_partial.ptr()).i32(kHidden));
  device.synchronize();
  // The host folds the per-CTA partials in CTA order, then the device applies the sigmoid.
  const std::vector<float> partial = d_partial.download();
  std::vector<float> sums(kHidden, 0.0f);
  for (int b = 0; b < kChunks; ++b) {
    for (int h = 0; h < kHidden; ++h) sums[h] += partial[b * kHidden + h];
  }
  d_sums.upload(sums);
  device.launch("bp_activate", 1, 32, 0, KernelArgs().ptr(d_sums.ptr()).ptr(d_outputs.ptr()).i32(kHidden));
  device.launch("bp_adjust_weights", kChunks, Dim3(kTile, kTile), 0,
                KernelArgs().ptr(d_delta.ptr()).ptr(d_input.ptr()).ptr(d_weights.ptr()).ptr(d_previous.ptr())
                    .i32(kHidden).f32(eta).f32(momentum));
  device.synchronize();

  std::vector<float> want_partial(kChunks * kHidden), want_sums(kHidden, 0.0f), want_outputs(kHidden);
  for (int b = 0; b < kChunks; ++b) {
    for (int h = 0; h < kHidden; ++h) {
      std::vector<float> products(kTile);
      for (int t = 0; t < kTile; ++t) products[t] = weights[(b * kTile + t) * kHidden + h] * input[b * kTile + t];
      want_partial[b * kHidden + h] = tree_reduce(products, [](float p, float q) { return p + q; });
      want_sums[h] += want_partial[b * kHidden + h];
    }
  }
  for (int h = 0; h < kHidden; ++h) want_outputs[h] = 1.0f / (1.0f + std::exp(-want_sums[h]));
  std::vector<float> want_weights = weights, want_previous = previous;
  for (int r = 0; r < kInputs; ++r) {
    for (int h = 0; h < kHidden; ++h) {
      const int i = r * kHidden + h;
      const float change = (eta * delta[h]) * input[r] + momentum * previous[i];
      want_weights[i] = weights[i] + change;
      want_previous[i] = change;
    }
  }

  Check check;
  // Products and the tree order are reproduced: exact.
  check.exact("partial sums", partial, want_partial);
  // CUDA's expf has at most 2 ulp error (CUDA Programming Guide, maximum ulp error table); the
  // add and divide are correctly rounded, so the sigmoid is within a few ulp: 1e-6 relative.
  check.close("sigmoid outputs", d_outputs.download(), want_outputs, 1e-6);
  check.exact("weights", d_weights.download(), want_weights);
  check.exact("weight changes", d_previous.download(), want_previous);
  return check.result("4096 inputs x 16 hidden units, 256 CTAs of 16x16");
}

}  // namespace gpuvp::workloads
