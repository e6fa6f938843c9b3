// SPDX-License-Identifier: Apache-2.0
#include "tscope/models/voxel_cnn_training.h"

#include <cmath>
#include <random>
#include <string>

#include "training_common.h"
#include "tscope/grad/grad.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/conv.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/linalg.h"
#include "tscope/ops/nnet.h"
#include "tscope/ops/reduce.h"
#include "tscope/ops/shape.h"
#include "tscope/runtime/scan.h"

namespace tscope::models {
namespace {
using detail::random_normal;
// One synthetic batch: atom positions (N, A, 3) inside the box, radii and charges (N, A), and
// labels 2 * (total charge > 0) + (more than half the atoms in the lower x half), so they follow
// from the densities the network sees.
struct Molecules {
  Tensor coordinates;
  Tensor radii;
  Tensor charges;
  Tensor labels;
};

Molecules random_molecules(const VoxelCnnTrainingConfig& config, std::mt19937_64& rng) {
  const std::int64_t n = config.batch_size;
  const std::int64_t a = config.atoms;
  const double extent = static_cast<double>(config.grid);
  std::uniform_real_distribution<double> position(2.0, extent - 3.0);
  std::uniform_real_distribution<double> radius(1.0, 2.5);
  std::uniform_real_distribution<double> charge(-1.0, 1.0);
  std::vector<double> coordinates(static_cast<std::size_t>(n * a * 3));
  std::vector<double> radii(static_cast<std::size_t>(n * a));
  std::vector<double> charges(static_cast<std::size_t>(n * a));
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n));
  for (std::int64_t sample = 0; sample < n; ++sample) {
    double total_charge = 0;
    std::int64_t lower_half = 0;
    for (std::int64_t atom = 0; atom < a; ++atom) {
      const auto index = static_cast<std::size_t>(sample * a + atom);
      for (std::size_t axis = 0; axis < 3; ++axis) coordinates[index * 3 + axis] = position(rng);
      radii[index] = radius(rng);
      charges[index] = charge(rng);
      total_charge += charges[index];
      if (coordinates[index * 3] < extent / 2) ++lower_half;
    }
    labels[static_cast<std::size_t>(sample)] =
        (config.classes > 2 && total_charge > 0 ? 2 : 0) + (2 * lower_half > a ? 1 : 0);
  }
  return {Tensor::from_doubles(config.dtype, {n, a, 3}, coordinates),
          Tensor::from_doubles(config.dtype, {n, a}, radii),
          Tensor::from_doubles(config.dtype, {n, a}, charges),
          Tensor::from_vector<std::int64_t>({n}, labels)};
}

// The (G^3, 3) coordinates of the grid points, x slowest, matching a (G, G, G) reshape.
Tensor grid_points(DType dtype, std::int64_t grid) {
  std::vector<double> points;
  points.reserve(static_cast<std::size_t>(grid * grid * grid * 3));
  for (std::int64_t x = 0; x < grid; ++x) {
    for (std::int64_t y = 0; y < grid; ++y) {
      for (std::int64_t z = 0; z < grid; ++z) {
        points.push_back(static_cast<double>(x));
        points.push_back(static_cast<double>(y));
        points.push_back(static_cast<double>(z));
      }
    }
  }
  return Tensor::from_doubles(dtype, {grid * grid * grid, 3}, points);
}

// Occupancy and charge channels (N, 2, G, G, G) from atoms (N, A, 3), radii and charges (N, A).
Variable density_grid(const Variable& coordinates, const Variable& radii, const Variable& charges,
                      DType dtype, std::int64_t grid) {
  const Variable points = constant(grid_points(dtype, grid), "grid_points");
  const Variable diff = dimshuffle(coordinates, {0, kNewAxis, 1, 2}) -
                        dimshuffle(points, {kNewAxis, 0, kNewAxis, 1});  // (N, P, A, 3)
  const Variable d2 = sum(sqr(diff), {3});                                // (N, P, A)
  const Variable gauss = exp(-d2 / dimshuffle(sqr(radii), {0, kNewAxis, 1}));
  const Variable occupancy = sum(gauss, {2});                             // (N, P)
  const Variable charge = sum(gauss * dimshuffle(charges, {0, kNewAxis, 1}), {2});
  return reshape(stack({occupancy, charge}, 1), {-1, 2, grid, grid, grid});
}

// The same grid, accumulated by a loop over atoms: step a adds atom a of every molecule, its
// Gaussian over the grid points to the occupancy channel and, weighted by its charge, to the
// charge channel. The loop's section of the profile shows where a per-atom loop spends its time.
Variable density_grid_by_scan(const Variable& coordinates,
                              const Variable& radii,
                              const Variable& charges,
                              DType dtype,
                              std::int64_t grid) {
  const Variable points = constant(grid_points(dtype, grid), "grid_points");
  const std::int64_t point_count = grid * grid * grid;
  const Variable empty = zeros({shape_i(coordinates, 0), 2, point_count}, dtype);
  ScanResult grids = scan(
      [&](const std::vector<Variable>& in) {
        // in: atom (N, 3), radius (N), charge (N), the grid so far (N, 2, P)
        const Variable diff =
            dimshuffle(in[0], {0, kNewAxis, 1}) - dimshuffle(points, {kNewAxis, 0, 1});
        const Variable gauss =
            exp(-sum(sqr(diff), {2}) / dimshuffle(sqr(in[1]), {0, kNewAxis}));  // (N, P)
        const Variable charge = gauss * dimshuffle(in[2], {0, kNewAxis});
        return std::vector<Variable>{in[3] + stack({gauss, charge}, 1)};
      },
      {dimshuffle(coordinates, {1, 0, 2}), transpose(radii), transpose(charges)}, {empty}, {},
      {.name = "atoms_to_grid"});
  return reshape(subtensor(grids.outputs[0], {-1}), {-1, 2, grid, grid, grid});
}

}  // namespace

TrainingRun train_voxel_cnn(const VoxelCnnTrainingConfig& config) {
  const std::int64_t halvings = static_cast<std::int64_t>(config.channels.size());
  if (config.grid <= 0 || halvings == 0 || config.grid % (std::int64_t{1} << halvings) != 0) {
    throw_error(ErrorKind::InvalidArgument,
                "the voxel grid must be positive and halve evenly once per conv block");
  }
  std::mt19937_64 rng(config.seed);
  const DType dtype = config.dtype;

  Variable coordinates = tensor3(dtype, "atoms");
  Variable radii = matrix(dtype, "radii");
  Variable charges = matrix(dtype, "charges");
  Variable y = vector(DType::Int64, "y");
  std::vector<Variable> params;
  Variable h = config.density_by_scan
                   ? density_grid_by_scan(coordinates, radii, charges, dtype, config.grid)
                   : density_grid(coordinates, radii, charges, dtype, config.grid);

  h = detail::voxel_cnn_logits(h, 2, config.grid, config.channels, config.hidden, config.classes,
                               dtype, rng, params);
  Variable loss = mean(softmax_cross_entropy(h, y));
  std::vector<Variable> grads = grad(loss, params);
  const std::vector<Update> updates =
      detail::sgd_momentum_updates(params, grads, config.learning_rate, config.momentum);
  FunctionOptions options = config.options;
  if (options.name.empty()) {
    options.name =
        config.density_by_scan ? "voxel_scan_training (built-in)" : "voxel_cnn_training (built-in)";
  }
  TrainingRun run;
  run.train = function({coordinates, radii, charges, y}, {loss}, updates, options);

  const Molecules batch = random_molecules(config, rng);
  for (int step = 0; step < config.steps; ++step) {
    run.losses.push_back(
        (*run.train)({batch.coordinates, batch.radii, batch.charges, batch.labels})[0].at(0));
  }
  return run;
}

}  // namespace tscope::models
