// SPDX-License-Identifier: Apache-2.0
#pragma once
// The strided, broadcasting loop every elementwise kernel runs: K inputs of C++ type C, one
// contiguous output of type O. The common layouts get flat loops the compiler can vectorise:
//   - every operand contiguous with the output's size (x + y);
//   - contiguous operands plus a contiguous row broadcast over the leading axes (x + bias);
//   - one contiguous operand and one single-element operand (2 * x, x - 1);
//   - a contiguous first operand and single-element others (clip(x, 0, 6)).
// Anything else walks the outer axes with a carry and runs the innermost axis tight.
// Every loop runs in chunks on the OpenMP threads when the output is long (parallel_for.h); the
// strided walk in parts of whole rows.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "tscope/core/tensor.h"
#include "tscope/threads/parallel_for.h"

namespace tscope::ops::detail {

/// Stores a computed value as the output type. Float to integer conversion of nan or of a value
/// out of the integer's range is undefined behaviour in C++, so it is defined here: nan becomes 0
/// and out-of-range values saturate at the type's limits. Every other conversion is static_cast.
template <class O, class C>
O convert_element(C value) {
  if constexpr (std::is_floating_point_v<C> && std::is_integral_v<O> && !std::is_same_v<O, bool>) {
    using Signed = std::make_signed_t<O>;
    // -min of the signed type is 2^(bits - 1): exactly representable in float and double.
    constexpr C kHalfRange = -static_cast<C>(std::numeric_limits<Signed>::min());
    constexpr C kLow = std::is_signed_v<O> ? -kHalfRange : C{0};
    constexpr C kHighExclusive = std::is_signed_v<O> ? kHalfRange : kHalfRange * C{2};
    if (value != value) return O{0};
    if (value < kLow) return std::numeric_limits<O>::min();
    if (value >= kHighExclusive) return std::numeric_limits<O>::max();
    return static_cast<O>(value);
  } else {
    return static_cast<O>(value);
  }
}

/// How one operand lines up with the output, deciding which loop can run.
enum class OperandLayout {
  Full,    ///< contiguous, as many elements as the output: same flat index
  Row,     ///< contiguous, one innermost row repeated over every leading axis
  Scalar,  ///< a single element broadcast everywhere
  Strided  ///< anything else: general strided walk
};

inline OperandLayout operand_layout(const Tensor& input,
                                    const Dims& out_shape,
                                    std::int64_t count) {
  const std::int64_t numel = input.numel();
  if (numel == 1) return OperandLayout::Scalar;
  if (!input.is_contiguous()) return OperandLayout::Strided;
  // Broadcasting has been validated, so equal element counts mean equal extents.
  if (numel == count) return OperandLayout::Full;
  const int rank = out_shape.rank();
  if (rank > 0 && input.rank() > 0 && numel == out_shape[rank - 1] &&
      input.shape()[input.rank() - 1] == numel) {
    return OperandLayout::Row;
  }
  return OperandLayout::Strided;
}

/// Every operand Full or Row: rows of the output index Full operands at row * inner and Row
/// operands at 0, so the inner loop is unit-stride for all of them.
template <class O, class C, std::size_t K, class Fn>
void run_row_loop(const Fn& fn,
                  O* __restrict out_data,
                  const std::array<const C*, K>& data,
                  const std::array<OperandLayout, K>& layouts,
                  std::int64_t count,
                  std::int64_t inner) {
  // A chunk may start and end inside a row: each row is run from the chunk's first column to its
  // last.
  threads::for_each_chunk(count, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t i = begin;
    while (i < end) {
      const std::int64_t row = i / inner;
      const std::int64_t first = i - row * inner;
      const std::int64_t last = std::min(inner, first + (end - i));
      std::array<const C*, K> row_data{};
      for (std::size_t k = 0; k < K; ++k) {
        row_data[k] = layouts[k] == OperandLayout::Full ? data[k] + row * inner : data[k];
      }
      O* __restrict out_row = out_data + row * inner;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        for (std::int64_t j = first; j < last; ++j)
          out_row[j] = convert_element<O>(fn(row_data[I][j]...));
      }
      (std::make_index_sequence<K>{});
      i += last - first;
    }
  });
}

/// Two operands, one of them a single element: the element is hoisted out of the loop.
template <class O, class C, class Fn>
void run_scalar_operand_loop(const Fn& fn,
                             O* __restrict out_data,
                             const C* full,
                             C scalar_value,
                             bool scalar_first,
                             std::int64_t count) {
  threads::for_each_chunk(count, [&](std::int64_t begin, std::int64_t end) {
    if (scalar_first) {
      for (std::int64_t i = begin; i < end; ++i)
        out_data[i] = convert_element<O>(fn(scalar_value, full[i]));
    } else {
      for (std::int64_t i = begin; i < end; ++i)
        out_data[i] = convert_element<O>(fn(full[i], scalar_value));
    }
  });
}

/// Runs body(first_row, last_row) over the `rows` rows of `inner` elements each, in parts of
/// whole rows on the OpenMP threads when the loop is long enough (as for_each_chunk decides for
/// `rows * inner` elements). Part boundaries fall on multiples of kChunkAlignment rows, so no two
/// threads write the same cache line of a contiguous output.
template <class Body>
void for_each_row_part(std::int64_t rows, std::int64_t inner, const Body& body) {
  const int parts = rows < 2 * threads::kChunkAlignment ? 1 : threads::parts_for(rows * inner);
  threads::for_each_part(rows, parts, body);
}

template <class O, class C, std::size_t K, class Fn>
void run_strided_loop(const Fn& fn,
                      O* __restrict out_data,
                      const Dims& shape,
                      const std::array<const C*, K>& data,
                      const std::array<const Tensor*, K>& inputs) {
  const int rank = shape.rank();
  const std::int64_t count = shape.product();
  // Strides aligned to the output's rank; a broadcast axis gets stride 0.
  std::array<std::array<std::int64_t, kMaxRank>, K> strides{};
  for (std::size_t k = 0; k < K; ++k) {
    const Tensor& input = *inputs[k];
    const int shift = rank - input.rank();
    for (int axis = 0; axis < rank; ++axis) {
      const int in_axis = axis - shift;
      strides[k][axis] =
          (in_axis < 0 || input.shape()[in_axis] == 1) ? 0 : input.strides()[in_axis];
    }
  }
  const std::int64_t inner = rank > 0 ? shape[rank - 1] : 1;
  const std::int64_t outer = count / inner;
  std::array<std::int64_t, K> inner_stride{};
  for (std::size_t k = 0; k < K; ++k) inner_stride[k] = rank > 0 ? strides[k][rank - 1] : 0;
  // Each part finds its first row's index and operand offsets by division once, then walks on.
  for_each_row_part(outer, inner, [&](std::int64_t first_row, std::int64_t last_row) {
    std::array<std::int64_t, kMaxRank> index{};
    std::array<std::int64_t, K> base{};
    std::int64_t rest = first_row;
    for (int axis = rank - 2; axis >= 0; --axis) {
      index[axis] = rest % shape[axis];
      rest /= shape[axis];
      for (std::size_t k = 0; k < K; ++k) base[k] += index[axis] * strides[k][axis];
    }
    for (std::int64_t row = first_row; row < last_row; ++row) {
      O* out_row = out_data + row * inner;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        for (std::int64_t j = 0; j < inner; ++j) {
          out_row[j] = convert_element<O>(fn(data[I][base[I] + j * inner_stride[I]]...));
        }
      }
      (std::make_index_sequence<K>{});
      // Advance the outer index (axes rank-2 .. 0) with carry, keeping per-operand offsets.
      for (int axis = rank - 2; axis >= 0; --axis) {
        ++index[axis];
        for (std::size_t k = 0; k < K; ++k) base[k] += strides[k][axis];
        if (index[axis] < shape[axis]) break;
        for (std::size_t k = 0; k < K; ++k) base[k] -= strides[k][axis] * shape[axis];
        index[axis] = 0;
      }
    }
  });
}

template <class O, class C, std::size_t K, class Fn>
void run_elementwise_loop(const Fn& fn, Tensor& out, const std::array<const Tensor*, K>& inputs) {
  const Dims& shape = out.shape();
  const std::int64_t count = out.numel();
  if (count == 0) return;
  O* __restrict out_data = static_cast<O*>(out.raw_data());
  std::array<const C*, K> data{};
  std::array<OperandLayout, K> layouts{};
  bool all_full = true;
  bool rows_only = true;  // every operand Full or Row
  for (std::size_t k = 0; k < K; ++k) {
    data[k] = static_cast<const C*>(inputs[k]->raw_data());
    layouts[k] = operand_layout(*inputs[k], shape, count);
    // A single-element operand of a single-element output is just a flat operand.
    if (layouts[k] == OperandLayout::Scalar && count == 1) layouts[k] = OperandLayout::Full;
    all_full = all_full && layouts[k] == OperandLayout::Full;
    rows_only =
        rows_only && (layouts[k] == OperandLayout::Full || layouts[k] == OperandLayout::Row);
  }
  if (all_full) {
    threads::for_each_chunk(count, [&](std::int64_t begin, std::int64_t end) {
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        for (std::int64_t i = begin; i < end; ++i)
          out_data[i] = convert_element<O>(fn(data[I][i]...));
      }
      (std::make_index_sequence<K>{});
    });
    return;
  }
  if (rows_only) {
    run_row_loop<O, C, K>(fn, out_data, data, layouts, count, shape[shape.rank() - 1]);
    return;
  }
  if constexpr (K >= 3) {
    // The first operand contiguous, every other a single element (clip(x, low, high)): the
    // elements are read once, out of the loop.
    bool rest_scalar = layouts[0] == OperandLayout::Full;
    for (std::size_t k = 1; k < K; ++k) {
      rest_scalar = rest_scalar && layouts[k] == OperandLayout::Scalar;
    }
    if (rest_scalar) {
      std::array<C, K> scalars{};
      for (std::size_t k = 1; k < K; ++k) scalars[k] = data[k][0];
      const C* __restrict first = data[0];
      threads::for_each_chunk(count, [&](std::int64_t begin, std::int64_t end) {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          for (std::int64_t i = begin; i < end; ++i)
            out_data[i] = convert_element<O>(fn(first[i], scalars[I + 1]...));
        }
        (std::make_index_sequence<K - 1>{});
      });
      return;
    }
  }
  if constexpr (K == 2) {
    const bool scalar_first =
        layouts[0] == OperandLayout::Scalar && layouts[1] == OperandLayout::Full;
    const bool scalar_second =
        layouts[0] == OperandLayout::Full && layouts[1] == OperandLayout::Scalar;
    if (scalar_first || scalar_second) {
      const std::size_t scalar_index = scalar_first ? 0 : 1;
      run_scalar_operand_loop<O, C>(fn, out_data, data[1 - scalar_index], data[scalar_index][0],
                                    scalar_first, count);
      return;
    }
  }
  run_strided_loop<O, C, K>(fn, out_data, shape, data, inputs);
}

}  // namespace tscope::ops::detail
