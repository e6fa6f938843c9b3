// SPDX-License-Identifier: Apache-2.0
#pragma once
/// What elementwise fusion (fusion_rules.h) can do with a node, for the profile: the tips explain
/// from it why two elementwise nodes were left apart. Defined beside fuse_elementwise
/// (src/rewrite/rules/fusion.cpp) from the same conditions; fusion_role_test.cpp checks that
/// what it calls a step or a reduction fuses.
#include <string_view>

#include "tscope/graph/function_graph.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// "elementwise": the node can be a step of a Composite's loop (a float elementwise op with block
/// kernels and one dtype throughout, a comparison of floats, a Cast of a bool to a float), or is
/// a Composite without a reduction; "reduction": a Sum or Max a Composite can end with, or a
/// Composite that ends with one; "none": anything else.
[[nodiscard]] std::string_view fusion_role(const ApplyNode& node);

}  // namespace tscope::rewrite

#pragma GCC visibility pop
