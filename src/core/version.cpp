// SPDX-License-Identifier: Apache-2.0
#include "tscope/version.h"

#include "tscope_version_info.h"

namespace tscope {

const char* version() noexcept { return TSCOPE_VERSION_STRING; }
const char* git_commit() noexcept { return TSCOPE_GIT_COMMIT; }

}  // namespace tscope
