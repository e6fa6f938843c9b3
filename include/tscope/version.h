// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Which Tensorscope this is, and which numeric libraries it runs with (`tscope --version`).
#include <string>

#pragma GCC visibility push(default)

namespace tscope {

/// The project version ("0.1.0").
[[nodiscard]] const char* version() noexcept;
/// The git commit the library was built from (12 hex digits, "-dirty" when the tree had
/// uncommitted changes; "unknown" outside a git checkout).
[[nodiscard]] const char* git_commit() noexcept;

/// Versions of the libraries the process runs with, as each reports itself at run time where it
/// can: OpenBLAS's configuration string, oneDNN's version and commit, and SLEEF's (from its
/// header: SLEEF has no run-time query).
struct LibraryVersions {
  std::string openblas;
  std::string onednn;
  std::string sleef;
};
[[nodiscard]] LibraryVersions library_versions();

}  // namespace tscope

#pragma GCC visibility pop
