// SPDX-License-Identifier: Apache-2.0
// Lstm and LstmGrad: one direction of an LSTM layer over a whole sequence (ONNX equations, gate
// order i, o, f, c, optional peepholes P = (Pi, Po, Pf)):
//   i = sigmoid(x Wi^T + h Ri^T + Wbi + Rbi + Pi . c_prev)    g = tanh(x Wc^T + h Rc^T + Wbc + Rbc)
//   f = sigmoid(x Wf^T + h Rf^T + Wbf + Rbf + Pf . c_prev)    c = f . c_prev + i . g
//   o = sigmoid(x Wo^T + h Ro^T + Wbo + Rbo + Po . c)         h = o . tanh(c)
// The forward kernel projects every step's input with one product, then runs one product per step
// for the recurrence. LstmGrad recomputes the gates from y (two products over the whole sequence
// and one elementwise pass for c), then backpropagates through time with one product per step.
#include <array>
#include <vector>

#include "../linalg/blas_util.h"
#include "recurrent_common.h"
#include "recurrent_dnnl.h"
#include "recurrent_kernel.h"
#include "tscope/graph/op_registry.h"
#include "tscope/ops/recurrent.h"

namespace tscope::ops {
namespace {
using detail::BackwardArgs;
using detail::CellKind;
using detail::ForwardArgs;

/// One batch row of gates g (4 * hidden: i, o, f, c pre-activations, overwritten by the
/// activations) given c_prev; writes the new cell state into c (may alias c_prev).
template <class T, class Math>
void lstm_gates_row(T* g, const T* c_prev, T* c, const T* peepholes, std::int64_t hidden) {
  T* in = g;
  T* out = g + hidden;
  T* forget = g + 2 * hidden;
  T* cell = g + 3 * hidden;
  if (peepholes != nullptr) {
    for (std::int64_t j = 0; j < hidden; ++j) {
      in[j] += peepholes[j] * c_prev[j];
      forget[j] += peepholes[2 * hidden + j] * c_prev[j];
    }
    Math::sigmoid(in, hidden);
    Math::sigmoid(forget, hidden);
  } else {
    Math::sigmoid(g, 3 * hidden);  // i, o and f at once
  }
  Math::tanh(cell, hidden);
  for (std::int64_t j = 0; j < hidden; ++j) c[j] = forget[j] * c_prev[j] + in[j] * cell[j];
  if (peepholes != nullptr) {
    for (std::int64_t j = 0; j < hidden; ++j) out[j] += peepholes[hidden + j] * c[j];
    Math::sigmoid(out, hidden);
  }
}

struct LstmCell {
  static constexpr CellKind kKind = CellKind::Lstm;

  /// gates (rows, 4 * hidden) = x W^T + (Wb + Rb).
  template <class T, class Math>
  static detail::ScratchVector<T> input_projection(const ForwardArgs<T>& a) {
    const auto& n = a.n;
    const std::int64_t gated = 4 * n.hidden;
    const std::int64_t rows = n.steps * n.batch;
    detail::ScratchVector<T> gates(static_cast<std::size_t>(rows * gated));
    Math::gemm(false, true, rows, gated, n.input, T(1), a.x, n.input, a.w, n.input, T(0),
               gates.data(), gated);
    if (a.bias != nullptr) {
      detail::ScratchVector<T> bias(static_cast<std::size_t>(gated));
      for (std::int64_t j = 0; j < gated; ++j) bias[j] = a.bias[j] + a.bias[gated + j];
      detail::add_to_rows(gates.data(), rows, gated, gated, bias.data());
    }
    return gates;
  }

  template <class T, class Math>
  static void forward(const ForwardArgs<T>& a) {
    const auto& n = a.n;
    const std::int64_t gated = 4 * n.hidden;
    const std::int64_t slab = n.batch * n.hidden;
    detail::ScratchVector<T> gates = input_projection<T, Math>(a);
    detail::ScratchVector<T> c(static_cast<std::size_t>(slab), T(0));
    if (a.initial_c != nullptr) std::copy(a.initial_c, a.initial_c + slab, c.begin());
    detail::ScratchVector<T> h(static_cast<std::size_t>(slab), T(0));
    if (a.initial_h != nullptr) std::copy(a.initial_h, a.initial_h + slab, h.begin());
    detail::ScratchVector<T> tanh_c(static_cast<std::size_t>(n.hidden));
    for (std::int64_t s = 0; s < n.steps; ++s) {
      const std::int64_t t = a.reverse ? n.steps - 1 - s : s;
      T* g = gates.data() + t * n.batch * gated;
      if (s > 0 || a.initial_h != nullptr) {  // a zero state adds nothing
        Math::gemm(false, true, n.batch, gated, n.hidden, T(1), h.data(), n.hidden, a.r, n.hidden,
                   T(1), g, gated);
      }
      T* y = a.y + t * slab;
      for (std::int64_t b = 0; b < n.batch; ++b) {
        if (!detail::is_active(a, t, b)) continue;  // y stays zero; h and c are kept
        T* row = g + b * gated;
        T* c_row = c.data() + b * n.hidden;
        lstm_gates_row<T, Math>(row, c_row, c_row, a.peepholes, n.hidden);
        std::copy(c_row, c_row + n.hidden, tanh_c.begin());
        Math::tanh(tanh_c.data(), n.hidden);
        const T* out = row + n.hidden;
        for (std::int64_t j = 0; j < n.hidden; ++j) {
          y[b * n.hidden + j] = out[j] * tanh_c[j];
          h[b * n.hidden + j] = y[b * n.hidden + j];
        }
      }
    }
    std::copy(h.begin(), h.end(), a.last_h);
    std::copy(c.begin(), c.end(), a.last_c);
  }

  template <class T, class Math>
  static void backward(const BackwardArgs<T>& a) {
    const ForwardArgs<T>& f = a.forward;
    const auto& n = f.n;
    const std::int64_t hidden = n.hidden;
    const std::int64_t gated = 4 * hidden;
    const std::int64_t slab = n.batch * hidden;
    const std::int64_t rows = n.steps * n.batch;
    const detail::ScratchVector<T> previous = detail::previous_states(f, a.y);
    // Recompute every gate: the recurrence product over the whole sequence at once, as h_{t-1}
    // is known from y; then c step by step (elementwise only).
    detail::ScratchVector<T> gates = input_projection<T, Math>(f);
    Math::gemm(false, true, rows, gated, hidden, T(1), previous.data(), hidden, f.r, hidden, T(1),
               gates.data(), gated);
    detail::ScratchVector<T> initial_c(static_cast<std::size_t>(slab), T(0));
    if (f.initial_c != nullptr) std::copy(f.initial_c, f.initial_c + slab, initial_c.begin());
    detail::ScratchVector<T> cells(static_cast<std::size_t>(rows * hidden));
    auto c_before = [&](std::int64_t s, std::int64_t t) -> const T* {
      if (s == 0) return initial_c.data();
      return cells.data() + (f.reverse ? t + 1 : t - 1) * slab;
    };
    for (std::int64_t s = 0; s < n.steps; ++s) {
      const std::int64_t t = f.reverse ? n.steps - 1 - s : s;
      const T* c_prev = c_before(s, t);
      for (std::int64_t b = 0; b < n.batch; ++b) {
        T* c = cells.data() + t * slab + b * hidden;
        if (!detail::is_active(f, t, b)) {
          std::copy(c_prev + b * hidden, c_prev + (b + 1) * hidden, c);  // the state is kept
          continue;
        }
        lstm_gates_row<T, Math>(gates.data() + (t * n.batch + b) * gated, c_prev + b * hidden, c,
                                f.peepholes, hidden);
      }
    }
    // Backpropagation through time; d_gates holds the pre-activation gradients.
    detail::ScratchVector<T> d_gates(static_cast<std::size_t>(rows * gated));
    detail::ScratchVector<T> dh(static_cast<std::size_t>(slab), T(0));
    detail::ScratchVector<T> dc(static_cast<std::size_t>(slab), T(0));
    if (a.d_last_h != nullptr) std::copy(a.d_last_h, a.d_last_h + slab, dh.begin());
    if (a.d_last_c != nullptr) std::copy(a.d_last_c, a.d_last_c + slab, dc.begin());
    detail::ScratchVector<T> tanh_c(static_cast<std::size_t>(hidden));
    const T* p = f.peepholes;
    T* dp = a.d_peepholes;
    for (std::int64_t s = n.steps - 1; s >= 0; --s) {
      const std::int64_t t = f.reverse ? n.steps - 1 - s : s;
      const T* c_prev_step = c_before(s, t);
      for (std::int64_t b = 0; b < n.batch; ++b) {
        // An inactive step passes dh and dc through unchanged (its y is a constant zero).
        if (!detail::is_active(f, t, b)) continue;
        const std::int64_t row = t * n.batch + b;
        const T* g = gates.data() + row * gated;
        T* d = d_gates.data() + row * gated;
        const T* c = cells.data() + row * hidden;
        const T* c_prev = c_prev_step + b * hidden;
        const T* dy = a.dy != nullptr ? a.dy + row * hidden : nullptr;
        std::copy(c, c + hidden, tanh_c.begin());
        Math::tanh(tanh_c.data(), hidden);
        for (std::int64_t j = 0; j < hidden; ++j) {
          const T in = g[j], out = g[hidden + j], forget = g[2 * hidden + j], cell = g[3 * hidden + j];
          const T dh_j = dh[b * hidden + j] + (dy != nullptr ? dy[j] : T(0));
          dh[b * hidden + j] = T(0);  // receives d_gates R below
          const T tc = tanh_c[j];
          const T d_out = dh_j * tc * out * (T(1) - out);
          T dc_j = dc[b * hidden + j] + dh_j * out * (T(1) - tc * tc);
          if (p != nullptr) dc_j += d_out * p[hidden + j];
          const T d_in = dc_j * cell * in * (T(1) - in);
          const T d_forget = dc_j * c_prev[j] * forget * (T(1) - forget);
          const T d_cell = dc_j * in * (T(1) - cell * cell);
          T dc_prev = dc_j * forget;
          if (p != nullptr) {
            dc_prev += d_in * p[j] + d_forget * p[2 * hidden + j];
            dp[j] += d_in * c_prev[j];
            dp[hidden + j] += d_out * c[j];
            dp[2 * hidden + j] += d_forget * c_prev[j];
          }
          dc[b * hidden + j] = dc_prev;
          d[j] = d_in;
          d[hidden + j] = d_out;
          d[2 * hidden + j] = d_forget;
          d[3 * hidden + j] = d_cell;
        }
      }
      // dh_{t-1} = d_gates_t R (inactive rows: zero gradients, dh kept)
      Math::gemm(false, false, n.batch, hidden, gated, T(1), d_gates.data() + t * n.batch * gated,
                 gated, f.r, hidden, T(1), dh.data(), hidden);
    }
    std::copy(dh.begin(), dh.end(), a.d_initial_h);
    std::copy(dc.begin(), dc.end(), a.d_initial_c);
    Math::gemm(false, false, rows, n.input, gated, T(1), d_gates.data(), gated, f.w, n.input, T(0),
               a.dx, n.input);
    Math::gemm(true, false, gated, n.input, rows, T(1), d_gates.data(), gated, f.x, n.input, T(0),
               a.dw, n.input);
    Math::gemm(true, false, gated, hidden, rows, T(1), d_gates.data(), gated, previous.data(),
               hidden, T(0), a.dr, hidden);
    detail::add_column_sums(d_gates.data(), rows, gated, gated, a.dbias);
    std::copy(a.dbias, a.dbias + gated, a.dbias + gated);
  }
};

std::vector<Type> infer_lstm(const InferContext& ctx) {
  return detail::infer_recurrent(ctx, CellKind::Lstm);
}
std::vector<Type> infer_lstm_grad(const InferContext& ctx) {
  return detail::infer_recurrent_grad(ctx, CellKind::Lstm);
}
std::vector<Variable> pullback_lstm(const PullbackContext& ctx) {
  return detail::pullback_recurrent(ctx, CellKind::Lstm);
}
Cost lstm_cost(const CostContext& ctx) { return detail::recurrent_cost(ctx, CellKind::Lstm, false); }
Cost lstm_grad_cost(const CostContext& ctx) {
  return detail::recurrent_cost(ctx, CellKind::Lstm, true);
}
// oneDNN gate g holds ONNX gate kLstmOnnxGate[g]: (i, f, c, o) from (i, o, f, c).
constexpr std::array<std::int64_t, 4> kLstmOnnxGate{0, 2, 3, 1};

// oneDNN's bias is one vector per gate: Wb + Rb, in oneDNN's gate order.
void fill_lstm_bias(const float* onnx, std::int64_t hidden, float* out) {
  const std::int64_t gated = 4 * hidden;
  for (std::size_t g = 0; g < kLstmOnnxGate.size(); ++g) {
    const std::int64_t from = kLstmOnnxGate[g] * hidden;
    float* to = out + static_cast<std::int64_t>(g) * hidden;
    for (std::int64_t j = 0; j < hidden; ++j) to[j] = onnx[from + j] + onnx[gated + from + j];
  }
}

dnnl::primitive_desc describe_lstm(const detail::DnnlRnnDescs& d,
                                   const dnnl::primitive_attr& attr) {
  return dnnl::lstm_forward::primitive_desc(
      dnnl::lstm_forward::desc(dnnl::prop_kind::forward_inference, d.direction, d.x, d.state,
                               d.state, d.w, d.r, d.bias, d.y, d.state, d.state),
      attr, detail::dnnl_engine());
}

constexpr detail::DnnlCell kLstmDnnl{.kind = CellKind::Lstm,
                                     .onnx_gate = kLstmOnnxGate,
                                     .bias_gates = 4,
                                     .fill_bias = fill_lstm_bias,
                                     .describe = describe_lstm,
                                     .what = "an LSTM descriptor"};

// oneDNN's LSTM primitive for float32 nodes without peepholes or sequence_lens (recurrent_dnnl.h);
// the BLAS loops for the rest.
void compute_lstm_fast(KernelContext& ctx) {
  if (!detail::run_recurrent_dnnl(ctx, kLstmDnnl)) detail::compute_recurrent_fast<LstmCell>(ctx);
}
}  // namespace

void register_lstm(OpRegistry& registry) {
  registry.add({.name = "Lstm",
                .family = "Lstm",
                .summary = "one LSTM direction over a sequence (ONNX gates i,o,f,c; peepholes)",
                .num_inputs = -1,
                .num_outputs = 3,
                .infer = infer_lstm,
                .reference = {"ref", detail::compute_recurrent_reference<LstmCell>},
                .fast = {"blas", compute_lstm_fast, nullptr, detail::gemm_library_label},
                .pullback = pullback_lstm,
                .cost = lstm_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::recurrent_printed_name(CellKind::Lstm, false, attrs);
                }});
  registry.add({.name = "LstmGrad",
                .family = "LstmGrad",
                .summary = "backpropagation through time of Lstm: gradients of all its inputs",
                .num_inputs = -1,
                .num_outputs = -1,
                .infer = infer_lstm_grad,
                .reference = {"ref", detail::compute_recurrent_grad_reference<LstmCell>},
                .fast = {"blas", detail::compute_recurrent_grad_fast<LstmCell>, nullptr,
                         detail::gemm_library_label},
                .cost = lstm_grad_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::recurrent_printed_name(CellKind::Lstm, true, attrs);
                }});
}

}  // namespace tscope::ops

namespace tscope {

RecurrentResult lstm(const Variable& x, const Variable& w, const Variable& r,
                     const LstmOptions& options, const std::source_location& location) {
  Attrs attrs = ops::detail::recurrent_attrs(
      ops::detail::hidden_extent(r), options.reverse, options.bias.defined(),
      options.initial_h.defined(), options.initial_c.defined(), options.peepholes.defined(),
      options.sequence_lens.defined());
  std::vector<Variable> inputs = {x, w, r};
  for (const Variable* optional : {&options.bias, &options.initial_h, &options.initial_c,
                                   &options.peepholes, &options.sequence_lens}) {
    if (optional->defined()) inputs.push_back(*optional);
  }
  const std::vector<Variable> outputs =
      ops::detail::apply_recurrent(ops::detail::CellKind::Lstm, std::move(inputs),
                                   std::move(attrs), location);
  return {outputs[0], outputs[1], outputs[2]};
}

}  // namespace tscope
