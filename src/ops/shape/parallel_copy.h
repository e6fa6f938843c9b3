// SPDX-License-Identifier: Apache-2.0
#pragma once
// A contiguous copy of a strided view (a Reshape of a transposed or sliced input: attention heads
// split or merged, windows partitioned) in parts on the worker threads, so that at two threads
// such a copy between two multi-threaded products is not the one step that runs on one core.
#include "tscope/core/tensor.h"

namespace tscope::ops::detail {

/// `x` when it is contiguous, else a contiguous copy of it. Long copies are split into blocks
/// of the leading axes, each copied by tscope/core/strided_copy.h into its own range of the
/// output, the blocks divided between the threads; short ones run as Tensor::contiguous().
[[nodiscard]] Tensor parallel_contiguous(const Tensor& x);

}  // namespace tscope::ops::detail
