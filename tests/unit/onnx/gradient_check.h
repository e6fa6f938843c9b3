// SPDX-License-Identifier: Apache-2.0
#pragma once
// Gradients through an imported model against central finite differences: the cost is
// sum(y * R) for the model's first output y and a fixed random R, as in verify_grad (which needs
// the graph built from its own Variables, while an import builds its own inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "tscope/grad/grad.h"
#include "tscope/onnx/import.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/reduce.h"

namespace tscope::onnx::testing {

/// `point`: one float64 tensor per graph input, in order.
inline ::testing::AssertionResult gradients_match_numeric(const std::string& model_bytes,
                                                          const std::vector<Tensor>& point,
                                                          double eps = 1e-6,
                                                          double tolerance = 1e-6) {
  const ImportedModel model = import_model_bytes(model_bytes, "gradient.onnx");
  const std::vector<Variable> inputs = model.input_variables();
  const Variable& y = model.outputs.at(0).variable;
  const Tensor weights = tscope::testing::random_tensor(DType::Float64, y.type().dims, 77);
  const Variable cost = sum(y * constant(weights));
  std::vector<Variable> outputs{cost};
  for (const Variable& gradient : grad(cost, inputs)) outputs.push_back(gradient);
  Function f = function(inputs, outputs);
  const std::vector<Tensor> analytic = f(point);
  for (std::size_t i = 0; i < point.size(); ++i) {
    for (std::int64_t k = 0; k < point[i].numel(); ++k) {
      std::vector<Tensor> shifted = point;
      shifted[i] = point[i].clone();
      double* element = shifted[i].data<double>() + k;
      const double original = *element;
      *element = original + eps;
      const double above = f(shifted)[0].at(0);
      *element = original - eps;
      const double below = f(shifted)[0].at(0);
      const double numeric = (above - below) / (2 * eps);
      const double symbolic = analytic[i + 1].at(k);
      // A NaN fails every comparison, so it is rejected explicitly rather than passing.
      if (!std::isfinite(numeric) || !std::isfinite(symbolic) ||
          std::abs(numeric - symbolic) > tolerance * (1 + std::abs(numeric))) {
        return ::testing::AssertionFailure() << "input " << i << " element " << k << ": symbolic "
                                             << symbolic << ", numeric " << numeric;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tscope::onnx::testing
