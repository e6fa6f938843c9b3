// SPDX-License-Identifier: Apache-2.0
#include "elementwise_def.h"

#include <fmt/format.h>

namespace tscope::ops::detail {
namespace {
bool accepts_dtype(DTypeSet accepted, DType dtype) {
  switch (accepted) {
    case DTypeSet::Any:
      return true;
    case DTypeSet::Numeric:
      return dtype != DType::Bool;
    // Integers are promoted to float by the dtype rule; bool is not a number here.
    case DTypeSet::Float:
      return dtype != DType::Bool;
    case DTypeSet::IntegralOrBool:
      return !is_floating(dtype);
  }
  return false;
}

std::string_view accepted_name(DTypeSet accepted) {
  switch (accepted) {
    case DTypeSet::Any:
      return "any dtype";
    case DTypeSet::Numeric:
      return "numeric dtypes (not bool)";
    case DTypeSet::Float:
      return "numeric dtypes (not bool; integers become float)";
    case DTypeSet::IntegralOrBool:
      return "integer or bool dtypes";
  }
  return "";
}

DType float_of(DType dtype) {
  if (is_floating(dtype)) return dtype;
  // Small integers fit float32 exactly; wide ones need float64 (Theano's upcast rule).
  return (dtype == DType::Int32 || dtype == DType::Int64) ? DType::Float64 : DType::Float32;
}
}  // namespace

ElementwiseDTypes elementwise_dtypes(const ScalarOp& scalar,
                                     std::span<const DType> inputs,
                                     const Attrs& attrs) {
  DType promoted = inputs.empty() ? DType::Float32 : inputs[0];
  // switch(cond, a, b): the condition does not take part in promotion.
  const std::size_t first = (inputs.size() == 3 && scalar.name == "switch") ? 1 : 0;
  promoted = inputs[first];
  for (std::size_t i = first + 1; i < inputs.size(); ++i)
    promoted = promote_types(promoted, inputs[i]);
  switch (scalar.dtype_rule) {
    case ElementwiseDTypeRule::Promote:
      return {promoted, promoted};
    case ElementwiseDTypeRule::PromoteToFloat:
      return {float_of(promoted), float_of(promoted)};
    case ElementwiseDTypeRule::Bool:
      return {promoted, DType::Bool};
    case ElementwiseDTypeRule::Explicit:
      return {inputs[0], attrs.get_dtype("dtype")};
  }
  return {promoted, promoted};
}

ElementwiseDTypes elementwise_dtypes(const ScalarOp& scalar,
                                     std::span<const Variable> inputs,
                                     const Attrs& attrs) {
  std::vector<DType> dtypes;
  dtypes.reserve(inputs.size());
  for (const Variable& input : inputs) dtypes.push_back(input.dtype());
  return elementwise_dtypes(scalar, dtypes, attrs);
}

std::vector<Type> infer_elementwise(const InferContext& ctx, DTypeSet accepted) {
  for (const Variable& input : ctx.inputs) {
    if (!accepts_dtype(accepted, input.dtype())) {
      throw_error(ErrorKind::TypeMismatch, "{} accepts {}; input '{}' is {}", ctx.op.name,
                  accepted_name(accepted), input.to_string(), dtype_name(input.dtype()));
    }
  }
  const ElementwiseDTypes types = elementwise_dtypes(*ctx.op.scalar, ctx.inputs, ctx.attrs);
  return {Type{types.output, broadcast_static_dims(ctx.op.name, ctx.inputs)}};
}

Dims broadcast_static_dims(std::string_view op_name, std::span<const Variable> inputs) {
  int rank = 0;
  for (const Variable& input : inputs) rank = std::max(rank, input.rank());
  // Static broadcasting: an axis broadcasts only where its dim is statically 1 (Theano's
  // broadcastable pattern), so gradients know where to sum.
  Dims dims = Dims::filled(rank, 1);
  for (int axis = 0; axis < rank; ++axis) {
    bool any_unknown = false;
    std::int64_t known = 1;
    for (const Variable& input : inputs) {
      const int in_axis = axis - (rank - input.rank());
      if (in_axis < 0) continue;
      const std::int64_t extent = input.type().dims[in_axis];
      if (extent == kUnknownDim) {
        any_unknown = true;
      } else if (extent != 1) {
        if (known != 1 && known != extent) {
          std::string shapes;
          for (const Variable& each : inputs) {
            shapes += (shapes.empty() ? "" : " and ") + each.type().dims.to_string();
          }
          throw_error(ErrorKind::ShapeMismatch, "{}: input shapes {} do not broadcast at axis {}",
                      op_name, shapes, axis);
        }
        known = extent;
      }
    }
    dims[axis] = known != 1 ? known : (any_unknown ? kUnknownDim : 1);
  }
  return dims;
}

Dims elementwise_output_shape(const KernelContext& ctx) {
  // Fast path: every input is a rank-0 scalar or has exactly the shape of the first input of
  // highest rank; then nothing broadcasts and no axis can disagree.
  const Tensor* widest = &ctx.input(0);
  for (int k = 1; k < ctx.num_inputs; ++k) {
    if (ctx.input(k).rank() > widest->rank()) widest = &ctx.input(k);
  }
  bool uniform = true;
  for (int k = 0; k < ctx.num_inputs && uniform; ++k) {
    const Tensor& input = ctx.input(k);
    uniform = input.rank() == 0 || &input == widest || input.shape() == widest->shape();
  }
  if (uniform) return widest->shape();
  int rank = 0;
  for (int k = 0; k < ctx.num_inputs; ++k) rank = std::max(rank, ctx.input(k).rank());
  Dims shape = Dims::filled(rank, 1);
  for (int axis = 0; axis < rank; ++axis) {
    std::int64_t extent = -1;
    for (int k = 0; k < ctx.num_inputs; ++k) {
      const Tensor& input = ctx.input(k);
      const int in_axis = axis - (rank - input.rank());
      // Axes missing or statically 1 broadcast; every other axis must agree exactly.
      if (in_axis < 0 || ctx.node->input(k).type().dims[in_axis] == 1) continue;
      const std::int64_t actual = input.shape()[in_axis];
      if (extent == -1) {
        extent = actual;
      } else if (extent != actual) {
        std::string shapes;
        for (int j = 0; j < ctx.num_inputs; ++j) {
          shapes += (j == 0 ? "" : " and ") + ctx.input(j).shape().to_string();
        }
        throw Error(ErrorKind::ShapeMismatch,
                    fmt::format("input shapes {} do not match at axis {} (only axes of static "
                                "size 1 broadcast)",
                                shapes, axis))
            .add_context("in " + ctx.node->describe());
      }
    }
    shape[axis] = extent == -1 ? 1 : extent;
  }
  return shape;
}

Cost elementwise_cost(const CostContext& ctx) {
  Cost cost;
  const double count = static_cast<double>(ctx.output_shapes[0].product());
  cost.flops = count * ctx.op.scalar->flops_per_element;
  for (std::size_t i = 0; i < ctx.input_shapes.size(); ++i) {
    cost.bytes += static_cast<double>(ctx.input_shapes[i].product()) *
                  static_cast<double>(dtype_size(ctx.input_dtypes[i]));
  }
  cost.bytes += count * static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  return cost;
}

std::string print_elementwise(const OpDef& def, const Attrs& attrs) {
  std::string name(def.scalar->name);
  if (attrs.has("dtype"))
    name = fmt::format("{}{{{}}}", name, dtype_name(attrs.get_dtype("dtype")));
  const std::string suffix = inplace_suffix(attrs);
  if (!suffix.empty()) return fmt::format("Elemwise{{{}}}{}", name, suffix);
  return fmt::format("Elemwise{{{},no_inplace}}", name);
}

std::string inplace_suffix(const Attrs& attrs) {
  const std::int64_t input = attrs.get_int_or("inplace", -1);
  return input >= 0 ? fmt::format("[(0, {})]", input) : std::string();
}

std::array<const Tensor*, 3> converted_inputs(const KernelContext& ctx,
                                              DType compute,
                                              std::array<Tensor, 3>& storage) {
  std::array<const Tensor*, 3> result{};
  for (int k = 0; k < ctx.num_inputs && k < 3; ++k) {
    const Tensor& input = ctx.input(k);
    if (input.dtype() == compute) {
      result[k] = &input;
    } else {
      storage[k] = input.astype(compute);
      result[k] = &storage[k];
    }
  }
  return result;
}

}  // namespace tscope::ops::detail
