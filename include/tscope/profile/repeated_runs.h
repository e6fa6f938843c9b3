// SPDX-License-Identifier: Apache-2.0
#pragma once
// Several runs of one unchanged job, recorded in separate processes, as one profile for a
// comparison (`tscope diff` with a directory of runs on a side). One process can run slower as a
// whole, or one of its kernels can, for its whole life (where the scheduler placed it, which
// physical pages its buffers got), and one run against one run cannot tell that from a
// regression. Over several runs each node's fastest call is its fastest in any of them, so a run
// that was slow throughout no longer decides (docs/profiler_formats.md, "Repeated runs").
#include <string>
#include <vector>

#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

/// One profile from `runs` (each one run's profile, every function summed into one as
/// `tscope diff` reads a file; `sources` names them for errors, one per run): functions match by
/// name, their nodes by position, and must be the same graph (same node count and Apply names,
/// else InvalidArgument naming the run, the function and the node). A node's calls and time add
/// up, its fastest call is the fastest of any run and its slowest the slowest; a function's calls
/// and times add up and its memory figures are the largest of any run. The other fields (loops,
/// signatures, shapes) are the first run's. A function found in some runs only is kept from the
/// runs that have it.
[[nodiscard]] Profile merge_repeated_runs(const std::vector<Profile>& runs,
                                          const std::vector<std::string>& sources,
                                          std::string title);

}  // namespace tscope::profile

#pragma GCC visibility pop
