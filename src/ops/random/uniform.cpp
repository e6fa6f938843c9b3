// SPDX-License-Identifier: Apache-2.0
// RandomUniform: samples uniform in [low, high) from a Philox stream state.
#include <cmath>

#include "random_common.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_uniform(const InferContext& ctx) {
  if (!is_floating(ctx.attrs.get_dtype("dtype"))) {
    throw_error(ErrorKind::TypeMismatch, "RandomUniform: dtype must be float32 or float64; got {}",
                dtype_name(ctx.attrs.get_dtype("dtype")));
  }
  const double low = ctx.attrs.get_double("low");
  const double high = ctx.attrs.get_double("high");
  if (!(low < high) || !std::isfinite(high - low)) {
    throw_error(ErrorKind::InvalidArgument, "RandomUniform: need finite low < high; got [{}, {})",
                low, high);
  }
  return detail::infer_random(ctx);
}

template <class T>
void fill_uniform(std::uint64_t key, std::uint64_t counter, Tensor& samples, double low,
                  double high) {
  T* data = static_cast<T*>(samples.raw_data());
  const T upper = static_cast<T>(high);
  for (std::int64_t i = 0; i < samples.numel(); ++i) {
    const detail::PhiloxBlock block = detail::philox4x32(key, counter + static_cast<std::uint64_t>(i));
    T value = static_cast<T>(low + (high - low) * detail::unit_double(detail::bits64(block, 0)));
    // Rounding to float32 can reach `high`; keep the interval half-open.
    if (value >= upper) value = std::nextafter(upper, static_cast<T>(low));
    data[i] = value;
  }
}

void compute_uniform(KernelContext& ctx) {
  const double low = ctx.attrs->get_double("low");
  const double high = ctx.attrs->get_double("high");
  detail::run_random(ctx, [&](std::uint64_t key, std::uint64_t counter, Tensor& samples) {
    if (samples.dtype() == DType::Float32) {
      fill_uniform<float>(key, counter, samples, low, high);
    } else {
      fill_uniform<double>(key, counter, samples, low, high);
    }
  });
}
}  // namespace

void register_uniform(OpRegistry& registry) {
  registry.add({.name = "RandomUniform",
                .family = "RandomFunction",
                .summary = "uniform samples in [low, high) from a Philox stream state",
                .num_inputs = -1,
                .num_outputs = 2,
                .traits = {.zero_gradient = true},
                .infer = infer_uniform,
                .reference = {"ref", compute_uniform},
                .cost = detail::random_cost});
}

}  // namespace tscope::ops
