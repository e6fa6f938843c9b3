// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Creation sites in Python: nodes built through the bindings record the user's `file.py:line`,
/// not a line of the bindings. The site is the innermost Python frame whose file lies outside the
/// tensorscope package (so a helper in tensorscope/tensor/*.py reports its caller), installed as
/// the active ProvenanceScope while the builder runs: the engine's builders, composites and
/// grad() then treat it exactly like a C++ caller's std::source_location.
#include <string>

#include "tscope/graph/provenance.h"
#include "tscope/graph/variable.h"

namespace tscope::python {

/// The directory of the tensorscope package; frames from files under it are skipped. Set once at
/// import by tensorscope/__init__.py.
void set_package_dir(std::string directory);

/// The innermost frame outside the package; an unknown site (line 0) when Python has no frame
/// (a call from C) or every frame is inside the package.
[[nodiscard]] SourceSite python_caller_site();

/// `variable`, a graph input, constant or shared variable just created by the bindings, with the
/// Python caller's site (free-standing variables take their site from the builder's
/// std::source_location, not from the active scope).
Variable at_python_site(Variable variable);

/// RAII: while alive, nodes created on this thread take the Python caller's site and `user_op`
/// ("dot", "softmax", "getitem"), unless an outer scope is already active.
class PythonSite {
 public:
  explicit PythonSite(std::string user_op);

 private:
  ProvenanceScope scope_;
};

}  // namespace tscope::python
