// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Where in user code a node was created and which user-level op it came from. Builders capture
/// std::source_location at the user's call; composite builders open a ProvenanceScope so every node
/// they create reports the user's call and the composite's name ("softmax"), through every
/// rewrite.
#include <cstdint>
#include <source_location>
#include <string>

#pragma GCC visibility push(default)

namespace tscope {

struct SourceSite {
  std::string file;
  std::uint32_t line = 0;
  std::string function;

  [[nodiscard]] static SourceSite from(const std::source_location& location);
  /// "mlp.cpp:42" (file name without directories).
  [[nodiscard]] std::string short_string() const;
  [[nodiscard]] bool known() const noexcept { return line != 0; }
};

struct Provenance {
  SourceSite site;
  std::string user_op;  ///< "softmax", "grad(softmax)", "add", ...
};

/// RAII: while alive, nodes created on this thread take this provenance. The outermost scope wins,
/// so a composite's inner builders keep pointing at the user's call. A `forced` scope (used by
/// grad()) replaces any outer scope for its extent.
class ProvenanceScope {
 public:
  ProvenanceScope(std::string user_op, const std::source_location& location, bool forced = false);
  ProvenanceScope(Provenance provenance, bool forced);
  ~ProvenanceScope();
  ProvenanceScope(const ProvenanceScope&) = delete;
  ProvenanceScope& operator=(const ProvenanceScope&) = delete;

 private:
  bool installed_ = false;
  const Provenance* previous_ = nullptr;
  Provenance provenance_;
};

/// The provenance a node created now at `location` by builder `op_name` gets.
[[nodiscard]] Provenance current_provenance(std::string_view op_name,
                                            const std::source_location& location);

}  // namespace tscope

#pragma GCC visibility pop
