// SPDX-License-Identifier: Apache-2.0
// Gru and GruGrad: one direction of a GRU layer over a whole sequence (ONNX equations, gate order
// z, r, h):
//   z = sigmoid(x Wz^T + h Rz^T + Wbz + Rbz)       r = sigmoid(x Wr^T + h Rr^T + Wbr + Rbr)
//   n = tanh(x Wh^T + (r . h) Rh^T + Rbh + Wbh)     (linear_before_reset = 0)
//   n = tanh(x Wh^T + r . (h Rh^T + Rbh) + Wbh)     (linear_before_reset = 1)
//   h' = (1 - z) . n + z . h
// The forward kernel projects every step's input with one product, then runs one product per step
// (two without linear_before_reset: the reset gate must be known before Rh is applied). GruGrad
// recomputes every gate from y with products over the whole sequence (no step depends on another
// once h_{t-1} is known), then backpropagates through time. Float32 Gru nodes without sequence_lens
// run oneDNN's GRU primitives instead (recurrent_dnnl.h): `gru_forward` for linear_before_reset = 0
// and `lbr_gru_forward` for 1, both with ONNX's equations (see their bias functions below).
#include <algorithm>
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

struct GruCell {
  static constexpr CellKind kKind = CellKind::Gru;

  /// (rows, 3 * hidden) = x W^T + Wb.
  template <class T, class Math>
  static detail::ScratchVector<T> input_projection(const ForwardArgs<T>& a) {
    const auto& n = a.n;
    const std::int64_t gated = 3 * n.hidden;
    const std::int64_t rows = n.steps * n.batch;
    detail::ScratchVector<T> gates(static_cast<std::size_t>(rows * gated));
    Math::gemm(false, true, rows, gated, n.input, T(1), a.x, n.input, a.w, n.input, T(0),
               gates.data(), gated);
    if (a.bias != nullptr) detail::add_to_rows(gates.data(), rows, gated, gated, a.bias);
    return gates;
  }

  /// The recurrent parts of `rows` rows: recurrent (rows, 3 * hidden) gets h R^T + Rb for z and
  /// r; with linear_before_reset also for h, else (r . h) Rh^T + Rbh once r is known, which this
  /// function computes into gates[z, r] (activations) along the way. reset_h (rows, hidden)
  /// receives r . h when not linear_before_reset. Leaves gates[h] as the pre-activation n.
  template <class T, class Math>
  static void gates_for_rows(const ForwardArgs<T>& a, bool linear, std::int64_t rows, const T* h,
                             T* gates, T* recurrent, T* reset_h) {
    const std::int64_t hidden = a.n.hidden;
    const std::int64_t gated = 3 * hidden;
    const T* rb = a.bias != nullptr ? a.bias + gated : nullptr;
    const std::int64_t first = linear ? gated : 2 * hidden;
    Math::gemm(false, true, rows, first, hidden, T(1), h, hidden, a.r, hidden, T(0), recurrent,
               gated);
    if (rb != nullptr) detail::add_to_rows(recurrent, rows, first, gated, rb);
    for (std::int64_t i = 0; i < rows; ++i) {
      T* g = gates + i * gated;
      const T* hr = recurrent + i * gated;
      for (std::int64_t j = 0; j < 2 * hidden; ++j) g[j] += hr[j];
      Math::sigmoid(g, 2 * hidden);
      if (!linear) {
        for (std::int64_t j = 0; j < hidden; ++j) reset_h[i * hidden + j] = g[hidden + j] * h[i * hidden + j];
      }
    }
    if (!linear) {
      Math::gemm(false, true, rows, hidden, hidden, T(1), reset_h, hidden, a.r + 2 * hidden * hidden,
                 hidden, T(0), recurrent + 2 * hidden, gated);
      if (rb != nullptr) detail::add_to_rows(recurrent + 2 * hidden, rows, hidden, gated, rb + 2 * hidden);
    }
    for (std::int64_t i = 0; i < rows; ++i) {
      T* g = gates + i * gated;
      const T* hr = recurrent + i * gated + 2 * hidden;
      const T* reset = g + hidden;
      for (std::int64_t j = 0; j < hidden; ++j) g[2 * hidden + j] += linear ? reset[j] * hr[j] : hr[j];
      Math::tanh(g + 2 * hidden, hidden);
    }
  }

  template <class T, class Math>
  static void forward(const ForwardArgs<T>& a) {
    const auto& n = a.n;
    const std::int64_t gated = 3 * n.hidden;
    const std::int64_t slab = n.batch * n.hidden;
    const bool linear = a.linear_before_reset;
    detail::ScratchVector<T> gates = input_projection<T, Math>(a);
    detail::ScratchVector<T> h(static_cast<std::size_t>(slab), T(0));
    if (a.initial_h != nullptr) std::copy(a.initial_h, a.initial_h + slab, h.begin());
    detail::ScratchVector<T> recurrent(static_cast<std::size_t>(n.batch * gated));
    detail::ScratchVector<T> reset_h(static_cast<std::size_t>(slab));
    for (std::int64_t s = 0; s < n.steps; ++s) {
      const std::int64_t t = a.reverse ? n.steps - 1 - s : s;
      T* g = gates.data() + t * n.batch * gated;
      gates_for_rows<T, Math>(a, linear, n.batch, h.data(), g, recurrent.data(), reset_h.data());
      T* y = a.y + t * slab;
      for (std::int64_t b = 0; b < n.batch; ++b) {
        if (!detail::is_active(a, t, b)) continue;  // y stays zero; h is kept
        const T* row = g + b * gated;
        for (std::int64_t j = 0; j < n.hidden; ++j) {
          const T z = row[j];
          T& state = h[b * n.hidden + j];
          state = (T(1) - z) * row[2 * n.hidden + j] + z * state;
          y[b * n.hidden + j] = state;
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
    const std::int64_t gated = 3 * hidden;
    const std::int64_t slab = n.batch * hidden;
    const std::int64_t rows = n.steps * n.batch;
    const bool linear = f.linear_before_reset;
    const detail::ScratchVector<T> previous = detail::previous_states(f, a.y);
    detail::ScratchVector<T> gates = input_projection<T, Math>(f);
    detail::ScratchVector<T> recurrent(static_cast<std::size_t>(rows * gated));
    detail::ScratchVector<T> reset_h(static_cast<std::size_t>(linear ? 0 : rows * hidden));
    gates_for_rows<T, Math>(f, linear, rows, previous.data(), gates.data(), recurrent.data(),
                            reset_h.data());
    // Pre-activation gradients: of the input side (dx, dw, Wb) and, with linear_before_reset, of
    // the recurrent side (dr, Rb), which differs in the h gate by the factor r.
    detail::ScratchVector<T> d_input(static_cast<std::size_t>(rows * gated));
    detail::ScratchVector<T> d_recurrent(static_cast<std::size_t>(linear ? rows * gated : 0));
    detail::ScratchVector<T> dh(static_cast<std::size_t>(slab), T(0));
    detail::ScratchVector<T> d_reset_h(static_cast<std::size_t>(slab));
    if (a.d_last_h != nullptr) std::copy(a.d_last_h, a.d_last_h + slab, dh.begin());
    for (std::int64_t s = n.steps - 1; s >= 0; --s) {
      const std::int64_t t = f.reverse ? n.steps - 1 - s : s;
      T* d_step = d_input.data() + t * n.batch * gated;
      for (std::int64_t b = 0; b < n.batch; ++b) {
        // An inactive step passes dh through (its gradient rows stay zero, so the products below
        // add nothing to its row).
        if (!detail::is_active(f, t, b)) continue;
        const std::int64_t row = t * n.batch + b;
        const T* g = gates.data() + row * gated;
        const T* h_prev = previous.data() + row * hidden;
        const T* hr = recurrent.data() + row * gated + 2 * hidden;
        const T* dy = a.dy != nullptr ? a.dy + row * hidden : nullptr;
        T* d = d_step + b * gated;
        for (std::int64_t j = 0; j < hidden; ++j) {
          const T z = g[j], reset = g[hidden + j], cand = g[2 * hidden + j];
          const T dh_j = dh[b * hidden + j] + (dy != nullptr ? dy[j] : T(0));
          const T d_cand = dh_j * (T(1) - z) * (T(1) - cand * cand);
          d[j] = dh_j * (h_prev[j] - cand) * z * (T(1) - z);
          d[2 * hidden + j] = d_cand;
          if (linear) {
            d[hidden + j] = d_cand * hr[j] * reset * (T(1) - reset);
            T* dr = d_recurrent.data() + row * gated;
            dr[j] = d[j];
            dr[hidden + j] = d[hidden + j];
            dr[2 * hidden + j] = d_cand * reset;
          }
          dh[b * hidden + j] = dh_j * z;
        }
      }
      if (linear) {
        Math::gemm(false, false, n.batch, hidden, gated, T(1), d_recurrent.data() + t * n.batch * gated,
                   gated, f.r, hidden, T(1), dh.data(), hidden);
        continue;
      }
      // d(r . h) = d_cand Rh; then the reset gate's gradient and h's share through r.
      Math::gemm(false, false, n.batch, hidden, hidden, T(1), d_step + 2 * hidden, gated,
                 f.r + 2 * hidden * hidden, hidden, T(0), d_reset_h.data(), hidden);
      for (std::int64_t b = 0; b < n.batch; ++b) {
        if (!detail::is_active(f, t, b)) continue;
        const std::int64_t row = t * n.batch + b;
        const T* g = gates.data() + row * gated;
        const T* h_prev = previous.data() + row * hidden;
        T* d = d_step + b * gated;
        for (std::int64_t j = 0; j < hidden; ++j) {
          const T reset = g[hidden + j];
          const T drh = d_reset_h[b * hidden + j];
          d[hidden + j] = drh * h_prev[j] * reset * (T(1) - reset);
          dh[b * hidden + j] += drh * reset;
        }
      }
      Math::gemm(false, false, n.batch, hidden, 2 * hidden, T(1), d_step, gated, f.r, hidden, T(1),
                 dh.data(), hidden);
    }
    std::copy(dh.begin(), dh.end(), a.d_initial_h);
    Math::gemm(false, false, rows, n.input, gated, T(1), d_input.data(), gated, f.w, n.input, T(0),
               a.dx, n.input);
    Math::gemm(true, false, gated, n.input, rows, T(1), d_input.data(), gated, f.x, n.input, T(0),
               a.dw, n.input);
    detail::add_column_sums(d_input.data(), rows, gated, gated, a.dbias);
    if (linear) {
      Math::gemm(true, false, gated, hidden, rows, T(1), d_recurrent.data(), gated, previous.data(),
                 hidden, T(0), a.dr, hidden);
      detail::add_column_sums(d_recurrent.data(), rows, gated, gated, a.dbias + gated);
    } else {
      Math::gemm(true, false, 2 * hidden, hidden, rows, T(1), d_input.data(), gated,
                 previous.data(), hidden, T(0), a.dr, hidden);
      Math::gemm(true, false, hidden, hidden, rows, T(1), d_input.data() + 2 * hidden, gated,
                 reset_h.data(), hidden, T(0), a.dr + 2 * hidden * hidden, hidden);
      detail::add_column_sums(d_input.data(), rows, gated, gated, a.dbias + gated);
    }
  }
};

std::vector<Type> infer_gru(const InferContext& ctx) {
  return detail::infer_recurrent(ctx, CellKind::Gru);
}
std::vector<Type> infer_gru_grad(const InferContext& ctx) {
  return detail::infer_recurrent_grad(ctx, CellKind::Gru);
}
std::vector<Variable> pullback_gru(const PullbackContext& ctx) {
  return detail::pullback_recurrent(ctx, CellKind::Gru);
}
Cost gru_cost(const CostContext& ctx) { return detail::recurrent_cost(ctx, CellKind::Gru, false); }
Cost gru_grad_cost(const CostContext& ctx) { return detail::recurrent_cost(ctx, CellKind::Gru, true); }

// oneDNN's GRU gates u, r, o are ONNX's z, r, h in the same order, with the same update
// h' = u . h + (1 - u) . o, so W and R go into oneDNN's layout as they are.
constexpr std::array<std::int64_t, 3> kGruOnnxGate{0, 1, 2};

// linear_before_reset = 0: oneDNN's gru_forward computes o = tanh(W_o x + U_o (r . h) + B_o), and
// ONNX adds Wbh and Rbh outside the product alike, so every gate's bias is Wb + Rb.
void fill_gru_bias(const float* onnx, std::int64_t hidden, float* out) {
  const std::int64_t gated = 3 * hidden;
  for (std::int64_t j = 0; j < gated; ++j) out[j] = onnx[j] + onnx[gated + j];
}

// linear_before_reset = 1: oneDNN's lbr_gru_forward computes
// o = tanh(W_o x + r . (U_o h + B_u') + B_o) with a fourth bias gate u' inside the reset product:
// B_o is Wbh, B_u' is Rbh, and z and r take Wb + Rb.
void fill_lbr_gru_bias(const float* onnx, std::int64_t hidden, float* out) {
  const std::int64_t gated = 3 * hidden;
  for (std::int64_t j = 0; j < 2 * hidden; ++j) out[j] = onnx[j] + onnx[gated + j];
  std::copy(onnx + 2 * hidden, onnx + gated, out + 2 * hidden);
  std::copy(onnx + gated + 2 * hidden, onnx + 2 * gated, out + gated);
}

dnnl::primitive_desc describe_gru(const detail::DnnlRnnDescs& d, const dnnl::primitive_attr& attr) {
  return dnnl::gru_forward::primitive_desc(
      dnnl::gru_forward::desc(dnnl::prop_kind::forward_inference, d.direction, d.x, d.state, d.w,
                              d.r, d.bias, d.y, d.state),
      attr, detail::dnnl_engine());
}

dnnl::primitive_desc describe_lbr_gru(const detail::DnnlRnnDescs& d,
                                      const dnnl::primitive_attr& attr) {
  return dnnl::lbr_gru_forward::primitive_desc(
      dnnl::lbr_gru_forward::desc(dnnl::prop_kind::forward_inference, d.direction, d.x, d.state,
                                  d.w, d.r, d.bias, d.y, d.state),
      attr, detail::dnnl_engine());
}

constexpr detail::DnnlCell kGruDnnl{.kind = CellKind::Gru,
                                    .onnx_gate = kGruOnnxGate,
                                    .bias_gates = 3,
                                    .fill_bias = fill_gru_bias,
                                    .describe = describe_gru,
                                    .what = "a GRU descriptor"};
constexpr detail::DnnlCell kLbrGruDnnl{.kind = CellKind::Gru,
                                       .onnx_gate = kGruOnnxGate,
                                       .bias_gates = 4,
                                       .fill_bias = fill_lbr_gru_bias,
                                       .describe = describe_lbr_gru,
                                       .what = "an LBR GRU descriptor"};

// oneDNN's GRU primitive of the node's form for float32 nodes without sequence_lens; the BLAS
// loops for the rest.
void compute_gru_fast(KernelContext& ctx) {
  const detail::DnnlCell& cell =
      ctx.attrs->get_bool("linear_before_reset") ? kLbrGruDnnl : kGruDnnl;
  if (!detail::run_recurrent_dnnl(ctx, cell)) detail::compute_recurrent_fast<GruCell>(ctx);
}
}  // namespace

void register_gru(OpRegistry& registry) {
  registry.add({.name = "Gru",
                .family = "Gru",
                .summary = "one GRU direction over a sequence (ONNX gates z,r,h; both reset forms)",
                .num_inputs = -1,
                .num_outputs = 2,
                .infer = infer_gru,
                .reference = {"ref", detail::compute_recurrent_reference<GruCell>},
                .fast = {"blas", compute_gru_fast, nullptr, detail::gemm_library_label},
                .pullback = pullback_gru,
                .cost = gru_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::recurrent_printed_name(CellKind::Gru, false, attrs);
                }});
  registry.add({.name = "GruGrad",
                .family = "GruGrad",
                .summary = "backpropagation through time of Gru: gradients of all its inputs",
                .num_inputs = -1,
                .num_outputs = -1,
                .infer = infer_gru_grad,
                .reference = {"ref", detail::compute_recurrent_grad_reference<GruCell>},
                .fast = {"blas", detail::compute_recurrent_grad_fast<GruCell>, nullptr,
                         detail::gemm_library_label},
                .cost = gru_grad_cost,
                .print = [](const OpDef&, const Attrs& attrs) {
                  return detail::recurrent_printed_name(CellKind::Gru, true, attrs);
                }});
}

}  // namespace tscope::ops

namespace tscope {

RecurrentResult gru(const Variable& x, const Variable& w, const Variable& r,
                    const GruOptions& options, const std::source_location& location) {
  Attrs attrs = ops::detail::recurrent_attrs(ops::detail::hidden_extent(r), options.reverse,
                                             options.bias.defined(), options.initial_h.defined(),
                                             false, false, options.sequence_lens.defined());
  attrs.set("linear_before_reset", options.linear_before_reset);
  std::vector<Variable> inputs = {x, w, r};
  for (const Variable* optional : {&options.bias, &options.initial_h, &options.sequence_lens}) {
    if (optional->defined()) inputs.push_back(*optional);
  }
  const std::vector<Variable> outputs = ops::detail::apply_recurrent(
      ops::detail::CellKind::Gru, std::move(inputs), std::move(attrs), location);
  return {outputs[0], outputs[1], Variable()};
}

}  // namespace tscope
