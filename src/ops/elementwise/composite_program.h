// SPDX-License-Identifier: Apache-2.0
#pragma once
// The scalar expression of a Composite node, compiled from its "expression" attribute.
//
// The attribute is a list of statements separated by ';'. A statement is an elementwise op
// applied to operands, written with registry names: `Mul(Exp(TrueDiv(Neg(i0),i1)),i2)`. An operand
// is an input `i<k>`, the value of an earlier statement `t<j>`, or a nested op. The value of the
// last statement is the result. Statements let a value read twice be computed once:
// `Exp(i0);Mul(t0,t0)`. The fusion rewrite writes this form; it is parsed once per instruction
// (kernel state) and by the type rule.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// One op of the program. Operands are value ids: [0, num_inputs) are the inputs, num_inputs + s
/// is the result of step s.
struct CompositeStep {
  const OpDef* op = nullptr;
  int arity = 0;
  std::array<int, 3> operands{};
};

struct CompositeProgram {
  int num_inputs = 0;
  /// In evaluation order; every operand is an input or an earlier step.
  std::vector<CompositeStep> steps;
  /// The value ids of the node's outputs, each a distinct step: the last step unless the
  /// "outputs" attribute names statements.
  std::vector<int> outputs;

  [[nodiscard]] int value_count() const noexcept {
    return num_inputs + static_cast<int>(steps.size());
  }
  /// Sum of the steps' flops per element (ScalarOp::flops_per_element).
  [[nodiscard]] double flops_per_element() const;
};

/// What a Composite does with its expression's values: store them, or fold them over the axes of
/// its "axes" attribute like Sum ("add") or Max ("maximum").
enum class CompositeReduction { None, Add, Maximum };

/// The "reduce" attribute: absent is None; "add" or "maximum"; anything else is InvalidArgument.
[[nodiscard]] CompositeReduction composite_reduction(const Attrs& attrs);

/// One step of a "maximum" reduction, as Max folds: a NaN wins, as in NumPy.
template <class T>
T maximum_fold(T acc, T value) {
  if (acc != acc) return acc;
  if (value != value) return value;
  return value > acc ? value : acc;
}

/// A step's block kernel for the computation type C (float or double).
template <class C>
auto block_kernel_for(const BlockKernels& kernels) {
  if constexpr (std::is_same_v<C, float>) {
    return kernels.f32;
  } else {
    return kernels.f64;
  }
}

/// The fast kernel (composite_kernel.cpp).
void compute_composite(KernelContext& ctx);

/// Parses `expression` over `num_inputs` inputs; `outputs` are statement indices (t<j>) of the
/// node's outputs, empty for the last statement alone. Throws InvalidArgument saying what is
/// wrong and where: an unknown op, an op without block kernels (not fusable), a wrong operand
/// count, an input or statement out of range, an output named twice, or malformed text.
[[nodiscard]] CompositeProgram parse_composite(std::string_view expression, int num_inputs,
                                               std::span<const std::int64_t> outputs = {});

/// The program of a Composite node's attributes ("expression" and the optional "outputs").
[[nodiscard]] CompositeProgram parse_composite(const Attrs& attrs, int num_inputs);

/// The expression in Theano's notation, "exp(((-i0) / i1)) * i2" style: arithmetic infix and
/// fully parenthesised, other ops as calls by their scalar names; shared values are expanded.
/// Several outputs are separated by ", ". An expansion longer than 2048 characters (values read
/// twice, nested) is printed as statements instead: "t0=exp(i0); t1=(t0 * t0); t1".
[[nodiscard]] std::string print_composite_body(const CompositeProgram& program);

}  // namespace tscope::ops::detail
