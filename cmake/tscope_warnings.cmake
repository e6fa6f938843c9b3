# SPDX-License-Identifier: Apache-2.0
# INTERFACE target carrying the project's warning flags; linked PRIVATE by every target.
add_library(tscope_warnings INTERFACE)
target_compile_options(tscope_warnings INTERFACE -Wall -Wextra -Wpedantic
                                                 -Wno-missing-field-initializers)
if(TSCOPE_WERROR)
  target_compile_options(tscope_warnings INTERFACE -Werror)
endif()
