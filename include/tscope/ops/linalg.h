// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Linear algebra builders. Matrix products run through CBLAS (OpenBLAS).
///
///   Variable h = dot(x, W) + b;   // x (n, 784) . W (784, 512)
#include <source_location>
#include <string>

#include "tscope/graph/variable.h"

namespace tscope {

/// Matrix/vector product: 2-D.2-D, 2-D.1-D, 1-D.2-D, 1-D.1-D (inner product).
Variable dot(const Variable& a, const Variable& b,
             const std::source_location& location = std::source_location::current());

/// The BLAS library and threading in use, e.g. "OpenBLAS 0.3.21 (pthread, 2 threads, Haswell)".
[[nodiscard]] std::string blas_description();

}  // namespace tscope
