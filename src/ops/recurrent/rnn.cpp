// SPDX-License-Identifier: Apache-2.0
// Rnn and RnnGrad: one direction of an Elman RNN layer over a whole sequence,
// h_t = f(x_t W^T + h_{t-1} R^T + Wb + Rb) with f = tanh or relu (ONNX RNN). The forward kernel
// writes the input projection of every step straight into y with one product, then adds one
// product per step. RnnGrad needs no recomputation: f' follows from y (1 - h^2, or h > 0).
#include <vector>

#include "../linalg/blas_util.h"
#include "recurrent_common.h"
#include "recurrent_kernel.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/recurrent.h"

namespace tscope::ops {
namespace {
using detail::BackwardArgs;
using detail::CellKind;
using detail::ForwardArgs;

struct RnnCell {
  static constexpr CellKind kKind = CellKind::Rnn;

  template <class T, class Math>
  static void forward(const ForwardArgs<T>& a) {
    const auto& n = a.n;
    const std::int64_t hidden = n.hidden;
    const std::int64_t slab = n.batch * hidden;
    const std::int64_t rows = n.steps * n.batch;
    Math::gemm(false, true, rows, hidden, n.input, T(1), a.x, n.input, a.w, n.input, T(0), a.y,
               hidden);
    if (a.bias != nullptr) {
      detail::ScratchVector<T> bias(static_cast<std::size_t>(hidden));
      for (std::int64_t j = 0; j < hidden; ++j) bias[j] = a.bias[j] + a.bias[hidden + j];
      detail::add_to_rows(a.y, rows, hidden, hidden, bias.data());
    }
    detail::ScratchVector<T> h(static_cast<std::size_t>(slab), T(0));
    if (a.initial_h != nullptr) std::copy(a.initial_h, a.initial_h + slab, h.begin());
    for (std::int64_t s = 0; s < n.steps; ++s) {
      const std::int64_t t = a.reverse ? n.steps - 1 - s : s;
      T* y = a.y + t * slab;
      if (s > 0 || a.initial_h != nullptr) {  // a zero state adds nothing
        Math::gemm(false, true, n.batch, hidden, hidden, T(1), h.data(), hidden, a.r, hidden, T(1),
                   y, hidden);
      }
      if (a.relu) {
        for (std::int64_t i = 0; i < slab; ++i) y[i] = y[i] > T(0) ? y[i] : T(0);
      } else {
        Math::tanh(y, slab);
      }
      for (std::int64_t b = 0; b < n.batch; ++b) {
        T* row = y + b * hidden;
        if (detail::is_active(a, t, b)) {
          std::copy(row, row + hidden, h.begin() + b * hidden);
        } else {
          std::fill(row, row + hidden, T(0));  // h is kept
        }
      }
    }
    std::copy(h.begin(), h.end(), a.last_h);
  }

  template <class T, class Math>
  static void backward(const BackwardArgs<T>& a) {
    const ForwardArgs<T>& f = a.forward;
    const auto& n = f.n;
    const std::int64_t hidden = n.hidden;
    const std::int64_t slab = n.batch * hidden;
    const std::int64_t rows = n.steps * n.batch;
    const detail::ScratchVector<T> previous = detail::previous_states(f, a.y);
    detail::ScratchVector<T> d_pre(static_cast<std::size_t>(rows * hidden));
    detail::ScratchVector<T> dh(static_cast<std::size_t>(slab), T(0));
    if (a.d_last_h != nullptr) std::copy(a.d_last_h, a.d_last_h + slab, dh.begin());
    for (std::int64_t s = n.steps - 1; s >= 0; --s) {
      const std::int64_t t = f.reverse ? n.steps - 1 - s : s;
      const T* h = a.y + t * slab;
      const T* dy = a.dy != nullptr ? a.dy + t * slab : nullptr;
      T* d = d_pre.data() + t * slab;
      for (std::int64_t b = 0; b < n.batch; ++b) {
        // An inactive step passes dh through; its zero gradient row adds nothing below.
        if (!detail::is_active(f, t, b)) continue;
        for (std::int64_t i = b * hidden; i < (b + 1) * hidden; ++i) {
          const T dh_i = dh[i] + (dy != nullptr ? dy[i] : T(0));
          const T slope = f.relu ? (h[i] > T(0) ? T(1) : T(0)) : T(1) - h[i] * h[i];
          d[i] = dh_i * slope;
          dh[i] = T(0);  // receives d R below
        }
      }
      Math::gemm(false, false, n.batch, hidden, hidden, T(1), d, hidden, f.r, hidden, T(1),
                 dh.data(), hidden);
    }
    std::copy(dh.begin(), dh.end(), a.d_initial_h);
    Math::gemm(false, false, rows, n.input, hidden, T(1), d_pre.data(), hidden, f.w, n.input, T(0),
               a.dx, n.input);
    Math::gemm(true, false, hidden, n.input, rows, T(1), d_pre.data(), hidden, f.x, n.input, T(0),
               a.dw, n.input);
    Math::gemm(true, false, hidden, hidden, rows, T(1), d_pre.data(), hidden, previous.data(),
               hidden, T(0), a.dr, hidden);
    detail::add_column_sums(d_pre.data(), rows, hidden, hidden, a.dbias);
    std::copy(a.dbias, a.dbias + hidden, a.dbias + hidden);
  }
};

std::vector<Type> infer_rnn(const InferContext& ctx) {
  const std::string& activation = ctx.attrs.get_string("activation");
  if (activation != "tanh" && activation != "relu") {
    throw_error(ErrorKind::InvalidArgument, "Rnn: activation '{}' is not tanh or relu", activation);
  }
  return detail::infer_recurrent(ctx, CellKind::Rnn);
}
std::vector<Type> infer_rnn_grad(const InferContext& ctx) {
  return detail::infer_recurrent_grad(ctx, CellKind::Rnn);
}
std::vector<Variable> pullback_rnn(const PullbackContext& ctx) {
  return detail::pullback_recurrent(ctx, CellKind::Rnn);
}
Cost rnn_cost(const CostContext& ctx) { return detail::recurrent_cost(ctx, CellKind::Rnn, false); }
Cost rnn_grad_cost(const CostContext& ctx) { return detail::recurrent_cost(ctx, CellKind::Rnn, true); }
}  // namespace

void register_rnn(OpRegistry& registry) {
  registry.add({.name = "Rnn",
                .family = "Rnn",
                .summary = "one Elman RNN direction over a sequence (tanh or relu)",
                .num_inputs = -1,
                .num_outputs = 2,
                .infer = infer_rnn,
                .reference = {"ref", detail::compute_recurrent_reference<RnnCell>},
                .fast = {"blas", detail::compute_recurrent_fast<RnnCell>, nullptr,
                         detail::gemm_library_label},
                .pullback = pullback_rnn,
                .cost = rnn_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::recurrent_printed_name(CellKind::Rnn, false, attrs);
                }});
  registry.add({.name = "RnnGrad",
                .family = "RnnGrad",
                .summary = "backpropagation through time of Rnn: gradients of all its inputs",
                .num_inputs = -1,
                .num_outputs = -1,
                .infer = infer_rnn_grad,
                .reference = {"ref", detail::compute_recurrent_grad_reference<RnnCell>},
                .fast = {"blas", detail::compute_recurrent_grad_fast<RnnCell>, nullptr,
                         detail::gemm_library_label},
                .cost = rnn_grad_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::recurrent_printed_name(CellKind::Rnn, true, attrs);
                }});
}

}  // namespace tscope::ops

namespace tscope {

RecurrentResult rnn(const Variable& x, const Variable& w, const Variable& r,
                    const RnnOptions& options, const std::source_location& location) {
  Attrs attrs = ops::detail::recurrent_attrs(ops::detail::hidden_extent(r), options.reverse,
                                             options.bias.defined(), options.initial_h.defined(),
                                             false, false, options.sequence_lens.defined());
  attrs.set("activation", std::string(options.activation == RnnActivation::Relu ? "relu" : "tanh"));
  std::vector<Variable> inputs = {x, w, r};
  for (const Variable* optional : {&options.bias, &options.initial_h, &options.sequence_lens}) {
    if (optional->defined()) inputs.push_back(*optional);
  }
  const std::vector<Variable> outputs = ops::detail::apply_recurrent(
      ops::detail::CellKind::Rnn, std::move(inputs), std::move(attrs), location);
  return {outputs[0], outputs[1], Variable()};
}

}  // namespace tscope
