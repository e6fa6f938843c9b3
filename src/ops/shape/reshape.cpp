// SPDX-License-Identifier: Apache-2.0
// Reshape (static target, or a symbolic int64 vector as second input; one -1 entry inferred) and
// Flatten{outdim}. Both are views when the input is contiguous and copy otherwise (on the worker
// threads when long, parallel_copy.h), so they declare output 0 as a view of input 0.
#include <fmt/format.h>

#include "parallel_copy.h"
#include "shape_values.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
using Entries = std::vector<std::optional<std::int64_t>>;

Entries target_entries(const InferContext& ctx) {
  if (ctx.num_inputs() == 1) {
    Entries entries;
    for (std::int64_t extent : ctx.attrs.get_ints("shape")) entries.emplace_back(extent);
    return entries;
  }
  detail::require_integer(ctx.inputs[1], 1, "Reshape's target shape");
  auto entries = detail::static_vector(ctx.inputs[1]);
  if (!entries) {
    throw_error(ErrorKind::InvalidArgument,
                "Reshape: the target shape {} must have a statically known length",
                ctx.input_type(1).to_string());
  }
  return *entries;
}

// Resolves a fully known target against `count` elements; throws naming both shapes.
Dims resolve_target(const Dims& input, const std::vector<std::int64_t>& target) {
  int inferred = -1;
  std::int64_t known_product = 1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0) {
        throw_error(ErrorKind::InvalidArgument, "Reshape: more than one -1 in target ({})",
                    fmt::join(target, ", "));
      }
      inferred = static_cast<int>(i);
    } else if (target[i] < 0) {
      throw_error(ErrorKind::InvalidArgument, "Reshape: negative extent {} in target ({})",
                  target[i], fmt::join(target, ", "));
    } else if (__builtin_mul_overflow(known_product, target[i], &known_product)) {
      // No tensor has 2^63 elements; the target comes from data (an imported model's constant).
      throw_error(ErrorKind::ShapeMismatch,
                  "Reshape: target ({}) has more elements than an int64 can count",
                  fmt::join(target, ", "));
    }
  }
  Dims result(std::span<const std::int64_t>(target.data(), target.size()));
  const std::int64_t count = input.product();
  if (inferred >= 0) {
    if (known_product == 0 || count % known_product != 0) {
      throw_error(ErrorKind::ShapeMismatch, "Reshape: cannot reshape {} into ({})",
                  input.to_string(), fmt::join(target, ", "));
    }
    result[inferred] = count / known_product;
  } else if (known_product != count) {
    throw_error(ErrorKind::ShapeMismatch, "Reshape: cannot reshape {} ({} elements) into {}",
                input.to_string(), count, result.to_string());
  }
  return result;
}

std::vector<Type> infer_reshape(const InferContext& ctx) {
  if (ctx.num_inputs() < 1 || ctx.num_inputs() > 2) {
    throw_error(ErrorKind::InvalidArgument, "Reshape takes 1 or 2 inputs, {} given", ctx.num_inputs());
  }
  const Type& x = ctx.input_type(0);
  const Entries entries = target_entries(ctx);
  bool all_known = true;
  std::vector<std::int64_t> known;
  int minus_ones = 0;
  for (const auto& entry : entries) {
    all_known = all_known && entry.has_value();
    known.push_back(entry.value_or(kUnknownDim));
    if (entry && *entry == -1) ++minus_ones;
    if (entry && *entry < -1) {
      throw_error(ErrorKind::InvalidArgument, "Reshape: negative extent {} in the target", *entry);
    }
  }
  if (minus_ones > 1) {
    throw_error(ErrorKind::InvalidArgument, "Reshape: more than one -1 in the target");
  }
  if (all_known && x.is_fully_known()) return {Type{x.dtype, resolve_target(x.dims, known)}};
  Dims dims;
  for (const auto& entry : entries) dims.push_back(entry && *entry >= 0 ? *entry : kUnknownDim);
  return {Type{x.dtype, dims}};
}

Tensor reshape_tensor(const Tensor& x, const Dims& shape) {
  return x.is_contiguous() ? x.reshaped(shape) : detail::parallel_contiguous(x).reshaped(shape);
}

void compute_reshape(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<std::int64_t> target;
  if (ctx.num_inputs == 1) {
    target = ctx.attrs->get_ints("shape");
  } else {
    const Tensor& shape = ctx.input(1);
    for (std::int64_t i = 0; i < shape.numel(); ++i) {
      target.push_back(static_cast<std::int64_t>(shape.at(i)));
    }
  }
  ctx.output(0) = reshape_tensor(x, resolve_target(x.shape(), target));
}

Variable reshape_like(const Variable& g, const Variable& x) {
  if (x.type().is_fully_known()) {
    const Dims& dims = x.type().dims;
    return reshape(g, std::vector<std::int64_t>(dims.begin(), dims.end()));
  }
  return reshape(g, shape(x));
}

std::vector<Variable> pullback_reshape(const PullbackContext& ctx) {
  std::vector<Variable> grads{reshape_like(ctx.output_grads[0], ctx.inputs[0])};
  if (ctx.inputs.size() == 2) grads.emplace_back();
  return grads;
}

std::string print_reshape(const OpDef&, const Attrs& attrs) {
  return fmt::format("Reshape{{{}}}", attrs.get_int("ndim"));
}

std::vector<Type> infer_flatten(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const std::int64_t outdim = ctx.attrs.get_int("outdim");
  if (outdim < 1 || outdim > std::max(x.rank(), 1)) {
    throw_error(ErrorKind::InvalidArgument, "Flatten: outdim {} must lie in [1, {}] for {}", outdim,
                std::max(x.rank(), 1), x.to_string());
  }
  Dims dims;
  for (int axis = 0; axis + 1 < outdim; ++axis) dims.push_back(x.dims[axis]);
  std::int64_t rest = 1;
  for (int axis = static_cast<int>(outdim) - 1; axis < x.rank(); ++axis) {
    rest = (rest == kUnknownDim || x.dims[axis] == kUnknownDim) ? kUnknownDim : rest * x.dims[axis];
  }
  dims.push_back(rest);
  return {Type{x.dtype, dims}};
}

void compute_flatten(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto outdim = static_cast<int>(ctx.attrs->get_int("outdim"));
  Dims shape;
  for (int axis = 0; axis + 1 < outdim; ++axis) shape.push_back(x.shape()[axis]);
  std::int64_t rest = 1;
  for (int axis = outdim - 1; axis < x.rank(); ++axis) rest *= x.shape()[axis];
  shape.push_back(rest);
  ctx.output(0) = reshape_tensor(x, shape);
}

std::vector<Variable> pullback_flatten(const PullbackContext& ctx) {
  return {reshape_like(ctx.output_grads[0], ctx.inputs[0])};
}

std::string print_flatten(const OpDef&, const Attrs& attrs) {
  return fmt::format("Flatten{{{}}}", attrs.get_int("outdim"));
}

Cost view_cost(const CostContext&) { return Cost{}; }
}  // namespace

void register_reshape(OpRegistry& registry) {
  registry.add({.name = "Reshape",
                .family = "Reshape",
                .summary = "new shape, same elements (a view when contiguous)",
                .num_inputs = -1,
                .aliasing = {.views = {{0, 0}}},
                .infer = infer_reshape,
                .reference = {"view", compute_reshape},
                .pullback = pullback_reshape,
                .cost = view_cost,
                .print = print_reshape});
}

void register_flatten(OpRegistry& registry) {
  registry.add({.name = "Flatten",
                .family = "Flatten",
                .summary = "collapse trailing axes (a view when contiguous)",
                .num_inputs = 1,
                .aliasing = {.views = {{0, 0}}},
                .infer = infer_flatten,
                .reference = {"view", compute_flatten},
                .pullback = pullback_flatten,
                .cost = view_cost,
                .print = print_flatten});
}

}  // namespace tscope::ops

namespace tscope {

Variable reshape(const Variable& x, const std::vector<std::int64_t>& shape,
                 const std::source_location& location) {
  return apply_op1(op_def("Reshape"), {x},
                   Attrs{{"shape", shape}, {"ndim", static_cast<std::int64_t>(shape.size())}},
                   location);
}

Variable reshape(const Variable& x, const Variable& shape, const std::source_location& location) {
  const std::int64_t ndim = shape.rank() == 1 ? shape.type().dims[0] : kUnknownDim;
  return apply_op1(op_def("Reshape"), {x, shape}, Attrs{{"ndim", ndim}}, location);
}

Variable flatten(const Variable& x, int outdim, const std::source_location& location) {
  return apply_op1(op_def("Flatten"), {x}, Attrs{{"outdim", static_cast<std::int64_t>(outdim)}},
                   location);
}

}  // namespace tscope
