// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a thread runs. The parallel loops (run_parts) split work between the worker threads on
// the assumption that each runs on its own CPU. When the scheduler puts a worker on the CPU of the
// thread that started the team, the "parallel" parts run one after the other, and on a 2-vCPU VM
// this lasted for the whole process (docs/performance.md, "A worker on the caller's CPU").

#pragma GCC visibility push(default)

namespace tscope::threads {

/// Moves the calling thread off `cpu`: excludes `cpu` from its affinity for the length of one
/// system call (the kernel migrates the thread before that call returns), then restores the
/// affinity it had, so the scheduler stays free to place the thread anywhere later. Returns
/// whether the thread was moved: false when its affinity allows no other CPU, or does not
/// include `cpu`, or a system call fails.
bool move_thread_off_cpu(int cpu);

}  // namespace tscope::threads

#pragma GCC visibility pop
