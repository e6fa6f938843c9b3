// SPDX-License-Identifier: Apache-2.0
#pragma once
// What type rules can know at build time about integer Variables that describe shapes: the value
// of a constant, the extent behind Shape_i of a static axis, the entries of a MakeVector or Shape.
#include <cstdint>
#include <optional>
#include <vector>

#include "tscope/graph/variable.h"

namespace tscope::ops::detail {

/// The value of an integer scalar when known at build time.
std::optional<std::int64_t> static_scalar(const Variable& scalar);
/// The entries of an integer vector (nullopt entries where unknown); nullopt when even its length
/// is unknown.
std::optional<std::vector<std::optional<std::int64_t>>> static_vector(const Variable& vector);
/// Throws TypeMismatch unless `v` is an integer (not bool) Variable of rank `rank`.
void require_integer(const Variable& v, int rank, std::string_view what);

}  // namespace tscope::ops::detail
