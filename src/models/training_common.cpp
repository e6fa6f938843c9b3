// SPDX-License-Identifier: Apache-2.0
#include "training_common.h"

#include <cmath>
#include <string>

#include "tscope/graph/constructors.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/shape.h"

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

Variable voxel_cnn_logits(Variable h,
                          std::int64_t in_channels,
                          std::int64_t grid,
                          const std::vector<std::int64_t>& channels,
                          std::int64_t hidden,
                          std::int64_t classes,
                          DType dtype,
                          std::mt19937_64& rng,
                          std::vector<Variable>& params) {
  std::int64_t extent = grid;
  for (std::size_t block = 0; block < channels.size(); ++block) {
    const std::int64_t out_channels = channels[block];
    const double scale = std::sqrt(2.0 / static_cast<double>(in_channels * 27));
    const std::string suffix = std::to_string(block);
    Variable w = shared(random_normal(dtype, {out_channels, in_channels, 3, 3, 3}, scale, rng),
                        "conv_w" + suffix);
    Variable b = shared(Tensor::zeros(dtype, {out_channels}), "conv_b" + suffix);
    params.push_back(w);
    params.push_back(b);
    h = conv3d(h, w, {.padding = Padding::same()}) +
        dimshuffle(b, {kNewAxis, 0, kNewAxis, kNewAxis, kNewAxis});
    h = max_pool3d(relu(h), {.kernel = {2, 2, 2}});
    in_channels = out_channels;
    extent /= 2;
  }
  h = flatten(h, 2);
  const std::vector<std::int64_t> dense_sizes = {in_channels * extent * extent * extent, hidden,
                                                 classes};
  for (std::size_t layer = 0; layer + 1 < dense_sizes.size(); ++layer) {
    const double scale = std::sqrt(2.0 / static_cast<double>(dense_sizes[layer]));
    const std::string suffix = std::to_string(layer);
    Variable w =
        shared(random_normal(dtype, {dense_sizes[layer], dense_sizes[layer + 1]}, scale, rng),
               "dense_w" + suffix);
    Variable b = shared(Tensor::zeros(dtype, {dense_sizes[layer + 1]}), "dense_b" + suffix);
    params.push_back(w);
    params.push_back(b);
    h = dot(h, w) + b;
    if (layer + 2 < dense_sizes.size()) h = relu(h);
  }
  return h;
}

}  // namespace tscope::models::detail
