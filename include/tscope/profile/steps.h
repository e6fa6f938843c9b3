// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Steps and epochs of a training loop, for the report's Epochs and Input pipeline sections.
///
///   for (int epoch = 0; epoch < epochs; ++epoch) {
///     tscope::profile::mark_epoch(epoch);        // epoch `epoch` starts here
///     for (const Batch& batch : loader) {        // the wait for it: TSCOPE_INPUT_WAIT
///       train(batch);
///       tscope::profile::mark_step(batch.size);  // one step ends here
///     }
///   }
///
/// A step runs from one mark (mark_step or mark_epoch) to the next mark_step. Without any
/// mark_epoch, the first mark_step only starts the count. Each step keeps its duration, the time
/// the marking thread spent in input-wait zones during it, and the examples it processed; each
/// epoch keeps the zone totals that closed while it ran, so epochs are compared, not overwritten.
/// Marks record only while zones record (zones.h); otherwise they cost one branch. Call them from
/// the thread that runs the loop. docs/host_profiling.md is the reference.
///
/// This header includes only the standard library.
#include <cstdint>

#pragma GCC visibility push(default)

namespace tscope::profile {

/// Ends the current step. `examples`: how many examples it processed (0: not given), for the
/// examples/s figures.
void mark_step(std::int64_t examples = 0) noexcept;
/// Starts epoch `epoch` (ending the previous one, if any).
void mark_epoch(std::int64_t epoch) noexcept;

}  // namespace tscope::profile

#pragma GCC visibility pop
