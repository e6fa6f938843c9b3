// SPDX-License-Identifier: Apache-2.0
// Join{axis} (concatenate any number of inputs) and Split{axis} (x and an int64 vector of extents
// -> one output per extent; outputs are copies), each the other's gradient; and stack, a
// composite of DimShuffle and Join. Static extents survive: Join of (2, 3) and (4, 3) on axis 0 is
// (6, 3); disagreements raise ShapeMismatch at build time when static, at run time otherwise.
#include <cstring>

#include <fmt/format.h>

#include "../broadcast_grad.h"
#include "shape_values.h"
#include "tscope/core/checked_math.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/op_registry.h"
#include "tscope/graph/provenance.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
std::string shapes_of(std::span<const Variable> inputs) {
  std::string text;
  for (const Variable& input : inputs) text += (text.empty() ? "" : ", ") + input.type().dims.to_string();
  return text;
}

std::vector<Type> infer_join(const InferContext& ctx) {
  if (ctx.num_inputs() == 0) throw_error(ErrorKind::InvalidArgument, "Join needs at least one input");
  const int rank = ctx.input_type(0).rank();
  const auto axis = static_cast<int>(ctx.attrs.get_int("axis"));
  if (axis < 0 || axis >= rank) {
    throw_error(ErrorKind::IndexOutOfRange, "Join: axis {} is out of range for rank {}", axis, rank);
  }
  DType dtype = ctx.input_type(0).dtype;
  Dims dims = ctx.input_type(0).dims;
  dims[axis] = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Type& type = ctx.input_type(i);
    if (type.rank() != rank) {
      throw_error(ErrorKind::ShapeMismatch, "Join: inputs have different ranks: {}",
                  shapes_of(ctx.inputs));
    }
    dtype = promote_types(dtype, type.dtype);
    for (int a = 0; a < rank; ++a) {
      const std::int64_t extent = type.dims[a];
      if (a == axis) {
        dims[a] = (dims[a] == kUnknownDim || extent == kUnknownDim)
                      ? kUnknownDim
                      : checked_add(dims[a], extent, "Join: output extent");
      } else if (dims[a] == kUnknownDim) {
        dims[a] = extent;
      } else if (extent != kUnknownDim && extent != dims[a]) {
        throw_error(ErrorKind::ShapeMismatch, "Join on axis {}: inputs disagree on axis {}: {}",
                    axis, a, shapes_of(ctx.inputs));
      }
    }
  }
  return {Type{dtype, dims}};
}

// Views `shape` as (outer, extent along axis, inner) around `axis`.
void split_around(const Dims& shape, int axis, std::int64_t& outer, std::int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int a = 0; a < axis; ++a) outer *= shape[a];
  for (int a = axis + 1; a < shape.rank(); ++a) inner *= shape[a];
}

void compute_join(KernelContext& ctx) {
  const auto axis = static_cast<int>(ctx.attrs->get_int("axis"));
  const DType dtype = ctx.node->output_node(0).type.dtype;
  Dims shape = ctx.input(0).shape();
  shape[axis] = 0;
  for (int i = 0; i < ctx.num_inputs; ++i) {
    const Dims& other = ctx.input(i).shape();
    for (int a = 0; a < shape.rank(); ++a) {
      if (a != axis && other[a] != shape[a]) {
        std::string shapes;
        for (int k = 0; k < ctx.num_inputs; ++k) {
          shapes += (k == 0 ? "" : ", ") + ctx.input(k).shape().to_string();
        }
        throw_error(ErrorKind::ShapeMismatch, "Join on axis {}: inputs disagree on axis {}: {}",
                    axis, a, shapes);
      }
    }
    shape[axis] = checked_add(shape[axis], other[axis], "Join: output extent");
  }
  Tensor& out = ctx.allocate_output(0, dtype, shape);
  std::int64_t outer = 0;
  std::int64_t inner = 0;
  split_around(shape, axis, outer, inner);
  const auto item = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int64_t out_row = shape[axis] * inner * item;
  std::int64_t start = 0;
  for (int i = 0; i < ctx.num_inputs; ++i) {
    const Tensor& input = ctx.input(i);
    const Tensor piece = input.dtype() == dtype ? input.contiguous() : input.astype(dtype);
    const std::int64_t row = input.shape()[axis] * inner * item;
    if (row > 0) {
      const char* source = static_cast<const char*>(piece.raw_data());
      char* target = static_cast<char*>(out.raw_data()) + start;
      for (std::int64_t o = 0; o < outer; ++o) {
        std::memcpy(target + o * out_row, source + o * row, static_cast<std::size_t>(row));
      }
    }
    start += row;
  }
}

std::vector<Variable> pullback_join(const PullbackContext& ctx) {
  const std::int64_t axis = ctx.attrs.get_int("axis");
  std::vector<std::int64_t> static_sizes;
  std::vector<Variable> symbolic_sizes;
  bool all_static = true;
  for (const Variable& input : ctx.inputs) {
    const std::int64_t extent = input.type().dims[static_cast<int>(axis)];
    all_static = all_static && extent != kUnknownDim;
    static_sizes.push_back(extent);
    symbolic_sizes.push_back(shape_i(input, axis));
  }
  const std::vector<Variable> pieces =
      all_static ? split(ctx.output_grads[0], axis, static_sizes)
                 : split(ctx.output_grads[0], axis, make_vector(symbolic_sizes));
  std::vector<Variable> grads;
  for (std::size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (is_floating(ctx.inputs[i].dtype())) {
      grads.push_back(detail::cast_like(pieces[i], ctx.inputs[i].dtype()));
    } else {
      grads.emplace_back();
    }
  }
  return grads;
}

std::string print_join(const OpDef&, const Attrs& attrs) {
  return fmt::format("Join{{{}}}", attrs.get_int("axis"));
}

std::vector<Type> infer_split(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const auto axis = static_cast<int>(ctx.attrs.get_int("axis"));
  if (axis < 0 || axis >= x.rank()) {
    throw_error(ErrorKind::IndexOutOfRange, "Split: axis {} is out of range for {}", axis,
                x.to_string());
  }
  detail::require_integer(ctx.inputs[1], 1, "Split's sizes");
  const auto sizes = detail::static_vector(ctx.inputs[1]);
  if (!sizes) {
    throw_error(ErrorKind::InvalidArgument, "Split: the sizes {} must have a statically known length",
                ctx.input_type(1).to_string());
  }
  std::vector<Type> outputs;
  std::int64_t total = 0;
  bool all_known = true;
  for (const auto& size : *sizes) {
    if (size && *size < 0) throw_error(ErrorKind::InvalidArgument, "Split: negative size {}", *size);
    all_known = all_known && size.has_value();
    total = checked_add(total, size.value_or(0), "Split: sum of the sizes");
    Type piece = x;
    piece.dims[axis] = size.value_or(kUnknownDim);
    outputs.push_back(piece);
  }
  if (all_known && x.dims[axis] != kUnknownDim && total != x.dims[axis]) {
    throw_error(ErrorKind::ShapeMismatch, "Split: sizes add up to {}, but axis {} of {} has {}",
                total, axis, x.to_string(), x.dims[axis]);
  }
  return outputs;
}

void compute_split(KernelContext& ctx) {
  const Tensor x = ctx.input(0).contiguous();
  const Tensor& sizes = ctx.input(1);
  const auto axis = static_cast<int>(ctx.attrs->get_int("axis"));
  if (sizes.numel() != ctx.num_outputs) {
    throw_error(ErrorKind::ShapeMismatch, "Split: {} sizes given for {} outputs", sizes.numel(),
                ctx.num_outputs);
  }
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < sizes.numel(); ++i) {
    const auto size = static_cast<std::int64_t>(sizes.at(i));
    if (size < 0) throw_error(ErrorKind::InvalidArgument, "Split: negative size {}", size);
    total = checked_add(total, size, "Split: sum of the sizes");
  }
  if (total != x.shape()[axis]) {
    throw_error(ErrorKind::ShapeMismatch, "Split: sizes add up to {}, but axis {} of {} has {}",
                total, axis, x.shape().to_string(), x.shape()[axis]);
  }
  std::int64_t outer = 0;
  std::int64_t inner = 0;
  split_around(x.shape(), axis, outer, inner);
  const auto item = static_cast<std::int64_t>(dtype_size(x.dtype()));
  const std::int64_t in_row = x.shape()[axis] * inner * item;
  std::int64_t start = 0;
  for (int k = 0; k < ctx.num_outputs; ++k) {
    Dims shape = x.shape();
    shape[axis] = static_cast<std::int64_t>(sizes.at(k));
    Tensor& out = ctx.allocate_output(k, x.dtype(), shape);
    const std::int64_t row = shape[axis] * inner * item;
    if (row > 0) {
      const char* source = static_cast<const char*>(x.raw_data()) + start;
      char* target = static_cast<char*>(out.raw_data());
      for (std::int64_t o = 0; o < outer; ++o) {
        std::memcpy(target + o * row, source + o * in_row, static_cast<std::size_t>(row));
      }
    }
    start += row;
  }
}

std::vector<Variable> pullback_split(const PullbackContext& ctx) {
  if (!is_floating(ctx.inputs[0].dtype())) return {Variable(), Variable()};
  std::vector<Variable> pieces;
  for (std::size_t k = 0; k < ctx.outputs.size(); ++k) {
    pieces.push_back(ctx.output_grads[k].defined() ? ctx.output_grads[k] : zeros_like(ctx.outputs[k]));
  }
  return {join(ctx.attrs.get_int("axis"), pieces), Variable()};
}

std::string print_split(const OpDef&, const Attrs& attrs) {
  return fmt::format("Split{{{}}}", attrs.get_int("axis"));
}

Cost copy_cost(const CostContext& ctx) {
  double elements = 0;
  for (const Dims& shape : ctx.output_shapes) elements += static_cast<double>(shape.product());
  return Cost{0, 2 * elements * static_cast<double>(dtype_size(ctx.input_dtypes[0]))};
}
}  // namespace

void register_join(OpRegistry& registry) {
  registry.add({.name = "Join",
                .family = "Join",
                .summary = "concatenate along an axis",
                .num_inputs = -1,
                .infer = infer_join,
                .reference = {"ref", compute_join},
                .pullback = pullback_join,
                .cost = copy_cost,
                .print = print_join});
}

void register_split(OpRegistry& registry) {
  registry.add({.name = "Split",
                .family = "Split",
                .summary = "split along an axis into pieces of given extents",
                .num_inputs = 2,
                .num_outputs = -1,
                .infer = infer_split,
                .reference = {"ref", compute_split},
                .pullback = pullback_split,
                .cost = copy_cost,
                .print = print_split});
}

}  // namespace tscope::ops

namespace tscope {

Variable join(std::int64_t axis, const std::vector<Variable>& inputs,
              const std::source_location& location) {
  const int rank = inputs.empty() ? 0 : inputs.front().rank();
  return apply_op1(op_def("Join"), inputs,
                   Attrs{{"axis", static_cast<std::int64_t>(normalize_axis(axis, rank))}}, location);
}

std::vector<Variable> split(const Variable& x, std::int64_t axis, const std::vector<std::int64_t>& sizes,
                            const std::source_location& location) {
  const Variable size_vector = constant(Tensor::from_vector<std::int64_t>(
      Dims{static_cast<std::int64_t>(sizes.size())}, sizes));
  return split(x, axis, size_vector, location);
}

std::vector<Variable> split(const Variable& x, std::int64_t axis, const Variable& sizes,
                            const std::source_location& location) {
  return apply_op(op_def("Split"), {x, sizes},
                  Attrs{{"axis", static_cast<std::int64_t>(normalize_axis(axis, x.rank()))}},
                  location);
}

Variable stack(const std::vector<Variable>& inputs, std::int64_t axis,
               const std::source_location& location) {
  ProvenanceScope scope("stack", location);
  if (inputs.empty()) throw_error(ErrorKind::InvalidArgument, "stack needs at least one input");
  const int rank = inputs.front().rank();
  const int new_axis = normalize_axis(axis, rank + 1);
  std::vector<Variable> expanded;
  for (const Variable& input : inputs) {
    std::vector<std::int64_t> pattern;
    for (int a = 0; a < input.rank(); ++a) {
      if (a == new_axis) pattern.push_back(kNewAxis);
      pattern.push_back(a);
    }
    if (new_axis >= input.rank()) pattern.push_back(kNewAxis);
    expanded.push_back(dimshuffle(input, pattern, location));
  }
  return join(new_axis, expanded, location);
}

}  // namespace tscope
