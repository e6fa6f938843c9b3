// SPDX-License-Identifier: Apache-2.0
// The voxel-pipeline job (voxel_pipeline.h): the voxeliser against geometry, the seed's atom
// filter changing nothing in the image, and the job training from its loader.
#include "tscope/models/voxel_pipeline.h"

#include <cmath>
#include <numbers>

#include "support/test_util.h"
#include "tscope/profile/zone_recorder.h"

namespace tscope {
namespace {

double channel_sum(const Tensor& image, int channel) {
  const std::vector<double> values = image.to_doubles();
  const std::size_t per_channel = values.size() / 2;
  double sum = 0;
  for (std::size_t i = 0; i < per_channel; ++i) sum += values[per_channel * channel + i];
  return sum;
}

TEST(Voxelize, AnAtomInsideFillsItsSpheresVolume) {
  const double origin[3] = {10, 10, 10};
  const std::vector<models::Atom> atoms = {
      {.x = 10.3, .y = 9.6, .z = 10.1, .radius = 2.0, .channel = 1}};
  const Tensor image = models::voxelize(atoms, origin, 21, 1.0, false);
  EXPECT_EQ(image.shape(), (Dims{2, 21, 21, 21}));
  const double volume = 4.0 / 3.0 * std::numbers::pi * 8.0;
  EXPECT_NEAR(channel_sum(image, 1), volume, 0.05 * volume);
  EXPECT_EQ(channel_sum(image, 0), 0.0);
}

TEST(Voxelize, AnAtomFarAwayLeavesTheImageEmpty) {
  const double origin[3] = {0, 0, 0};
  const std::vector<models::Atom> atoms = {{.x = 40, .y = 0, .z = 0, .radius = 2.0}};
  EXPECT_EQ(channel_sum(models::voxelize(atoms, origin, 21, 1.0, false), 0), 0.0);
}

TEST(Voxelize, FilteringAtomsFirstGivesTheSameImage) {
  models::VoxelPipelineConfig config;
  config.atoms = 2000;
  for (std::int64_t index = 0; index < 3; ++index) {
    const models::Example example = models::make_example(config, index);
    const Tensor all = models::voxelize(example.atoms, example.origin, 21, 1.0, false);
    const Tensor filtered = models::voxelize(example.atoms, example.origin, 21, 1.0, true);
    EXPECT_EQ(all.to_doubles(), filtered.to_doubles()) << index;
    EXPECT_GT(channel_sum(all, 0), 0.0) << index;
  }
}

TEST(Voxelize, RejectsABadGridOrChannel) {
  const double origin[3] = {0, 0, 0};
  const std::vector<models::Atom> bad_channel = {{.channel = 2}};
  EXPECT_THROW((void)models::voxelize(bad_channel, origin, 21, 1.0, false), Error);
  EXPECT_THROW((void)models::voxelize({}, origin, 0, 1.0, false), Error);
}

TEST(VoxelPipeline, TrainsFromItsLoaderAndMarksEverySteps) {
  profile::reset_host_zones();
  profile::set_zones_enabled(true);
  models::VoxelPipelineConfig config;
  config.atoms = 500;
  config.batch_size = 4;
  config.steps = 3;
  config.epochs = 2;
  config.workers = 2;
  const models::TrainingRun run = models::train_voxel_pipeline(config);
  const profile::HostRecord host = profile::snapshot_host_zones();
  profile::set_zones_enabled(false);
  profile::reset_host_zones();
  ASSERT_EQ(run.losses.size(), 6U);
  for (const double loss : run.losses) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(host.steps.size(), 6U);
  EXPECT_EQ(host.epochs.size(), 2U);
  ASSERT_EQ(host.data_sources.size(), 1U);
  EXPECT_EQ(host.data_sources[0].batches_taken, 6);
  for (const profile::StepRecord& step : host.steps) EXPECT_EQ(step.examples, 4);
}

TEST(VoxelPipeline, BatchesAreTheSameFromAnyWorkerKind) {
  models::VoxelPipelineConfig config;
  config.atoms = 300;
  config.batch_size = 2;
  const data::Batch direct = models::make_voxel_batch(config, 1);
  data::Loader loader(2,
                      [&](std::int64_t index) { return models::make_voxel_batch(config, index); },
                      {.workers = 1, .worker_kind = data::WorkerKind::Process});
  loader.start_epoch();
  (void)loader.next();
  const std::optional<data::Batch> second = loader.next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ((*second)[0].to_doubles(), direct[0].to_doubles());
  EXPECT_EQ((*second)[1].to_doubles(), direct[1].to_doubles());
}

}  // namespace
}  // namespace tscope
