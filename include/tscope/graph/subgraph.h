// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Subgraph: a graph that an op carries as an attribute (a loop's body). The graph layer treats it
/// as opaque: attributes compare subgraphs by identity, and print and hash them by label, so two
/// nodes merge only when they run the same body. The layer that builds a body (the runtime, for
/// Scan) says what it holds and how it runs.
#include <string>

#pragma GCC visibility push(default)

namespace tscope {

class Subgraph {
 public:
  Subgraph() = default;
  Subgraph(const Subgraph&) = delete;
  Subgraph& operator=(const Subgraph&) = delete;
  virtual ~Subgraph() = default;
  /// Names the body in printed attributes and hashes: "scan_fn#12".
  [[nodiscard]] virtual std::string label() const = 0;
};

}  // namespace tscope

#pragma GCC visibility pop
