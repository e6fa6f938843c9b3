// SPDX-License-Identifier: Apache-2.0
#pragma once
// Copying a strided view into contiguous memory (Tensor::clone of a transposed, sliced or
// broadcast view; Reshape of such a view, in parts on the worker threads), at close to memory
// speed. Axes that are contiguous with each other are merged first. Then, when the innermost axis
// is contiguous in the source, each row is one memcpy; when it is broadcast (stride 0), each row
// is a run of one value; when another axis is contiguous (a transpose), the copy walks 32 x 32
// tiles of those two axes, so that both the reads and the writes of a tile stay within a few
// cache lines per row; otherwise (a strided slice of a strided axis) it gathers. The outer axes are walked with an odometer, without a division per element.
#include <cstddef>
#include <cstdint>

#include "tscope/core/dims.h"

#pragma GCC visibility push(default)

namespace tscope::detail {

/// Writes the `shape` elements of `source` (element strides `strides`, which may be 0 or
/// negative) in row-major order to `out`; elements are `item` bytes (1, 2, 4 or 8).
void copy_strided(
    const void* source, const Dims& shape, const Dims& strides, std::size_t item, void* out);

}  // namespace tscope::detail

#pragma GCC visibility pop
