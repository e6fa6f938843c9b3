// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Rewrites of loops (Scan nodes), run before the other stages so that what they move out of a
/// loop is rewritten with the rest of the graph, in this order:
///  - hoist_loop_invariants (local rule): a body's values that depend on no sequence or state,
///    only on non-sequences and constants (a weight's transpose, a constant mask), are computed
///    once before the loop instead of at every step; the loop reads them as non-sequences.
///  - merge_sibling_loops (pass): two loops over the same sequences and step count, neither
///    reading the other, become one loop named "<first>&<second>" (Theano's scan merge), so the
///    rows are sliced once per step and one step does the work of both.
///  - push_out_sequence_work (local rule): a body's values computed from one sequence row and
///    loop-invariant values only (x[t] . W, an elementwise chain of x[t]) are computed for all
///    rows at once before the loop, which reads them as a new sequence (Theano's scan push-out):
///    one large matrix product instead of a small one per step.
///  - keep_last_steps_only (pass): a fed-back output of which only the last step is read
///    (`out[-1]`) comes out as that value alone, so the loop keeps a ring of its taps' window
///    instead of a stack of every step.
///  - push_out_accumulated_products (local rule): a fed-back output whose final value alone is
///    read and whose step adds a matrix product to it (s + a[t] . b[t], the weight gradients of
///    a backward loop) leaves the loop: the loop stacks every step's a and b, and one product
///    over all steps' rows after it gives the sum (Theano's scan push-out of dot products).
/// Each builds a new Scan node from a changed copy of the body (LoopBody, tscope/ops/loop.h) with
/// the old node's provenance.
#include <cstdint>

#include "tscope/rewrite/rule.h"

#pragma GCC visibility push(default)

namespace tscope::rewrite {

/// The local rule hoist_loop_invariants (tracks Scan).
[[nodiscard]] LocalRule loop_invariant_rule();

/// The local rule push_out_sequence_work (tracks Scan).
[[nodiscard]] LocalRule loop_sequence_work_rule();

/// The local rule push_out_accumulated_products (tracks Scan).
[[nodiscard]] LocalRule loop_accumulation_rule();

/// The pass merge_sibling_loops; returns the number of merges.
std::int64_t merge_sibling_loops(FunctionGraph& graph);

/// The pass keep_last_steps_only; returns the number of loop outputs changed.
std::int64_t keep_last_steps_only(FunctionGraph& graph);

}  // namespace tscope::rewrite

#pragma GCC visibility pop
