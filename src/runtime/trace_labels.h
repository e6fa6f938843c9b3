// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The names a traced Function registers for its timeline slices (trace_recorder.h): what each
/// node is, and what each input signature adds (shapes, flops, bytes).
#include <vector>

#include "program.h"
#include "tscope/profile/trace_recorder.h"

namespace tscope::runtime {

/// One label per instruction of `program`, in instruction order.
[[nodiscard]] std::vector<profile::TraceNodeLabel> trace_node_labels(const Program& program);

/// Shapes and cost of one call of `node` with `signature`.
[[nodiscard]] profile::TraceSignatureLabel trace_signature_label(
    const ApplyNode& node, const profile::SignatureRecord& signature);

}  // namespace tscope::runtime
