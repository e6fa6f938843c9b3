// SPDX-License-Identifier: Apache-2.0
// RandomIntegers: integers uniform in [low, high). The 64 random bits are scaled to the range by
// a 128-bit multiply (Lemire's method without rejection): the bias is below range / 2^64, far
// under any test's resolution, and every element stays a pure function of (key, counter).
#include <limits>

#include "random_common.h"
#include "tscope/graph/op_registry.h"

namespace tscope::ops {
namespace {
// The high 64 bits of the 128-bit product a * b, from 32-bit halves (portable, no __int128).
std::uint64_t multiply_high(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a_low = a & 0xFFFFFFFFu, a_high = a >> 32;
  const std::uint64_t b_low = b & 0xFFFFFFFFu, b_high = b >> 32;
  const std::uint64_t low_low = a_low * b_low;
  const std::uint64_t high_low = a_high * b_low;
  const std::uint64_t low_high = a_low * b_high;
  const std::uint64_t middle = (low_low >> 32) + (high_low & 0xFFFFFFFFu) + (low_high & 0xFFFFFFFFu);
  return a_high * b_high + (high_low >> 32) + (low_high >> 32) + (middle >> 32);
}

bool fits(DType dtype, std::int64_t value) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T>) {
      return false;
    } else {
      if (value < 0) return value >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
      return static_cast<std::uint64_t>(value) <= std::uint64_t{std::numeric_limits<T>::max()};
    }
  });
}

std::vector<Type> infer_integers(const InferContext& ctx) {
  const DType dtype = ctx.attrs.get_dtype("dtype");
  if (!is_integral(dtype)) {
    throw_error(ErrorKind::TypeMismatch, "RandomIntegers: dtype must be an integer type; got {}",
                dtype_name(dtype));
  }
  const std::int64_t low = ctx.attrs.get_int("low");
  const std::int64_t high = ctx.attrs.get_int("high");
  if (low >= high || !fits(dtype, low) || !fits(dtype, high - 1)) {
    throw_error(ErrorKind::InvalidArgument,
                "RandomIntegers: need low < high inside the range of {}; got [{}, {})",
                dtype_name(dtype), low, high);
  }
  return detail::infer_random(ctx);
}

void compute_integers(KernelContext& ctx) {
  const std::int64_t low = ctx.attrs->get_int("low");
  const std::uint64_t range =
      static_cast<std::uint64_t>(ctx.attrs->get_int("high")) - static_cast<std::uint64_t>(low);
  detail::run_random(ctx, [&](std::uint64_t key, std::uint64_t counter, Tensor& samples) {
    visit_dtype(samples.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* data = static_cast<T*>(samples.raw_data());
      for (std::int64_t i = 0; i < samples.numel(); ++i) {
        const detail::PhiloxBlock block =
            detail::philox4x32(key, counter + static_cast<std::uint64_t>(i));
        const std::uint64_t scaled = multiply_high(detail::bits64(block, 0), range);
        data[i] = static_cast<T>(static_cast<std::uint64_t>(low) + scaled);
      }
    });
  });
}
}  // namespace

void register_integers(OpRegistry& registry) {
  registry.add({.name = "RandomIntegers",
                .family = "RandomFunction",
                .summary = "integers uniform in [low, high) from a Philox stream state",
                .num_inputs = -1,
                .num_outputs = 2,
                .traits = {.zero_gradient = true},
                .infer = infer_integers,
                .reference = {"ref", compute_integers},
                .cost = detail::random_cost});
}

}  // namespace tscope::ops
