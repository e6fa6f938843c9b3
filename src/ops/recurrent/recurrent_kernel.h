// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernel drivers of the recurrent ops: gather contiguous operands of the compute type, allocate
// outputs, run a cell's forward or backward loops, convert back. A Cell is a struct with
//   static constexpr CellKind kKind;
//   template <class T, class Math> static void forward(const ForwardArgs<T>&);
//   template <class T, class Math> static void backward(const BackwardArgs<T>&);
// The reference kernels run the cell on float64 copies with ReferenceMath (plain loops); the fast
// kernels run it in the input dtype with FastMath (BLAS, SLEEF).
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "recurrent_common.h"
#include "recurrent_math.h"

namespace tscope::ops::detail {

/// Operands and outputs of one kernel call in compute type T.
template <class T>
class RecurrentOperands {
 public:
  explicit RecurrentOperands(const KernelContext& ctx) : ctx_(ctx) {}

  /// Input `index` as contiguous T (a copy only when needed); null for an absent input (-1).
  const T* input(int index) {
    if (index < 0) return nullptr;
    const Tensor& tensor = ctx_.input(index);
    kept_.push_back(tensor.dtype() == kDTypeOf<T> ? tensor.contiguous() : tensor.astype(kDTypeOf<T>));
    return kept_.back().template data<T>();
  }

  /// Integer input `index` (sequence_lens) as int64; null for an absent input.
  const std::int64_t* lengths(int index) {
    if (index < 0) return nullptr;
    const Tensor& tensor = ctx_.input(index);
    lengths_.resize(static_cast<std::size_t>(tensor.numel()));
    for (std::int64_t i = 0; i < tensor.numel(); ++i) lengths_[i] = static_cast<std::int64_t>(tensor.at(i));
    return lengths_.data();
  }

  /// Output `index` of `shape`, zero-filled unless the caller writes every element itself
  /// (`zeroed` false: oneDNN's primitive); written in place when T is the output dtype.
  T* output(int index, const Dims& shape, bool zeroed = true) {
    const DType dtype = ctx_.input(0).dtype();
    T* data = nullptr;
    if (dtype == kDTypeOf<T>) {
      data = ctx_.allocate_output(index, dtype, shape).template data<T>();
    } else {
      pending_.emplace_back(index, Tensor::empty(kDTypeOf<T>, shape));
      data = pending_.back().second.template data<T>();
    }
    if (zeroed) std::fill(data, data + shape.product(), T(0));
    return data;
  }

  /// Zeroed scratch for a gradient nobody reads (an absent optional input's).
  T* scratch(std::int64_t count) {
    scratch_.emplace_back(static_cast<std::size_t>(count), T(0));
    return scratch_.back().data();
  }

  /// Converts outputs computed in another type into the node's dtype.
  void finish() {
    const DType dtype = ctx_.input(0).dtype();
    for (auto& [index, computed] : pending_) {
      const Tensor converted = computed.astype(dtype);
      Tensor& out = ctx_.allocate_output(index, dtype, computed.shape());
      std::memcpy(out.raw_data(), converted.raw_data(), static_cast<std::size_t>(out.nbytes()));
    }
  }

 private:
  const KernelContext& ctx_;
  std::vector<Tensor> kept_;
  std::vector<std::pair<int, Tensor>> pending_;
  std::vector<ScratchVector<T>> scratch_;
  std::vector<std::int64_t> lengths_;
};

template <class T>
ForwardArgs<T> gather_forward(RecurrentOperands<T>& operands, const KernelContext& ctx,
                              CellKind cell, const RecurrentLayout& layout) {
  ForwardArgs<T> a;
  a.n = kernel_extents(ctx, cell, layout);
  a.reverse = ctx.attrs->get_bool("reverse");
  a.linear_before_reset = cell == CellKind::Gru && ctx.attrs->get_bool("linear_before_reset");
  a.relu = cell == CellKind::Rnn && ctx.attrs->get_string("activation") == "relu";
  a.x = operands.input(0);
  a.w = operands.input(1);
  a.r = operands.input(2);
  a.bias = operands.input(layout.bias);
  a.initial_h = operands.input(layout.initial_h);
  a.initial_c = operands.input(layout.initial_c);
  a.peepholes = operands.input(layout.peepholes);
  a.lengths = operands.lengths(layout.lengths);
  return a;
}

template <class Cell, class T, class Math>
void run_recurrent_forward(KernelContext& ctx) {
  const RecurrentLayout layout = recurrent_layout(Cell::kKind, *ctx.attrs);
  RecurrentOperands<T> operands(ctx);
  ForwardArgs<T> a = gather_forward(operands, ctx, Cell::kKind, layout);
  const Dims state{a.n.batch, a.n.hidden};
  a.y = operands.output(0, Dims{a.n.steps, a.n.batch, a.n.hidden});
  a.last_h = operands.output(1, state);
  if (Cell::kKind == CellKind::Lstm) a.last_c = operands.output(2, state);
  Cell::template forward<T, Math>(a);
  operands.finish();
}

template <class Cell, class T, class Math>
void run_recurrent_backward(KernelContext& ctx) {
  const RecurrentLayout layout = recurrent_layout(Cell::kKind, *ctx.attrs);
  RecurrentOperands<T> operands(ctx);
  BackwardArgs<T> a;
  a.forward = gather_forward(operands, ctx, Cell::kKind, layout);
  a.y = operands.input(layout.y);
  a.dy = operands.input(layout.dy);
  a.d_last_h = operands.input(layout.d_last_h);
  a.d_last_c = operands.input(layout.d_last_c);
  auto gradient = [&](int index) {
    return index < 0 ? nullptr : operands.output(index, ctx.input(index).shape());
  };
  const RecurrentExtents& n = a.forward.n;
  const std::int64_t gated = gate_count(Cell::kKind) * n.hidden;
  a.dx = gradient(0);
  a.dw = gradient(1);
  a.dr = gradient(2);
  a.dbias = layout.bias >= 0 ? gradient(layout.bias) : operands.scratch(2 * gated);
  a.d_initial_h = layout.initial_h >= 0 ? gradient(layout.initial_h)
                                        : operands.scratch(n.batch * n.hidden);
  a.d_initial_c = layout.initial_c >= 0 ? gradient(layout.initial_c)
                                        : operands.scratch(n.batch * n.hidden);
  a.d_peepholes = layout.peepholes >= 0 ? gradient(layout.peepholes) : operands.scratch(3 * n.hidden);
  Cell::template backward<T, Math>(a);
  operands.finish();
}

template <class Cell>
void compute_recurrent_reference(KernelContext& ctx) {
  run_recurrent_forward<Cell, double, ReferenceMath>(ctx);
}

template <class Cell>
void compute_recurrent_fast(KernelContext& ctx) {
  if (ctx.input(0).dtype() == DType::Float32) {
    run_recurrent_forward<Cell, float, FastMath<float>>(ctx);
  } else {
    run_recurrent_forward<Cell, double, FastMath<double>>(ctx);
  }
}

template <class Cell>
void compute_recurrent_grad_reference(KernelContext& ctx) {
  run_recurrent_backward<Cell, double, ReferenceMath>(ctx);
}

template <class Cell>
void compute_recurrent_grad_fast(KernelContext& ctx) {
  if (ctx.input(0).dtype() == DType::Float32) {
    run_recurrent_backward<Cell, float, FastMath<float>>(ctx);
  } else {
    run_recurrent_backward<Cell, double, FastMath<double>>(ctx);
  }
}

}  // namespace tscope::ops::detail
