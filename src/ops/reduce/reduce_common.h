// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every axis reduction shares: the "axes"/"keepdims" attributes, the type rule, the walk
// that maps each input element to its output element, and the printed name CAReduce{op}{axes}.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include "tscope/graph/apply.h"
#include "tscope/graph/op_def.h"

namespace tscope::ops::detail {

/// Normalised, sorted, de-duplicated axes; an empty "axes" attribute means every axis.
std::vector<int> reduced_axes(const Attrs& attrs, int rank);
/// Attrs for a reduction of `x` over `axes` (validated against x's rank; throws IndexOutOfRange).
Attrs reduce_attrs(const Variable& x, const std::vector<std::int64_t>& axes, bool keepdims);
/// Output dims of reducing `dims` over `axes`.
Dims reduced_dims(const Dims& dims, const std::vector<int>& axes, bool keepdims);
/// Type rule: same dtype unless `accumulate_dtype` maps it (sum of ints -> int64).
std::vector<Type> infer_reduce(const InferContext& ctx, DType (*output_dtype)(DType));
/// For every input element (row-major), the flat index of its output element.
void for_each_reduced(const Dims& input_shape, const std::vector<int>& axes,
                      const std::function<void(std::int64_t in_flat, std::int64_t out_flat)>& fn);
/// "CAReduce{add}{0,1}"-style name; `scalar` is the Theano scalar op name.
std::string print_reduce(std::string_view scalar, const Attrs& attrs, int rank_hint = -1);
/// The pullback's first step: g with the reduced axes put back as size-1 axes.
Variable expand_reduced_grad(const Variable& grad, const Variable& input, const Attrs& attrs);
Cost reduce_cost(const CostContext& ctx);
/// Number of input elements that fold into one output element.
std::int64_t reduced_count(const Dims& shape, const std::vector<int>& axes);
/// Throws InvalidArgument when a reduction without identity (max, argmax, ...) meets an empty
/// reduced extent; `op_name` names the reduction in the message.
void require_nonempty_reduction(const Dims& shape, const std::vector<int>& axes,
                                std::string_view op_name);

/// The fast kernels' walk: visits every element of `x` (any strides) in memory order - axes sorted
/// by decreasing stride, so the innermost loop is the one with the smallest stride - and folds it
/// into `acc[out_flat]` with `acc = step(acc, value)`. Reduced axes may be anywhere (not only a
/// consecutive block) and the input needs no copy. When the innermost axis is reduced, the fold
/// runs in a register; otherwise it runs along a row of accumulators.
template <class T, class Acc, class Step>
void accumulate_strided(const Tensor& x, const std::vector<int>& axes, Acc* acc, Step step) {
  const int rank = x.rank();
  const T* data = static_cast<const T*>(x.raw_data());
  if (x.numel() == 0) return;
  if (rank == 0) {
    acc[0] = step(acc[0], data[0]);
    return;
  }
  std::array<std::int64_t, kMaxRank> out_stride{};
  std::int64_t stride = 1;
  for (int axis = rank - 1; axis >= 0; --axis) {
    if (std::find(axes.begin(), axes.end(), axis) == axes.end()) {
      out_stride[static_cast<std::size_t>(axis)] = stride;
      stride *= x.shape()[axis];
    }
  }
  std::array<int, kMaxRank> order{};
  std::iota(order.begin(), order.begin() + rank, 0);
  std::stable_sort(order.begin(), order.begin() + rank, [&](int a, int b) {
    const auto stride_a = std::abs(x.strides()[a]);
    const auto stride_b = std::abs(x.strides()[b]);
    if (stride_a != stride_b) return stride_a > stride_b;
    return x.shape()[a] < x.shape()[b];
  });
  const int inner_axis = order[static_cast<std::size_t>(rank - 1)];
  const std::int64_t inner_count = x.shape()[inner_axis];
  const std::int64_t inner_in = x.strides()[inner_axis];
  const std::int64_t inner_out = out_stride[static_cast<std::size_t>(inner_axis)];
  std::array<std::int64_t, kMaxRank> index{};
  std::int64_t in_offset = 0;
  std::int64_t out_offset = 0;
  while (true) {
    const T* row = data + in_offset;
    Acc* target = acc + out_offset;
    if (inner_out == 0) {
      Acc folded = *target;
      for (std::int64_t i = 0; i < inner_count; ++i) folded = step(folded, row[i * inner_in]);
      *target = folded;
    } else {
      for (std::int64_t i = 0; i < inner_count; ++i) {
        target[i * inner_out] = step(target[i * inner_out], row[i * inner_in]);
      }
    }
    int level = rank - 2;
    for (; level >= 0; --level) {
      const int axis = order[static_cast<std::size_t>(level)];
      const auto slot = static_cast<std::size_t>(level);
      ++index[slot];
      in_offset += x.strides()[axis];
      out_offset += out_stride[static_cast<std::size_t>(axis)];
      if (index[slot] < x.shape()[axis]) break;
      in_offset -= x.strides()[axis] * x.shape()[axis];
      out_offset -= out_stride[static_cast<std::size_t>(axis)] * x.shape()[axis];
      index[slot] = 0;
    }
    if (level < 0) return;
  }
}

/// Integer accumulation wraps modulo 2^64 (as NumPy's int64 does) instead of overflowing, which
/// would be undefined behaviour.
template <class Acc>
Acc wrapping_add(Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  } else {
    return a + b;
  }
}
template <class Acc>
Acc wrapping_mul(Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  } else {
    return a * b;
  }
}

/// Accumulator type of the fast kernels: double for floats (a float32 row of any length then
/// loses no more than one final rounding; see sum.cpp), int64 for integers and bool.
template <class T>
using WideAccumulator = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;

/// Runs a fold reduction of ctx's input 0 into output 0 of `out_dtype`: every accumulator starts
/// at `init`, takes each element through `step`, and is stored as `finish(acc)`.
template <class T, class Acc, class Step, class Finish>
void fold_reduce(KernelContext& ctx, DType out_dtype, Acc init, Step step, Finish finish) {
  const Tensor& x = ctx.input(0);
  const std::vector<int> axes = reduced_axes(*ctx.attrs, x.rank());
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out = ctx.allocate_output(0, out_dtype, reduced_dims(x.shape(), axes, keepdims));
  std::vector<Acc> acc(static_cast<std::size_t>(out.numel()), init);
  accumulate_strided<T, Acc>(x, axes, acc.data(), step);
  visit_dtype(out_dtype, [&](auto tag) {
    using Out = decltype(tag);
    Out* data = static_cast<Out*>(out.raw_data());
    for (std::size_t i = 0; i < acc.size(); ++i) data[i] = static_cast<Out>(finish(acc[i]));
  });
}

/// An input whose reduced axes form one run of consecutive axes, which with the axes after them
/// are contiguous, seen as an (outer, count, inner) array: output element (o, i) folds
/// x[o, :, i]. Global average pooling reduces trailing axes (inner 1: one contiguous row per output
/// element), also of a channel slice (a view whose outer axes step over dropped channels); the same
/// pool on a channel-blocked (N, C/B, H, W, B) value reduces the two axes before the block
/// (inner B).
struct ReducedBlock {
  std::int64_t outer = 1;
  std::int64_t count = 1;
  std::int64_t inner = 1;
  int outer_rank = 0;  ///< the axes before the run
};

/// `x` as a ReducedBlock over `axes` (sorted and de-duplicated, as reduced_axes gives them), or
/// nullopt when x is empty, the axes leave a gap, or the run and the axes after it are not
/// contiguous.
[[nodiscard]] std::optional<ReducedBlock> reduced_block(const Tensor& x,
                                                        const std::vector<int>& axes);

/// Calls fn(o, offset) for each outer index o of `block` in order, with the element offset of
/// x[o, 0, 0]: a running multi-index over the outer axes, so strided outer axes cost no division.
template <class Fn>
void for_each_outer(const Tensor& x, const ReducedBlock& block, Fn fn) {
  std::array<std::int64_t, kMaxRank> index{};
  std::int64_t offset = 0;
  for (std::int64_t o = 0; o < block.outer; ++o) {
    fn(o, offset);
    for (int axis = block.outer_rank - 1; axis >= 0; --axis) {
      const auto slot = static_cast<std::size_t>(axis);
      offset += x.strides()[axis];
      if (++index[slot] < x.shape()[axis]) break;
      offset -= x.strides()[axis] * x.shape()[axis];
      index[slot] = 0;
    }
  }
}

/// The double sum of `count` contiguous values in four interleaved partial sums, so that
/// consecutive additions do not wait on each other (one chain of dependent double adds makes a
/// sum of short rows, such as a global average pool over 7x7, latency-bound).
template <class T>
double sum_row(const T* row, std::int64_t count) {
  std::array<double, 4> partial{};
  std::int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    for (std::size_t lane = 0; lane < 4; ++lane) partial[lane] += static_cast<double>(row[i + lane]);
  }
  for (; i < count; ++i) partial[0] += static_cast<double>(row[i]);
  return (partial[0] + partial[1]) + (partial[2] + partial[3]);
}

/// The double sum of a row too short for sum_row's lanes to pay: one short chain of additions,
/// which the next row's chain overlaps, where a call per row would cost more than its additions.
template <class T>
double sum_short_row(const T* row, std::int64_t count) {
  double total = 0.0;
  for (std::int64_t i = 0; i < count; ++i) total += static_cast<double>(row[i]);
  return total;
}

/// The double sums over the middle axis of one (count, inner) block into `totals` (inner
/// accumulators), one contiguous input row at a time (vector adds along the row).
template <class T>
void sum_middle_axis(const T* block, std::int64_t count, std::int64_t inner, double* totals) {
  std::fill_n(totals, inner, 0.0);
  for (std::int64_t k = 0; k < count; ++k) {
    const T* row = block + k * inner;
    for (std::int64_t i = 0; i < inner; ++i) totals[i] += static_cast<double>(row[i]);
  }
}

/// Sum's and Mean's floating-point fast path when the input is a ReducedBlock: output element
/// (o, i) is finish(the double sum of x[o, :, i]). Returns false, doing nothing, otherwise (the
/// caller then runs fold_reduce).
template <class T, class Finish>
bool sum_axis_block(KernelContext& ctx, DType out_dtype, Finish finish) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  }
  const Tensor& x = ctx.input(0);
  const std::vector<int> axes = reduced_axes(*ctx.attrs, x.rank());
  const std::optional<ReducedBlock> block = reduced_block(x, axes);
  if (!block) return false;
  const bool keepdims = ctx.attrs->get_bool_or("keepdims", false);
  Tensor& out = ctx.allocate_output(0, out_dtype, reduced_dims(x.shape(), axes, keepdims));
  const T* data = static_cast<const T*>(x.raw_data());
  const std::int64_t count = block->count;
  const std::int64_t inner = block->inner;
  visit_dtype(out_dtype, [&](auto tag) {
    using Out = decltype(tag);
    Out* result = static_cast<Out*>(out.raw_data());
    if (inner > 1) {
      std::vector<double> totals(static_cast<std::size_t>(inner));
      for_each_outer(x, *block, [&](std::int64_t o, std::int64_t offset) {
        sum_middle_axis(data + offset, count, inner, totals.data());
        for (std::int64_t i = 0; i < inner; ++i) {
          result[o * inner + i] = static_cast<Out>(finish(totals[static_cast<std::size_t>(i)]));
        }
      });
    } else if (count < 16) {
      for_each_outer(x, *block, [&](std::int64_t o, std::int64_t offset) {
        result[o] = static_cast<Out>(finish(sum_short_row(data + offset, count)));
      });
    } else {
      for_each_outer(x, *block, [&](std::int64_t o, std::int64_t offset) {
        result[o] = static_cast<Out>(finish(sum_row(data + offset, count)));
      });
    }
  });
  return true;
}

}  // namespace tscope::ops::detail
