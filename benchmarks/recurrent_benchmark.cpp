// SPDX-License-Identifier: Apache-2.0
// BM_Recurrent: a 1-layer LSTM (seq 32, batch 8, input 64, hidden 128, float32, with bias) as the
// dedicated Lstm op ("op": one node, LstmGrad for the gradient) and as the graph the ONNX importer
// built before it existed ("unrolled": one input product up front, then per step a product,
// gate slices and elementwise ops; grad() differentiates those nodes). Forward = y and the last
// states; Train = the loss mean(y^2), its gradients for W, R and B, and an SGD update of the
// three shared variables. Both run as compiled functions (profiling off, allow_gc off).
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_tensors.h"
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

BENCHMARK(BM_Recurrent_LstmOp_Forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Recurrent_LstmUnrolled_Forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Recurrent_LstmOp_Train)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Recurrent_LstmUnrolled_Train)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
