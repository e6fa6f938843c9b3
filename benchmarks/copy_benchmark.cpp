// SPDX-License-Identifier: Apache-2.0
// Copies of strided views into contiguous memory (Tensor::contiguous(), which Reshape of a
// transposed input runs): counter bytes_per_second counts the bytes read plus the bytes written.
//  - BM_Copy_Contiguous: a plain copy of the same size, the memory-speed yardstick.
//  - BM_Copy_ChannelShuffle: (n, groups, c/groups, h, w) -> (n, c/groups, groups, h, w).
//  - BM_Copy_AttentionHeads: (batch, tokens, heads, d) -> (batch, heads, tokens, d).
//  - BM_Copy_Transpose2d: a (1024, 1024) matrix transposed.
#include <benchmark/benchmark.h>

#include "tscope/core/tensor.h"

namespace {
using tscope::Dims;
using tscope::DType;
using tscope::Tensor;

Tensor permuted(const Tensor& base, const std::vector<int>& order) {
  Dims shape = Dims::filled(base.rank(), 0);
  Dims strides = Dims::filled(base.rank(), 0);
  for (int axis = 0; axis < base.rank(); ++axis) {
    shape[axis] = base.shape()[order[static_cast<std::size_t>(axis)]];
    strides[axis] = base.strides()[order[static_cast<std::size_t>(axis)]];
  }
  return base.view(shape, strides, 0);
}

void copy_loop(benchmark::State& state, const Tensor& view) {
  for (auto _ : state) {
    Tensor copy = view.is_contiguous() ? view.clone() : view.contiguous();
    benchmark::DoNotOptimize(copy.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * view.nbytes());
}

void BM_Copy_Contiguous(benchmark::State& state) {
  copy_loop(state, Tensor::zeros(DType::Float32, {8, 116, 28, 28}));
}
void BM_Copy_ChannelShuffle(benchmark::State& state) {
  copy_loop(state, permuted(Tensor::zeros(DType::Float32, {8, 2, 58, 28, 28}), {0, 2, 1, 3, 4}));
}
void BM_Copy_AttentionHeads(benchmark::State& state) {
  copy_loop(state, permuted(Tensor::zeros(DType::Float32, {8, 128, 8, 64}), {0, 2, 1, 3}));
}
void BM_Copy_Transpose2d(benchmark::State& state) {
  copy_loop(state, permuted(Tensor::zeros(DType::Float32, {1024, 1024}), {1, 0}));
}

}  // namespace

BENCHMARK(BM_Copy_Contiguous);
BENCHMARK(BM_Copy_ChannelShuffle);
BENCHMARK(BM_Copy_AttentionHeads);
BENCHMARK(BM_Copy_Transpose2d);
BENCHMARK_MAIN();
