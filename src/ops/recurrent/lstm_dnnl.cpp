// SPDX-License-Identifier: Apache-2.0
#include "lstm_dnnl.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include "../conv/dnnl_util.h"
#include "recurrent_kernel.h"
#include "tscope/ops/parallel_chunks.h"
#include "tscope/ops/recurrent.h"

namespace tscope::ops::detail {
namespace {
using tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;
// oneDNN gate g holds ONNX gate kOnnxGate[g]: (i, f, c, o) from (i, o, f, c).
constexpr std::array<std::int64_t, 4> kOnnxGate{0, 2, 3, 1};

// One primitive for `rows` rows of the batch. Its x and y descriptors keep the whole batch's
// strides, so a slice of rows is a pointer offset and nothing is copied.
struct RowsPrimitive {
  std::int64_t rows = 0;
  dnnl::lstm_forward::primitive_desc pd;
  dnnl::lstm_forward primitive;
  // W and R in the layout this primitive chose, and their reorders from the plain gates.
  dnnl::memory w_packed, r_packed;
  DnnlCall w_pack, r_pack;
};

// One thread's rows: [first_row, first_row + rows of its primitive).
struct LstmPart {
  std::int64_t first_row = 0;
  std::size_t primitive = 0;
  DnnlCall call;
  // Each part runs on its own stream with its own scratchpad, so parts may run concurrently.
  dnnl::stream stream;
};

struct LstmDnnlState final : KernelState {
  RecurrentExtents n;
  bool reverse = false;
  int parts = 1;
  bool unimplemented = false;
  // ONNX weights with oneDNN's gate order (ldgoi), the summed biases, zeros for absent states.
  std::vector<float> w_gates, r_gates, bias, zero_state;
  std::vector<RowsPrimitive> primitives;
  std::vector<LstmPart> thread_parts;
  // Whether W, R and the bias are constants (or views of them), so that their packing can be kept;
  // the data they were packed from, null until the first packing.
  bool constant_weights = false;
  std::array<const float*, 3> packed_from{};
};

/// How many threads split the batch. Each thread then runs the whole sequence for its rows with
/// no synchronisation between steps, reading all of W and R; oneDNN's own threading instead splits
/// every step's products across the threads, which meet at the end of each step, so the split
/// saves a meeting per step. Past the size of a core's private cache (1 MiB and up on current x86), though, every thread
/// streams the whole of W and R from the shared cache on every step, which with many threads costs
/// more than oneDNN's split, where each thread reads its own share; so larger weights keep it.
constexpr std::int64_t kMaxSplitWeightBytes = 1 << 20;

int batch_parts(const RecurrentExtents& n, int threads) {
  const std::int64_t weight_bytes =
      4 * n.hidden * (n.input + n.hidden) * static_cast<std::int64_t>(sizeof(float));
  if (threads <= 1 || n.batch < 2 || weight_bytes > kMaxSplitWeightBytes) return 1;
  return static_cast<int>(std::min<std::int64_t>(threads, n.batch));
}

std::int64_t part_rows(std::int64_t batch, int parts, int index) {
  return batch / parts + (index < batch % parts ? 1 : 0);
}

std::optional<RowsPrimitive> build_primitive(const RecurrentExtents& n, std::int64_t rows,
                                             bool reverse) {
  const dnnl::memory::desc x_md({n.steps, rows, n.input}, kF32,
                                {n.batch * n.input, n.input, 1});
  const dnnl::memory::desc y_md({n.steps, rows, n.hidden}, kF32,
                                {n.batch * n.hidden, n.hidden, 1});
  const dnnl::memory::desc state_md({1, 1, rows, n.hidden}, kF32, tag::ldnc);
  const dnnl::memory::desc w_md({1, 1, n.input, 4, n.hidden}, kF32, tag::any);
  const dnnl::memory::desc r_md({1, 1, n.hidden, 4, n.hidden}, kF32, tag::any);
  const dnnl::memory::desc bias_md({1, 1, 4, n.hidden}, kF32, tag::ldgo);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    RowsPrimitive built;
    built.rows = rows;
    built.pd = dnnl::lstm_forward::primitive_desc(
        dnnl::lstm_forward::desc(dnnl::prop_kind::forward_inference,
                                 reverse ? dnnl::rnn_direction::unidirectional_right2left
                                         : dnnl::rnn_direction::unidirectional_left2right,
                                 x_md, state_md, state_md, w_md, r_md, bias_md, y_md, state_md,
                                 state_md),
        attr, dnnl_engine());
    built.primitive = dnnl::lstm_forward(built.pd);
    built.w_packed = dnnl::memory(built.pd.weights_layer_desc(), dnnl_engine());
    built.r_packed = dnnl::memory(built.pd.weights_iter_desc(), dnnl_engine());
    return built;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, "an LSTM descriptor")) return std::nullopt;
    throw;
  }
}

// The primitives (one per distinct row count), the packing of the plain gates into each one's
// layout, and one call per part.
bool build(LstmDnnlState& s) {
  const RecurrentExtents& n = s.n;
  s.w_gates.resize(static_cast<std::size_t>(4 * n.hidden * n.input));
  s.r_gates.resize(static_cast<std::size_t>(4 * n.hidden * n.hidden));
  s.bias.resize(static_cast<std::size_t>(4 * n.hidden));
  s.zero_state.assign(static_cast<std::size_t>(n.batch * n.hidden), 0.0F);
  const dnnl::memory w_plain({{1, 1, n.input, 4, n.hidden}, kF32, tag::ldgoi}, dnnl_engine(),
                             s.w_gates.data());
  const dnnl::memory r_plain({{1, 1, n.hidden, 4, n.hidden}, kF32, tag::ldgoi}, dnnl_engine(),
                             s.r_gates.data());
  const dnnl::memory bias({{1, 1, 4, n.hidden}, kF32, tag::ldgo}, dnnl_engine(), s.bias.data());
  std::int64_t first_row = 0;
  for (int index = 0; index < s.parts; ++index) {
    const std::int64_t rows = part_rows(n.batch, s.parts, index);
    auto same_rows = [rows](const RowsPrimitive& p) { return p.rows == rows; };
    auto found = std::ranges::find_if(s.primitives, same_rows);
    if (found == s.primitives.end()) {
      std::optional<RowsPrimitive> built = build_primitive(n, rows, s.reverse);
      if (!built) return false;
      built->w_pack = {dnnl::reorder(w_plain, built->w_packed),
                       {{DNNL_ARG_FROM, w_plain}, {DNNL_ARG_TO, built->w_packed}}, ""};
      built->r_pack = {dnnl::reorder(r_plain, built->r_packed),
                       {{DNNL_ARG_FROM, r_plain}, {DNNL_ARG_TO, built->r_packed}}, ""};
      s.primitives.push_back(std::move(*built));
      found = s.primitives.end() - 1;
    }
    const RowsPrimitive& primitive = *found;
    const dnnl::lstm_forward::primitive_desc& pd = primitive.pd;
    LstmPart part;
    part.first_row = first_row;
    part.primitive = static_cast<std::size_t>(found - s.primitives.begin());
    part.stream = dnnl::stream(dnnl_engine());
    part.call.primitive = primitive.primitive;
    part.call.impl = pd.impl_info_str();
    part.call.args = {{DNNL_ARG_SRC_LAYER, dnnl_unbound_memory(pd.src_layer_desc())},
                      {DNNL_ARG_SRC_ITER, dnnl_unbound_memory(pd.src_iter_desc())},
                      {DNNL_ARG_SRC_ITER_C, dnnl_unbound_memory(pd.src_iter_c_desc())},
                      {DNNL_ARG_WEIGHTS_LAYER, primitive.w_packed},
                      {DNNL_ARG_WEIGHTS_ITER, primitive.r_packed},
                      {DNNL_ARG_BIAS, bias},
                      {DNNL_ARG_DST_LAYER, dnnl_unbound_memory(pd.dst_layer_desc())},
                      {DNNL_ARG_DST_ITER, dnnl_unbound_memory(pd.dst_iter_desc())},
                      {DNNL_ARG_DST_ITER_C, dnnl_unbound_memory(pd.dst_iter_c_desc())},
                      {DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), dnnl_engine())}};
    s.thread_parts.push_back(std::move(part));
    first_row += rows;
  }
  return true;
}

LstmDnnlState& state_for(KernelContext& ctx, const RecurrentLayout& layout,
                         const RecurrentExtents& n, bool reverse) {
  const int parts = batch_parts(n, parallel_threads());
  auto* state = dynamic_cast<LstmDnnlState*>(ctx.state.get());
  if (state != nullptr && state->n.steps == n.steps && state->n.batch == n.batch &&
      state->n.input == n.input && state->n.hidden == n.hidden && state->reverse == reverse &&
      state->parts == parts) {
    return *state;
  }
  auto fresh = std::make_shared<LstmDnnlState>();
  fresh->n = n;
  fresh->reverse = reverse;
  fresh->parts = parts;
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

// W, R (gate order changed, then reordered into each primitive's layout) and the summed biases.
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
  for (const RowsPrimitive& primitive : s.primitives) {
    dnnl_execute(primitive.w_pack);
    dnnl_execute(primitive.r_pack);
  }
}

// Points part `part`'s call at its rows of the operands.
void bind_part(LstmDnnlState& s, LstmPart& part, const ForwardArgs<float>& a) {
  const RecurrentExtents& n = a.n;
  const std::int64_t x_offset = part.first_row * n.input;
  const std::int64_t state_offset = part.first_row * n.hidden;
  const float* initial_h = a.initial_h != nullptr ? a.initial_h : s.zero_state.data();
  const float* initial_c = a.initial_c != nullptr ? a.initial_c : s.zero_state.data();
  DnnlCall& call = part.call;
  dnnl_bind(call, DNNL_ARG_SRC_LAYER, a.x + x_offset);
  dnnl_bind(call, DNNL_ARG_SRC_ITER, initial_h + state_offset);
  dnnl_bind(call, DNNL_ARG_SRC_ITER_C, initial_c + state_offset);
  dnnl_bind(call, DNNL_ARG_DST_LAYER, a.y + state_offset);
  dnnl_bind(call, DNNL_ARG_DST_ITER, a.last_h + state_offset);
  dnnl_bind(call, DNNL_ARG_DST_ITER_C, a.last_c + state_offset);
}

// A thread that finished its part waits for the others by spinning, for at most as long as its
// own part took. Waiting in the OpenMP barrier instead, it sleeps after a short spin
// (GOMP_SPINCOUNT, set short by the CLI) whenever the parts differ by more than that spin (one
// core running slower is enough), and a sleeping thread is often woken onto the other thread's
// CPU, where the two parts then run one after the other (run_parts moves such a worker off:
// cpu_placement.h). While a part has not started it may be this thread's own next one (a team
// smaller than the parts), or the other thread may be waiting for this thread's CPU, so the
// thread does not wait then.
void wait_for_other_parts(const std::atomic<int>& started, const std::atomic<int>& finished,
                          int parts, std::chrono::steady_clock::duration own_time) {
  if (started.load(std::memory_order_acquire) < parts) return;
  const auto deadline = std::chrono::steady_clock::now() + own_time;
  while (finished.load(std::memory_order_acquire) < parts &&
         std::chrono::steady_clock::now() < deadline) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
}

// Runs every part, concurrently when there are several; rethrows the first part's error.
void run_parts_of(LstmDnnlState& s) {
  if (s.thread_parts.size() == 1) {
    dnnl_execute(s.thread_parts[0].call, s.thread_parts[0].stream);
    return;
  }
  struct Job {
    LstmDnnlState* state;
    std::vector<std::exception_ptr> errors;
    std::atomic<int> started{0};
    std::atomic<int> finished{0};
  } job{&s, std::vector<std::exception_ptr>(s.thread_parts.size())};
  run_parts(static_cast<int>(s.thread_parts.size()), [](void* data, int index) {
    auto& j = *static_cast<Job*>(data);
    LstmPart& part = j.state->thread_parts[static_cast<std::size_t>(index)];
    j.started.fetch_add(1, std::memory_order_acq_rel);
    const auto start = std::chrono::steady_clock::now();
    // An exception must not leave an OpenMP thread; it is rethrown on the calling thread.
    try {
      dnnl_execute(part.call, part.stream);
    } catch (...) {
      j.errors[static_cast<std::size_t>(index)] = std::current_exception();
    }
    j.finished.fetch_add(1, std::memory_order_acq_rel);
    wait_for_other_parts(j.started, j.finished, static_cast<int>(j.state->thread_parts.size()),
                         std::chrono::steady_clock::now() - start);
  }, &job);
  for (const std::exception_ptr& error : job.errors) {
    if (error) std::rethrow_exception(error);
  }
}

bool runs_on_dnnl(DType dtype, const Attrs& attrs) {
  const RecurrentLayout layout = recurrent_layout(CellKind::Lstm, attrs);
  return dtype == DType::Float32 && layout.peepholes < 0 && layout.lengths < 0;
}
}  // namespace

int lstm_batch_parts(std::int64_t batch, std::int64_t input, std::int64_t hidden, int threads) {
  return batch_parts(RecurrentExtents{.steps = 1, .batch = batch, .input = input, .hidden = hidden},
                     threads);
}

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
  for (LstmPart& part : s.thread_parts) bind_part(s, part, a);
  run_parts_of(s);
  operands.finish();
  return true;
}

}  // namespace tscope::ops::detail
