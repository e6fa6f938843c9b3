// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Folded stacks: the profile's time as `frame;frame;frame value` lines, the input of
/// flamegraph.pl and speedscope (docs/viewing.md). Values are integer nanoseconds of self time.
///
/// Host zones give the call tree (all threads merged); a graph Function call reached from a zone
/// holds its nodes as `class;apply name` frames, its time shared between the zone paths that
/// called it in proportion to their time; a function no zone reached is a root frame of its own:
/// `function;class;apply name`, the function frame's own value being the call time outside nodes.
#include <cstdint>
#include <string>
#include <vector>

#include "tscope/profile/profile.h"

#pragma GCC visibility push(default)

namespace tscope::profile {

/// One stack: frames from the root, and the self time of its last frame.
struct FoldedStack {
  std::vector<std::string> frames;
  std::int64_t self_ns = 0;
};

/// Every stack with time, zones first (in call tree order), then functions no zone reached (in
/// profile order, their nodes in topological order).
[[nodiscard]] std::vector<FoldedStack> folded_stacks(const Profile& profile);

/// One line per stack of folded_stacks: frames joined by ';', a space, the nanoseconds. A ';' in
/// a name becomes ',' and line breaks become spaces, so every line parses.
[[nodiscard]] std::string render_folded(const Profile& profile);

}  // namespace tscope::profile

#pragma GCC visibility pop
