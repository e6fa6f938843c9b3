// SPDX-License-Identifier: Apache-2.0
// The fixed cost of one Function call, for instruction counts (scripts/bench_call_overhead runs it
// under callgrind at two call counts and takes the difference, so setup cancels out) and for wall
// time. The function is one multiply of two one-element inputs: no rewrite changes it, so builds
// of different commits run the same graph.
//
// Usage: tscope_call_overhead_probe CALLS [ALLOW_GC 0|1] [print]
// With "print", writes the wall-clock nanoseconds per call.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tscope/tscope.h"

int main(int argc, char** argv) {
  using namespace tscope;
  const int calls = argc > 1 ? std::atoi(argv[1]) : 1000;
  Variable x = vector(DType::Float32, "x");
  Variable y = vector(DType::Float32, "y");
  FunctionOptions options;
  options.allow_gc = argc > 2 && std::atoi(argv[2]) != 0;
  Function f = function({x, y}, {x * y}, {}, options);
  const std::vector<Tensor> inputs = {Tensor::zeros(DType::Float32, {1}),
                                      Tensor::zeros(DType::Float32, {1})};
  std::int64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int call = 0; call < calls; ++call) bytes += f(inputs)[0].nbytes();
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  if (argc > 3 && std::string_view(argv[3]) == "print") {
    std::printf("%.1f\n", elapsed.count() / calls);
  }
  return bytes == 4 * static_cast<std::int64_t>(calls) ? 0 : 1;
}
