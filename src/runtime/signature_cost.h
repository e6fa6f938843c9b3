// SPDX-License-Identifier: Apache-2.0
#pragma once
/// What a node's cost rule says one call with a recorded signature costs: shared by the profile
/// snapshot (the Apply table's flops and bytes) and the timeline's slice arguments.
#include <optional>
#include <vector>

#include "tscope/graph/apply.h"
#include "tscope/profile/profile.h"

namespace tscope::runtime {

/// The cost of one call of `node` with these inputs and outputs; nullopt when the op has no cost
/// rule or the shapes are not known.
[[nodiscard]] std::optional<Cost> signature_cost(const ApplyNode& node,
                                                 const std::vector<profile::TensorRecord>& inputs,
                                                 const std::vector<profile::TensorRecord>& outputs);

/// Bytes of every output, from the recorded dtypes and shapes (unknown dtypes count nothing).
[[nodiscard]] std::int64_t output_bytes(const std::vector<profile::TensorRecord>& outputs);

}  // namespace tscope::runtime
