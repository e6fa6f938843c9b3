// SPDX-License-Identifier: Apache-2.0
// Gemm on weights that change every call (a training step), float32, one OpenMP thread, each pair
// timed call by call (paired_timing.h):
//  - BM_Gemm_TrainedLinear/m/k: x (m, k) . W^T + b with W a (512, k) graph input, as ONNX
//    Gemm's transB reads a Linear layer being trained, compiled, against dnnl_sgemm on the same
//    operands with the bias seeded into its output (the node's path below 16 rows). Counters
//    tscope_us, sgemm_us, sgemm_per_tscope.
//  - BM_Gemm_MomentumUpdate: SGD's velocity update of that layer's weight gradient from a batch
//    of 64, 0.9 * v - 0.01 * (g^T . x), compiled as is (one Gemm, gemm_from_scaled_sum) and
//    without that rewrite (Dot22, then a fused elementwise pass in place on the product).
//    Counters gemm_us, unfused_us, unfused_per_gemm.
#include <benchmark/benchmark.h>
#include <dnnl.h>

#include <algorithm>
#include <vector>

#include "bench_tensors.h"
#include "paired_timing.h"
#include "tscope/tscope.h"

namespace {
using namespace tscope;

constexpr std::int64_t kIn = 784;
constexpr std::int64_t kOut = 512;
constexpr std::int64_t kBatch = 64;

void BM_Gemm_TrainedLinear(benchmark::State& state) {
  threads::set_thread_count(1);
  const std::int64_t m = state.range(0);
  const std::int64_t k = state.range(1);
  Variable x = tensor(DType::Float32, {m, k}, "x");
  Variable w = tensor(DType::Float32, {kOut, k}, "W");
  Variable b = tensor(DType::Float32, {kOut}, "b");
  FunctionOptions options;
  options.allow_gc = false;
  Function f = function({x, w, b}, {gemm(b, x, transpose(w), 1.0, 1.0)}, {}, options);
  const std::vector<Tensor> values{bench::filled_tensor({m, k}, 1, 2.0),
                                   bench::filled_tensor({kOut, k}, 2, 0.1),
                                   bench::filled_tensor({kOut}, 3, 1.0)};
  std::vector<float> out(static_cast<std::size_t>(m * kOut));
  const auto* xs = static_cast<const float*>(values[0].raw_data());
  const auto* ws = static_cast<const float*>(values[1].raw_data());
  const auto* bias = static_cast<const float*>(values[2].raw_data());
  bench::time_pair(
      state, [&] { benchmark::DoNotOptimize(f(values)); },
      [&] {
        for (std::int64_t i = 0; i < m; ++i) std::copy_n(bias, kOut, out.data() + i * kOut);
        dnnl_sgemm('N', 'T', m, kOut, k, 1.0f, xs, k, ws, k, 1.0f, out.data(), kOut);
        benchmark::DoNotOptimize(out.data());
      },
      {"tscope_us", "sgemm_us", "sgemm_per_tscope"});
}

void BM_Gemm_MomentumUpdate(benchmark::State& state) {
  threads::set_thread_count(1);
  Variable g = tensor(DType::Float32, {kBatch, kOut}, "g");
  Variable x = tensor(DType::Float32, {kBatch, kIn}, "x");
  Variable v = tensor(DType::Float32, {kOut, kIn}, "v");
  const Variable velocity = 0.9 * v - 0.01 * dot(transpose(g), x);
  FunctionOptions fused;
  fused.allow_gc = false;
  FunctionOptions unfused = fused;
  unfused.excluded_rewrites = {"gemm_from_scaled_sum"};
  Function with_gemm = function({g, x, v}, {velocity}, {}, fused);
  Function without = function({g, x, v}, {velocity}, {}, unfused);
  const std::vector<Tensor> values{bench::filled_tensor({kBatch, kOut}, 4, 1.0),
                                   bench::filled_tensor({kBatch, kIn}, 5, 2.0),
                                   bench::filled_tensor({kOut, kIn}, 6, 0.1)};
  bench::time_pair(
      state, [&] { benchmark::DoNotOptimize(with_gemm(values)); },
      [&] { benchmark::DoNotOptimize(without(values)); },
      {"gemm_us", "unfused_us", "unfused_per_gemm"});
}

}  // namespace

// The MLP's two hidden layers at its batch, and the second at a smaller and a larger batch.
BENCHMARK(BM_Gemm_TrainedLinear)
    ->Args({64, kIn})
    ->Args({16, kOut})
    ->Args({64, kOut})
    ->Args({256, kOut})
    ->UseRealTime();
BENCHMARK(BM_Gemm_MomentumUpdate)->UseRealTime();
BENCHMARK_MAIN();
