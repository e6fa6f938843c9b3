// SPDX-License-Identifier: Apache-2.0
#pragma once
// The strided, broadcasting loop every elementwise kernel runs: K inputs of C++ type C, one
// contiguous output of type O. Contiguous same-shape operands take a flat loop the compiler can
// vectorise; anything else walks the outer axes with a carry and runs the innermost axis tight.
#include <array>
#include <cstdint>
#include <utility>

#include "tscope/core/tensor.h"

namespace tscope::ops::detail {

template <class O, class C, std::size_t K, class Fn>
void run_elementwise_loop(const Fn& fn, Tensor& out, const std::array<const Tensor*, K>& inputs) {
  const Dims& shape = out.shape();
  const int rank = shape.rank();
  const std::int64_t count = out.numel();
  if (count == 0) return;
  O* __restrict out_data = static_cast<O*>(out.raw_data());
  std::array<const C*, K> data{};
  bool flat = true;
  for (std::size_t k = 0; k < K; ++k) {
    data[k] = static_cast<const C*>(inputs[k]->raw_data());
    flat = flat && inputs[k]->is_contiguous() && inputs[k]->shape() == shape;
  }
  if (flat) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      for (std::int64_t i = 0; i < count; ++i) out_data[i] = static_cast<O>(fn(data[I][i]...));
    }(std::make_index_sequence<K>{});
    return;
  }
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
  std::array<std::int64_t, kMaxRank> index{};
  std::array<std::int64_t, K> base{};
  for (std::int64_t row = 0; row < outer; ++row) {
    O* out_row = out_data + row * inner;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      for (std::int64_t j = 0; j < inner; ++j) {
        out_row[j] = static_cast<O>(fn(data[I][base[I] + j * inner_stride[I]]...));
      }
    }(std::make_index_sequence<K>{});
    // Advance the outer index (axes rank-2 .. 0) with carry, keeping per-operand offsets.
    for (int axis = rank - 2; axis >= 0; --axis) {
      ++index[axis];
      for (std::size_t k = 0; k < K; ++k) base[k] += strides[k][axis];
      if (index[axis] < shape[axis]) break;
      for (std::size_t k = 0; k < K; ++k) base[k] -= strides[k][axis] * shape[axis];
      index[axis] = 0;
    }
  }
}

}  // namespace tscope::ops::detail
