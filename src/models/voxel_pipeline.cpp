// SPDX-License-Identifier: Apache-2.0
#include "tscope/models/voxel_pipeline.h"

#include <random>
#include <string>

#include "training_common.h"
#include "tscope/grad/grad.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/profile/steps.h"
#include "tscope/profile/zones.h"

namespace tscope::models {
namespace {

// Labels follow from the image: 1 when the first channel holds over 1.5 times the second's
// volume (the molecules draw 60% of their atoms into it, so both labels occur).
constexpr double kLabelRatio = 1.5;
constexpr double kFirstChannelShare = 0.6;

void check_config(const VoxelPipelineConfig& config) {
  if (config.grid <= 0 || config.atoms < 0 || config.batch_size <= 0 || config.steps <= 0 ||
      config.epochs <= 0 || !(config.resolution > 0) || !(config.molecule_extent > 0) ||
      config.channels.empty()) {
    throw_error(ErrorKind::InvalidArgument,
                "voxel pipeline: grid, batch size, steps, epochs, resolution, molecule extent and "
                "the conv channels must be positive, and atoms not negative");
  }
}

}  // namespace

Example make_example(const VoxelPipelineConfig& config, std::int64_t index) {
  TSCOPE_FUNCTION();
  std::mt19937_64 rng(config.seed * 1'000'003 + static_cast<std::uint64_t>(index));
  std::uniform_real_distribution<double> position(0.0, config.molecule_extent);
  std::uniform_real_distribution<double> radius(1.2, 2.0);
  std::bernoulli_distribution first_channel(kFirstChannelShare);
  Example example;
  example.atoms.resize(static_cast<std::size_t>(config.atoms));
  for (Atom& atom : example.atoms) {
    atom.x = position(rng);
    atom.y = position(rng);
    atom.z = position(rng);
    atom.radius = radius(rng);
    atom.channel = first_channel(rng) ? 0 : 1;
  }
  // The origin keeps the whole image inside the molecule's cube when it fits.
  const double half = static_cast<double>(config.grid) * config.resolution / 2;
  std::uniform_real_distribution<double> origin(
      std::min(half, config.molecule_extent / 2),
      std::max(config.molecule_extent - half, config.molecule_extent / 2));
  for (double& coordinate : example.origin) coordinate = origin(rng);
  return example;
}

data::Batch make_voxel_batch(const VoxelPipelineConfig& config, std::int64_t index) {
  TSCOPE_FUNCTION();
  const std::int64_t n = config.batch_size;
  const std::int64_t voxels = config.grid * config.grid * config.grid;
  Tensor images = Tensor::empty(DType::Float32, {n, 2, config.grid, config.grid, config.grid});
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n));
  for (std::int64_t sample = 0; sample < n; ++sample) {
    const Example example = make_example(config, index * n + sample);
    const Tensor image = voxelize(example.atoms, example.origin, config.grid, config.resolution,
                                  config.filter_atoms);
    const float* from = image.data<float>();
    float* to = images.data<float>() + sample * 2 * voxels;
    double volume[2] = {0, 0};
    for (std::int64_t c = 0; c < 2; ++c) {
      for (std::int64_t v = 0; v < voxels; ++v) {
        to[c * voxels + v] = from[c * voxels + v];
        volume[c] += from[c * voxels + v];
      }
    }
    labels[static_cast<std::size_t>(sample)] = volume[0] > kLabelRatio * volume[1] ? 1 : 0;
  }
  return {images, Tensor::from_vector<std::int64_t>({n}, labels)};
}

TrainingRun train_voxel_pipeline(const VoxelPipelineConfig& config) {
  check_config(config);
  std::mt19937_64 rng(config.seed);
  Variable images = tensor5(DType::Float32, "images");
  Variable labels = vector(DType::Int64, "labels");
  std::vector<Variable> params;
  const Variable logits = detail::voxel_cnn_logits(images, 2, config.grid, config.channels,
                                                   config.hidden, 2, DType::Float32, rng, params);
  const Variable loss = mean(softmax_cross_entropy(logits, labels));
  const std::vector<Update> updates = detail::sgd_momentum_updates(
      params, grad(loss, params), config.learning_rate, config.momentum);
  FunctionOptions options = config.options;
  if (options.name.empty()) options.name = "voxel_pipeline_training (built-in)";
  TrainingRun run;
  run.train = function({images, labels}, {loss}, updates, options);

  data::Loader loader(config.steps,
                      [&config](std::int64_t index) { return make_voxel_batch(config, index); },
                      {.workers = config.workers,
                       .worker_kind = config.worker_kind,
                       .prefetch = config.prefetch,
                       .name = "voxel batches"});
  for (int epoch = 0; epoch < config.epochs; ++epoch) {
    profile::mark_epoch(epoch);
    loader.start_epoch();
    while (std::optional<data::Batch> batch = loader.next()) {
      TSCOPE_ZONE("train step");
      run.losses.push_back((*run.train)(*batch)[0].at(0));
      profile::mark_step(config.batch_size);
    }
  }
  return run;
}

}  // namespace tscope::models
