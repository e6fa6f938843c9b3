// SPDX-License-Identifier: Apache-2.0
// verify_grad lives in the runtime layer because it compiles functions; its header sits with grad.
#include "tscope/grad/verify_grad.h"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "tscope/grad/grad.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/reduce.h"
#include "tscope/runtime/function.h"

namespace tscope {
namespace {
void set_flat(Tensor& tensor, std::int64_t index, double value) {
  visit_dtype(tensor.dtype(), [&](auto tag) {
    using T = decltype(tag);
    static_cast<T*>(tensor.raw_data())[index] = static_cast<T>(value);
  });
}
}  // namespace

VerifyGradResult verify_grad(const std::function<Variable(const std::vector<Variable>&)>& build,
                             const std::vector<Tensor>& point, const VerifyGradOptions& options) {
  std::vector<Variable> inputs;
  for (std::size_t i = 0; i < point.size(); ++i) {
    inputs.push_back(tensor(point[i].dtype(), point[i].shape(), fmt::format("input{}", i)));
  }
  const Variable output = build(inputs);
  const Tensor output_value = function(inputs, {output})(point)[0];

  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> uniform(0.5, 1.5);
  std::vector<double> weights(static_cast<std::size_t>(output_value.numel()));
  for (double& weight : weights) weight = uniform(rng);
  const Variable projection =
      constant(Tensor::from_doubles(output.dtype(), output_value.shape(), weights), "R");
  const Variable cost = sum(output * projection);

  std::vector<int> wrt = options.wrt;
  if (wrt.empty()) {
    for (std::size_t i = 0; i < point.size(); ++i) {
      if (is_floating(point[i].dtype())) wrt.push_back(static_cast<int>(i));
    }
  }
  std::vector<Variable> targets;
  for (int index : wrt) targets.push_back(inputs[static_cast<std::size_t>(index)]);
  const std::vector<Variable> grads =
      grad(cost, targets, GradOptions{.disconnected = DisconnectedPolicy::Zero});
  Function cost_fn = function(inputs, {cost});
  Function grad_fn = function(inputs, grads);
  const std::vector<Tensor> analytic = grad_fn(point);

  VerifyGradResult result;
  for (std::size_t w = 0; w < wrt.size(); ++w) {
    const auto input_index = static_cast<std::size_t>(wrt[w]);
    if (!(analytic[w].shape() == point[input_index].shape())) {
      result.ok = false;
      result.message = fmt::format("gradient of input {} has shape {}, the input has {}", input_index,
                                   analytic[w].shape().to_string(), point[input_index].shape().to_string());
      return result;
    }
    for (std::int64_t element = 0; element < point[input_index].numel(); ++element) {
      std::vector<Tensor> shifted = point;
      shifted[input_index] = point[input_index].clone();
      const double base = point[input_index].at(element);
      set_flat(shifted[input_index], element, base + options.eps);
      const double plus = cost_fn(shifted)[0].at(0);
      set_flat(shifted[input_index], element, base - options.eps);
      const double minus = cost_fn(shifted)[0].at(0);
      const double numeric = (plus - minus) / (2 * options.eps);
      const double exact = analytic[w].at(element);
      const double abs_error = std::abs(numeric - exact);
      const double rel_error = abs_error / std::max(std::abs(numeric), std::abs(exact));
      result.max_abs_error = std::max(result.max_abs_error, abs_error);
      if (std::isfinite(rel_error)) result.max_rel_error = std::max(result.max_rel_error, rel_error);
      // A NaN compares false with everything, so `abs_error > tolerance` alone would pass a NaN
      // gradient: any non-finite value is a failure in its own right.
      const bool finite = std::isfinite(numeric) && std::isfinite(exact);
      if ((!finite || abs_error > options.atol + options.rtol * std::abs(numeric)) && result.ok) {
        result.ok = false;
        result.message = fmt::format(
            "input {} element {}: analytic gradient {:.10g}, numeric {:.10g} ({})", input_index,
            element, exact, numeric,
            finite ? fmt::format("abs error {:.3g}", abs_error) : std::string("not finite"));
      }
    }
  }
  return result;
}

}  // namespace tscope
