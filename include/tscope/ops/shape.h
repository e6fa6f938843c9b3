// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Shape ops: DimShuffle (transpose, add/drop broadcastable axes), ...
#include <cstdint>
#include <source_location>
#include <vector>

#include "tscope/graph/variable.h"

namespace tscope {

/// Theano's DimShuffle: output axis i is input axis pattern[i], or a new axis of size 1 where
/// pattern[i] == kNewAxis. Input axes left out must be statically of size 1.
inline constexpr std::int64_t kNewAxis = -1;
Variable dimshuffle(const Variable& x, const std::vector<std::int64_t>& pattern,
                    const std::source_location& location = std::source_location::current());
/// Reverses the axes (x.T).
Variable transpose(const Variable& x,
                   const std::source_location& location = std::source_location::current());

}  // namespace tscope
