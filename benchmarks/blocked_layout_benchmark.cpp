// SPDX-License-Identifier: Apache-2.0
// BM_Blocked: a BlockedConv / BlockedMaxPool node on channel-blocked data against the plain Conv /
// MaxPool node doing the same work, on layer shapes of ResNet-18 and MobileNet-v2 (batch 1),
// timed call by call and alternately (paired_timing.h). Each side is a one-node function whose
// inputs are already in its layout (blocked data and packed weights are made once, beforehand, as
// the compiler folds PackConvWeights of constant weights); no bias or clamp, so both nodes compute
// the same sum of products. Counters: blocked_us, plain_us and plain_per_blocked (above 1: the
// blocked node is faster). Run with OMP_NUM_THREADS=1 for the single-thread figures in
// docs/conv.md, and with DNNL_VERBOSE=1 to see which oneDNN kernel each node runs.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "dnnl_bench_util.h"
#include "paired_timing.h"
#include "tscope/graph/apply.h"
#include "tscope/ops/channel_blocks.h"
#include "tscope/tscope.h"

namespace {
using tscope::Attrs;
using tscope::Dims;
using tscope::DType;
using tscope::Tensor;
using tscope::Variable;
using tscope::bench::filled;
using tscope::bench::FunctionCall;

constexpr tscope::bench::PairCounters kCounters{"blocked_us", "plain_us", "plain_per_blocked"};

struct ConvCase {
  const char* name;
  std::int64_t c, o, size;  ///< input channels, output channels, square input extent
  std::int64_t kernel, stride, groups;
};

// pad = kernel / 2 throughout, as in both networks.
const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> all = {
      {"r18_conv1_7x7s2", 3, 64, 224, 7, 2, 1},
      {"r18_layer1_3x3", 64, 64, 56, 3, 1, 1},
      {"r18_layer2_3x3s2", 64, 128, 56, 3, 2, 1},
      {"r18_layer2_down_1x1s2", 64, 128, 56, 1, 2, 1},
      {"r18_layer3_3x3", 256, 256, 14, 3, 1, 1},
      {"r18_layer4_3x3", 512, 512, 7, 3, 1, 1},
      {"mnv2_conv1_3x3s2", 3, 32, 224, 3, 2, 1},
      {"mnv2_dw32_3x3", 32, 32, 112, 3, 1, 32},
      {"mnv2_pw32to16_1x1", 32, 16, 112, 1, 1, 1},
      {"mnv2_pw24to144_1x1", 24, 144, 56, 1, 1, 1},
      {"mnv2_dw144_3x3s2", 144, 144, 56, 3, 2, 144},
      {"mnv2_dw960_3x3", 960, 960, 7, 3, 1, 960},
      {"mnv2_pw320to1280_1x1", 320, 1280, 7, 1, 1, 1},
  };
  return all;
}

Variable op1(std::string_view name, std::vector<Variable> inputs, Attrs attrs) {
  return tscope::apply_op1(tscope::op_def(name), std::move(inputs), std::move(attrs),
                           std::source_location::current());
}

// Runs a one-node function once (the layout copies: exact in either kernel).
Tensor run_once(const Variable& input, const Variable& output, const Tensor& value) {
  tscope::Function f = tscope::function({input}, {output});
  return f({value})[0];
}

void BM_BlockedConv(benchmark::State& state, const ConvCase& c) {
  using namespace tscope;
  const Dims x_shape{1, c.c, c.size, c.size};
  const Dims w_shape{c.o, c.c / c.groups, c.kernel, c.kernel};
  const ConvOptions options{.strides = {c.stride, c.stride},
                            .padding = Padding::symmetric({c.kernel / 2, c.kernel / 2}),
                            .groups = c.groups};
  // The block the compiler would choose on this CPU (8, or 16 where oneDNN runs AVX-512 code).
  const std::int64_t block = preferred_channel_block();
  const std::optional<std::string> chosen = blocked_weight_layout(c.c, c.o, c.groups, block);
  if (!chosen) {
    state.SkipWithError(fmt::format("no blocked layout at block {}", block).c_str());
    return;
  }
  const std::string& layout = *chosen;
  const bool in_blocked = input_runs_blocked(layout);

  Variable x = tensor(DType::Float32, x_shape, "x");
  Variable w = tensor(DType::Float32, w_shape, "w");
  Variable plain = conv(x, w, options);
  FunctionCall plain_call({x, w}, {plain}, {filled(x_shape), filled(w_shape, 0.05)});

  const Tensor x_value =
      in_blocked ? run_once(x, op1("ToChannelBlocks", {x}, {{"block", block}}), filled(x_shape))
                 : filled(x_shape);
  const Tensor w_value = run_once(
      w, op1("PackConvWeights", {w}, {{"block", block}, {"groups", c.groups}, {"layout", layout}}),
      filled(w_shape, 0.05));
  const Attrs attrs = blocked_conv_attrs(plain.owner()->attrs(), layout, c.c, c.o);
  Variable xb = tensor(DType::Float32, x_value.shape(), "x_blocked");
  Variable wp = tensor(DType::Float32, w_value.shape(), "w_packed");
  FunctionCall blocked_call({xb, wp}, {op1("BlockedConv", {xb, wp}, attrs)}, {x_value, w_value});
  tscope::bench::time_pair(state, blocked_call, plain_call, kCounters);
}

void BM_BlockedMaxPool(benchmark::State& state) {
  using namespace tscope;
  const Dims x_shape{1, 64, 112, 112};  // ResNet-18's max pool
  const PoolOptions options{
      .kernel = {3, 3}, .strides = {2, 2}, .padding = Padding::symmetric({1, 1})};
  Variable x = tensor(DType::Float32, x_shape, "x");
  Variable plain = max_pool(x, options);
  FunctionCall plain_call({x}, {plain}, {filled(x_shape)});
  const std::int64_t block = preferred_channel_block();
  const Tensor x_value =
      run_once(x, op1("ToChannelBlocks", {x}, {{"block", block}}), filled(x_shape));
  Attrs attrs = plain.owner()->attrs();
  attrs.set("block", block);
  Variable xb = tensor(DType::Float32, x_value.shape(), "x_blocked");
  FunctionCall blocked_call({xb}, {op1("BlockedMaxPool", {xb}, attrs)}, {x_value});
  tscope::bench::time_pair(state, blocked_call, plain_call, kCounters);
}

int register_all() {
  for (const ConvCase& c : conv_cases()) {
    benchmark::RegisterBenchmark((std::string("BM_Blocked/") + c.name).c_str(), BM_BlockedConv, c)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("BM_Blocked/r18_maxpool_3x3s2", BM_BlockedMaxPool)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
