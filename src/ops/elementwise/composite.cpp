// SPDX-License-Identifier: Apache-2.0
// Composite: a fused elementwise expression (Theano's Elemwise{Composite{...}}), which the
// fuse_elementwise rewrite builds from chains and trees of elementwise nodes. Attributes:
//   "expression"  the scalar expression over inputs i0..iN-1, in registry op names
//                 (composite_program.h): "Mul(Exp(TrueDiv(Neg(i0),i1)),i2)";
//   "outputs"     optional, statement indices: one output per named statement (sibling values
//                 computed in one pass); absent, the last statement is the only output;
//   "reduce"      optional, "add" or "maximum": fold every output's values over "axes" (of the
//                 broadcast shape, sorted; empty: every axis), with "keepdims", as Sum and Max do,
//                 without ever storing them.
// The inputs broadcast as in the elementwise ops and share one float dtype. The fast kernel walks
// the output once, a block at a time (composite_kernel.cpp); the reference kernel evaluates one
// element at a time through the same block kernels with n = 1. There is no pullback: fusion runs
// when a function is compiled, after grad().
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "../reduce/reduce_common.h"
#include "composite_program.h"
#include "elementwise_def.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
using detail::CompositeProgram;
using detail::CompositeReduction;

// print() cannot know the node's input count; any input index parses.
constexpr int kAnyInputCount = 1 << 20;

std::vector<int> composite_axes(const Attrs& attrs, int rank) {
  if (!attrs.has("axes")) {
    throw_error(ErrorKind::InvalidArgument,
                "Composite: a reduction needs the \"axes\" attribute (empty: every axis)");
  }
  return detail::reduced_axes(attrs, rank);
}

std::vector<Type> infer_composite(const InferContext& ctx) {
  if (ctx.num_inputs() == 0) {
    throw_error(ErrorKind::InvalidArgument, "Composite: needs at least one input");
  }
  const CompositeProgram program = detail::parse_composite(ctx.attrs, ctx.num_inputs());
  const DType dtype = ctx.input_type(0).dtype;
  for (const Variable& input : ctx.inputs) {
    if (!is_floating(input.dtype()) || input.dtype() != dtype) {
      throw_error(ErrorKind::TypeMismatch,
                  "Composite: computes in one float dtype (float32 or float64); input '{}' is {} "
                  "and input '{}' is {}",
                  ctx.inputs[0].to_string(), dtype_name(dtype), input.to_string(),
                  dtype_name(input.dtype()));
    }
  }
  Dims dims = detail::broadcast_static_dims("Composite", ctx.inputs);
  if (detail::composite_reduction(ctx.attrs) != CompositeReduction::None) {
    const std::vector<int> axes = composite_axes(ctx.attrs, dims.rank());
    dims = detail::reduced_dims(dims, axes, ctx.attrs.get_bool_or("keepdims", false));
  }
  return std::vector<Type>(program.outputs.size(), Type{dtype, dims});
}

// values[0, num_inputs) hold one element of each input; the steps fill the rest.
template <class C>
void evaluate_element(const CompositeProgram& program, std::vector<C>& values) {
  for (std::size_t s = 0; s < program.steps.size(); ++s) {
    const detail::CompositeStep& step = program.steps[s];
    std::array<const C*, 3> args{};
    for (int k = 0; k < step.arity; ++k) {
      args[static_cast<std::size_t>(k)] = &values[static_cast<std::size_t>(step.operands[k])];
    }
    detail::block_kernel_for<C>(step.op->block)(args.data(),
                                        &values[static_cast<std::size_t>(program.num_inputs) + s],
                                        1);
  }
}

void compute_composite_reference(KernelContext& ctx) {
  const CompositeProgram program = detail::parse_composite(*ctx.attrs, ctx.num_inputs);
  const CompositeReduction reduction = detail::composite_reduction(*ctx.attrs);
  const Dims shape = detail::elementwise_output_shape(ctx);
  std::vector<int> axes;
  Dims out_shape = shape;
  if (reduction != CompositeReduction::None) {
    axes = composite_axes(*ctx.attrs, shape.rank());
    if (reduction == CompositeReduction::Maximum) {
      detail::require_nonempty_reduction(shape, axes, "Composite maximum");
    }
    out_shape = detail::reduced_dims(shape, axes, ctx.attrs->get_bool_or("keepdims", false));
  }
  const DType dtype = ctx.input(0).dtype();
  const std::size_t output_count = program.outputs.size();
  for (std::size_t o = 0; o < output_count; ++o) {
    (void)ctx.allocate_output(static_cast<int>(o), dtype, out_shape);
  }
  const std::int64_t out_count = out_shape.product();
  auto run = [&](auto tag) {
    using C = decltype(tag);
    std::vector<C> values(static_cast<std::size_t>(program.value_count()));
    auto evaluate = [&](std::int64_t flat) {
      for (int k = 0; k < ctx.num_inputs; ++k) {
        const Tensor& input = ctx.input(k);
        values[static_cast<std::size_t>(k)] =
            static_cast<C>(input.at(detail::broadcast_source_index(shape, input.shape(), flat)));
      }
      evaluate_element(program, values);
    };
    auto output_data = [&](std::size_t o) {
      return static_cast<C*>(ctx.output(static_cast<int>(o)).raw_data());
    };
    auto value_of = [&](std::size_t o) {
      return values[static_cast<std::size_t>(program.outputs[o])];
    };
    if (reduction == CompositeReduction::None) {
      for (std::int64_t i = 0; i < out_count; ++i) {
        evaluate(i);
        for (std::size_t o = 0; o < output_count; ++o) output_data(o)[i] = value_of(o);
      }
      return;
    }
    // Sum's and Max's reference semantics: a double total; NaN wins a maximum.
    const auto groups = static_cast<std::size_t>(out_count);
    std::vector<double> folded(groups * output_count, 0.0);
    std::vector<bool> seen(groups, false);
    detail::for_each_reduced(shape, axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
      const auto group = static_cast<std::size_t>(out_flat);
      evaluate(in_flat);
      for (std::size_t o = 0; o < output_count; ++o) {
        double& total = folded[o * groups + group];
        const double value = value_of(o);
        if (reduction == CompositeReduction::Add) {
          total += value;
        } else {
          total = seen[group] ? detail::maximum_fold(total, value) : value;
        }
      }
      seen[group] = true;
    });
    for (std::size_t o = 0; o < output_count; ++o) {
      for (std::size_t i = 0; i < groups; ++i) output_data(o)[i] = static_cast<C>(folded[o * groups + i]);
    }
  };
  if (dtype == DType::Float32) {
    run(float{});
  } else {
    run(double{});
  }
}

Cost composite_cost(const CostContext& ctx) {
  const CompositeProgram program =
      detail::parse_composite(ctx.attrs, static_cast<int>(ctx.input_shapes.size()));
  // Elements of the broadcast shape: the expression is evaluated once for each.
  int rank = 0;
  for (const Dims& dims : ctx.input_shapes) rank = std::max(rank, dims.rank());
  double count = 1;
  for (int axis = 0; axis < rank; ++axis) {
    std::int64_t extent = 1;
    for (const Dims& dims : ctx.input_shapes) {
      const int in_axis = axis - (rank - dims.rank());
      if (in_axis >= 0 && dims[in_axis] != 1) extent = dims[in_axis];
    }
    count *= static_cast<double>(extent);
  }
  const bool reduces = detail::composite_reduction(ctx.attrs) != CompositeReduction::None;
  Cost cost;
  cost.flops = count * (program.flops_per_element() + (reduces ? 1.0 : 0.0));
  // Only what is read and written: the point of fusing.
  for (std::size_t i = 0; i < ctx.input_shapes.size(); ++i) {
    cost.bytes += static_cast<double>(ctx.input_shapes[i].product()) *
                  static_cast<double>(dtype_size(ctx.input_dtypes[i]));
  }
  for (const Dims& output : ctx.output_shapes) {
    cost.bytes += static_cast<double>(output.product()) *
                  static_cast<double>(dtype_size(ctx.input_dtypes[0]));
  }
  return cost;
}

std::string print_composite(const OpDef&, const Attrs& attrs) {
  // Also used to describe a node whose attributes the type rule rejected: never throws.
  std::string body;
  std::string reduction;
  try {
    body = detail::print_composite_body(detail::parse_composite(attrs, kAnyInputCount));
    if (attrs.has("reduce") && attrs.has("axes")) {
      reduction = "," + detail::print_reduce(attrs.get_string("reduce"), attrs);
    }
  } catch (const Error&) {
    body = attrs.has("expression") ? attrs.get_string("expression") : "?";
  }
  return fmt::format("Elemwise{{Composite{{{}}}{}}}{}", body, reduction,
                     detail::inplace_suffix(attrs));
}

// The impl column: "simd" when a step runs SLEEF code.
std::string_view composite_label(std::span<const Variable> inputs, const Attrs& attrs) {
  try {
    const CompositeProgram program =
        detail::parse_composite(attrs, static_cast<int>(inputs.size()));
    for (const detail::CompositeStep& step : program.steps) {
      if (step.op->fast.name == "simd") return "simd";
    }
  } catch (const Error&) {
  }
  return "cpu";
}
}  // namespace

void register_composite(OpRegistry& registry) {
  registry.add({.name = "Composite",
                .family = "Elemwise",
                .summary = "fused elementwise expression, optionally summed or maximised over axes",
                .num_inputs = -1,
                .num_outputs = -1,
                .infer = infer_composite,
                .reference = {"ref", compute_composite_reference},
                .fast = {.name = "cpu", .fn = detail::compute_composite, .label = composite_label},
                .cost = composite_cost,
                .print = print_composite});
}

}  // namespace tscope::ops

namespace tscope {

Variable composite(const std::vector<Variable>& inputs, const std::string& expression,
                   const std::source_location& location) {
  return apply_op1(op_def("Composite"), inputs, Attrs{{"expression", expression}}, location);
}

Variable composite_reduce(const std::vector<Variable>& inputs, const std::string& expression,
                          const std::string& reduction, const std::vector<std::int64_t>& axes,
                          bool keepdims, const std::source_location& location) {
  int rank = 0;
  for (const Variable& input : inputs) rank = std::max(rank, input.rank());
  std::vector<std::int64_t> normalized;
  for (std::int64_t axis : axes) normalized.push_back(normalize_axis(axis, rank));
  std::sort(normalized.begin(), normalized.end());
  normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
  return apply_op1(op_def("Composite"), inputs,
                   Attrs{{"expression", expression},
                         {"reduce", reduction},
                         {"axes", normalized},
                         {"keepdims", keepdims}},
                   location);
}

}  // namespace tscope
