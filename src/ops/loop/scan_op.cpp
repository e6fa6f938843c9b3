// SPDX-License-Identifier: Apache-2.0
// The Scan op's registry record: every behaviour forwards to the node's body (tscope/ops/loop.h).
#include <fmt/format.h>

#include "tscope/graph/op_registry.h"
#include "tscope/ops/loop.h"

namespace tscope {

const LoopBody& loop_body(const Attrs& attrs) {
  const auto* body = dynamic_cast<const LoopBody*>(&attrs.get_subgraph("body"));
  TSCOPE_CHECK(body != nullptr, "a Scan node's body attribute is not a loop body");
  return *body;
}

namespace ops {
namespace {

std::vector<Type> infer_scan(const InferContext& ctx) {
  return loop_body(ctx.attrs).output_types(ctx);
}

void compute_scan(KernelContext& ctx) {
  TSCOPE_CHECK(ctx.attrs != nullptr, "Scan runs only as a node of a graph");
  loop_body(*ctx.attrs).run(ctx);
}

std::vector<Variable> pullback_scan(const PullbackContext& ctx) {
  return loop_body(ctx.attrs).pullback(ctx);
}

}  // namespace

void register_loop_ops(OpRegistry& registry) {
  registry.add(
      {.name = "Scan",
       .family = "Scan",
       .summary = "a loop over a body graph (sequences, recurrent states, outputs)",
       .num_inputs = -1,
       .num_outputs = -1,
       .infer = infer_scan,
       .reference = {"vm", compute_scan},
       .pullback = pullback_scan,
       .print = [](const OpDef&, const Attrs& attrs) { return loop_body(attrs).printed_name(); }});
}

}  // namespace ops
}  // namespace tscope
