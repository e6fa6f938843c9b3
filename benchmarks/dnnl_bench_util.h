// SPDX-License-Identifier: Apache-2.0
// What the oneDNN comparison benchmarks share: deterministic float32 inputs, plain oneDNN memory
// descriptors, and shapes as the int64 constants the gradient ops take.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "tscope/tscope.h"

namespace tscope::bench {

/// A float32 tensor of `shape` holding a repeating ramp (values in [-0.4, 0.6) plus `offset`).
inline Tensor filled(const Dims& shape, double offset = 0.0) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<double>(i % 11) * 0.1 - 0.4 + offset;
  }
  return Tensor::from_doubles(DType::Float32, shape, values);
}

/// The dense row-major float32 descriptor the nodes use.
inline dnnl::memory::desc plain(const Dims& shape) {
  const dnnl::memory::dims dims(shape.begin(), shape.end());
  const Dims strides = contiguous_strides(shape);
  return {dims, dnnl::memory::data_type::f32, dnnl::memory::dims(strides.begin(), strides.end())};
}

/// A shape as the 1-D int64 constant the gradient ops take.
inline Variable shape_constant(const Dims& shape) {
  const std::vector<std::int64_t> extents(shape.begin(), shape.end());
  return constant(
      Tensor::from_vector<std::int64_t>({static_cast<std::int64_t>(extents.size())}, extents));
}

}  // namespace tscope::bench
