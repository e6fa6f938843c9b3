// SPDX-License-Identifier: Apache-2.0
// Loops (scan):
//  - BM_Scan_StepOverhead: the cost of one step outside the body's nodes. The body returns its
//    state unchanged (no node runs), so a step is binding the rows, dispatching the body's empty
//    Program and copying the output into its stack; counter time_per_step.
//  - BM_Scan_BodyNodeStep: the same loop whose body is one Add, for the per-step cost with a node.
//  - BM_Scan_LstmVsOp_{Forward,Train}: an LSTM written with scan (both products and the gates
//    in the step, as a Theano user writes it) against the dedicated Lstm op,
//    batch 16, input and hidden 128, 50 steps, float32,
//    timed call by call alternately (paired_timing.h); counter scan_per_op is the ratio of the
//    medians. Train: the loss mean(y^2), gradients of the weights and an SGD update.
#include <benchmark/benchmark.h>

#include <vector>

#include "bench_tensors.h"
#include "paired_timing.h"
#include "tscope/tscope.h"

namespace {
using namespace tscope;

void step_loop(benchmark::State& state, bool with_node) {
  const std::int64_t steps = 1000;
  Variable x = vector(DType::Float32, "x");
  ScanResult loop = scan(
      [&](const std::vector<Variable>& in) {
        return std::vector<Variable>{with_node ? in[1] + in[0] : in[1]};
      },
      {x}, {constant(Tensor::scalar(0.0, DType::Float32))}, {}, {.name = "steps"});
  FunctionOptions options;
  options.allow_gc = false;
  Function f = function({x}, {loop.outputs[0]}, {}, options);
  const Tensor xs = Tensor::zeros(DType::Float32, {steps});
  for (auto _ : state) {
    std::vector<Tensor> result = f({xs});
    benchmark::DoNotOptimize(result);
  }
  state.counters["time_per_step"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

void BM_Scan_StepOverhead(benchmark::State& state) { step_loop(state, false); }
void BM_Scan_BodyNodeStep(benchmark::State& state) { step_loop(state, true); }

constexpr std::int64_t kSteps = 50;
constexpr std::int64_t kBatch = 16;
constexpr std::int64_t kInput = 128;
constexpr std::int64_t kHidden = 128;

Variable gate(const Variable& gates, std::int64_t index) {
  return subtensor(gates, {slice(), slice(index * kHidden, (index + 1) * kHidden)});
}

// The Lstm op's maths (ONNX gate order i, o, f, c) as a loop, written as a Theano user writes
// it: both products and the gates in the step. The rewrite push_out_sequence_work moves the
// input product x[t] W^T + b before the loop, as one product over every step's rows.
RecurrentResult scan_lstm(const Variable& x,
                          const Variable& w,
                          const Variable& r,
                          const Variable& b) {
  const Variable bias =
      subtensor(b, {slice(0, 4 * kHidden)}) + subtensor(b, {slice(4 * kHidden, 8 * kHidden)});
  const Variable w_t = transpose(w);
  const Variable r_t = transpose(r);
  const Variable zero = constant(Tensor::zeros(DType::Float32, {kBatch, kHidden}));
  ScanResult loop = scan(
      [&](const std::vector<Variable>& in) {
        // in: x[t], h[t-1], c[t-1]
        const Variable all = dot(in[0], w_t) + bias + dot(in[1], r_t);
        const Variable c =
            sigmoid(gate(all, 2)) * in[2] + sigmoid(gate(all, 0)) * tanh(gate(all, 3));
        const Variable h = sigmoid(gate(all, 1)) * tanh(c);
        return std::vector<Variable>{h, c};
      },
      {x}, {zero, zero}, {}, {.name = "lstm_step"});
  return {loop.outputs[0], subtensor(loop.outputs[0], {-1}), subtensor(loop.outputs[1], {-1})};
}

Function lstm_function(bool use_scan, bool train) {
  Variable x = tensor(DType::Float32, {kSteps, kBatch, kInput}, "x");
  Variable w = shared(bench::filled_tensor({4 * kHidden, kInput}, 1, 0.2), "w");
  Variable r = shared(bench::filled_tensor({4 * kHidden, kHidden}, 2, 0.2), "r");
  Variable b = shared(bench::filled_tensor({8 * kHidden}, 3, 0.2), "b");
  const RecurrentResult out = use_scan ? scan_lstm(x, w, r, b) : lstm(x, w, r, {.bias = b});
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
  return function({x}, outputs, updates, options);
}

void lstm_pair(benchmark::State& state, bool train) {
  const Function with_scan = lstm_function(true, train);
  const Function with_op = lstm_function(false, train);
  const Tensor xs = bench::filled_tensor({kSteps, kBatch, kInput}, 4, 0.2);
  bench::time_pair(
      state, [&] { benchmark::DoNotOptimize(with_scan({xs})); },
      [&] { benchmark::DoNotOptimize(with_op({xs})); },
      {.first = "scan_us", .second = "op_us", .ratio = "op_per_scan"});
  state.counters["scan_per_op"] = state.counters["scan_us"] / state.counters["op_us"];
}

void BM_Scan_LstmVsOp_Forward(benchmark::State& state) { lstm_pair(state, false); }
void BM_Scan_LstmVsOp_Train(benchmark::State& state) { lstm_pair(state, true); }

}  // namespace

BENCHMARK(BM_Scan_StepOverhead);
BENCHMARK(BM_Scan_BodyNodeStep);
BENCHMARK(BM_Scan_LstmVsOp_Forward)->UseRealTime();
BENCHMARK(BM_Scan_LstmVsOp_Train)->UseRealTime();

BENCHMARK_MAIN();
