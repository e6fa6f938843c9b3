// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The minimum simulated peak over every valid node order (Theano's profiling.min_peak_memory),
/// under exactly the accounting of simulate_memory() with inplace respected. Small graphs get an
/// exact answer: depth-first branch and bound over the sets of executed nodes, memoised (the
/// running bytes depend only on which nodes ran, so a set reached again with a path peak no lower
/// than before is dropped). Beyond the time budget, the node limit or when the memo is full, the
/// answer is a labelled bound: the best valid order found (a greedy order or the executed one)
/// above, and below it the largest number of bytes some node needs live at once.
///
///   profile::add_min_peaks(profile, {.time_budget_ns = 1'000'000'000});
///   // profile.functions[i].min_peak: {exact, peak_bytes, lower_bound_bytes, search_ns}
///
/// A valid order runs each node after the producers of its inputs and, for an in-place node,
/// after every node that reads the overwritten buffer before it in the executed order.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tscope/core/clock.h"
#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

struct MinPeakOptions {
  /// Wall time the exact search may take over the whole call (shared by a profile's functions);
  /// the bound is still computed after it runs out.
  std::int64_t time_budget_ns = 1'000'000'000;
  /// Graphs with more nodes get the bound without trying the exact search.
  std::size_t max_exact_nodes = 200;
  /// Memo entries kept (each a set of executed nodes); bounds the search's memory.
  std::size_t max_memo_states = std::size_t{1} << 20;
  /// Time source of the budget and of search_ns; nullptr: the steady clock.
  Clock* clock = nullptr;
};

struct MinPeakResult {
  MinPeakRecord record;
  /// Indices into function.nodes of an order reaching record.peak_bytes.
  std::vector<std::size_t> order;
};

/// Searches one function with `budget_ns` of search time (not options.time_budget_ns).
[[nodiscard]] MinPeakResult search_min_peak(const FunctionRecord& function,
                                            const MinPeakOptions& options,
                                            std::int64_t budget_ns);

/// Fills min_peak of every function of `profile`, sharing options.time_budget_ns among them.
void add_min_peaks(Profile& profile, const MinPeakOptions& options = {});

}  // namespace tscope::profile

#pragma GCC visibility pop
