// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The built-in job `tscope profile --model voxel-pipeline`: the voxel CNN trained on images that
/// a data loader makes on the host, after the second seed (a voxel CNN whose data loader was the
/// bottleneck). Each example is a synthetic molecule of thousands of atoms (positions, radii,
/// two element classes) and an origin; the voxeliser places every atom's sphere into a 2-channel
/// 21^3 image around the origin: for each atom it finds the voxels that may touch the sphere,
/// discards those outside the image and computes each remaining voxel's overlap with the sphere
/// by sampling. `filter_atoms` adds the seed's fix: atoms whose sphere cannot reach the image are
/// discarded first. A tscope::data::Loader makes the batches on worker threads or processes, and
/// the loop marks epochs and steps, so the report opens with the input-pipeline verdict.
#include <cstdint>
#include <span>
#include <vector>

#include "tscope/data/loader.h"
#include "tscope/models/mlp_training.h"

#pragma GCC visibility push(default)

namespace tscope::models {

struct VoxelPipelineConfig {
  std::int64_t grid = 21;         ///< voxels per axis of the image
  double resolution = 1.0;        ///< voxel edge, in Å
  std::int64_t atoms = 8000;      ///< atoms per molecule
  double molecule_extent = 80.0;  ///< the molecule fills a cube of this edge, in Å
  std::int64_t batch_size = 16;
  int steps = 8;  ///< batches per epoch
  int epochs = 2;
  int workers = 1;
  data::WorkerKind worker_kind = data::WorkerKind::Thread;
  int prefetch = 2;
  bool filter_atoms = false;
  std::vector<std::int64_t> channels = {8, 16};  ///< conv3d (3^3, same) + relu + 2^3 max pool
  std::int64_t hidden = 32;
  double learning_rate = 0.01;
  double momentum = 0.9;
  std::uint64_t seed = 42;
  FunctionOptions options;
};

struct Atom {
  double x = 0, y = 0, z = 0;  ///< Å
  double radius = 1.5;         ///< Å
  int channel = 0;             ///< 0 or 1: the image channel it is drawn into
};

/// The molecule and origin of example `index` (deterministic in seed and index).
struct Example {
  std::vector<Atom> atoms;
  double origin[3] = {0, 0, 0};  ///< the image's centre
};
[[nodiscard]] Example make_example(const VoxelPipelineConfig& config, std::int64_t index);

/// The (2, G, G, G) float32 image of `atoms` around `origin`: each voxel holds the volume of its
/// overlap with the atoms' spheres of its channel, as a fraction of the voxel's volume.
[[nodiscard]] Tensor voxelize(std::span<const Atom> atoms,
                              const double (&origin)[3],
                              std::int64_t grid,
                              double resolution,
                              bool filter_atoms);

/// Batch `index`: images (N, 2, G, G, G) and labels (N) of examples index * N .. index * N + N - 1.
[[nodiscard]] data::Batch make_voxel_batch(const VoxelPipelineConfig& config, std::int64_t index);

/// Builds and compiles the training function, then runs `epochs` epochs of `steps` batches each
/// from a Loader with the configured workers, marking epochs and steps.
[[nodiscard]] TrainingRun train_voxel_pipeline(const VoxelPipelineConfig& config);

}  // namespace tscope::models

#pragma GCC visibility pop
