// SPDX-License-Identifier: Apache-2.0
// The numeric libraries' versions (tscope/version.h). In the ops layer, which links them.
#include <cblas.h>
#include <fmt/format.h>
#include <sleef.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <string_view>

#include "tscope/version.h"

namespace tscope {

LibraryVersions library_versions() {
  LibraryVersions versions;
  const char* config = openblas_get_config();
  versions.openblas = config != nullptr ? config : "OpenBLAS (no configuration string)";
  const dnnl_version_t* dnnl = dnnl_version();
  versions.onednn = fmt::format("oneDNN {}.{}.{}", dnnl->major, dnnl->minor, dnnl->patch);
  // Debian's build records no commit ("N/A").
  if (dnnl->hash != nullptr && std::string_view(dnnl->hash) != "N/A") {
    versions.onednn += fmt::format(" (commit {})", dnnl->hash);
  }
  versions.sleef = fmt::format("SLEEF {}.{}.{}", SLEEF_VERSION_MAJOR, SLEEF_VERSION_MINOR,
                               SLEEF_VERSION_PATCHLEVEL);
  return versions;
}

}  // namespace tscope
