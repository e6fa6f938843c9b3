// SPDX-License-Identifier: Apache-2.0
#include "random_common.h"

#include <fmt/format.h>

#include "../shape/shape_values.h"
#include "tscope/core/checked_math.h"
#include "tscope/graph/apply.h"

namespace tscope::ops::detail {

std::vector<Type> infer_random(const InferContext& ctx) {
  const Type& state = ctx.input_type(0);
  if (state.dtype != DType::Int64 || state.rank() != 1) {
    throw_error(ErrorKind::TypeMismatch,
                "{}: the state must be an int64 vector [key, counter]; "
                "got {}",
                ctx.op.name, state.to_string());
  }
  const std::vector<std::int64_t>& shape = ctx.attrs.get_ints("shape");
  if (shape.size() > static_cast<std::size_t>(kMaxRank)) {
    throw_error(ErrorKind::Unsupported, "{}: rank {} exceeds the maximum {}", ctx.op.name,
                shape.size(), kMaxRank);
  }
  Dims dims;
  int next_input = 1;
  for (const std::int64_t extent : shape) {
    if (extent == kUnknownDim && next_input < ctx.num_inputs()) {
      const Variable& input = ctx.inputs[static_cast<std::size_t>(next_input++)];
      require_integer(input, 0, fmt::format("{}: a sample extent", ctx.op.name));
      const std::optional<std::int64_t> known = static_scalar(input);
      if (known && *known < 0) {
        throw_error(ErrorKind::InvalidArgument, "{}: sample extent {} is negative", ctx.op.name,
                    *known);
      }
      dims.push_back(known.value_or(kUnknownDim));
    } else if (extent < 0) {
      throw_error(ErrorKind::InvalidArgument, "{}: sample shape {} has a negative dimension",
                  ctx.op.name, Dims(std::span<const std::int64_t>(shape)).to_string());
    } else {
      dims.push_back(extent);
    }
  }
  if (next_input != ctx.num_inputs()) {
    throw_error(ErrorKind::InvalidArgument,
                "{}: {} extent inputs for the sample shape {}; expected one per unknown entry",
                ctx.op.name, ctx.num_inputs() - 1, dims.to_string());
  }
  return {state, Type{ctx.attrs.get_dtype("dtype"), dims}};
}

Dims run_time_sample_shape(const KernelContext& ctx) {
  Dims dims;
  int next_input = 1;
  for (const std::int64_t extent : ctx.attrs->get_ints("shape")) {
    if (extent != kUnknownDim) {
      dims.push_back(extent);
      continue;
    }
    // Extents past 2^53 lose bits through double, but such a sample overflows memory anyway.
    const auto value = static_cast<std::int64_t>(ctx.input(next_input++).at(0));
    if (value < 0) {
      throw_error(ErrorKind::InvalidArgument, "{}: sample extent {} is negative",
                  ctx.node != nullptr ? ctx.node->op().name : "random", value);
    }
    dims.push_back(value);
  }
  (void)checked_byte_count(dims, ctx.attrs->get_dtype("dtype"), "random samples");
  return dims;
}

RandomState read_state_and_advance(KernelContext& ctx, std::int64_t numel) {
  const Tensor& state = ctx.input(0);
  if (state.numel() != 2) {
    Error error(ErrorKind::ShapeMismatch,
                fmt::format("random state must hold [key, counter] (shape (2,)); got shape {}",
                            state.shape().to_string()));
    if (ctx.node != nullptr) error.add_context("in " + ctx.node->describe());
    throw error;
  }
  // Read the words directly: Tensor::at goes through double and would drop bits of the key.
  const auto* words = static_cast<const std::int64_t*>(state.raw_data());
  const RandomState current{static_cast<std::uint64_t>(words[0]),
                            static_cast<std::uint64_t>(words[state.strides()[0]])};
  Tensor& next = ctx.allocate_output(0, DType::Int64, Dims{2});
  auto* out = static_cast<std::int64_t*>(next.raw_data());
  out[0] = static_cast<std::int64_t>(current.key);
  out[1] = static_cast<std::int64_t>(current.counter + static_cast<std::uint64_t>(numel));
  return current;
}

Cost random_cost(const CostContext& ctx) {
  const double numel = static_cast<double>(ctx.output_shapes[1].product());
  const double item = static_cast<double>(dtype_size(ctx.attrs.get_dtype("dtype")));
  // Ten Philox rounds of two multiplies and a few xors per block.
  return Cost{40.0 * numel, numel * item + 32.0};
}

}  // namespace tscope::ops::detail
