// SPDX-License-Identifier: Apache-2.0
#pragma once
// What Rnn, Gru and Lstm (and their Grad ops) share: which optional inputs a node has (recorded
// in its attrs, so the inputs are positional), the type rules, costs, printed names, the
// pullback that builds the Grad node, and the kernel drivers that hand contiguous operands to a
// cell's templated forward / backward loops.
//
// Forward inputs: x (steps, batch, input), w (gates * hidden, input), r (gates * hidden, hidden),
// then, when present, bias (2 * gates * hidden), initial_h (batch, hidden), initial_c (Lstm),
// peepholes (Lstm, 3 * hidden) and sequence_lens (batch, integers). Outputs: y (steps, batch,
// hidden), last_h, last_c (Lstm). Grad inputs: the forward inputs, y, then dy, d_last_h, d_last_c
// when present; outputs: one gradient per float forward input, in the same order (sequence_lens,
// always last, has none).
#include <cstdint>
#include <string>
#include <vector>

#include "tscope/core/allocator.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// A kernel's temporary array. Its large blocks are kept between calls (allocate_scratch), so a
/// sequence's gate buffers do not fault in fresh pages at every call.
template <class T>
using ScratchVector = std::vector<T, ScratchAllocator<T>>;

enum class CellKind { Rnn, Gru, Lstm };

[[nodiscard]] int gate_count(CellKind cell);
[[nodiscard]] const char* cell_op_name(CellKind cell);

/// Input positions of a node's optional operands; -1 when absent.
struct RecurrentLayout {
  int bias = -1;
  int initial_h = -1;
  int initial_c = -1;
  int peepholes = -1;
  int lengths = -1;  ///< sequence_lens
  int forward_inputs = 3;  ///< how many inputs the forward op has
  // Grad op only.
  int y = -1;
  int dy = -1;
  int d_last_h = -1;
  int d_last_c = -1;
  int grad_inputs = 0;
};

[[nodiscard]] RecurrentLayout recurrent_layout(CellKind cell, const Attrs& attrs);

/// The attrs a builder records: hidden size, direction, which optional inputs exist, and the
/// cell's own settings (set by the caller).
[[nodiscard]] Attrs recurrent_attrs(std::int64_t hidden, bool reverse, bool bias, bool initial_h,
                                    bool initial_c, bool peepholes, bool sequence_lens);

/// Hidden extent of a recurrent op built on r: r's axis 1, kUnknownDim when not known statically
/// (the kernels then take it from r's shape at call time).
[[nodiscard]] std::int64_t hidden_extent(const Variable& r);

std::vector<Type> infer_recurrent(const InferContext& ctx, CellKind cell);
std::vector<Type> infer_recurrent_grad(const InferContext& ctx, CellKind cell);
std::vector<Variable> pullback_recurrent(const PullbackContext& ctx, CellKind cell);
Cost recurrent_cost(const CostContext& ctx, CellKind cell, bool gradient);
std::string recurrent_printed_name(CellKind cell, bool gradient, const Attrs& attrs);

/// Builds the forward node and names its outputs.
std::vector<Variable> apply_recurrent(CellKind cell, std::vector<Variable> inputs, Attrs attrs,
                                      const std::source_location& location);

// ---- kernels ----

struct RecurrentExtents {
  std::int64_t steps = 0;
  std::int64_t batch = 0;
  std::int64_t input = 0;
  std::int64_t hidden = 0;
};

/// Contiguous operands of one kernel call; absent optional inputs are null.
template <class T>
struct ForwardArgs {
  RecurrentExtents n;
  bool reverse = false;
  bool linear_before_reset = false;  ///< Gru
  bool relu = false;                 ///< Rnn: relu instead of tanh
  const T* x = nullptr;
  const T* w = nullptr;
  const T* r = nullptr;
  const T* bias = nullptr;
  const T* initial_h = nullptr;
  const T* initial_c = nullptr;
  const T* peepholes = nullptr;
  /// Per batch row, the steps t < lengths[b] are processed; null: every step of every row. Rows
  /// keep their state through the other steps, whose y is zero (ONNX sequence_lens).
  const std::int64_t* lengths = nullptr;
  T* y = nullptr;
  T* last_h = nullptr;
  T* last_c = nullptr;
};

/// The gradient kernels write every gradient (absent inputs' to scratch); null output grads are
/// zero.
template <class T>
struct BackwardArgs {
  ForwardArgs<T> forward;  ///< its outputs (y, last_h, last_c) are unused
  const T* y = nullptr;    ///< the forward output
  const T* dy = nullptr;
  const T* d_last_h = nullptr;
  const T* d_last_c = nullptr;
  T* dx = nullptr;
  T* dw = nullptr;
  T* dr = nullptr;
  T* dbias = nullptr;
  T* d_initial_h = nullptr;
  T* d_initial_c = nullptr;
  T* d_peepholes = nullptr;
};

/// Extents of a kernel call, checked against each other (ShapeMismatch naming the node).
[[nodiscard]] RecurrentExtents kernel_extents(const KernelContext& ctx, CellKind cell,
                                              const RecurrentLayout& layout);

template <class T>
bool is_active(const ForwardArgs<T>& a, std::int64_t t, std::int64_t b) {
  return a.lengths == nullptr || t < a.lengths[b];
}

/// h_{t-1} for every time index t, in time order: initial_h (or zeros) where the step is the first
/// processed of its row, else y at the previous processed step. (steps * batch * hidden) Rows
/// are right where the step is active (is_active), which is all the kernels read.
template <class T>
ScratchVector<T> previous_states(const ForwardArgs<T>& a, const T* y) {
  const std::int64_t hidden = a.n.hidden;
  const std::int64_t slab = a.n.batch * hidden;
  ScratchVector<T> previous(static_cast<std::size_t>(a.n.steps * slab), T(0));
  for (std::int64_t t = 0; t < a.n.steps; ++t) {
    for (std::int64_t b = 0; b < a.n.batch; ++b) {
      const std::int64_t before = a.reverse ? t + 1 : t - 1;
      const bool first = before < 0 || before >= a.n.steps || !is_active(a, before, b);
      const T* source = first ? (a.initial_h != nullptr ? a.initial_h + b * hidden : nullptr)
                              : y + before * slab + b * hidden;
      if (source != nullptr) {
        std::copy(source, source + hidden, previous.begin() + t * slab + b * hidden);
      }
    }
  }
  return previous;
}

/// Sum over rows of a (rows, cols) matrix with leading dimension `ld`, added into out (cols).
template <class T>
void add_column_sums(const T* matrix, std::int64_t rows, std::int64_t cols, std::int64_t ld, T* out) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const T* row = matrix + i * ld;
    for (std::int64_t j = 0; j < cols; ++j) out[j] += row[j];
  }
}

/// Adds `vector` (cols) to each row of a (rows, cols) matrix with leading dimension `ld`.
template <class T>
void add_to_rows(T* matrix, std::int64_t rows, std::int64_t cols, std::int64_t ld, const T* vector) {
  for (std::int64_t i = 0; i < rows; ++i) {
    T* row = matrix + i * ld;
    for (std::int64_t j = 0; j < cols; ++j) row[j] += vector[j];
  }
}

}  // namespace tscope::ops::detail
