// SPDX-License-Identifier: Apache-2.0
#include "lstm_dnnl.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "../conv/dnnl_util.h"
#include "recurrent_kernel.h"

namespace tscope::ops::detail {
namespace {
using tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;
// oneDNN gate g holds ONNX gate kOnnxGate[g]: (i, f, c, o) from (i, o, f, c).
constexpr std::array<std::int64_t, 4> kOnnxGate{0, 2, 3, 1};

struct LstmDnnlState final : KernelState {
  RecurrentExtents n;
  bool reverse = false;
  bool unimplemented = false;
  DnnlCall lstm;
  // ONNX weights with oneDNN's gate order (ldgoi), and their reorders into the packed layout the
  // primitive chose.
  std::vector<float> w_gates, r_gates, bias, zero_state;
  DnnlCall w_pack, r_pack;
  // Whether W, R and the bias are constants (or views of them), so that their packing can be kept;
  // the data they were packed from, null until the first packing.
  bool constant_weights = false;
  std::array<const float*, 3> packed_from{};
};

bool build(LstmDnnlState& s) {
  const RecurrentExtents& n = s.n;
  const dnnl::memory::desc x_md({n.steps, n.batch, n.input}, kF32, tag::tnc);
  const dnnl::memory::desc y_md({n.steps, n.batch, n.hidden}, kF32, tag::tnc);
  const dnnl::memory::desc state_md({1, 1, n.batch, n.hidden}, kF32, tag::ldnc);
  const dnnl::memory::desc w_md({1, 1, n.input, 4, n.hidden}, kF32, tag::any);
  const dnnl::memory::desc r_md({1, 1, n.hidden, 4, n.hidden}, kF32, tag::any);
  const dnnl::memory::desc w_plain_md({1, 1, n.input, 4, n.hidden}, kF32, tag::ldgoi);
  const dnnl::memory::desc r_plain_md({1, 1, n.hidden, 4, n.hidden}, kF32, tag::ldgoi);
  const dnnl::memory::desc bias_md({1, 1, 4, n.hidden}, kF32, tag::ldgo);
  try {
    const dnnl::lstm_forward::primitive_desc pd(
        dnnl::lstm_forward::desc(dnnl::prop_kind::forward_inference,
                                 s.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                           : dnnl::rnn_direction::unidirectional_left2right,
                                 x_md, state_md, state_md, w_md, r_md, bias_md, y_md, state_md,
                                 state_md),
        dnnl_engine());
    s.lstm.primitive = dnnl::lstm_forward(pd);
    s.lstm.impl = pd.impl_info_str();
    const dnnl::memory w_packed(pd.weights_layer_desc(), dnnl_engine());
    const dnnl::memory r_packed(pd.weights_iter_desc(), dnnl_engine());
    s.w_gates.resize(static_cast<std::size_t>(4 * n.hidden * n.input));
    s.r_gates.resize(static_cast<std::size_t>(4 * n.hidden * n.hidden));
    s.bias.resize(static_cast<std::size_t>(4 * n.hidden));
    s.zero_state.assign(static_cast<std::size_t>(n.batch * n.hidden), 0.0F);
    const dnnl::memory w_plain(w_plain_md, dnnl_engine(), s.w_gates.data());
    const dnnl::memory r_plain(r_plain_md, dnnl_engine(), s.r_gates.data());
    s.w_pack = {dnnl::reorder(w_plain, w_packed), {{DNNL_ARG_FROM, w_plain}, {DNNL_ARG_TO, w_packed}}, ""};
    s.r_pack = {dnnl::reorder(r_plain, r_packed), {{DNNL_ARG_FROM, r_plain}, {DNNL_ARG_TO, r_packed}}, ""};
    s.lstm.args = {{DNNL_ARG_SRC_LAYER, dnnl_unbound_memory(x_md)},
              {DNNL_ARG_SRC_ITER, dnnl_unbound_memory(state_md)},
              {DNNL_ARG_SRC_ITER_C, dnnl_unbound_memory(state_md)},
              {DNNL_ARG_WEIGHTS_LAYER, w_packed},
              {DNNL_ARG_WEIGHTS_ITER, r_packed},
              {DNNL_ARG_BIAS, dnnl::memory(bias_md, dnnl_engine(), s.bias.data())},
              {DNNL_ARG_DST_LAYER, dnnl_unbound_memory(y_md)},
              {DNNL_ARG_DST_ITER, dnnl_unbound_memory(state_md)},
              {DNNL_ARG_DST_ITER_C, dnnl_unbound_memory(state_md)}};
    return true;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "an LSTM descriptor")) return false;
    throw;
  }
}

LstmDnnlState& state_for(KernelContext& ctx, const RecurrentLayout& layout,
                         const RecurrentExtents& n, bool reverse) {
  auto* state = dynamic_cast<LstmDnnlState*>(ctx.state.get());
  if (state != nullptr && state->n.steps == n.steps && state->n.batch == n.batch &&
      state->n.input == n.input && state->n.hidden == n.hidden && state->reverse == reverse) {
    return *state;
  }
  auto fresh = std::make_shared<LstmDnnlState>();
  fresh->n = n;
  fresh->reverse = reverse;
  fresh->constant_weights = ctx.input_is_constant(1) && ctx.input_is_constant(2) &&
                            (layout.bias < 0 || ctx.input_is_constant(layout.bias));
  fresh->unimplemented = !build(*fresh);
  state = fresh.get();
  ctx.state = std::move(fresh);
  return *state;
}

// (4 * hidden, columns) in ONNX gate order -> the same rows in oneDNN's gate order.
void reorder_gates(const float* onnx, std::int64_t hidden, std::int64_t columns, float* out) {
  const std::int64_t block = hidden * columns;
  for (std::int64_t g = 0; g < 4; ++g) {
    std::memcpy(out + g * block, onnx + kOnnxGate[static_cast<std::size_t>(g)] * block,
                static_cast<std::size_t>(block) * sizeof(float));
  }
}

// W, R (gate order changed, then reordered into the primitive's layout) and the summed biases.
void pack_weights(LstmDnnlState& s, const ForwardArgs<float>& a) {
  const RecurrentExtents& n = a.n;
  reorder_gates(a.w, n.hidden, n.input, s.w_gates.data());
  reorder_gates(a.r, n.hidden, n.hidden, s.r_gates.data());
  std::fill(s.bias.begin(), s.bias.end(), 0.0F);
  if (a.bias != nullptr) {
    const std::int64_t gated = 4 * n.hidden;
    for (std::int64_t g = 0; g < 4; ++g) {
      const std::int64_t from = kOnnxGate[static_cast<std::size_t>(g)] * n.hidden;
      for (std::int64_t j = 0; j < n.hidden; ++j) {
        s.bias[static_cast<std::size_t>(g * n.hidden + j)] =
            a.bias[from + j] + a.bias[gated + from + j];
      }
    }
  }
  dnnl_execute(s.w_pack);
  dnnl_execute(s.r_pack);
}

bool runs_on_dnnl(DType dtype, const Attrs& attrs) {
  const RecurrentLayout layout = recurrent_layout(CellKind::Lstm, attrs);
  return dtype == DType::Float32 && layout.peepholes < 0 && layout.lengths < 0;
}
}  // namespace

std::string_view lstm_fast_label(std::span<const Variable> inputs, const Attrs& attrs) {
  return runs_on_dnnl(inputs[0].dtype(), attrs) ? "dnnl" : "blas";
}

bool run_lstm_dnnl(KernelContext& ctx) {
  const RecurrentLayout layout = recurrent_layout(CellKind::Lstm, *ctx.attrs);
  if (!runs_on_dnnl(ctx.input(0).dtype(), *ctx.attrs)) return false;
  RecurrentOperands<float> operands(ctx);
  ForwardArgs<float> a = gather_forward(operands, ctx, CellKind::Lstm, layout);
  const RecurrentExtents& n = a.n;
  if (n.steps == 0 || n.batch == 0 || n.hidden == 0 || n.input == 0) return false;
  LstmDnnlState& s = state_for(ctx, layout, n, a.reverse);
  if (s.unimplemented) return false;
  const Dims state_shape{n.batch, n.hidden};
  // The primitive writes every element of its three outputs.
  a.y = operands.output(0, Dims{n.steps, n.batch, n.hidden}, false);
  a.last_h = operands.output(1, state_shape, false);
  a.last_c = operands.output(2, state_shape, false);

  // Constant weights are packed on the first call only (saves about a tenth of a 32-step LSTM
  // with hidden 128); weights that may change, on every call.
  const std::array<const float*, 3> weights{a.w, a.r, a.bias};
  if (!s.constant_weights || s.packed_from != weights) {
    pack_weights(s, a);
    s.packed_from = weights;
  }
  DnnlCall& call = s.lstm;
  dnnl_bind(call, DNNL_ARG_SRC_LAYER, a.x);
  dnnl_bind(call, DNNL_ARG_SRC_ITER, a.initial_h != nullptr ? a.initial_h : s.zero_state.data());
  dnnl_bind(call, DNNL_ARG_SRC_ITER_C, a.initial_c != nullptr ? a.initial_c : s.zero_state.data());
  dnnl_bind(call, DNNL_ARG_DST_LAYER, a.y);
  dnnl_bind(call, DNNL_ARG_DST_ITER, a.last_h);
  dnnl_bind(call, DNNL_ARG_DST_ITER_C, a.last_c);
  dnnl_execute(call);
  operands.finish();
  return true;
}

}  // namespace tscope::ops::detail
