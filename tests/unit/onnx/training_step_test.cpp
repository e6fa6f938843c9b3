// SPDX-License-Identifier: Apache-2.0
// onnx::training_step on an imported conv + batch norm + dense model: gradients against finite
// differences, the loss falling over steps, provenance into the model, the packed-weight rewrites
// with changing weights, saving the trained weights, and the errors.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "model_builder.h"
#include "support/test_util.h"
#include "training_models.h"
#include "tscope/graph/traversal.h"
#include "tscope/onnx/import.h"
#include "tscope/onnx/trained_model.h"
#include "tscope/onnx/training.h"

namespace tscope::onnx {
namespace {

constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr int kDouble = ::onnx::TensorProto::DOUBLE;

ImportedModel trainable_model(const std::string& bytes) {
  ImportOptions options;
  options.trainable = true;
  return import_model_bytes(bytes, "cnn.onnx", options);
}

std::vector<Tensor> batch(const ImportedModel& model,
                          const TrainingStep& step,
                          DType dtype,
                          std::uint64_t seed) {
  const Tensor x = tscope::testing::random_tensor(dtype, {4, 2, 5, 5}, seed, -1.0, 1.0);
  const Dims dims = target_dims(model, step, {x});
  return {x, random_target(step, model, dims, seed + 1)};
}

TEST(OnnxTrainingStep, GradientsMatchFiniteDifferences) {
  const ImportedModel model = trainable_model(testing::conv_bn_gemm_model(kDouble).bytes());
  const TrainingStep step = training_step(model, {.loss = TrainingLoss::MeanSquaredError});
  std::vector<Variable> outputs = {step.loss};
  outputs.insert(outputs.end(), step.gradients.begin(), step.gradients.end());
  // No updates: every call sees the same weights and running averages.
  Function f = function(step.inputs, outputs);
  const std::vector<Tensor> data = batch(model, step, DType::Float64, 11);
  const std::vector<Tensor> analytic = f(data);
  constexpr double kEps = 1e-6;
  for (std::size_t p = 0; p < model.parameters.size(); ++p) {
    const Variable& parameter = model.parameters[p].variable;
    const Tensor original = parameter.get_value();
    for (std::int64_t k = 0; k < original.numel(); ++k) {
      Tensor shifted = original.clone();
      double* element = shifted.data<double>() + k;
      *element = original.at(k) + kEps;
      parameter.set_value(shifted);
      const double above = f(data)[0].at(0);
      *element = original.at(k) - kEps;
      parameter.set_value(shifted);
      const double below = f(data)[0].at(0);
      parameter.set_value(original);
      const double numeric = (above - below) / (2 * kEps);
      const double symbolic = analytic[p + 1].at(k);
      EXPECT_NEAR(symbolic, numeric, 1e-6 * (1 + std::abs(numeric)))
          << model.parameters[p].name << " element " << k;
    }
  }
}

TEST(OnnxTrainingStep, LossFallsOverSteps) {
  const ImportedModel model = trainable_model(testing::conv_bn_gemm_model().bytes());
  const TrainingStep step = training_step(model, {.learning_rate = 0.1, .momentum = 0.9});
  ASSERT_EQ(step.target.dtype(), DType::Int64);
  Function train = function(step.inputs, {step.loss}, step.updates);
  const std::vector<Tensor> data = batch(model, step, DType::Float32, 3);
  const double first = train(data)[0].at(0);
  double last = first;
  for (int i = 0; i < 30; ++i) last = train(data)[0].at(0);
  EXPECT_LT(last, 0.5 * first) << "first " << first << ", last " << last;
}

TEST(OnnxTrainingStep, BackwardNodesPointIntoTheModel) {
  const ImportedModel model = trainable_model(testing::conv_bn_gemm_model().bytes());
  const TrainingStep step = training_step(model, {.loss = TrainingLoss::Mean});
  std::map<std::string, int> user_ops;
  std::vector<Variable> roots = step.gradients;
  for (const Update& update : step.updates) roots.push_back(update.new_value);
  for (const ApplyNode* node : ancestors_in_topological_order(roots)) {
    ++user_ops[node->provenance().user_op];
  }
  EXPECT_GT(user_ops["grad(onnx:Conv 'conv')"], 0);
  EXPECT_GT(user_ops["grad(onnx:BatchNormalization 'bn')"], 0);
  EXPECT_GT(user_ops["grad(onnx:Gemm 'fc')"], 0);
  EXPECT_GT(user_ops["onnx training: sgd_momentum"], 0);
  EXPECT_GT(user_ops["onnx:BatchNormalization 'bn'"], 0);  // the running averages
  for (const auto& [user_op, count] : user_ops) {
    const bool known = user_op.rfind("onnx:", 0) == 0 || user_op.rfind("grad(onnx", 0) == 0 ||
                       user_op.rfind("onnx training: ", 0) == 0 || user_op == "grad";
    EXPECT_TRUE(known) << count << " nodes of user op '" << user_op << "'";
  }
}

// Weights that change every step run the plain kernels where the rewrites would pack constant
// weights; the steps must match the reference kernels'.
TEST(OnnxTrainingStep, StepsMatchTheReferenceKernels) {
  std::vector<std::vector<double>> trained;
  for (const bool reference : {false, true}) {
    const ImportedModel model = trainable_model(testing::conv_bn_gemm_model().bytes());
    const TrainingStep step = training_step(model, {.learning_rate = 0.05});
    FunctionOptions options;
    options.reference_kernels = reference;
    Function train = function(step.inputs, {step.loss}, step.updates, options);
    const std::vector<Tensor> data = batch(model, step, DType::Float32, 5);
    for (int i = 0; i < 4; ++i) (void)train(data);
    std::vector<double> values;
    for (const NamedVariable& initializer : model.initializers) {
      if (initializer.variable.kind() != VariableKind::Shared) continue;
      for (const double value : initializer.variable.get_value().to_doubles()) {
        values.push_back(value);
      }
    }
    trained.push_back(values);
  }
  ASSERT_EQ(trained[0].size(), trained[1].size());
  for (std::size_t i = 0; i < trained[0].size(); ++i) {
    EXPECT_NEAR(trained[0][i], trained[1][i], 1e-4 * (1 + std::abs(trained[1][i]))) << i;
  }
}

// The saved model, imported for inference as `tscope run` does (constant, packed weights), gives
// what the trained shared weights give.
TEST(OnnxTrainingStep, SavedModelRunsWithTheTrainedWeights) {
  const std::string original = testing::conv_bn_gemm_model().bytes();
  const ImportedModel model = trainable_model(original);
  const TrainingStep step = training_step(model, {.learning_rate = 0.1});
  Function train = function(step.inputs, {step.loss}, step.updates);
  const std::vector<Tensor> data = batch(model, step, DType::Float32, 9);
  for (int i = 0; i < 3; ++i) (void)train(data);
  const std::string saved = trained_model_bytes(original, model);

  ImportOptions constants;
  constants.initializers_as_constants = true;
  const ImportedModel reloaded = import_model_bytes(saved, "saved.onnx", constants);
  const Tensor from_saved =
      function(reloaded.input_variables(), reloaded.output_variables())({data[0]})[0];

  const ImportedModel inference = import_model_bytes(original, "cnn.onnx");
  for (const NamedVariable& entry : inference.initializers) {
    for (const NamedVariable& trained : model.initializers) {
      if (trained.name == entry.name && trained.variable.kind() == VariableKind::Shared) {
        entry.variable.set_value(trained.variable.get_value());
      }
    }
  }
  const Tensor from_trained =
      function(inference.input_variables(), inference.output_variables())({data[0]})[0];
  const ImportedModel untrained = import_model_bytes(original, "cnn.onnx", constants);
  const Tensor from_original =
      function(untrained.input_variables(), untrained.output_variables())({data[0]})[0];
  ASSERT_EQ(from_saved.shape(), from_trained.shape());
  double moved = 0;
  for (std::int64_t i = 0; i < from_saved.numel(); ++i) {
    EXPECT_NEAR(from_saved.at(i), from_trained.at(i), 1e-5) << i;
    moved = std::max(moved, std::abs(from_saved.at(i) - from_original.at(i)));
  }
  EXPECT_GT(moved, 1e-3) << "training did not change the outputs";
}

TEST(OnnxTrainingStep, CrossEntropyNeedsATwoDimensionalOutput) {
  testing::ModelBuilder builder(13);
  builder.input("x", kFloat, {2, 3, 4}).output("y", kFloat, {2, 3, 4});
  builder.float_initializer("w", {4}, {1.0f, 2.0f, 3.0f, 4.0f});
  builder.node("Mul", {"x", "w"}, {"y"}, "scale");
  const ImportedModel model = trainable_model(builder.bytes());
  try {
    (void)training_step(model, {.loss = TrainingLoss::SoftmaxCrossEntropy});
    ADD_FAILURE() << "training_step succeeded";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("output 'y'"), std::string::npos) << error.what();
  }
  const TrainingStep step = training_step(model, {.loss = TrainingLoss::MeanSquaredError});
  try {
    check_target(step, Tensor::zeros(DType::Float32, {2, 3}), Dims{2, 3, 4}, "targets.npy");
    ADD_FAILURE() << "check_target accepted the wrong dims";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(error.what()).find("targets.npy"), std::string::npos) << error.what();
  }
}

TEST(OnnxTrainingStep, InferenceImportHasNothingToTrain) {
  const ImportedModel model = import_model_bytes(testing::conv_bn_gemm_model().bytes(), "cnn.onnx");
  try {
    (void)training_step(model);
    ADD_FAILURE() << "training_step succeeded";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  }
}

}  // namespace
}  // namespace tscope::onnx
