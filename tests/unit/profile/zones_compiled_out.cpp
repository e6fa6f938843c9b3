// SPDX-License-Identifier: Apache-2.0
// This file is compiled as if the project were configured with -DTSCOPE_ZONES=OFF: the macros
// must expand to nothing, so they record nothing and do not evaluate their arguments.
// zones_test.cpp calls these functions.
#undef TSCOPE_ZONES
#define TSCOPE_ZONES 0
#include "tscope/profile/zones.h"

namespace zones_compiled_out {

int run(int count, int& value_evaluations) {
  int sum = 0;
  for (int i = 0; i < count; ++i) {
    TSCOPE_FUNCTION();
    TSCOPE_ZONE("compiled out");
    TSCOPE_ZONE_VALUE("compiled out value", ++value_evaluations);
    sum += i;
  }
  return sum;
}

}  // namespace zones_compiled_out
