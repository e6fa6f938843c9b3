// SPDX-License-Identifier: Apache-2.0
// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, built from a class mask: the target
// compared with the class indices selects each element's score, so weights, ignore_index and the
// three reductions are plain elementwise ops and sums.
#include <fmt/format.h>

#include "../converter.h"
#include "per_channel.h"
#include "axis_order.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"

namespace tscope::onnx {
namespace {

using Outputs = std::vector<Variable>;

/// (N, 1, d...) pattern for a (N, d...) tensor.
std::vector<std::int64_t> insert_class_axis(int rank) {
  std::vector<std::int64_t> pattern = {0, kNewAxis};
  for (int axis = 1; axis < rank; ++axis) pattern.push_back(axis);
  return pattern;
}

/// The loss of scores (N, C, d...) that are log-probabilities, per the ONNX definition.
Variable negative_log_likelihood(NodeContext& ctx, const Variable& scores, const Variable& target,
                                 const Variable& weight) {
  const int rank = scores.rank();
  const std::int64_t classes = scores.type().dims[1];
  if (classes == kUnknownDim) ctx.unsupported("a loss over an unknown number of classes");
  if (target.rank() != rank - 1) {
    throw_error(ErrorKind::ShapeMismatch, "target of rank {} for scores of rank {}; expected {}",
                target.rank(), rank, rank - 1);
  }
  std::vector<std::int64_t> indices(static_cast<std::size_t>(classes));
  for (std::int64_t c = 0; c < classes; ++c) indices[static_cast<std::size_t>(c)] = c;
  Dims index_shape = Dims::filled(rank, 1);
  index_shape[1] = classes;
  const Variable class_index =
      constant(Tensor::from_vector<std::int64_t>({classes}, indices).astype(target.dtype()).reshaped(index_shape));
  const Variable mask = cast(eq(dimshuffle(target, insert_class_axis(target.rank())), class_index),
                             scores.dtype());
  Variable loss = -sum(scores * mask, {1});
  const bool has_ignore = ctx.has_attribute("ignore_index");
  const std::int64_t ignore_index = ctx.attribute_int("ignore_index", 0);
  Variable element_weight;  // undefined: every element weighs 1
  if (weight.defined()) element_weight = sum(per_channel(weight, rank) * mask, {1});
  if (has_ignore) {
    const Variable kept = cast(neq(target, static_cast<double>(ignore_index)), scores.dtype());
    element_weight = element_weight.defined() ? element_weight * kept : kept;
  }
  // Weighted, and an ignored target inside [0, C) must not count.
  if (element_weight.defined()) loss = loss * element_weight;
  const std::string reduction = ctx.attribute_string("reduction", "mean");
  if (reduction == "none") return loss;
  if (reduction == "sum") return sum(loss);
  if (reduction != "mean") ctx.unsupported(fmt::format("reduction '{}'", reduction));
  if (!element_weight.defined()) return mean(loss);
  return sum(loss) / sum(element_weight);
}

Outputs convert_nll_loss(NodeContext& ctx) {
  const Variable weight = ctx.has_input(2) ? ctx.input(2) : Variable();
  return {negative_log_likelihood(ctx, ctx.input(0), ctx.input(1), weight)};
}

Outputs convert_softmax_cross_entropy(NodeContext& ctx) {
  const Variable& scores = ctx.input(0);
  // log_softmax over the class axis (1): moved last and back.
  const AxisToLast order = axis_to_last(scores.rank(), 1);
  const Variable log_prob = scores.rank() == 2
                                ? log_softmax(scores)
                                : dimshuffle(log_softmax(dimshuffle(scores, order.there)), order.back);
  const Variable weight = ctx.has_input(2) ? ctx.input(2) : Variable();
  Outputs outputs = {negative_log_likelihood(ctx, log_prob, ctx.input(1), weight)};
  if (ctx.num_outputs() > 1) outputs.push_back(log_prob);
  return outputs;
}

}  // namespace

void register_loss_converters(ConverterTable& table) {
  table.add("NegativeLogLikelihoodLoss", 12, convert_nll_loss);
  table.add("SoftmaxCrossEntropyLoss", 12, convert_softmax_cross_entropy);
}

}  // namespace tscope::onnx
