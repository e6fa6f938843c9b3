// SPDX-License-Identifier: Apache-2.0
// MakeVector: rank-0 inputs packed into a vector (dtype: their promotion). The gradient of entry
// i is entry i of g, taken with Split and Reshape.
#include "../broadcast_grad.h"
#include "shape_values.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_make_vector(const InferContext& ctx) {
  if (ctx.num_inputs() == 0) {
    throw_error(ErrorKind::InvalidArgument, "MakeVector needs at least one scalar");
  }
  DType dtype = ctx.input_type(0).dtype;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.input_type(i).rank() != 0) {
      throw_error(ErrorKind::TypeMismatch, "MakeVector: input {} is {}, not a scalar", i,
                  ctx.input_type(i).to_string());
    }
    dtype = promote_types(dtype, ctx.input_type(i).dtype);
  }
  return {Type{dtype, Dims{ctx.num_inputs()}}};
}

void compute_make_vector(KernelContext& ctx) {
  Tensor& out = ctx.allocate_output(0, ctx.node->output_node(0).type.dtype, Dims{ctx.num_inputs});
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    for (int i = 0; i < ctx.num_inputs; ++i) data[i] = static_cast<T>(ctx.input(i).at(0));
  });
}

std::vector<Variable> pullback_make_vector(const PullbackContext& ctx) {
  const std::vector<std::int64_t> sizes(ctx.inputs.size(), 1);
  const std::vector<Variable> pieces = split(ctx.output_grads[0], 0, sizes);
  std::vector<Variable> grads;
  for (std::size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!is_floating(ctx.inputs[i].dtype())) {
      grads.emplace_back();
      continue;
    }
    grads.push_back(detail::cast_like(reshape(pieces[i], std::vector<std::int64_t>{}),
                                      ctx.inputs[i].dtype()));
  }
  return grads;
}

Cost make_vector_cost(const CostContext& ctx) {
  return Cost{0, static_cast<double>(ctx.output_shapes[0].product() * 8)};
}
}  // namespace

void register_make_vector(OpRegistry& registry) {
  registry.add({.name = "MakeVector",
                .family = "MakeVector",
                .summary = "scalars packed into a vector",
                .num_inputs = -1,
                .infer = infer_make_vector,
                .reference = {"ref", compute_make_vector},
                .pullback = pullback_make_vector,
                .cost = make_vector_cost});
}

}  // namespace tscope::ops

namespace tscope {

Variable make_vector(const std::vector<Variable>& scalars, const std::source_location& location) {
  return apply_op1(op_def("MakeVector"), scalars, Attrs{}, location);
}

}  // namespace tscope
