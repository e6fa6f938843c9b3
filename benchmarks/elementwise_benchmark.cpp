// SPDX-License-Identifier: Apache-2.0
// BM_Elementwise: one elementwise node on a 144 x 56 x 56 float32 image (MobileNet-v2's widest
// activation, 1.8 MB) as a compiled function (profiling off, allow_gc off), at 1 and 2 OpenMP
// threads: clip(x, 0, 6) and x + y (typed loops, memory-bound) and exp(x) (SLEEF, compute-bound);
// and the main job's density grid with and without elementwise fusion (Composite).
// Long loops run in chunks on the worker threads (include/tscope/threads/parallel_for.h); the
// thread count is set the way the CLI's --threads sets it (threads::set_thread_count).
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_tensors.h"
#include "tscope/tscope.h"

namespace {
using namespace tscope;

const Dims kImage{1, 144, 56, 56};

Tensor filled(std::uint64_t seed) { return bench::filled_tensor(kImage, seed, 16.0); }

enum class Kind { Clip, Add, Exp };

void run(benchmark::State& state, Kind kind) {
  threads::set_thread_count(static_cast<int>(state.range(0)));
  Variable x = tensor(DType::Float32, kImage, "x");
  Variable y = tensor(DType::Float32, kImage, "y");
  Variable out = kind == Kind::Clip ? clip(x, 0.0, 6.0) : kind == Kind::Add ? x + y : exp(x);
  FunctionOptions options;
  options.allow_gc = false;
  std::vector<Variable> inputs{x};
  std::vector<Tensor> values{filled(1)};
  if (kind == Kind::Add) {
    inputs.push_back(y);
    values.push_back(filled(2));
  }
  Function f = function(inputs, {out}, {}, options);
  for (auto _ : state) benchmark::DoNotOptimize(f(values));
  const auto bytes = static_cast<double>(kImage.product()) * 4.0 * (kind == Kind::Add ? 3 : 2);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

// The main job's density grid (src/models/voxel_cnn_training.cpp) on its shapes: 8 molecules of
// 12 atoms against a 16^3 grid, through an (8, 4096, 12, 3) intermediate when unfused, to the
// occupancy and charge channels (two sums over atoms of one Gaussian). Arguments: fused (1: the
// default pipeline, 0: fuse_elementwise excluded) and threads.
void BM_Elementwise_DensityGrid(benchmark::State& state) {
  threads::set_thread_count(static_cast<int>(state.range(1)));
  Variable atoms = tensor(DType::Float32, {8, 12, 3}, "atoms");
  Variable grid = tensor(DType::Float32, {4096, 3}, "grid");
  Variable radii = tensor(DType::Float32, {8, 12}, "radii");
  Variable charges = tensor(DType::Float32, {8, 12}, "charges");
  const Variable diff =
      dimshuffle(atoms, {0, kNewAxis, 1, 2}) - dimshuffle(grid, {kNewAxis, 0, kNewAxis, 1});
  const Variable d2 = sum(sqr(diff), {3});
  const Variable gauss = exp(-d2 / dimshuffle(sqr(radii), {0, kNewAxis, 1}));
  const Variable occupancy = sum(gauss, {2});
  const Variable charge = sum(gauss * dimshuffle(charges, {0, kNewAxis, 1}), {2});
  FunctionOptions options;
  options.allow_gc = false;
  if (state.range(0) == 0) options.excluded_rewrites = {"fuse_elementwise"};
  Function f = function({atoms, grid, radii, charges}, {occupancy, charge}, {}, options);
  const std::vector<Tensor> values{bench::filled_tensor({8, 12, 3}, 1, 16.0),
                                   bench::filled_tensor({4096, 3}, 2, 16.0),
                                   bench::filled_tensor({8, 12}, 3, 4.0),
                                   bench::filled_tensor({8, 12}, 4, 1.0)};
  for (auto _ : state) benchmark::DoNotOptimize(f(values));
  state.SetItemsProcessed(8 * 4096 * 12 * 3 * state.iterations());
}

void BM_Elementwise_Clip(benchmark::State& state) { run(state, Kind::Clip); }
void BM_Elementwise_Add(benchmark::State& state) { run(state, Kind::Add); }
void BM_Elementwise_Exp(benchmark::State& state) { run(state, Kind::Exp); }
}  // namespace

BENCHMARK(BM_Elementwise_Clip)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Elementwise_Add)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Elementwise_Exp)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Elementwise_DensityGrid)
    ->ArgNames({"fused", "threads"})
    ->ArgsProduct({{0, 1}, {1, 2}})
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
