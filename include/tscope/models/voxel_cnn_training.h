// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The default built-in training job of `tscope profile`: a small 3-D CNN on molecular voxel grids
/// (after the first seed, a Theano 3-D CNN on molecule densities). Synthetic molecules (atom
/// coordinates, radii and charges drawn with a fixed seed) are turned into a density grid inside
/// the graph by a broadcasted distance computation, grid points (G^3, 3) against atoms (N, A, 3):
/// occupancy = sum over atoms of exp(-d^2 / r^2) and a charge channel weighted by each atom's
/// charge, reshaped to (N, 2, G, G, G). Then conv3d / relu / max_pool3d blocks, flatten, a dense
/// head, softmax cross-entropy and SGD with momentum. Labels depend on the molecules (sign of the
/// total charge, and which half of the box holds more atoms), so the loss can fall.
#include <cstdint>
#include <vector>

#include "tscope/models/mlp_training.h"

#pragma GCC visibility push(default)

namespace tscope::models {

struct VoxelCnnTrainingConfig {
  std::int64_t grid = 16;                      ///< G: points per axis, spacing 1
  std::int64_t atoms = 12;                     ///< A: atoms per molecule
  std::vector<std::int64_t> channels = {8, 16};  ///< one conv3d (3^3, same) + relu + 2^3 max pool each
  std::int64_t hidden = 32;                    ///< dense layer before the classifier
  std::int64_t classes = 4;
  std::int64_t batch_size = 8;
  int steps = 10;
  double learning_rate = 0.01;
  double momentum = 0.9;
  std::uint64_t seed = 42;
  DType dtype = DType::Float32;
  /// Build the density grid with a loop over atoms (`tscope profile --model voxel-scan`), as the
  /// first seed's MolMapLayer did: each step adds one atom of every molecule to the grid. The
  /// same grid as the broadcasted form, one step per atom.
  bool density_by_scan = false;
  FunctionOptions options;
};

/// Builds the graph, compiles the training function (with options) and runs `steps` steps on one
/// fixed synthetic batch. Throws InvalidArgument when the grid does not halve once per block.
[[nodiscard]] TrainingRun train_voxel_cnn(const VoxelCnnTrainingConfig& config);

}  // namespace tscope::models

#pragma GCC visibility pop
