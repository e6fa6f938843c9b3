// SPDX-License-Identifier: Apache-2.0
#pragma once
/// What elementwise fusion (fusion_rules.h) can do with a node, for the profile: the tips explain
/// from it why two elementwise nodes were left apart. The conditions are those fuse_elementwise
/// applies when it builds a group; fusion_role_test.cpp checks the two agree.
#include <string_view>

#include "tscope/graph/function_graph.h"

namespace tscope::rewrite {

/// "elementwise": the node can be a step of a Composite's loop (a float elementwise op with block
/// kernels and one dtype throughout), or is a Composite without a reduction; "reduction": a Sum or
/// Max a Composite can end with, or a Composite that ends with one; "none": anything else.
[[nodiscard]] std::string_view fusion_role(const ApplyNode& node);

}  // namespace tscope::rewrite
