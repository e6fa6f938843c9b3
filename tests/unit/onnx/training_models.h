// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small models with weights for the training tests (library and CLI): a convolution, a batch
// norm and a dense layer, with a shape-only initializer between them.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model_builder.h"

namespace tscope::onnx::testing {

/// An initializer of FLOAT or DOUBLE `elem_type` holding `values`.
inline void add_initializer(ModelBuilder& builder,
                            const std::string& name,
                            int elem_type,
                            const std::vector<std::int64_t>& dims,
                            const std::vector<double>& values) {
  auto* tensor = builder.proto().mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(elem_type);
  for (const std::int64_t extent : dims) tensor->add_dims(extent);
  for (const double value : values) {
    if (elem_type == ::onnx::TensorProto::DOUBLE) {
      tensor->add_double_data(value);
    } else {
      tensor->add_float_data(static_cast<float>(value));
    }
  }
}

/// `count` values uniform in [centre - spread, centre + spread), from `seed`.
inline std::vector<double> spread_values(std::size_t count,
                                         double centre,
                                         double spread,
                                         std::uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(centre - spread, centre + spread);
  std::vector<double> values(count);
  for (double& value : values) value = uniform(generator);
  return values;
}

/// x (batch, 2, 5, 5) -> Conv 'conv' (3 filters 3x3, bias) -> BatchNormalization 'bn' ->
/// Relu 'relu' -> Reshape 'flatten' (int64 shape initializer (0, -1)) -> Gemm 'fc' (transB,
/// 27 -> 3) -> y (batch, 3). Weights of `elem_type` (FLOAT or DOUBLE), drawn from `seed`.
inline ModelBuilder conv_bn_gemm_model(int elem_type = ::onnx::TensorProto::FLOAT,
                                       std::int64_t batch = 4,
                                       std::uint32_t seed = 1) {
  ModelBuilder builder(13);
  builder.input("x", elem_type, {batch, 2, 5, 5}).output("y", elem_type, {batch, 3});
  add_initializer(builder, "conv.weight", elem_type, {3, 2, 3, 3},
                  spread_values(54, 0.0, 0.4, seed));
  add_initializer(builder, "conv.bias", elem_type, {3}, spread_values(3, 0.0, 0.1, seed + 1));
  add_initializer(builder, "bn.weight", elem_type, {3}, spread_values(3, 1.0, 0.2, seed + 2));
  add_initializer(builder, "bn.bias", elem_type, {3}, spread_values(3, 0.0, 0.2, seed + 3));
  add_initializer(builder, "bn.running_mean", elem_type, {3}, {0.0, 0.0, 0.0});
  add_initializer(builder, "bn.running_var", elem_type, {3}, {1.0, 1.0, 1.0});
  builder.int64_initializer("flat_shape", {0, -1});
  add_initializer(builder, "fc.weight", elem_type, {3, 27}, spread_values(81, 0.0, 0.3, seed + 4));
  add_initializer(builder, "fc.bias", elem_type, {3}, spread_values(3, 0.0, 0.1, seed + 5));
  ::onnx::NodeProto& conv =
      builder.node("Conv", {"x", "conv.weight", "conv.bias"}, {"conv_out"}, "conv");
  add_ints_attribute(conv, "kernel_shape", {3, 3});
  builder.node("BatchNormalization",
               {"conv_out", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"},
               {"bn_out"}, "bn");
  builder.node("Relu", {"bn_out"}, {"relu_out"}, "relu");
  builder.node("Reshape", {"relu_out", "flat_shape"}, {"flat"}, "flatten");
  ::onnx::NodeProto& fc = builder.node("Gemm", {"flat", "fc.weight", "fc.bias"}, {"y"}, "fc");
  add_int_attribute(fc, "transB", 1);
  return builder;
}

}  // namespace tscope::onnx::testing
