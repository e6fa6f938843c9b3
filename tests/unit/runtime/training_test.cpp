// SPDX-License-Identifier: Apache-2.0
// End-to-end: the built-in MLP trains, and the loss falls by a stated factor.
#include <algorithm>

#include "support/test_util.h"
#include "tscope/models/mlp_training.h"
#include "tscope/models/ntm_training.h"
#include "tscope/models/voxel_cnn_training.h"

namespace tscope {
namespace {

TEST(Training, SmallMlpLossFallsTenfoldIn30Steps) {
  models::MlpTrainingConfig config;
  config.layer_sizes = {32, 64, 64, 5};
  config.batch_size = 32;
  config.steps = 30;
  const models::TrainingRun run = models::train_mlp(config);
  ASSERT_EQ(run.losses.size(), 30u);
  EXPECT_LT(run.losses.back(), run.losses.front() / 10.0)
      << "first " << run.losses.front() << " last " << run.losses.back();
}

TEST(Training, ReferenceKernelsGiveTheSameLosses) {
  models::MlpTrainingConfig config;
  config.layer_sizes = {16, 8, 3};
  config.batch_size = 8;
  config.steps = 5;
  config.dtype = DType::Float64;
  const models::TrainingRun fast = models::train_mlp(config);
  config.options.reference_kernels = true;
  const models::TrainingRun reference = models::train_mlp(config);
  for (std::size_t i = 0; i < fast.losses.size(); ++i) {
    EXPECT_NEAR(fast.losses[i], reference.losses[i], 1e-9 * std::max(1.0, std::abs(fast.losses[i])));
  }
}

TEST(Training, GraphUsesTheFusedLossAndGemm) {
  models::MlpTrainingConfig config;
  config.layer_sizes = {8, 6, 3};
  config.batch_size = 4;
  config.steps = 1;
  const models::TrainingRun run = models::train_mlp(config);
  std::vector<std::string> names;
  for (const ApplyNode* node : run.train->graph().toposort()) names.emplace_back(node->op().name);
  const auto has = [&](const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  EXPECT_TRUE(has("CrossentropySoftmax1Hot"));
  EXPECT_TRUE(has("CrossentropySoftmax1HotDx"));
  EXPECT_TRUE(has("Gemm"));
  EXPECT_FALSE(has("Dot"));
}

TEST(VoxelCnnTraining, LossFallsOnTheSyntheticMolecules) {
  models::VoxelCnnTrainingConfig config;
  config.grid = 8;
  config.atoms = 6;
  config.channels = {4, 8};
  config.batch_size = 4;
  config.steps = 15;
  const models::TrainingRun run = models::train_voxel_cnn(config);
  ASSERT_EQ(run.losses.size(), 15u);
  EXPECT_LT(run.losses.back(), run.losses.front())
      << "first " << run.losses.front() << " last " << run.losses.back();
}

TEST(VoxelCnnTraining, GraphRunsConvGradientsAndPooling) {
  models::VoxelCnnTrainingConfig config;
  config.grid = 8;
  config.atoms = 3;
  config.channels = {2, 2};
  config.batch_size = 2;
  config.steps = 1;
  const models::TrainingRun run = models::train_voxel_cnn(config);
  std::vector<std::string> names;
  for (const ApplyNode* node : run.train->graph().toposort()) names.emplace_back(node->op().name);
  for (const char* name : {"ConvGradW", "ConvGradI", "MaxPoolGrad"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(VoxelCnnTraining, GridThatDoesNotHalveIsRejected) {
  models::VoxelCnnTrainingConfig config;
  config.grid = 6;
  config.channels = {2, 2};
  EXPECT_THROW((void)models::train_voxel_cnn(config), Error);
}

TEST(VoxelCnnTraining, GridBuiltByALoopOverAtomsGivesTheSameLosses) {
  models::VoxelCnnTrainingConfig config;
  config.grid = 8;
  config.atoms = 5;
  config.channels = {2, 4};
  config.batch_size = 3;
  config.steps = 3;
  config.dtype = DType::Float64;
  const models::TrainingRun broadcast = models::train_voxel_cnn(config);
  config.density_by_scan = true;
  const models::TrainingRun looped = models::train_voxel_cnn(config);
  ASSERT_EQ(looped.losses.size(), broadcast.losses.size());
  for (std::size_t i = 0; i < looped.losses.size(); ++i) {
    EXPECT_NEAR(looped.losses[i], broadcast.losses[i], 1e-9) << "step " << i;
  }
  bool has_loop = false;
  for (const ApplyNode* node : looped.train->graph().toposort()) {
    has_loop = has_loop || node->op_string() == "Scan{atoms_to_grid}";
  }
  EXPECT_TRUE(has_loop);
}

TEST(NtmTraining, LossFallsWithTheGradientThroughTheLoop) {
  models::NtmTrainingConfig config;
  config.sequence_length = 8;
  config.memory_slots = 8;
  config.memory_width = 6;
  config.controller = 16;
  config.batch_size = 4;
  config.steps = 30;
  config.options.profile = true;
  const models::TrainingRun run = models::train_ntm(config);
  ASSERT_EQ(run.losses.size(), 30u);
  EXPECT_LT(run.losses.back(), 0.9 * run.losses.front())
      << "first " << run.losses.front() << " last " << run.losses.back();
  // The forward loop and its gradient loop, each with its body profiled.
  const profile::FunctionRecord record = run.train->profile_record();
  std::vector<std::string> loops;
  for (const profile::LoopRecord& loop : record.loops) {
    loops.push_back(loop.name);
    EXPECT_EQ(loop.step_count, 30 * 8) << loop.name;
    EXPECT_GT(loop.body.nodes.size(), 10u) << loop.name;
  }
  EXPECT_EQ(loops, (std::vector<std::string>{"ntm_step", "grad_of_ntm_step"}));
}

TEST(NtmTraining, TooShortASequenceIsRejected) {
  models::NtmTrainingConfig config;
  config.sequence_length = 1;
  EXPECT_THROW((void)models::train_ntm(config), Error);
}

}  // namespace
}  // namespace tscope
