// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/provenance.h"

#include <fmt/format.h>

namespace tscope {
namespace {
thread_local const Provenance* active_scope = nullptr;
}  // namespace

SourceSite SourceSite::from(const std::source_location& location) {
  return SourceSite{location.file_name(), location.line(), location.function_name()};
}

std::string SourceSite::short_string() const {
  if (!known()) return "<unknown>";
  const auto slash = file.find_last_of('/');
  return fmt::format("{}:{}", slash == std::string::npos ? file : file.substr(slash + 1), line);
}

ProvenanceScope::ProvenanceScope(std::string user_op, const std::source_location& location,
                                 bool forced)
    : ProvenanceScope(Provenance{SourceSite::from(location), std::move(user_op)}, forced) {}

ProvenanceScope::ProvenanceScope(Provenance provenance, bool forced)
    : provenance_(std::move(provenance)) {
  if (active_scope == nullptr || forced) {
    previous_ = active_scope;
    active_scope = &provenance_;
    installed_ = true;
  }
}

ProvenanceScope::~ProvenanceScope() {
  if (installed_) active_scope = previous_;
}

Provenance current_provenance(std::string_view op_name, const std::source_location& location) {
  if (active_scope != nullptr) return *active_scope;
  return Provenance{SourceSite::from(location), std::string(op_name)};
}

}  // namespace tscope
