// SPDX-License-Identifier: Apache-2.0
#include "recurrent_dnnl.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "../linalg/blas_util.h"
#include "recurrent_kernel.h"
#include "tscope/ops/recurrent.h"
#include "tscope/threads/parallel_for.h"
#include "tscope/threads/spin_wait.h"
#include "tscope/threads/thread_count.h"

namespace tscope::ops::detail {
namespace {
using tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;

// One primitive for `rows` rows of the batch. Its x and y descriptors keep the whole batch's
// strides, so a slice of rows is a pointer offset and nothing is copied.
struct RowsPrimitive {
  std::int64_t rows = 0;
  dnnl::primitive_desc pd;
  dnnl::primitive primitive;
  // W and R in the layout this primitive chose, and their reorders from the plain gates.
  dnnl::memory w_packed, r_packed;
  DnnlCall w_pack, r_pack;
};

// One thread's rows: [first_row, first_row + rows of its primitive).
struct RowsPart {
  std::int64_t first_row = 0;
  std::size_t primitive = 0;
  DnnlCall call;
  // Each part runs on its own stream with its own scratchpad, so parts may run concurrently.
  dnnl::stream stream;
};

struct RecurrentDnnlState final : KernelState {
  const DnnlCell* cell = nullptr;
  RecurrentExtents n;
  bool reverse = false;
  int parts = 1;
  bool unimplemented = false;
  // W and R in oneDNN's gate order (ldgoi; left empty where that is ONNX's order, and the packing
  // reads the operands themselves), oneDNN's bias, zeros for absent states.
  bool moves_gates = false;
  std::vector<float> w_gates, r_gates, bias, zero_state;
  std::vector<RowsPrimitive> primitives;
  std::vector<RowsPart> thread_parts;
  // Whether W, R and the bias are constants (or views of them), so that their packing can be kept;
  // the data they were packed from, null until the first packing.
  bool constant_weights = false;
  std::array<const float*, 3> packed_from{};
};

std::int64_t gate_count_of(const DnnlCell& cell) {
  return static_cast<std::int64_t>(cell.onnx_gate.size());
}

/// Whether a call is too small to repay waking the OpenMP team (the products of a layer of fewer
/// than kMinFlopsForThreads flops, as for a gemm: blas_util.h). It then runs on the calling thread
/// alone: split, each part would finish in about the time its thread takes to join, and with
/// oneDNN's own threading the threads would meet at every step.
bool runs_on_one_thread(std::int64_t gates, const RecurrentExtents& n) {
  const double flops = 2.0 * static_cast<double>(n.steps * n.batch * gates * n.hidden) *
                       static_cast<double>(n.input + n.hidden);
  return flops < kMinFlopsForThreads;
}

/// How many threads split the batch. Each thread then runs the whole sequence for its rows with
/// no synchronisation between steps, reading all of W and R; oneDNN's own threading instead splits
/// every step's products across the threads, which meet at the end of each step, so the split
/// saves a meeting per step. Past the size of a core's private cache (1 MiB and up on current
/// x86), though, every thread streams the whole of W and R from the shared cache on every step,
/// which with many threads costs more than oneDNN's split, where each thread reads its own share;
/// so larger weights keep it.
constexpr std::int64_t kMaxSplitWeightBytes = 1 << 20;

int batch_parts(std::int64_t gates, const RecurrentExtents& n, int threads) {
  const std::int64_t weight_bytes =
      gates * n.hidden * (n.input + n.hidden) * static_cast<std::int64_t>(sizeof(float));
  if (threads <= 1 || n.batch < 2 || weight_bytes > kMaxSplitWeightBytes ||
      runs_on_one_thread(gates, n)) {
    return 1;
  }
  return static_cast<int>(std::min<std::int64_t>(threads, n.batch));
}

std::int64_t part_rows(std::int64_t batch, int parts, int index) {
  return batch / parts + (index < batch % parts ? 1 : 0);
}

std::optional<RowsPrimitive> build_primitive(const DnnlCell& cell,
                                             const RecurrentExtents& n,
                                             std::int64_t rows,
                                             bool reverse) {
  const std::int64_t gates = gate_count_of(cell);
  const DnnlRnnDescs descs{
      .direction = reverse ? dnnl::rnn_direction::unidirectional_right2left
                           : dnnl::rnn_direction::unidirectional_left2right,
      .x = dnnl::memory::desc({n.steps, rows, n.input}, kF32, {n.batch * n.input, n.input, 1}),
      .state = dnnl::memory::desc({1, 1, rows, n.hidden}, kF32, tag::ldnc),
      .w = dnnl::memory::desc({1, 1, n.input, gates, n.hidden}, kF32, tag::any),
      .r = dnnl::memory::desc({1, 1, n.hidden, gates, n.hidden}, kF32, tag::any),
      .bias = dnnl::memory::desc({1, 1, cell.bias_gates, n.hidden}, kF32, tag::ldgo),
      .y = dnnl::memory::desc({n.steps, rows, n.hidden}, kF32, {n.batch * n.hidden, n.hidden, 1})};
  try {
    RowsPrimitive built;
    built.rows = rows;
    built.pd = cell.describe(descs, dnnl_attr());
    built.primitive = dnnl::primitive(built.pd);
    built.w_packed = dnnl::memory(
        built.pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_WEIGHTS_LAYER), dnnl_engine());
    built.r_packed = dnnl::memory(
        built.pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_WEIGHTS_ITER), dnnl_engine());
    return built;
  } catch (const dnnl::error& error) {
    if (is_unimplemented(error, cell.what)) return std::nullopt;
    throw;
  }
}

bool keeps_onnx_order(const DnnlCell& cell) {
  for (std::size_t g = 0; g < cell.onnx_gate.size(); ++g) {
    if (cell.onnx_gate[g] != static_cast<std::int64_t>(g)) return false;
  }
  return true;
}

// The primitives (one per distinct row count), the packing of the plain gates into each one's
// layout, and one call per part.
bool build(RecurrentDnnlState& s) {
  const DnnlCell& cell = *s.cell;
  const RecurrentExtents& n = s.n;
  const std::int64_t gates = gate_count_of(cell);
  s.moves_gates = !keeps_onnx_order(cell);
  if (s.moves_gates) {
    s.w_gates.resize(static_cast<std::size_t>(gates * n.hidden * n.input));
    s.r_gates.resize(static_cast<std::size_t>(gates * n.hidden * n.hidden));
  }
  s.bias.resize(static_cast<std::size_t>(cell.bias_gates * n.hidden));
  s.zero_state.assign(static_cast<std::size_t>(n.batch * n.hidden), 0.0F);
  // Bound to the gates to pack on every packing (pack_weights).
  const dnnl::memory w_plain =
      dnnl_unbound_memory({{1, 1, n.input, gates, n.hidden}, kF32, tag::ldgoi});
  const dnnl::memory r_plain =
      dnnl_unbound_memory({{1, 1, n.hidden, gates, n.hidden}, kF32, tag::ldgoi});
  const dnnl::memory bias({{1, 1, cell.bias_gates, n.hidden}, kF32, tag::ldgo}, dnnl_engine(),
                          s.bias.data());
  const bool cell_state = cell.kind == CellKind::Lstm;
  std::int64_t first_row = 0;
  for (int index = 0; index < s.parts; ++index) {
    const std::int64_t rows = part_rows(n.batch, s.parts, index);
    auto same_rows = [rows](const RowsPrimitive& p) { return p.rows == rows; };
    auto found = std::ranges::find_if(s.primitives, same_rows);
    if (found == s.primitives.end()) {
      std::optional<RowsPrimitive> built = build_primitive(cell, n, rows, s.reverse);
      if (!built) return false;
      built->w_pack = {dnnl::reorder(w_plain, built->w_packed),
                       {{DNNL_ARG_FROM, w_plain}, {DNNL_ARG_TO, built->w_packed}},
                       ""};
      built->r_pack = {dnnl::reorder(r_plain, built->r_packed),
                       {{DNNL_ARG_FROM, r_plain}, {DNNL_ARG_TO, built->r_packed}},
                       ""};
      s.primitives.push_back(std::move(*built));
      found = s.primitives.end() - 1;
    }
    const RowsPrimitive& primitive = *found;
    const dnnl::primitive_desc& pd = primitive.pd;
    auto unbound = [&pd](int arg) {
      return dnnl_unbound_memory(pd.query_md(dnnl::query::exec_arg_md, arg));
    };
    RowsPart part;
    part.first_row = first_row;
    part.primitive = static_cast<std::size_t>(found - s.primitives.begin());
    part.stream = dnnl::stream(dnnl_engine());
    part.call.primitive = primitive.primitive;
    part.call.impl = pd.impl_info_str();
    part.call.args = {{DNNL_ARG_SRC_LAYER, unbound(DNNL_ARG_SRC_LAYER)},
                      {DNNL_ARG_SRC_ITER, unbound(DNNL_ARG_SRC_ITER)},
                      {DNNL_ARG_WEIGHTS_LAYER, primitive.w_packed},
                      {DNNL_ARG_WEIGHTS_ITER, primitive.r_packed},
                      {DNNL_ARG_BIAS, bias},
                      {DNNL_ARG_DST_LAYER, unbound(DNNL_ARG_DST_LAYER)},
                      {DNNL_ARG_DST_ITER, unbound(DNNL_ARG_DST_ITER)},
                      {DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), dnnl_engine())}};
    if (cell_state) {
      part.call.args.emplace(DNNL_ARG_SRC_ITER_C, unbound(DNNL_ARG_SRC_ITER_C));
      part.call.args.emplace(DNNL_ARG_DST_ITER_C, unbound(DNNL_ARG_DST_ITER_C));
    }
    s.thread_parts.push_back(std::move(part));
    first_row += rows;
  }
  return true;
}

RecurrentDnnlState& state_for(KernelContext& ctx,
                              const DnnlCell& cell,
                              const RecurrentLayout& layout,
                              const RecurrentExtents& n,
                              bool reverse) {
  const int parts = batch_parts(gate_count_of(cell), n, threads::parallel_threads());
  auto* state = dynamic_cast<RecurrentDnnlState*>(ctx.state.get());
  if (state != nullptr && state->n.steps == n.steps && state->n.batch == n.batch &&
      state->n.input == n.input && state->n.hidden == n.hidden && state->reverse == reverse &&
      state->parts == parts) {
    return *state;
  }
  auto fresh = std::make_shared<RecurrentDnnlState>();
  fresh->cell = &cell;
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

// (gates * hidden, columns) in ONNX gate order -> the same rows in oneDNN's gate order.
void move_gates(const DnnlCell& cell,
                const float* onnx,
                std::int64_t hidden,
                std::int64_t columns,
                float* out) {
  const std::int64_t block = hidden * columns;
  for (std::size_t g = 0; g < cell.onnx_gate.size(); ++g) {
    std::memcpy(out + static_cast<std::int64_t>(g) * block, onnx + cell.onnx_gate[g] * block,
                static_cast<std::size_t>(block) * sizeof(float));
  }
}

// W and R (gate order changed where it differs, then reordered into each primitive's layout) and
// the bias.
void pack_weights(RecurrentDnnlState& s, const ForwardArgs<float>& a) {
  const DnnlCell& cell = *s.cell;
  const RecurrentExtents& n = a.n;
  const float* w = a.w;
  const float* r = a.r;
  if (s.moves_gates) {
    move_gates(cell, a.w, n.hidden, n.input, s.w_gates.data());
    move_gates(cell, a.r, n.hidden, n.hidden, s.r_gates.data());
    w = s.w_gates.data();
    r = s.r_gates.data();
  }
  if (a.bias != nullptr) {
    cell.fill_bias(a.bias, n.hidden, s.bias.data());
  } else {
    std::fill(s.bias.begin(), s.bias.end(), 0.0F);
  }
  for (RowsPrimitive& primitive : s.primitives) {
    dnnl_bind(primitive.w_pack, DNNL_ARG_FROM, w);
    dnnl_bind(primitive.r_pack, DNNL_ARG_FROM, r);
    dnnl_execute(primitive.w_pack);
    dnnl_execute(primitive.r_pack);
  }
}

// Points part `part`'s call at its rows of the operands.
void bind_part(RecurrentDnnlState& s, RowsPart& part, const ForwardArgs<float>& a) {
  const RecurrentExtents& n = a.n;
  const std::int64_t x_offset = part.first_row * n.input;
  const std::int64_t state_offset = part.first_row * n.hidden;
  const float* initial_h = a.initial_h != nullptr ? a.initial_h : s.zero_state.data();
  DnnlCall& call = part.call;
  dnnl_bind(call, DNNL_ARG_SRC_LAYER, a.x + x_offset);
  dnnl_bind(call, DNNL_ARG_SRC_ITER, initial_h + state_offset);
  dnnl_bind(call, DNNL_ARG_DST_LAYER, a.y + state_offset);
  dnnl_bind(call, DNNL_ARG_DST_ITER, a.last_h + state_offset);
  if (a.last_c != nullptr) {
    const float* initial_c = a.initial_c != nullptr ? a.initial_c : s.zero_state.data();
    dnnl_bind(call, DNNL_ARG_SRC_ITER_C, initial_c + state_offset);
    dnnl_bind(call, DNNL_ARG_DST_ITER_C, a.last_c + state_offset);
  }
}

// A thread that finished its part waits for the others by spinning, for at most as long as its
// own part took. Waiting in the OpenMP barrier instead, it sleeps after a short spin
// (GOMP_SPINCOUNT, set short by the CLI) whenever the parts differ by more than that spin (one
// core running slower is enough), and a sleeping thread is often woken onto the other thread's
// CPU, where the two parts then run one after the other (run_parts moves such a worker off:
// tscope/threads/cpu_placement.h). While a part has not started it may be this thread's own next
// one (a team smaller than the parts), or the other thread may be waiting for this thread's CPU,
// so the thread does not wait then.
void wait_for_other_parts(const std::atomic<int>& started,
                          const std::atomic<int>& finished,
                          int parts,
                          std::chrono::steady_clock::duration own_time) {
  if (started.load(std::memory_order_acquire) < parts) return;
  (void)threads::spin_until([&] { return finished.load(std::memory_order_acquire) >= parts; },
                            std::chrono::steady_clock::now() + own_time);
}

// Counts a part as finished when it ends, by an exception too, so that no other part waits for it.
class FinishedMark {
 public:
  explicit FinishedMark(std::atomic<int>& finished) : finished_(finished) {}
  ~FinishedMark() { finished_.fetch_add(1, std::memory_order_acq_rel); }
  FinishedMark(const FinishedMark&) = delete;
  FinishedMark& operator=(const FinishedMark&) = delete;

 private:
  std::atomic<int>& finished_;
};

// Runs every part, concurrently when there are several; run_parts rethrows a part's error on the
// calling thread.
void run_parts_of(RecurrentDnnlState& s) {
  if (s.thread_parts.size() == 1) {
    dnnl_execute(s.thread_parts[0].call, s.thread_parts[0].stream);
    return;
  }
  struct Job {
    RecurrentDnnlState* state;
    std::atomic<int> started{0};
    std::atomic<int> finished{0};
  } job{&s};
  threads::run_parts(
      static_cast<int>(s.thread_parts.size()),
      [](void* data, int index) {
        auto& j = *static_cast<Job*>(data);
        RowsPart& part = j.state->thread_parts[static_cast<std::size_t>(index)];
        j.started.fetch_add(1, std::memory_order_acq_rel);
        const auto start = std::chrono::steady_clock::now();
        {
          const FinishedMark mark(j.finished);
          dnnl_execute(part.call, part.stream);
        }
        wait_for_other_parts(j.started, j.finished, static_cast<int>(j.state->thread_parts.size()),
                             std::chrono::steady_clock::now() - start);
      },
      &job);
}

// Whether run_recurrent_dnnl runs a node of `cell` with this input dtype and these attrs.
bool runs_on_dnnl(CellKind cell, DType dtype, const Attrs& attrs) {
  const RecurrentLayout layout = recurrent_layout(cell, attrs);
  return dtype == DType::Float32 && layout.peepholes < 0 && layout.lengths < 0;
}
}  // namespace

int recurrent_batch_parts(int gates,
                          std::int64_t steps,
                          std::int64_t batch,
                          std::int64_t input,
                          std::int64_t hidden,
                          int threads) {
  return batch_parts(gates, {.steps = steps, .batch = batch, .input = input, .hidden = hidden},
                     threads);
}

bool run_recurrent_dnnl(KernelContext& ctx, const DnnlCell& cell) {
  if (!runs_on_dnnl(cell.kind, ctx.input(0).dtype(), *ctx.attrs)) return false;
  const RecurrentLayout layout = recurrent_layout(cell.kind, *ctx.attrs);
  RecurrentOperands<float> operands(ctx);
  ForwardArgs<float> a = gather_forward(operands, ctx, cell.kind, layout);
  const RecurrentExtents& n = a.n;
  if (n.steps == 0 || n.batch == 0 || n.hidden == 0 || n.input == 0) return false;
  RecurrentDnnlState& s = state_for(ctx, cell, layout, n, a.reverse);
  if (s.unimplemented) return false;
  const Dims state_shape{n.batch, n.hidden};
  // The primitive writes every element of its outputs.
  a.y = operands.output(0, Dims{n.steps, n.batch, n.hidden}, false);
  a.last_h = operands.output(1, state_shape, false);
  if (cell.kind == CellKind::Lstm) a.last_c = operands.output(2, state_shape, false);

  // Constant weights are packed on the first call only, since packing is a sizeable part of a
  // short sequence's call; weights that may change, on every call.
  const std::array<const float*, 3> weights{a.w, a.r, a.bias};
  if (!s.constant_weights || s.packed_from != weights) {
    pack_weights(s, a);
    s.packed_from = weights;
  }
  for (RowsPart& part : s.thread_parts) bind_part(s, part, a);
  std::optional<threads::SerialScope> one_thread;
  if (runs_on_one_thread(gate_count_of(cell), n)) one_thread.emplace();
  run_parts_of(s);
  operands.finish();
  return true;
}

}  // namespace tscope::ops::detail
