// SPDX-License-Identifier: Apache-2.0
// BM_Recurrent: a 1-layer LSTM (seq 32, batch 8, input 64, hidden 128, float32, with bias) as the
// dedicated Lstm op ("op": one node, LstmGrad for the gradient) and as the graph the ONNX importer
// built before it existed ("unrolled": one input product up front, then per step a product,
// gate slices and elementwise ops; grad() differentiates those nodes). Forward = y and the last
// states; Train = the loss mean(y^2), its gradients for W, R and B, and an SGD update of the
// three shared variables. Both run as compiled functions (profiling off, allow_gc off).
//
// BM_Recurrent_GruOp_Forward: the Gru op (float32, with bias, shared weights) on the LSTM's
// extents, in both reset forms (argument: linear_before_reset). BM_Recurrent_GruDnnlVsLoop times,
// call by call in alternation (paired_timing.h), one Gru node with constant weights (as an ONNX
// import makes them) on its two fast kernels: oneDNN's GRU primitive ("dnnl_us") and the BLAS loops
// ("loop_us"), which a sequence_lens input covering every step selects, as the oneDNN path takes no
// sequence_lens. Arguments: linear_before_reset, steps, batch, input, hidden.
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_tensors.h"
#include "paired_timing.h"
#include "tscope/tscope.h"

namespace {
using namespace tscope;

constexpr std::int64_t kSteps = 32;
constexpr std::int64_t kBatch = 8;
constexpr std::int64_t kInput = 64;
constexpr std::int64_t kHidden = 128;

Tensor filled(const Dims& shape, std::uint64_t seed) {
  return bench::filled_tensor(shape, seed, 0.2);
}

Variable gate(const Variable& gates, std::int64_t index) {
  return subtensor(gates, {slice(), slice(index * kHidden, (index + 1) * kHidden)});
}

/// The unrolled LSTM of the former ONNX converter (gate order i, o, f, c; no peepholes).
RecurrentResult unrolled_lstm(const Variable& x, const Variable& w, const Variable& r,
                              const Variable& b) {
  const Variable rows = reshape(x, {kSteps * kBatch, kInput});
  const Variable bias = subtensor(b, {slice(0, 4 * kHidden)}) +
                        subtensor(b, {slice(4 * kHidden, 8 * kHidden)});
  const Variable projection = reshape(dot(rows, transpose(w)) + bias, {kSteps, kBatch, 4 * kHidden});
  const Variable recurrence = transpose(r);
  Variable h = constant(Tensor::zeros(DType::Float32, {kBatch, kHidden}));
  Variable c = h;
  std::vector<Variable> ys;
  for (std::int64_t t = 0; t < kSteps; ++t) {
    const Variable all = subtensor(projection, {t}) + dot(h, recurrence);
    c = sigmoid(gate(all, 2)) * c + sigmoid(gate(all, 0)) * tanh(gate(all, 3));
    h = sigmoid(gate(all, 1)) * tanh(c);
    ys.push_back(h);
  }
  return {stack(ys, 0), h, c};
}

enum class Way { Op, Unrolled };

void run(benchmark::State& state, Way way, bool train) {
  Variable x = tensor(DType::Float32, {kSteps, kBatch, kInput}, "x");
  Variable w = shared(filled({4 * kHidden, kInput}, 1), "w");
  Variable r = shared(filled({4 * kHidden, kHidden}, 2), "r");
  Variable b = shared(filled({8 * kHidden}, 3), "b");
  const RecurrentResult out = way == Way::Op ? lstm(x, w, r, {.bias = b}) : unrolled_lstm(x, w, r, b);
  FunctionOptions options;
  options.allow_gc = false;
  std::vector<Variable> outputs = {out.y, out.last_h, out.last_c};
  std::vector<Update> updates;
  if (train) {
    const Variable loss = mean(sqr(out.y));
    const std::vector<Variable> g = grad(loss, {w, r, b});
    outputs = {loss};
    updates = {{w, w - g[0] * 0.01}, {r, r - g[1] * 0.01}, {b, b - g[2] * 0.01}};
  }
  Function f = function({x}, outputs, updates, options);
  const Tensor xs = filled({kSteps, kBatch, kInput}, 4);
  for (auto _ : state) {
    std::vector<Tensor> result = f({xs});
    benchmark::DoNotOptimize(result);
  }
  state.counters["nodes"] = static_cast<double>(f.graph().node_count());
}

void BM_Recurrent_LstmOp_Forward(benchmark::State& state) { run(state, Way::Op, false); }
void BM_Recurrent_LstmUnrolled_Forward(benchmark::State& state) { run(state, Way::Unrolled, false); }
void BM_Recurrent_LstmOp_Train(benchmark::State& state) { run(state, Way::Op, true); }
void BM_Recurrent_LstmUnrolled_Train(benchmark::State& state) { run(state, Way::Unrolled, true); }

void BM_Recurrent_GruOp_Forward(benchmark::State& state) {
  const bool linear_before_reset = state.range(0) != 0;
  Variable x = tensor(DType::Float32, {kSteps, kBatch, kInput}, "x");
  Variable w = shared(filled({3 * kHidden, kInput}, 1), "w");
  Variable r = shared(filled({3 * kHidden, kHidden}, 2), "r");
  Variable b = shared(filled({6 * kHidden}, 3), "b");
  const RecurrentResult out = gru(x, w, r, {.bias = b, .linear_before_reset = linear_before_reset});
  FunctionOptions options;
  options.allow_gc = false;
  Function f = function({x}, {out.y, out.last_h}, {}, options);
  const Tensor xs = filled({kSteps, kBatch, kInput}, 4);
  for (auto _ : state) {
    std::vector<Tensor> result = f({xs});
    benchmark::DoNotOptimize(result);
  }
}

/// A Gru node with constant weights; with `lengths`, a sequence_lens input that is fed full
/// lengths.
Function constant_gru(const Dims& x_shape,
                      std::int64_t hidden,
                      bool linear_before_reset,
                      bool lengths) {
  Variable x = tensor(DType::Float32, x_shape, "x");
  std::vector<Variable> inputs = {x};
  GruOptions gru_options{.bias = constant(filled({6 * hidden}, 3)),
                         .linear_before_reset = linear_before_reset};
  if (lengths) {
    gru_options.sequence_lens = tensor(DType::Int64, {x_shape[1]}, "lengths");
    inputs.push_back(gru_options.sequence_lens);
  }
  const RecurrentResult out = gru(x, constant(filled({3 * hidden, x_shape[2]}, 1)),
                                  constant(filled({3 * hidden, hidden}, 2)), gru_options);
  FunctionOptions options;
  options.allow_gc = false;
  return function(inputs, {out.y, out.last_h}, {}, options);
}

void BM_Recurrent_GruDnnlVsLoop(benchmark::State& state) {
  const bool linear_before_reset = state.range(0) != 0;
  const Dims x_shape{state.range(1), state.range(2), state.range(3)};
  const std::int64_t hidden = state.range(4);
  Function dnnl = constant_gru(x_shape, hidden, linear_before_reset, false);
  Function loop = constant_gru(x_shape, hidden, linear_before_reset, true);
  const Tensor xs = filled(x_shape, 4);
  const Tensor lengths = Tensor::from_vector<std::int64_t>(
      {x_shape[1]}, std::vector<std::int64_t>(static_cast<std::size_t>(x_shape[1]), x_shape[0]));
  auto run_dnnl = [&] {
    std::vector<Tensor> result = dnnl({xs});
    benchmark::DoNotOptimize(result);
  };
  auto run_loop = [&] {
    std::vector<Tensor> result = loop({xs, lengths});
    benchmark::DoNotOptimize(result);
  };
  run_dnnl();  // builds the primitive and packs the weights
  run_loop();
  bench::time_pair(state, run_loop, run_dnnl,
                   {.first = "loop_us", .second = "dnnl_us", .ratio = "dnnl_per_loop"});
}

BENCHMARK(BM_Recurrent_LstmOp_Forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Recurrent_LstmUnrolled_Forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Recurrent_LstmOp_Train)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Recurrent_LstmUnrolled_Train)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Recurrent_GruOp_Forward)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
// The LSTM's extents above, and the zoo's GRU (docs/onnx.md: 16 steps, 32 -> 64) at batch 1 and 2.
BENCHMARK(BM_Recurrent_GruDnnlVsLoop)
    ->ArgNames({"lbr", "steps", "batch", "input", "hidden"})
    ->Args({1, kSteps, kBatch, kInput, kHidden})
    ->Args({0, kSteps, kBatch, kInput, kHidden})
    ->Args({1, 16, 1, 32, 64})
    ->Args({0, 16, 1, 32, 64})
    ->Args({1, 16, 2, 32, 64})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
