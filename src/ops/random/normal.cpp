// SPDX-License-Identifier: Apache-2.0
// RandomNormal: samples from N(mean, std^2) by Box-Muller on one Philox block per element.
#include <cmath>
#include <numbers>

#include "random_common.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_normal(const InferContext& ctx) {
  if (!is_floating(ctx.attrs.get_dtype("dtype"))) {
    throw_error(ErrorKind::TypeMismatch, "RandomNormal: dtype must be float32 or float64; got {}",
                dtype_name(ctx.attrs.get_dtype("dtype")));
  }
  const double std = ctx.attrs.get_double("std");
  if (!(std >= 0) || !std::isfinite(std) || !std::isfinite(ctx.attrs.get_double("mean"))) {
    throw_error(ErrorKind::InvalidArgument, "RandomNormal: need a finite mean and std >= 0; got "
                "mean {} std {}", ctx.attrs.get_double("mean"), std);
  }
  return detail::infer_random(ctx);
}

template <class T>
void fill_normal(std::uint64_t key, std::uint64_t counter, Tensor& samples, double mean,
                 double std) {
  T* data = static_cast<T*>(samples.raw_data());
  for (std::int64_t i = 0; i < samples.numel(); ++i) {
    const detail::PhiloxBlock block = detail::philox4x32(key, counter + static_cast<std::uint64_t>(i));
    // 1 - u lies in (0, 1], so the log is finite.
    const double radius_source = 1.0 - detail::unit_double(detail::bits64(block, 0));
    const double angle = 2.0 * std::numbers::pi * detail::unit_double(detail::bits64(block, 2));
    data[i] = static_cast<T>(mean + std * std::sqrt(-2.0 * std::log(radius_source)) * std::cos(angle));
  }
}

void compute_normal(KernelContext& ctx) {
  const double mean = ctx.attrs->get_double("mean");
  const double std = ctx.attrs->get_double("std");
  detail::run_random(ctx, [&](std::uint64_t key, std::uint64_t counter, Tensor& samples) {
    if (samples.dtype() == DType::Float32) {
      fill_normal<float>(key, counter, samples, mean, std);
    } else {
      fill_normal<double>(key, counter, samples, mean, std);
    }
  });
}
}  // namespace

void register_normal(OpRegistry& registry) {
  registry.add({.name = "RandomNormal",
                .family = "RandomFunction",
                .summary = "normal samples N(mean, std^2) from a Philox stream state",
                .num_inputs = -1,
                .num_outputs = 2,
                .traits = {.zero_gradient = true},
                .infer = infer_normal,
                .reference = {"ref", compute_normal},
                .cost = detail::random_cost});
}

}  // namespace tscope::ops
