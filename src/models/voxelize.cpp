// SPDX-License-Identifier: Apache-2.0
// The voxeliser of the voxel-pipeline job (voxel_pipeline.h). It follows the second seed's
// image_from_atoms step by step, and its zones carry the same names, so that the job's profile
// reads like the seed's: for every atom, the voxels whose cubes meet the sphere's bounding box
// are listed, those outside the image discarded, and the overlap of each remaining voxel with the
// sphere measured by sampling. Without filter_atoms, atoms far from the image still pay for the
// listing, which is the seed's bottleneck.
#include <algorithm>
#include <cmath>
#include <vector>

#include "tscope/core/error.h"
#include "tscope/models/voxel_pipeline.h"
#include "tscope/profile/zones.h"

namespace tscope::models {
namespace {

// Samples per voxel edge when measuring an overlap: 3^3 points, within a few percent of the exact
// volume for the radii used here, and the same for every voxel so the image is deterministic.
constexpr int kSamplesPerEdge = 3;

struct Voxel {
  std::int64_t i, j, k;
};

struct ImageFrame {
  double low[3];  // the image's lower corner, in Å
  double resolution;
  std::int64_t grid;
};

std::vector<Voxel> find_voxels_possibly_contacting_sphere(const Atom& atom,
                                                          const ImageFrame& frame) {
  TSCOPE_FUNCTION();
  const double centre[3] = {atom.x, atom.y, atom.z};
  std::int64_t first[3];
  std::int64_t last[3];
  for (int axis = 0; axis < 3; ++axis) {
    first[axis] = static_cast<std::int64_t>(
        std::floor((centre[axis] - atom.radius - frame.low[axis]) / frame.resolution));
    last[axis] = static_cast<std::int64_t>(
        std::floor((centre[axis] + atom.radius - frame.low[axis]) / frame.resolution));
  }
  std::vector<Voxel> voxels;
  voxels.reserve(static_cast<std::size_t>((last[0] - first[0] + 1) * (last[1] - first[1] + 1) *
                                          (last[2] - first[2] + 1)));
  for (std::int64_t i = first[0]; i <= last[0]; ++i) {
    for (std::int64_t j = first[1]; j <= last[1]; ++j) {
      for (std::int64_t k = first[2]; k <= last[2]; ++k) voxels.push_back({i, j, k});
    }
  }
  return voxels;
}

std::vector<Voxel> discard_voxels_outside_image(const std::vector<Voxel>& voxels,
                                                std::int64_t grid) {
  TSCOPE_FUNCTION();
  std::vector<Voxel> inside;
  for (const Voxel& voxel : voxels) {
    if (voxel.i >= 0 && voxel.i < grid && voxel.j >= 0 && voxel.j < grid && voxel.k >= 0 &&
        voxel.k < grid) {
      inside.push_back(voxel);
    }
  }
  return inside;
}

// The fraction of the voxel's cube inside the atom's sphere, by sampling.
double sphere_cube_overlap(const Atom& atom, const Voxel& voxel, const ImageFrame& frame) {
  const double step = frame.resolution / kSamplesPerEdge;
  const double r2 = atom.radius * atom.radius;
  int inside = 0;
  for (int a = 0; a < kSamplesPerEdge; ++a) {
    const double dx =
        frame.low[0] + static_cast<double>(voxel.i) * frame.resolution + (a + 0.5) * step - atom.x;
    for (int b = 0; b < kSamplesPerEdge; ++b) {
      const double dy = frame.low[1] + static_cast<double>(voxel.j) * frame.resolution +
                        (b + 0.5) * step - atom.y;
      for (int c = 0; c < kSamplesPerEdge; ++c) {
        const double dz = frame.low[2] + static_cast<double>(voxel.k) * frame.resolution +
                          (c + 0.5) * step - atom.z;
        inside += dx * dx + dy * dy + dz * dz <= r2 ? 1 : 0;
      }
    }
  }
  return static_cast<double>(inside) / (kSamplesPerEdge * kSamplesPerEdge * kSamplesPerEdge);
}

void add_atom_to_image(const Atom& atom, const ImageFrame& frame, float* image) {
  TSCOPE_FUNCTION();
  const std::vector<Voxel> inside =
      discard_voxels_outside_image(find_voxels_possibly_contacting_sphere(atom, frame), frame.grid);
  if (inside.empty()) return;
  TSCOPE_ZONE("calc sphere-cube overlap");
  float* channel =
      image + static_cast<std::int64_t>(atom.channel) * frame.grid * frame.grid * frame.grid;
  for (const Voxel& voxel : inside) {
    const double overlap = sphere_cube_overlap(atom, voxel, frame);
    if (overlap > 0) {
      channel[(voxel.i * frame.grid + voxel.j) * frame.grid + voxel.k] +=
          static_cast<float>(overlap);
    }
  }
}

// Whether the atom's sphere reaches the image's box at all (the seed's fix).
bool reaches_image(const Atom& atom, const ImageFrame& frame) {
  const double centre[3] = {atom.x, atom.y, atom.z};
  const double edge = static_cast<double>(frame.grid) * frame.resolution;
  double distance2 = 0;
  for (int axis = 0; axis < 3; ++axis) {
    const double below = frame.low[axis] - centre[axis];
    const double above = centre[axis] - (frame.low[axis] + edge);
    const double outside = std::max({below, above, 0.0});
    distance2 += outside * outside;
  }
  return distance2 <= atom.radius * atom.radius;
}

}  // namespace

Tensor voxelize(std::span<const Atom> atoms,
                const double (&origin)[3],
                std::int64_t grid,
                double resolution,
                bool filter_atoms) {
  TSCOPE_ZONE("image_from_atoms");
  if (grid <= 0 || !(resolution > 0)) {
    throw_error(ErrorKind::InvalidArgument,
                "voxelize: the grid ({}) and the resolution ({}) must be positive", grid,
                resolution);
  }
  const double half = static_cast<double>(grid) * resolution / 2;
  const ImageFrame frame{{origin[0] - half, origin[1] - half, origin[2] - half}, resolution, grid};
  Tensor image = Tensor::zeros(DType::Float32, {2, grid, grid, grid});
  float* data = image.data<float>();
  std::int64_t placed = 0;
  for (const Atom& atom : atoms) {
    if (atom.channel < 0 || atom.channel > 1) {
      throw_error(ErrorKind::InvalidArgument, "voxelize: atom channel {} is not 0 or 1",
                  atom.channel);
    }
    if (filter_atoms && !reaches_image(atom, frame)) continue;
    add_atom_to_image(atom, frame, data);
    ++placed;
  }
  TSCOPE_ZONE_VALUE("atoms placed", placed);
  return image;
}

}  // namespace tscope::models
