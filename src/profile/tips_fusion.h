// SPDX-License-Identifier: Apache-2.0
#pragma once
// The unfused_chain tip rule (tips_fusion.cpp), kept apart from tips.cpp for its size.
#include <vector>

#include "tscope/profile/tips.h"

namespace tscope::profile::detail {

/// One tip per group of adjacent elementwise nodes of `function` that ran as separate loops and
/// together hold at least `min_share` of its node time, naming why each value stored between
/// them was not fused. `bytes_per_second`: the recording machine's bandwidth roof, or negative.
void unfused_chain_tips(const FunctionRecord& function,
                        double bytes_per_second,
                        double min_share,
                        std::vector<Tip>& tips);

}  // namespace tscope::profile::detail
