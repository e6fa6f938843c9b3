// SPDX-License-Identifier: Apache-2.0
// Includes nothing but the public zone header: it must compile on its own, with the standard
// library only. zones_test.cpp calls these functions.
#include "tscope/profile/zones.h"

namespace zones_header_only {

int leaf(int value) {
  TSCOPE_FUNCTION();
  return value + 1;
}

int run(int count) {
  int sum = 0;
  for (int i = 0; i < count; ++i) {
    TSCOPE_ZONE("header only loop");
    TSCOPE_ZONE_VALUE("header only value", i);
    sum += leaf(i);
  }
  return sum;
}

}  // namespace zones_header_only
