// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the random ops share: the type rule (state in; advanced state and samples out), the kernel
// driver that advances the state and fills samples element by element, and the cost.
#include <cstdint>

#include "philox.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// Outputs: [advanced state (the state's type), samples (attrs "dtype", "shape")]. Throws
/// TypeMismatch unless the state is an int64 vector. A "shape" entry of kUnknownDim is read at run
/// time from the next of the inputs after the state, one integer scalar each (a symbolic size).
std::vector<Type> infer_random(const InferContext& ctx);

/// Reads [key, counter] from input 0 (ShapeMismatch naming the node unless it has 2 elements),
/// writes [key, counter + numel] to output 0 and calls fill(key, counter, samples) for output 1.
template <class Fill>
void run_random(KernelContext& ctx, Fill fill);

/// numel random blocks of ten Philox rounds each, and the bytes written.
Cost random_cost(const CostContext& ctx);

/// The sample shape of a node being run: the "shape" attr with its kUnknownDim entries read from
/// the extent inputs; throws InvalidArgument for a negative extent or a byte count that overflows.
Dims run_time_sample_shape(const KernelContext& ctx);

// Implementation of the template.
struct RandomState {
  std::uint64_t key;
  std::uint64_t counter;
};
RandomState read_state_and_advance(KernelContext& ctx, std::int64_t numel);

template <class Fill>
void run_random(KernelContext& ctx, Fill fill) {
  const DType dtype = ctx.attrs->get_dtype("dtype");
  Tensor& samples = ctx.allocate_output(1, dtype, run_time_sample_shape(ctx));
  const RandomState state = read_state_and_advance(ctx, samples.numel());
  fill(state.key, state.counter, samples);
}

}  // namespace tscope::ops::detail
