// SPDX-License-Identifier: Apache-2.0
#include "training_common.h"

#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"

namespace tscope::models::detail {

Tensor random_normal(DType dtype, const Dims& shape, double scale, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (double& value : values) value = normal(rng);
  return Tensor::from_doubles(dtype, shape, values);
}

std::vector<Update> sgd_momentum_updates(const std::vector<Variable>& params,
                                         const std::vector<Variable>& grads,
                                         double learning_rate,
                                         double momentum) {
  std::vector<Update> updates;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Tensor zeros = Tensor::zeros(params[i].dtype(), params[i].get_value().shape());
    Variable velocity = shared(zeros, "v_" + params[i].name());
    Variable new_velocity = momentum * velocity - learning_rate * grads[i];
    updates.push_back({velocity, new_velocity});
    updates.push_back({params[i], params[i] + new_velocity});
  }
  return updates;
}

}  // namespace tscope::models::detail
