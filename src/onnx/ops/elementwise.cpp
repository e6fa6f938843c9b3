// SPDX-License-Identifier: Apache-2.0
// ONNX elementwise ops: unary and binary maps, comparisons, logic, Where, Clip, Cast, variadic
// Max/Min/Sum/Mean, and activations built from elementwise ops.
#include "tscope/ops/elementwise.h"

#include <fmt/format.h>

#include <limits>

#include "../converter.h"
#include "../reader.h"
#include "per_channel.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/random.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;
using UnaryBuilder = Variable (*)(const Variable&, const std::source_location&);
using BinaryBuilder = Variable (*)(const Operand&, const Operand&, const std::source_location&);

template <UnaryBuilder Build>
Outputs unary(NodeContext& ctx) {
  return {Build(ctx.input(0), std::source_location::current())};
}

/// The second operand of a binary op. Before opset 7 broadcasting was opt-in (`broadcast`) and
/// could align B with A at `axis` instead of at the right; from 7 on it is NumPy's.
Variable second_operand(NodeContext& ctx) {
  Variable b = ctx.input(1);
  if (ctx.opset() >= 7) return b;
  const Variable& a = ctx.input(0);
  const bool broadcast = ctx.attribute_int("broadcast", 0) != 0;
  if (!broadcast || !ctx.has_attribute("axis")) return b;
  const std::int64_t axis = ctx.axis(ctx.attribute_int("axis", 0), a.rank(), "axis");
  if (axis + b.rank() > a.rank()) {
    throw_error(ErrorKind::ShapeMismatch, "B of rank {} does not fit A of rank {} at axis {}",
                b.rank(), a.rank(), axis);
  }
  std::vector<std::int64_t> pattern;
  for (std::int64_t i = 0; i < a.rank(); ++i) {
    pattern.push_back(i >= axis && i < axis + b.rank() ? i - axis : kNewAxis);
  }
  return dimshuffle(b, pattern);
}

template <BinaryBuilder Build>
Outputs binary(NodeContext& ctx) {
  return {Build(ctx.input(0), second_operand(ctx), std::source_location::current())};
}

Outputs convert_div(NodeContext& ctx) {
  const Variable& a = ctx.input(0);
  const Variable b = second_operand(ctx);
  if (is_floating(a.dtype())) return {true_div(a, b)};
  if (a.dtype() == DType::UInt8) return {int_div(a, b)};
  // Integer Div truncates toward zero, as in C and ONNX Runtime (-7 / 2 == -3); IntDiv floors
  // (-4). ONNX's own tests use only non-negative values, where the two agree.
  const Variable quotient = int_div(abs(a), abs(b));
  return {switch_(logical_xor(lt(a, 0), lt(b, 0)), -quotient, quotient)};
}

Outputs convert_pow(NodeContext& ctx) {
  const Variable& base = ctx.input(0);
  Variable result = pow(base, second_operand(ctx));
  // ONNX: the result has the base's type even when the exponent's differs.
  if (result.dtype() != base.dtype()) result = cast(result, base.dtype());
  return {result};
}

Outputs convert_mod(NodeContext& ctx) {
  const Variable& a = ctx.input(0);
  const Variable& b = ctx.input(1);
  if (ctx.attribute_int("fmod", 0) == 0) {
    if (is_floating(a.dtype())) ctx.unsupported("Mod with fmod=0 on floating-point inputs");
    return {mod(a, b)};
  }
  // C fmod: the remainder takes the dividend's sign, a - b * trunc(a / b).
  if (!is_floating(a.dtype())) {
    const Variable quotient = int_div(abs(a), abs(b));
    const Variable remainder = abs(a) - quotient * abs(b);
    return {switch_(lt(a, 0), -remainder, remainder)};
  }
  const Variable ratio = a / b;
  const Variable truncated = switch_(ge(ratio, 0.0), floor(ratio), ceil(ratio));
  return {a - b * truncated};
}

Outputs convert_leaky_relu(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const double alpha = ctx.attribute_float("alpha", 0.01);
  return {switch_(gt(x, 0.0), x, x * alpha)};
}

Outputs convert_elu(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const double alpha = ctx.attribute_float("alpha", 1.0);
  return {switch_(gt(x, 0.0), x, expm1(x) * alpha)};
}

Outputs convert_selu(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const double alpha = ctx.attribute_float("alpha", 1.67326319217681884765625);
  const double gamma = ctx.attribute_float("gamma", 1.05070102214813232421875);
  return {switch_(gt(x, 0.0), x, expm1(x) * alpha) * gamma};
}

Outputs convert_prelu(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  Variable slope = ctx.input(1);
  // Before opset 7 a 1-D slope is per channel (axis 1); from 7 on it broadcasts like NumPy.
  if (ctx.opset() < 7 && slope.rank() == 1 && x.rank() > 2) slope = per_channel(slope, x.rank());
  return {switch_(lt(x, 0.0), x * slope, x)};
}

Outputs convert_hard_sigmoid(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const double alpha = ctx.attribute_float("alpha", 0.2);
  const double beta = ctx.attribute_float("beta", 0.5);
  return {clip(x * alpha + beta, 0.0, 1.0)};
}

/// HardSwish (opset 14): x * HardSigmoid(x) with alpha = 1/6 and beta = 1/2, MobileNet-v3's
/// activation; the chain fuses into one elementwise pass.
Outputs convert_hard_swish(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {x * clip(x * (1.0 / 6.0) + 0.5, 0.0, 1.0)};
}

Outputs convert_softsign(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {x / (abs(x) + 1.0)};
}

Outputs convert_thresholded_relu(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const double alpha = ctx.attribute_float("alpha", 1.0);
  return {switch_(gt(x, alpha), x, 0.0)};
}

/// Clip before opset 11: bounds are attributes (float limits when absent).
Outputs convert_clip_6(NodeContext& ctx) {
  Variable x = ctx.input(0);
  if (ctx.has_attribute("min")) x = maximum(x, ctx.attribute_float("min", 0.0));
  if (ctx.has_attribute("max")) x = minimum(x, ctx.attribute_float("max", 0.0));
  return {x};
}

/// Clip from opset 11: bounds are optional scalar inputs.
Outputs convert_clip_11(NodeContext& ctx) {
  Variable x = ctx.input(0);
  if (ctx.has_input(1)) x = maximum(x, ctx.input(1));
  if (ctx.has_input(2)) x = minimum(x, ctx.input(2));
  return {x};
}

Outputs convert_shrink(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const double lambd = ctx.attribute_float("lambd", 0.5);
  const double bias = ctx.attribute_float("bias", 0.0);
  return {switch_(lt(x, -lambd), x + bias, switch_(gt(x, lambd), x - bias, 0.0))};
}

Outputs convert_is_inf(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  const bool positive = ctx.attribute_int("detect_positive", 1) != 0;
  const bool negative = ctx.attribute_int("detect_negative", 1) != 0;
  const double infinity = std::numeric_limits<double>::infinity();
  if (positive && negative) return {eq(abs(x), infinity)};
  if (positive) return {eq(x, infinity)};
  if (negative) return {eq(x, -infinity)};
  return {logical_and(eq(x, infinity), eq(x, -infinity))};  // detects nothing: all false
}

Outputs convert_is_nan(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {neq(x, x)};  // NaN is the only value unequal to itself
}

Outputs convert_tan(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {sin(x) / cos(x)};
}

Outputs convert_sinh(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {(exp(x) - exp(-x)) * 0.5};
}

Outputs convert_cosh(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {(exp(x) + exp(-x)) * 0.5};
}

Outputs convert_asinh(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {log(x + sqrt(sqr(x) + 1.0))};
}

Outputs convert_acosh(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {log(x + sqrt(sqr(x) - 1.0))};
}

Outputs convert_atanh(NodeContext& ctx) {
  const Variable& x = ctx.input(0);
  return {log((x + 1.0) / (-x + 1.0)) * 0.5};
}

Outputs convert_where(NodeContext& ctx) {
  return {switch_(ctx.input(0), ctx.input(1), ctx.input(2))};
}

Outputs convert_cast(NodeContext& ctx) {
  const auto to = static_cast<int>(ctx.required_attribute_int("to"));
  const DType dtype = dtype_from_onnx(to, "the 'to' attribute");
  const Variable& x = ctx.input(0);
  if (x.dtype() == dtype) return {x};
  return {cast(x, dtype)};
}

template <BinaryBuilder Build>
Outputs variadic(NodeContext& ctx) {
  const std::vector<Variable> inputs = ctx.inputs_from(0);
  if (inputs.empty()) ctx.unsupported("a variadic op with no inputs");
  Variable result = inputs.front();
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    result = Build(result, inputs[i], std::source_location::current());
  }
  return {result};
}

Outputs convert_mean(NodeContext& ctx) {
  const std::vector<Variable> inputs = ctx.inputs_from(0);
  Variable total = variadic<add>(ctx).front();
  if (inputs.size() == 1) return {total};
  return {total / static_cast<double>(inputs.size())};
}

Outputs convert_identity(NodeContext& ctx) { return {ctx.input(0)}; }

// The ratio a Dropout drops: opset 12's input (0.5 when absent), or the attribute before it.
double dropout_ratio(NodeContext& ctx) {
  if (ctx.opset() < 12) return ctx.attribute_float("ratio", 0.5);
  if (!ctx.has_input(1)) return 0.5;
  const std::optional<Tensor> ratio = ctx.constant_input(1);
  if (!ratio) ctx.unsupported("Dropout with a ratio that is not known at import");
  return ratio->at(0);
}

// A trainable import's Dropout: active whatever its training_mode says, since the model is being
// trained. Inverted dropout, as ONNX defines it: kept elements are scaled by 1 / (1 - ratio), and
// the mask output is the kept elements.
Outputs trainable_dropout(NodeContext& ctx) {
  ctx.ignore_attribute("seed");  // the import's random stream draws every mask
  ctx.ignore_attribute("is_test");
  const double ratio = dropout_ratio(ctx);
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    ctx.unsupported(fmt::format("Dropout ratio {}; 0 <= ratio < 1 is supported", ratio));
  }
  const Variable& x = ctx.input(0);
  if (ratio == 0.0) {
    Outputs outputs = {x};
    if (ctx.num_outputs() > 1) outputs.push_back(cast(ones_like(x), DType::Bool));
    return outputs;
  }
  RandomStream& random = ctx.training()->random();
  const Variable draws = x.type().is_fully_known()
                             ? random.uniform(0.0, 1.0, x.type().dims, x.dtype())
                             : random.uniform(0.0, 1.0, shape(x), x.dtype());
  const Variable kept = draws >= ratio;
  Outputs outputs = {x * (cast(kept, x.dtype()) * (1.0 / (1.0 - ratio)))};
  if (ctx.num_outputs() > 1) outputs.push_back(kept);
  return outputs;
}

Outputs convert_dropout(NodeContext& ctx) {
  if (ctx.training() != nullptr) return trainable_dropout(ctx);
  // Inference semantics: the identity. In training mode (opset 12's third input) only a ratio of
  // 0 is: every element kept, unscaled. Exporters write that for a dropout called without its
  // training flag (Swin's attention), so the model imports; a nonzero ratio would draw masks.
  ctx.ignore_attribute("seed");
  ctx.ignore_attribute("ratio");
  ctx.ignore_attribute("is_test");
  if (ctx.has_input(2)) {
    const std::optional<Tensor> training = ctx.constant_input(2);
    if (!training) ctx.unsupported("Dropout whose training_mode is not a constant");
    if (training->at(0) != 0.0) {
      // The ratio input defaults to 0.5 when absent.
      const std::optional<Tensor> ratio =
          ctx.has_input(1) ? ctx.constant_input(1) : std::optional<Tensor>(Tensor::scalar(0.5));
      if (!ratio) ctx.unsupported("Dropout in training mode with a ratio that is not a constant");
      if (ratio->at(0) != 0.0) {
        ctx.unsupported(fmt::format(
            "Dropout in training mode with ratio {} (random masks; only ratio 0 is supported)",
            ratio->at(0)));
      }
    }
  }
  const Variable& x = ctx.input(0);
  Outputs outputs = {x};
  if (ctx.num_outputs() > 1) outputs.push_back(cast(ones_like(x), DType::Bool));
  return outputs;
}

}  // namespace

void register_elementwise_converters(ConverterTable& table) {
  table.add("Abs", 6, unary<abs>);
  table.add("Acosh", 9, convert_acosh);
  table.add("Asinh", 9, convert_asinh);
  table.add("Atanh", 9, convert_atanh);
  table.add("Cosh", 9, convert_cosh);
  table.add("IsInf", 10, convert_is_inf);
  table.add("IsNaN", 9, convert_is_nan);
  table.add("Shrink", 9, convert_shrink);
  table.add("Sinh", 9, convert_sinh);
  table.add("Tan", 7, convert_tan);
  table.add("Add", 1, binary<add>);
  table.add("And", 1, binary<logical_and>);
  table.add("Cast", 6, convert_cast);
  table.add("Ceil", 6, unary<ceil>);
  table.add("Clip", 6, convert_clip_6);
  table.add("Clip", 11, convert_clip_11);
  table.add("Cos", 7, unary<cos>);
  table.add("Div", 1, convert_div);
  table.add("Dropout", 7, convert_dropout);
  table.add("Elu", 6, convert_elu);
  table.add("Equal", 1, binary<eq>);
  table.add("Erf", 9, unary<erf>);
  table.add("Exp", 6, unary<exp>);
  table.add("Floor", 6, unary<floor>);
  table.add("Greater", 1, binary<gt>);
  table.add("GreaterOrEqual", 12, binary<ge>);
  table.add("HardSigmoid", 6, convert_hard_sigmoid);
  table.add("HardSwish", 14, convert_hard_swish);
  table.add("Identity", 1, convert_identity);
  table.add("LeakyRelu", 6, convert_leaky_relu);
  table.add("Less", 1, binary<lt>);
  table.add("LessOrEqual", 12, binary<le>);
  table.add("Log", 6, unary<log>);
  table.add("Max", 8, variadic<maximum>);
  table.add("Mean", 8, convert_mean);
  table.add("Min", 8, variadic<minimum>);
  table.add("Mod", 10, convert_mod);
  table.add("Mul", 1, binary<mul>);
  table.add("Neg", 6, unary<neg>);
  table.add("Not", 1, unary<logical_not>);
  table.add("Or", 1, binary<logical_or>);
  table.add("PRelu", 6, convert_prelu);
  table.add("Pow", 1, convert_pow);
  table.add("Reciprocal", 6, unary<reciprocal>);
  table.add("Relu", 6, unary<relu>);
  table.add("Round", 11, unary<round>);
  table.add("Selu", 6, convert_selu);
  table.add("Sigmoid", 6, unary<sigmoid>);
  table.add("Sign", 9, unary<sgn>);
  table.add("Sin", 7, unary<sin>);
  table.add("Softplus", 1, unary<softplus>);
  table.add("Softsign", 1, convert_softsign);
  table.add("Sqrt", 6, unary<sqrt>);
  table.add("Sub", 1, binary<sub>);
  table.add("Sum", 8, variadic<add>);
  table.add("Tanh", 6, unary<tanh>);
  table.add("ThresholdedRelu", 10, convert_thresholded_relu);
  table.add("Where", 9, convert_where);
  table.add("Xor", 1, binary<logical_xor>);
}

}  // namespace tscope::onnx
