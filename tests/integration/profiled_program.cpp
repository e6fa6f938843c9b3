// SPDX-License-Identifier: Apache-2.0
// A small user program for the exit-path tests: it follows the README's "per function, in code"
// example (a profiled training function whose report it prints itself) and adds a second function,
// so that with TSCOPE_FLAGS=profile=true the exit-time writer prints two profiles, their sum and
// tips. Run by check_profile_at_exit.sh as a child process, as a user would run it.
//
//   tscope_profiled_program [--remove-before-exit PATH]
// --remove-before-exit: deletes PATH (the profile's directory) just before returning from main,
// so that the exit-time write fails.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "tscope/tscope.h"

int main(int argc, char** argv) {
  using namespace tscope;
  std::string remove_before_exit;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--remove-before-exit") == 0) remove_before_exit = argv[i + 1];
  }
  try {
    Variable x = matrix(DType::Float32, "x", {kUnknownDim, 64});
    Variable w = shared(Tensor::zeros(DType::Float32, {64, 10}), "w");
    Variable b = shared(Tensor::zeros(DType::Float32, {10}), "b");
    Variable y = matrix(DType::Float32, "y", {kUnknownDim, 10});
    Variable logits = dot(x, w) + b;
    Variable log_probs = logits - log(sum(exp(logits), {1}, /*keepdims=*/true));
    Variable loss = -mean(sum(y * log_probs, {1}));
    std::vector<Variable> g = grad(loss, {w, b});

    FunctionOptions options;
    options.profile = true;
    options.name = "train";
    Function train = function({x, y}, {loss}, {{w, w - 0.1 * g[0]}, {b, b - 0.1 * g[1]}}, options);
    FunctionOptions predict_options;
    predict_options.name = "predict";
    Function predict = function({x}, {exp(tanh(logits)) * 2.0}, {}, predict_options);

    RandomStream rng(7);
    const std::vector<Tensor> batch = function({}, {rng.normal(0.0, 1.0, {32, 64}, DType::Float32)})({});
    const Tensor targets = Tensor::zeros(DType::Float32, {32, 10});
    for (int step = 0; step < 5; ++step) {
      (void)train({batch[0], targets});
      (void)predict({batch[0]});
    }
    profile::Profile p = train.collector()->snapshot();
    std::cout << profile::render_text(p);
  } catch (const Error& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 2;
  }
  if (!remove_before_exit.empty()) std::filesystem::remove_all(remove_before_exit);
  return 0;
}
