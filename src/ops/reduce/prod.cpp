// SPDX-License-Identifier: Apache-2.0
// Prod: CAReduce{mul} over axes (integers and bool accumulate into int64), and ProdGrad, its
// gradient. ProdGrad handles zeros exactly instead of dividing the product by each element:
// in a group with no zero, d/dx_i = prod / x_i; with exactly one zero, only the zero element gets
// a gradient (the product of the others); with two or more zeros, every gradient is zero.
#include <cmath>

#include "reduce_common.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/registry.h"

namespace tscope::ops {
namespace {
DType prod_dtype(DType input) { return is_floating(input) ? input : DType::Int64; }

std::vector<Type> infer_prod(const InferContext& ctx) {
  return detail::infer_reduce(ctx, prod_dtype);
}

void compute_prod_reference(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out = ctx.allocate_output(0, prod_dtype(x.dtype()),
                                    detail::reduced_dims(x.shape(), axes, keepdims));
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = detail::WideAccumulator<T>;  // out is float32, float64 or int64
    std::vector<Acc> products(static_cast<std::size_t>(out.numel()), Acc{1});
    detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
      Acc& product = products[static_cast<std::size_t>(out_flat)];
      product = detail::wrapping_mul(product, static_cast<Acc>(x.at(in_flat)));
    });
    T* data = static_cast<T*>(out.raw_data());
    for (std::size_t i = 0; i < products.size(); ++i) data[i] = static_cast<T>(products[i]);
  });
}

void compute_prod(KernelContext& ctx) {
  const DType out_dtype = prod_dtype(ctx.input(0).dtype());
  visit_dtype(ctx.input(0).dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = detail::WideAccumulator<T>;
    detail::fold_reduce<T, Acc>(
        ctx, out_dtype, Acc{1},
        [](Acc acc, T value) { return detail::wrapping_mul(acc, static_cast<Acc>(value)); },
        [](Acc acc) { return acc; });
  });
}

std::vector<Variable> pullback_prod(const PullbackContext& ctx) {
  const Variable& x = ctx.inputs[0];
  if (!is_floating(x.dtype())) return {Variable()};
  return {apply_op1(op_def("ProdGrad"), {x, ctx.output_grads[0]}, ctx.attrs,
                    std::source_location::current())};
}

std::string print_prod(const OpDef&, const Attrs& attrs) {
  return detail::print_reduce("mul", attrs);
}

// ProdGrad(x, g): x gives the shape and the factors; g is shaped like Prod's output.
std::vector<Type> infer_prod_grad(const InferContext& ctx) {
  const Type& x = ctx.input_type(0);
  const Type& g = ctx.input_type(1);
  const std::vector<int> axes = detail::reduced_axes(ctx.attrs, x.rank());
  const Dims expected =
      detail::reduced_dims(x.dims, axes, ctx.attrs.get_bool_or("keepdims", false));
  if (expected.rank() != g.rank()) {
    throw_error(ErrorKind::ShapeMismatch, "ProdGrad: gradient {} has rank {}, expected {}",
                g.to_string(), g.rank(), expected.rank());
  }
  return {Type{g.dtype, x.dims}};
}

void compute_prod_grad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& g = ctx.input(1);
  const std::vector<int> axes = detail::reduced_axes(*ctx.attrs, x.rank());
  const auto groups = static_cast<std::size_t>(g.numel());
  // First pass: per output element, the number of zeros and the product of the other factors.
  std::vector<std::int64_t> zero_count(groups, 0);
  std::vector<double> nonzero_product(groups, 1.0);
  detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
    const double value = x.at(in_flat);
    const auto group = static_cast<std::size_t>(out_flat);
    if (value == 0.0) {
      ++zero_count[group];
    } else {
      nonzero_product[group] *= value;
    }
  });
  Tensor& out = ctx.allocate_output(0, g.dtype(), x.shape());
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(out.raw_data());
    detail::for_each_reduced(x.shape(), axes, [&](std::int64_t in_flat, std::int64_t out_flat) {
      const double value = x.at(in_flat);
      const auto group = static_cast<std::size_t>(out_flat);
      double others = 0.0;  // product of the group's other factors
      if (zero_count[group] == 0) {
        others = nonzero_product[group] / value;
      } else if (zero_count[group] == 1 && value == 0.0) {
        others = nonzero_product[group];
      }
      data[in_flat] = static_cast<T>(g.at(out_flat) * others);
    });
  });
}

std::string print_prod_grad(const OpDef&, const Attrs& attrs) {
  return "ProdGrad" + detail::print_reduce("mul", attrs).substr(std::string("CAReduce{mul}").size());
}
}  // namespace

void register_prod(OpRegistry& registry) {
  registry.add({.name = "Prod",
                .family = "CAReduce",
                .summary = "product over axes",
                .num_inputs = 1,
                .infer = infer_prod,
                .reference = {"ref", compute_prod_reference},
                .fast = {"cpu", compute_prod},
                .pullback = pullback_prod,
                .cost = detail::reduce_cost,
                .print = print_prod});
}

void register_prod_grad(OpRegistry& registry) {
  registry.add({.name = "ProdGrad",
                .family = "ProdGrad",
                .summary = "gradient of Prod, exact where factors are zero",
                .num_inputs = 2,
                .infer = infer_prod_grad,
                .reference = {"ref", compute_prod_grad},
                .cost = detail::reduce_cost,
                .print = print_prod_grad});
}

}  // namespace tscope::ops

namespace tscope {

Variable prod(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims,
              const std::source_location& location) {
  return apply_op1(op_def("Prod"), {x}, ops::detail::reduce_attrs(x, axes, keepdims), location);
}

}  // namespace tscope
