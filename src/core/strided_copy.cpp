// SPDX-License-Identifier: Apache-2.0
#include "tscope/core/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace tscope::detail {
namespace {

/// Tiles of the transposing walk: 32 x 32 elements of at most 8 bytes stay in 8 KB of L1.
constexpr std::int64_t kTile = 32;

struct Axis {
  std::int64_t extent;
  std::int64_t source_stride;  // elements
  std::int64_t out_stride;     // elements
};

// The copy's axes, outermost first: size-1 axes dropped, neighbours merged where the source
// steps through them as through one axis (the output always does).
std::vector<Axis> merged_axes(const Dims& shape, const Dims& strides) {
  std::vector<Axis> axes;
  std::int64_t out_stride = 1;
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    const std::int64_t extent = shape[axis];
    if (extent != 1) {
      if (!axes.empty() && axes.back().source_stride * axes.back().extent == strides[axis]) {
        axes.back().extent *= extent;
      } else {
        axes.push_back({extent, strides[axis], out_stride});
      }
    }
    out_stride *= extent;
  }
  std::vector<Axis> outer_first(axes.rbegin(), axes.rend());
  return outer_first;
}

// Calls visit(source_offset, out_offset) for every index of `axes` (an odometer: each step adds
// one stride, no division).
template <class Visit>
void for_each_index(const std::vector<Axis>& axes, Visit visit) {
  const std::size_t rank = axes.size();
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t source = 0;
  std::int64_t out = 0;
  while (true) {
    visit(source, out);
    std::size_t axis = rank;
    while (axis > 0) {
      --axis;
      if (++index[axis] < axes[axis].extent) {
        source += axes[axis].source_stride;
        out += axes[axis].out_stride;
        break;
      }
      source -= axes[axis].source_stride * (axes[axis].extent - 1);
      out -= axes[axis].out_stride * (axes[axis].extent - 1);
      index[axis] = 0;
      if (axis == 0) return;
    }
    if (rank == 0) return;
  }
}

template <class T>
void copy_typed(const T* source, std::vector<Axis> axes, T* out) {
  if (axes.empty()) {
    out[0] = source[0];
    return;
  }
  const Axis inner = axes.back();
  if (inner.source_stride == 1) {
    // Rows: one memcpy each.
    axes.pop_back();
    const auto bytes = static_cast<std::size_t>(inner.extent) * sizeof(T);
    for_each_index(
        axes, [&](std::int64_t s, std::int64_t o) { std::memcpy(out + o, source + s, bytes); });
    return;
  }
  if (inner.source_stride == 0) {
    // A broadcast (an expanded value, a pool's gradient): runs of one value.
    axes.pop_back();
    for_each_index(axes, [&](std::int64_t s, std::int64_t o) {
      std::fill_n(out + o, inner.extent, source[s]);
    });
    return;
  }
  // A transpose: the outer axis the source steps through one element at a time pairs with the
  // innermost output axis in tiles.
  std::size_t unit = axes.size();
  for (std::size_t axis = 0; axis + 1 < axes.size(); ++axis) {
    if (axes[axis].source_stride == 1) unit = axis;
  }
  if (unit == axes.size()) {
    axes.pop_back();
    for_each_index(axes, [&](std::int64_t s, std::int64_t o) {
      const T* from = source + s;
      T* to = out + o;
      for (std::int64_t i = 0; i < inner.extent; ++i) to[i] = from[i * inner.source_stride];
    });
    return;
  }
  const Axis across = axes[unit];
  axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(unit));
  axes.pop_back();
  for_each_index(axes, [&](std::int64_t s, std::int64_t o) {
    for (std::int64_t a0 = 0; a0 < across.extent; a0 += kTile) {
      const std::int64_t a1 = a0 + kTile < across.extent ? a0 + kTile : across.extent;
      for (std::int64_t i0 = 0; i0 < inner.extent; i0 += kTile) {
        const std::int64_t i1 = i0 + kTile < inner.extent ? i0 + kTile : inner.extent;
        for (std::int64_t a = a0; a < a1; ++a) {
          const T* from = source + s + a;
          T* to = out + o + a * across.out_stride;
          for (std::int64_t i = i0; i < i1; ++i) to[i] = from[i * inner.source_stride];
        }
      }
    }
  });
}

}  // namespace

void copy_strided(
    const void* source, const Dims& shape, const Dims& strides, std::size_t item, void* out) {
  for (int axis = 0; axis < shape.rank(); ++axis) {
    if (shape[axis] == 0) return;
  }
  std::vector<Axis> axes = merged_axes(shape, strides);
  switch (item) {
    case 1:
      copy_typed(static_cast<const std::uint8_t*>(source), std::move(axes),
                 static_cast<std::uint8_t*>(out));
      break;
    case 2:
      copy_typed(static_cast<const std::uint16_t*>(source), std::move(axes),
                 static_cast<std::uint16_t*>(out));
      break;
    case 4:
      copy_typed(static_cast<const std::uint32_t*>(source), std::move(axes),
                 static_cast<std::uint32_t*>(out));
      break;
    default:
      copy_typed(static_cast<const std::uint64_t*>(source), std::move(axes),
                 static_cast<std::uint64_t*>(out));
      break;
  }
}

}  // namespace tscope::detail
