// SPDX-License-Identifier: Apache-2.0
#include "tscope/threads/cpu_placement.h"

#include <sched.h>

namespace tscope::threads {

bool move_thread_off_cpu(int cpu) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  // With pid 0 these calls apply to the calling thread, not to the whole process.
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
      !CPU_ISSET(cpu, &allowed) || CPU_COUNT(&allowed) < 2) {
    return false;
  }
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof others, &others) != 0) return false;
  // Restoring fails only if CPUs went offline meanwhile; the thread then keeps the narrower set,
  // which still holds every CPU it was allowed but `cpu`.
  (void)sched_setaffinity(0, sizeof allowed, &allowed);
  return true;
}

}  // namespace tscope::threads
