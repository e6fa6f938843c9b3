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
#include <type_traits>
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
ElementwiseDTypes elementwise_dtypes(const ScalarOp& scalar,
                                     std::span<const Variable> inputs,
                                     const Attrs& attrs);
ElementwiseDTypes elementwise_dtypes(const ScalarOp& scalar,
                                     std::span<const DType> inputs,
                                     const Attrs& attrs);

std::vector<Type> infer_elementwise(const InferContext& ctx, DTypeSet accepted);
/// The static output dims of broadcasting `inputs` (an axis broadcasts only where its dim is
/// statically 1); throws ShapeMismatch naming `op_name` and the shapes.
Dims broadcast_static_dims(std::string_view op_name, std::span<const Variable> inputs);
/// Checks run-time shapes against the node's static broadcast pattern and returns the output
/// shape; throws ShapeMismatch naming the node.
Dims elementwise_output_shape(const KernelContext& ctx);
Cost elementwise_cost(const CostContext& ctx);
std::string print_elementwise(const OpDef& def, const Attrs& attrs);

/// Theano's destroy-map suffix of a node the use_inplace rewrite marked, "[(0, k)]"; else empty.
std::string inplace_suffix(const Attrs& attrs);
/// Inputs converted to `compute` where their dtype differs (kept alive in `storage`).
std::array<const Tensor*, 3> converted_inputs(const KernelContext& ctx,
                                              DType compute,
                                              std::array<Tensor, 3>& storage);

template <class Fn, class C, std::size_t K>
constexpr bool kCallable = []<std::size_t... I>(std::index_sequence<I...>) {
  return std::invocable<const Fn&, decltype((void)I, C{})...>;
}
(std::make_index_sequence<K>{});

template <class Fn, class C, std::size_t... I>
auto result_of_call(std::index_sequence<I...>)
    -> std::invoke_result_t<const Fn&, decltype((void)I, C{})...>;
/// The C++ type a functor returns for K arguments of type C: it is the output element type.
template <class Fn, class C, std::size_t K>
using ResultOf = std::decay_t<decltype(result_of_call<Fn, C>(std::make_index_sequence<K>{}))>;

/// A functor whose output dtype comes from an attribute rather than its return type (cast).
template <class Fn>
concept ExplicitOutputDType = Fn::kExplicitOutputDType;

/// Calls body(O{}, C{}) with the output and computation element types of a node. The output type
/// is the functor's return type, so each op instantiates one loop per computation dtype; only
/// explicit-output ops (cast) instantiate every output dtype.
template <class Fn, std::size_t K, class Body>
void visit_elementwise_types(const ElementwiseDTypes& types, Body&& body) {
  visit_dtype(types.compute, [&](auto compute_tag) {
    using C = decltype(compute_tag);
    if constexpr (!kCallable<Fn, C, K>) {
      TSCOPE_CHECK(false, "elementwise functor instantiated for a dtype its type rule rejects");
    } else if constexpr (ExplicitOutputDType<Fn>) {
      visit_dtype(types.output, [&](auto output_tag) { body(output_tag, compute_tag); });
    } else {
      using O = ResultOf<Fn, C, K>;
      TSCOPE_CHECK(kDTypeOf<O> == types.output,
                   "elementwise functor's result type disagrees with its dtype rule");
      body(O{}, compute_tag);
    }
  });
}

template <std::size_t K>
ElementwiseDTypes kernel_dtypes(const KernelContext& ctx) {
  std::array<DType, K> dtypes{};
  for (std::size_t k = 0; k < K; ++k) dtypes[k] = ctx.input(static_cast<int>(k)).dtype();
  return elementwise_dtypes(*ctx.node->op().scalar, dtypes, *ctx.attrs);
}

/// Up to this many elements a node whose operands need no layout analysis loops directly.
inline constexpr std::int64_t kSmallElementCount = 16;

/// True when every input is rank 0 or contiguous with exactly `shape`, and at least one carries
/// `shape` (a rank-0 output needs none): the flat index then addresses every operand directly.
template <std::size_t K>
bool flat_operands(const std::array<const Tensor*, K>& inputs, const Dims& shape) {
  bool shape_carried = shape.rank() == 0;
  for (const Tensor* input : inputs) {
    if (input->rank() == 0) continue;
    if (!(input->shape() == shape) || !input->is_contiguous()) return false;
    shape_carried = true;
  }
  return shape_carried;
}

/// Runs the loop into `out` for inputs already of the computation dtype. Tiny flat operands loop
/// directly: the general loop's layout analysis would cost more than the arithmetic.
template <class Fn, std::size_t K>
void run_loop(const ElementwiseDTypes& types,
              Tensor& out,
              const std::array<const Tensor*, K>& inputs) {
  visit_elementwise_types<Fn, K>(types, [&](auto output_tag, auto compute_tag) {
    using O = decltype(output_tag);
    using C = decltype(compute_tag);
    const std::int64_t count = out.numel();
    if (count > kSmallElementCount || !flat_operands(inputs, out.shape())) {
      run_elementwise_loop<O, C, K>(Fn{}, out, inputs);
      return;
    }
    O* out_data = static_cast<O*>(out.raw_data());
    std::array<const C*, K> data{};
    std::array<std::int64_t, K> step{};
    for (std::size_t k = 0; k < K; ++k) {
      data[k] = static_cast<const C*>(inputs[k]->raw_data());
      step[k] = inputs[k]->rank() == 0 ? 0 : 1;
    }
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      for (std::int64_t i = 0; i < count; ++i) {
        out_data[i] = convert_element<O>(Fn{}(data[I][i * step[I]]...));
      }
    }(std::make_index_sequence<K>{});
  });
}

/// Steady state of a function called again with unchanged shapes: the output slot still holds
/// this node's unshared result (only this kernel writes it, always contiguous), the operands are
/// flat (flat_operands) and every input already has the output dtype. Shape rule, dtype rule and
/// buffer choice are then settled, and the loop runs directly. Only for ops whose computation
/// dtype is their output dtype. Returns false otherwise.
template <class Fn, std::size_t K>
bool run_steady_state(KernelContext& ctx) {
  if constexpr (ExplicitOutputDType<Fn>) {
    return false;
  } else {
    const ElementwiseDTypeRule rule = ctx.node->op().scalar->dtype_rule;
    if (rule != ElementwiseDTypeRule::Promote && rule != ElementwiseDTypeRule::PromoteToFloat) {
      return false;
    }
    Tensor& out = ctx.output(0);
    if (!out.defined() || !held_only_here(out.buffer())) return false;
    std::array<const Tensor*, K> inputs{};
    for (std::size_t k = 0; k < K; ++k) {
      inputs[k] = &ctx.input(static_cast<int>(k));
      if (inputs[k]->dtype() != out.dtype()) return false;
    }
    if (!flat_operands(inputs, out.shape())) return false;
    run_loop<Fn, K>({out.dtype(), out.dtype()}, out, inputs);
    return true;
  }
}

/// The fast kernel: typed loop with flat fast paths (elementwise_loop.h).
template <class Fn, std::size_t K>
void elementwise_kernel(KernelContext& ctx) {
  if (run_steady_state<Fn, K>(ctx)) return;
  const Dims shape = elementwise_output_shape(ctx);
  const ElementwiseDTypes types = kernel_dtypes<K>(ctx);
  Tensor& out = ctx.allocate_output(0, types.output, shape);
  std::array<const Tensor*, K> inputs{};
  bool needs_conversion = false;
  for (std::size_t k = 0; k < K; ++k) {
    inputs[k] = &ctx.input(static_cast<int>(k));
    needs_conversion = needs_conversion || inputs[k]->dtype() != types.compute;
  }
  if (!needs_conversion) {
    run_loop<Fn, K>(types, out, inputs);
    return;
  }
  // Mixed dtypes: convert the odd inputs once (the cold path; no tensors are built otherwise).
  std::array<Tensor, 3> storage;
  const auto all = converted_inputs(ctx, types.compute, storage);
  for (std::size_t k = 0; k < K; ++k) inputs[k] = all[k];
  run_loop<Fn, K>(types, out, inputs);
}

/// The row-major flat index, in an input of `input_shape`, of the element that output element
/// `flat` of `shape` reads when the input broadcasts to `shape` (size-1 and missing axes repeat).
inline std::int64_t broadcast_source_index(const Dims& shape, const Dims& input_shape,
                                           std::int64_t flat) {
  std::int64_t rest = flat;
  std::int64_t in_flat = 0;
  std::int64_t in_scale = 1;
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    const std::int64_t coordinate = rest % shape[axis];
    rest /= shape[axis];
    const int in_axis = axis - (shape.rank() - input_shape.rank());
    if (in_axis < 0) continue;
    const std::int64_t extent = input_shape[in_axis];
    in_flat += (extent == 1 ? 0 : coordinate) * in_scale;
    in_scale *= extent;
  }
  return in_flat;
}

/// The reference kernel: one element at a time through flat-index arithmetic, no fast paths.
template <class Fn, std::size_t K>
void elementwise_reference_kernel(KernelContext& ctx) {
  const Dims shape = elementwise_output_shape(ctx);
  const ElementwiseDTypes types = kernel_dtypes<K>(ctx);
  Tensor& out = ctx.allocate_output(0, types.output, shape);
  const std::int64_t count = out.numel();
  visit_elementwise_types<Fn, K>(types, [&](auto output_tag, auto compute_tag) {
    using O = decltype(output_tag);
    using C = decltype(compute_tag);
    O* out_data = static_cast<O*>(out.raw_data());
    for (std::int64_t i = 0; i < count; ++i) {
      std::array<C, K> args{};
      for (std::size_t k = 0; k < K; ++k) {
        const Tensor& input = ctx.input(static_cast<int>(k));
        args[k] = static_cast<C>(input.at(broadcast_source_index(shape, input.shape(), i)));
      }
      out_data[i] = convert_element<O>(std::apply(Fn{}, args));
    }
  });
}

/// No vectorised math for this op: the typed loop is the fast kernel.
struct NoSimd {};

/// The SLEEF kernel; defined in simd_loop.h, which op files with a Simd policy include.
template <class Fn, std::size_t K, class Simd>
void elementwise_simd_kernel(KernelContext& ctx);

/// The block kernel of a functor without a Simd policy: the plain loop, which the compiler
/// vectorises for the arithmetic ops.
template <class Fn, std::size_t K, class C>
void block_kernel(const C* const* args, C* out, std::int64_t n) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    const std::array<const C*, K> data{args[I]...};
    for (std::int64_t i = 0; i < n; ++i) out[i] = Fn{}(data[I][i]...);
  }(std::make_index_sequence<K>{});
}

/// The SLEEF block kernel; defined in simd_loop.h, which op files with a Simd policy include.
template <class C, std::size_t K, class Simd>
void simd_block_kernel(const C* const* args, C* out, std::int64_t n);

/// The block kernel of a comparison: a Composite holds every value in its float type, so true and
/// false become 1 and 0 of that type (which a Cast to it keeps, as Cast's block kernel is the
/// identity).
template <class Fn, std::size_t K, class C>
void predicate_block_kernel(const C* const* args, C* out, std::int64_t n) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    const std::array<const C*, K> data{args[I]...};
    for (std::int64_t i = 0; i < n; ++i) out[i] = Fn{}(data[I][i]...) ? C{1} : C{0};
  }(std::make_index_sequence<K>{});
}

/// Whether `Fn`, called on C, returns R (and its output dtype is not an attribute).
template <class Fn, class C, std::size_t K, class R>
constexpr bool kReturns = [] {
  if constexpr (!kCallable<Fn, C, K> || ExplicitOutputDType<Fn>) {
    return false;
  } else {
    return std::is_same_v<ResultOf<Fn, C, K>, R>;
  }
}();

/// Whether `Fn` is a predicate on C (a comparison).
template <class Fn, class C, std::size_t K>
constexpr bool kIsPredicate = kReturns<Fn, C, K, bool>;

/// Whether `Fn` has a block kernel for C: it is callable on C and returns C.
template <class Fn, class C, std::size_t K>
constexpr bool kHasBlockKernel = kReturns<Fn, C, K, C>;

/// The block kernels of an op (op_def.h), empty unless it accepts floats and its functor maps
/// float to float and double to double under a Promote or PromoteToFloat dtype rule, or is a
/// comparison (predicate_block_kernel).
template <class Fn, std::size_t K, class Simd>
BlockKernels make_block_kernels(const ElementwiseSpec& spec) {
  const ElementwiseDTypeRule rule = spec.scalar->dtype_rule;
  if constexpr (kIsPredicate<Fn, float, K> && kIsPredicate<Fn, double, K>) {
    if (rule != ElementwiseDTypeRule::Bool || spec.accepted == DTypeSet::IntegralOrBool) return {};
    return {predicate_block_kernel<Fn, K, float>, predicate_block_kernel<Fn, K, double>};
  }
  const bool float_rule =
      rule == ElementwiseDTypeRule::Promote || rule == ElementwiseDTypeRule::PromoteToFloat;
  if constexpr (kHasBlockKernel<Fn, float, K> && kHasBlockKernel<Fn, double, K>) {
    if (!float_rule || spec.accepted == DTypeSet::IntegralOrBool) return {};
    if constexpr (std::is_same_v<Simd, NoSimd>) {
      return {block_kernel<Fn, K, float>, block_kernel<Fn, K, double>};
    } else {
      return {simd_block_kernel<float, K, Simd>, simd_block_kernel<double, K, Simd>};
    }
  } else {
    return {};
  }
}

/// Builds the OpDef. With a Simd policy (simd_loop.h) the fast kernel is the SLEEF loop, shown as
/// "simd" in profiles; without one it is the typed loop, shown as "cpu".
template <class Fn, std::size_t K, class Simd = NoSimd>
OpDef make_elementwise_def(const ElementwiseSpec& spec) {
  OpDef def;
  def.name = spec.name;
  def.family = "Elemwise";
  def.summary = spec.summary;
  def.num_inputs = static_cast<int>(K);
  def.num_outputs = 1;
  def.traits = {
      .elementwise = true, .commutative = spec.commutative, .zero_gradient = spec.zero_gradient};
  def.scalar = spec.scalar;
  def.block = make_block_kernels<Fn, K, Simd>(spec);
  def.pullback = spec.pullback;
  def.print = print_elementwise;
  def.cost = elementwise_cost;
  def.reference = {"ref", elementwise_reference_kernel<Fn, K>};
  if constexpr (std::is_same_v<Simd, NoSimd>) {
    def.fast = {"cpu", elementwise_kernel<Fn, K>};
  } else {
    def.fast = {"simd", elementwise_simd_kernel<Fn, K, Simd>};
  }
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
