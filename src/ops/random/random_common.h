// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the random ops share: the type rule (state in; advanced state and samples out), the kernel
// driver that advances the state and fills samples element by element, and the cost.
#include <cstdint>

#include "philox.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// Outputs: [advanced state (the state's type), samples (attrs "dtype", "shape")]. Throws
/// TypeMismatch unless the state is an int64 vector.
std::vector<Type> infer_random(const InferContext& ctx);

/// Reads [key, counter] from input 0 (ShapeMismatch naming the node unless it has 2 elements),
/// writes [key, counter + numel] to output 0 and calls fill(key, counter, samples) for output 1.
template <class Fill>
void run_random(KernelContext& ctx, Fill fill);

/// numel random blocks of ten Philox rounds each, and the bytes written.
Cost random_cost(const CostContext& ctx);

/// The requested sample shape; throws InvalidArgument for a negative dim.
Dims checked_sample_shape(const std::vector<std::int64_t>& shape, const char* op_name);

// Implementation of the template.
struct RandomState {
  std::uint64_t key;
  std::uint64_t counter;
};
RandomState read_state_and_advance(KernelContext& ctx, std::int64_t numel);

template <class Fill>
void run_random(KernelContext& ctx, Fill fill) {
  const DType dtype = ctx.attrs->get_dtype("dtype");
  const Dims shape(std::span<const std::int64_t>(ctx.attrs->get_ints("shape")));
  Tensor& samples = ctx.allocate_output(1, dtype, shape);
  const RandomState state = read_state_and_advance(ctx, samples.numel());
  fill(state.key, state.counter, samples);
}

}  // namespace tscope::ops::detail
