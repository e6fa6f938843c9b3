// SPDX-License-Identifier: Apache-2.0
#pragma once
// The "simd" fast kernel of transcendental elementwise ops: SLEEF vector math over contiguous
// float32/float64 operands. A Simd policy is a struct with
//   static __m128d apply(__m128d...);  static __m128 apply(__m128...);
// calling SLEEF's 1.0-ULP functions (0.5-ULP where that is the only accurate variant, sqrt).
//
// Portability: the build has no -march flags and must run on any x86-64, so the policies use the
// 128-bit entry points (Sleef_expd2_u10, Sleef_expf4_u10, ...), which sleef.h declares under
// __SSE2__, part of the x86-64 baseline, and libsleef dispatches at run time to the best 128-bit
// code the CPU supports. Unary ops on a CPU with AVX2 or AVX-512 run wider kernels instead,
// compiled apart for those instruction sets (simd_wide.h).
//
// Long outputs run in chunks on the OpenMP threads (parallel_for.h).
//
// Operands whose last axis is dense but whose rows are apart (a slice of columns) run the vector
// code a row at a time. Other layouts (transposed views, row broadcasts) go through the typed
// loop with the scalar libm functor; the profile still names the node's kernel "simd" because
// the implementation is chosen per node when the function is compiled.
#include <emmintrin.h>
#include <sleef.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "elementwise_def.h"
#include "simd_wide.h"
#include "tscope/threads/parallel_for.h"

namespace tscope::ops::detail {

/// A policy with `static constexpr WideUnary kWide` has 256/512-bit kernels (simd_wide.h), which
/// the loops below use for a contiguous operand on a CPU that runs them.
template <class Simd>
concept HasWideKernels = requires {
  Simd::kWide;
};

/// The policy's widest kernel for C on this CPU, or null; looked up once (a Composite calls its
/// block kernels once per tile).
template <class C, class Simd>
WideKernel<C> wide_kernel_of() noexcept {
  if constexpr (HasWideKernels<Simd>) {
    static const WideKernel<C> kernel = kernel_for<C>(wide_kernels(Simd::kWide));
    return kernel;
  } else {
    return nullptr;
  }
}

template <class C>
struct SimdLanes;

template <>
struct SimdLanes<double> {
  using Vector = __m128d;
  static constexpr std::int64_t kWidth = 2;
  static Vector load(const double* data) { return _mm_loadu_pd(data); }
  static Vector splat(double value) { return _mm_set1_pd(value); }
  static void store(double* data, Vector value) { _mm_storeu_pd(data, value); }
};

template <>
struct SimdLanes<float> {
  using Vector = __m128;
  static constexpr std::int64_t kWidth = 4;
  static Vector load(const float* data) { return _mm_loadu_ps(data); }
  static Vector splat(float value) { return _mm_set1_ps(value); }
  static void store(float* data, Vector value) { _mm_storeu_ps(data, value); }
};

/// Runs `Simd` over operands that are each contiguous with the output's size or a single element.
/// Returns false, doing nothing, when some operand has another layout.
template <class C, std::size_t K, class Simd>
bool run_simd_loop(Tensor& out, const std::array<const Tensor*, K>& inputs) {
  using Lanes = SimdLanes<C>;
  constexpr std::int64_t kWidth = Lanes::kWidth;
  static_assert(threads::kChunkAlignment % kWidth == 0, "chunks must start on a vector boundary");
  const std::int64_t count = out.numel();
  std::array<const C*, K> data{};
  std::array<bool, K> single{};
  for (std::size_t k = 0; k < K; ++k) {
    const Tensor& input = *inputs[k];
    data[k] = static_cast<const C*>(input.raw_data());
    single[k] = input.numel() == 1 && count != 1;
    if (!single[k] && !(input.is_contiguous() && input.numel() == count)) return false;
  }
  C* out_data = static_cast<C*>(out.raw_data());
  if constexpr (K == 1) {
    if (const WideKernel<C> wide = wide_kernel_of<C, Simd>(); wide != nullptr && !single[0]) {
      threads::for_each_chunk(count, [&](std::int64_t begin, std::int64_t end) {
        wide(data[0] + begin, out_data + begin, end - begin);
      });
      return true;
    }
  }
  auto operand = [&](std::size_t k, std::int64_t i) {
    return single[k] ? Lanes::splat(data[k][0]) : Lanes::load(data[k] + i);
  };
  // Chunk boundaries are multiples of the vector width, so only the last chunk has a tail.
  threads::for_each_chunk(count, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t i = begin;
    for (; i + kWidth <= end; i += kWidth) {
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        Lanes::store(out_data + i, Simd::apply(operand(I, i)...));
      }
      (std::make_index_sequence<K>{});
    }
    if (i < end) {
      // The tail goes through the same vector code (padded by repeating the last element), so
      // every element of a tensor gets the same rounding whatever its position.
      std::array<std::array<C, kWidth>, K> tail{};
      for (std::size_t k = 0; k < K; ++k) {
        for (std::int64_t lane = 0; lane < kWidth; ++lane) {
          const std::int64_t index = std::min(i + lane, end - 1);
          tail[k][lane] = single[k] ? data[k][0] : data[k][index];
        }
      }
      std::array<C, kWidth> result{};
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        Lanes::store(result.data(), Simd::apply(Lanes::load(tail[I].data())...));
      }
      (std::make_index_sequence<K>{});
      for (std::int64_t lane = 0; i + lane < end; ++lane) out_data[i + lane] = result[lane];
    }
  });
  return true;
}

/// The block kernel of a Simd policy: vectors over the block, the tail padded by repeating the
/// last element as run_simd_loop does, so a value gets the same rounding in either loop.
template <class C, std::size_t K, class Simd>
void simd_block_kernel(const C* const* args, C* out, std::int64_t n) {
  if constexpr (K == 1) {
    if (const WideKernel<C> wide = wide_kernel_of<C, Simd>(); wide != nullptr) {
      wide(args[0], out, n);
      return;
    }
  }
  using Lanes = SimdLanes<C>;
  constexpr std::int64_t kWidth = Lanes::kWidth;
  std::int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      Lanes::store(out + i, Simd::apply(Lanes::load(args[I] + i)...));
    }
    (std::make_index_sequence<K>{});
  }
  if (i == n) return;
  std::array<std::array<C, kWidth>, K> tail{};
  for (std::size_t k = 0; k < K; ++k) {
    for (std::int64_t lane = 0; lane < kWidth; ++lane) {
      tail[k][lane] = args[k][std::min(i + lane, n - 1)];
    }
  }
  std::array<C, kWidth> result{};
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    Lanes::store(result.data(), Simd::apply(Lanes::load(tail[I].data())...));
  }
  (std::make_index_sequence<K>{});
  for (std::int64_t lane = 0; i + lane < n; ++lane) out[i + lane] = result[lane];
}

/// Runs `Simd` a row at a time (the block kernel over each run of the last axis) over operands
/// of the output's shape whose last axis is dense: a slice of columns (an LSTM's gate), a
/// transposed batch. Returns false, doing nothing, when some operand has another layout.
template <class C, std::size_t K, class Simd>
bool run_simd_rows(Tensor& out, const std::array<const Tensor*, K>& inputs) {
  const Dims& shape = out.shape();
  const int rank = shape.rank();
  if (rank < 2) return false;
  std::array<const C*, K> base{};
  for (std::size_t k = 0; k < K; ++k) {
    const Tensor& input = *inputs[k];
    if (input.shape() != shape || input.strides()[rank - 1] != 1) return false;
    base[k] = static_cast<const C*>(input.raw_data());
  }
  const std::int64_t row = shape[rank - 1];
  if (row == 0 || out.numel() == 0) return true;
  const std::int64_t rows = out.numel() / row;
  C* out_data = static_cast<C*>(out.raw_data());
  std::array<std::int64_t, kMaxRank> index{};
  std::array<std::int64_t, K> offset{};
  std::array<const C*, K> args{};
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::size_t k = 0; k < K; ++k) args[k] = base[k] + offset[k];
    simd_block_kernel<C, K, Simd>(args.data(), out_data + r * row, row);
    for (int axis = rank - 2; axis >= 0; --axis) {
      const auto slot = static_cast<std::size_t>(axis);
      ++index[slot];
      for (std::size_t k = 0; k < K; ++k) offset[k] += inputs[k]->strides()[axis];
      if (index[slot] < shape[axis]) break;
      for (std::size_t k = 0; k < K; ++k) offset[k] -= inputs[k]->strides()[axis] * shape[axis];
      index[slot] = 0;
    }
  }
  return true;
}

template <class Fn, std::size_t K, class Simd>
void elementwise_simd_kernel(KernelContext& ctx) {
  const Dims shape = elementwise_output_shape(ctx);
  const ElementwiseDTypes types = kernel_dtypes<K>(ctx);
  Tensor& out = ctx.allocate_output(0, types.output, shape);
  std::array<Tensor, 3> storage;
  const auto all = converted_inputs(ctx, types.compute, storage);
  std::array<const Tensor*, K> inputs{};
  for (std::size_t k = 0; k < K; ++k) inputs[k] = all[k];
  visit_elementwise_types<Fn, K>(types, [&](auto output_tag, auto compute_tag) {
    using O = decltype(output_tag);
    using C = decltype(compute_tag);
    if constexpr (std::is_same_v<O, C> && std::is_floating_point_v<C>) {
      if (run_simd_loop<C, K, Simd>(out, inputs) || run_simd_rows<C, K, Simd>(out, inputs)) return;
    }
    run_elementwise_loop<O, C, K>(Fn{}, out, inputs);
  });
}

}  // namespace tscope::ops::detail
