// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builds the OpDef of an elementwise op from its scalar functor. Each op file (add.cpp, exp.cpp,
// ...) defines the functor, the pullback and calls make_elementwise_def; everything shared by all
// elementwise ops (type rule, broadcasting, kernels, cost, printed name) lives here once.
//
// A functor is a struct with a template call operator over the computation type C:
//   struct AddFn { template <class C> C operator()(C a, C b) const { return a + b; } };
// It is instantiated only for dtypes where it compiles; infer() rejects the others.
#include <array>
#include <concepts>
#include <span>
#include <vector>

#include "elementwise_loop.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/op_def.h"
#include "tscope/ops/scalar_op.h"

namespace tscope::ops::detail {

/// Which input dtypes an elementwise op accepts.
enum class DTypeSet { Any, Numeric, Float, IntegralOrBool };

struct ElementwiseSpec {
  std::string_view name;  ///< registry name, "Add"
  std::string_view summary;
  const ScalarOp* scalar = nullptr;
  DTypeSet accepted = DTypeSet::Numeric;
  PullbackFn pullback = nullptr;
  bool zero_gradient = false;
  bool commutative = false;
};

/// Output and computation dtypes of an elementwise node with these input types.
struct ElementwiseDTypes {
  DType compute;
  DType output;
};
ElementwiseDTypes elementwise_dtypes(const ScalarOp& scalar, std::span<const Variable> inputs,
                                     const Attrs& attrs);
ElementwiseDTypes elementwise_dtypes(const ScalarOp& scalar, std::span<const DType> inputs,
                                     const Attrs& attrs);

std::vector<Type> infer_elementwise(const InferContext& ctx, DTypeSet accepted);
/// Checks run-time shapes against the node's static broadcast pattern and returns the output
/// shape; throws ShapeMismatch naming the node.
Dims elementwise_output_shape(const KernelContext& ctx);
Cost elementwise_cost(const CostContext& ctx);
std::string print_elementwise(const OpDef& def, const Attrs& attrs);
/// Inputs converted to `compute` where their dtype differs (kept alive in `storage`).
std::array<const Tensor*, 3> converted_inputs(const KernelContext& ctx, DType compute,
                                              std::array<Tensor, 3>& storage);

template <class Fn, class C, std::size_t K>
constexpr bool kCallable = []<std::size_t... I>(std::index_sequence<I...>) {
  return std::invocable<const Fn&, decltype((void)I, C{})...>;
}(std::make_index_sequence<K>{});

/// The fast kernel: typed strided loop.
template <class Fn, std::size_t K>
void elementwise_kernel(KernelContext& ctx) {
  const OpDef& def = ctx.node->op();
  const Dims shape = elementwise_output_shape(ctx);
  std::array<DType, K> dtypes{};
  for (std::size_t k = 0; k < K; ++k) dtypes[k] = ctx.input(static_cast<int>(k)).dtype();
  const ElementwiseDTypes types = elementwise_dtypes(*def.scalar, dtypes, *ctx.attrs);
  Tensor& out = ctx.allocate_output(0, types.output, shape);
  std::array<Tensor, 3> storage;
  const auto all = converted_inputs(ctx, types.compute, storage);
  std::array<const Tensor*, K> inputs{};
  for (std::size_t k = 0; k < K; ++k) inputs[k] = all[k];
  visit_dtype(types.compute, [&](auto compute_tag) {
    using C = decltype(compute_tag);
    if constexpr (kCallable<Fn, C, K>) {
      visit_dtype(types.output, [&](auto output_tag) {
        using O = decltype(output_tag);
        run_elementwise_loop<O, C, K>(Fn{}, out, inputs);
      });
    } else {
      TSCOPE_CHECK(false, "elementwise functor instantiated for a dtype its type rule rejects");
    }
  });
}

/// The reference kernel: one element at a time through flat-index arithmetic, no fast paths.
template <class Fn, std::size_t K>
void elementwise_reference_kernel(KernelContext& ctx) {
  const OpDef& def = ctx.node->op();
  const Dims shape = elementwise_output_shape(ctx);
  std::array<DType, K> dtypes{};
  for (std::size_t k = 0; k < K; ++k) dtypes[k] = ctx.input(static_cast<int>(k)).dtype();
  const ElementwiseDTypes types = elementwise_dtypes(*def.scalar, dtypes, *ctx.attrs);
  Tensor& out = ctx.allocate_output(0, types.output, shape);
  const std::int64_t count = out.numel();
  visit_dtype(types.compute, [&](auto compute_tag) {
    using C = decltype(compute_tag);
    if constexpr (kCallable<Fn, C, K>) {
      visit_dtype(types.output, [&](auto output_tag) {
        using O = decltype(output_tag);
        O* out_data = static_cast<O*>(out.raw_data());
        for (std::int64_t i = 0; i < count; ++i) {
          std::array<C, K> args{};
          for (std::size_t k = 0; k < K; ++k) {
            const Tensor& input = ctx.input(static_cast<int>(k));
            // Map the output's flat index to the input's, broadcasting size-1 and missing axes.
            std::int64_t rest = i;
            std::int64_t in_flat = 0;
            std::int64_t in_scale = 1;
            for (int axis = shape.rank() - 1; axis >= 0; --axis) {
              const std::int64_t coordinate = rest % shape[axis];
              rest /= shape[axis];
              const int in_axis = axis - (shape.rank() - input.rank());
              if (in_axis < 0) continue;
              const std::int64_t extent = input.shape()[in_axis];
              in_flat += (extent == 1 ? 0 : coordinate) * in_scale;
              in_scale *= extent;
            }
            args[k] = static_cast<C>(input.at(in_flat));
          }
          out_data[i] = static_cast<O>(std::apply(Fn{}, args));
        }
      });
    } else {
      TSCOPE_CHECK(false, "elementwise functor instantiated for a dtype its type rule rejects");
    }
  });
}

template <class Fn, std::size_t K>
OpDef make_elementwise_def(const ElementwiseSpec& spec) {
  OpDef def;
  def.name = spec.name;
  def.family = "Elemwise";
  def.summary = spec.summary;
  def.num_inputs = static_cast<int>(K);
  def.num_outputs = 1;
  def.traits = {.elementwise = true, .commutative = spec.commutative,
                .zero_gradient = spec.zero_gradient};
  def.scalar = spec.scalar;
  def.pullback = spec.pullback;
  def.print = print_elementwise;
  def.cost = elementwise_cost;
  def.reference = {"ref", elementwise_reference_kernel<Fn, K>};
  def.fast = {"cpu", elementwise_kernel<Fn, K>};
  switch (spec.accepted) {
    case DTypeSet::Any:
      def.infer = [](const InferContext& ctx) { return infer_elementwise(ctx, DTypeSet::Any); };
      break;
    case DTypeSet::Numeric:
      def.infer = [](const InferContext& ctx) { return infer_elementwise(ctx, DTypeSet::Numeric); };
      break;
    case DTypeSet::Float:
      def.infer = [](const InferContext& ctx) { return infer_elementwise(ctx, DTypeSet::Float); };
      break;
    case DTypeSet::IntegralOrBool:
      def.infer = [](const InferContext& ctx) {
        return infer_elementwise(ctx, DTypeSet::IntegralOrBool);
      };
      break;
  }
  return def;
}

}  // namespace tscope::ops::detail
