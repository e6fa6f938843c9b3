// SPDX-License-Identifier: Apache-2.0
// Shape (the int64 vector of a tensor's extents) and Shape_i{i} (one extent, an int64 scalar).
// Both read only the input's metadata; their gradient is zero.
#include <fmt/format.h>

#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope::ops {
namespace {
std::vector<Type> infer_shape(const InferContext& ctx) {
  return {Type{DType::Int64, Dims{ctx.input_type(0).rank()}}};
}

void compute_shape(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.allocate_output(0, DType::Int64, Dims{x.rank()});
  auto* data = static_cast<std::int64_t*>(out.raw_data());
  for (int axis = 0; axis < x.rank(); ++axis) data[axis] = x.shape()[axis];
}

std::vector<Type> infer_shape_i(const InferContext& ctx) {
  const std::int64_t axis = ctx.attrs.get_int("i");
  if (axis < 0 || axis >= ctx.input_type(0).rank()) {
    throw_error(ErrorKind::IndexOutOfRange, "Shape_i: axis {} is out of range for {}", axis,
                ctx.input_type(0).to_string());
  }
  return {Type{DType::Int64, Dims{}}};
}

void compute_shape_i(KernelContext& ctx) {
  Tensor& out = ctx.allocate_output(0, DType::Int64, Dims{});
  *static_cast<std::int64_t*>(out.raw_data()) =
      ctx.input(0).shape()[static_cast<int>(ctx.attrs->get_int("i"))];
}

std::string print_shape_i(const OpDef&, const Attrs& attrs) {
  return fmt::format("Shape_i{{{}}}", attrs.get_int("i"));
}

Cost metadata_cost(const CostContext& ctx) {
  return Cost{0, static_cast<double>(ctx.output_shapes[0].product() * 8)};
}
}  // namespace

void register_shape(OpRegistry& registry) {
  registry.add({.name = "Shape",
                .family = "Shape",
                .summary = "int64 vector of a tensor's extents",
                .num_inputs = 1,
                .traits = {.zero_gradient = true},
                .infer = infer_shape,
                .reference = {"ref", compute_shape},
                .cost = metadata_cost});
}

void register_shape_i(OpRegistry& registry) {
  registry.add({.name = "Shape_i",
                .family = "Shape_i",
                .summary = "int64 extent of one axis",
                .num_inputs = 1,
                .traits = {.zero_gradient = true},
                .infer = infer_shape_i,
                .reference = {"ref", compute_shape_i},
                .cost = metadata_cost,
                .print = print_shape_i});
}

}  // namespace tscope::ops

namespace tscope {

Variable shape(const Variable& x, const std::source_location& location) {
  return apply_op1(op_def("Shape"), {x}, Attrs{}, location);
}

Variable shape_i(const Variable& x, std::int64_t axis, const std::source_location& location) {
  const std::int64_t normalized = axis < 0 ? axis + x.rank() : axis;
  return apply_op1(op_def("Shape_i"), {x}, Attrs{{"i", normalized}}, location);
}

}  // namespace tscope
