// SPDX-License-Identifier: Apache-2.0
// Includes nothing but the public step header: it must compile on its own, with the standard
// library only, and link against the profile library.
#include "tscope/profile/steps.h"

namespace steps_header_only {

void mark(int epochs, int steps) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    tscope::profile::mark_epoch(epoch);
    for (int step = 0; step < steps; ++step) tscope::profile::mark_step(1);
  }
}

}  // namespace steps_header_only
