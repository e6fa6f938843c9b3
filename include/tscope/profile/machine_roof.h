// SPDX-License-Identifier: Apache-2.0
#pragma once
/// This machine's roof for the roofline tip: the memory bandwidth and arithmetic rate one thread
/// reaches on plain streaming and multiply-add loops, compiled like the library's own kernels.
/// A node far below both is limited by something else (strided access, a reference kernel,
/// per-call overhead), which is what the tip reports.

#pragma GCC visibility push(default)

namespace tscope::profile {

struct MachineRoof {
  double bytes_per_second = -1;  ///< negative: not measured
  double flops_per_second = -1;
};

/// Measured on the first call (a few milliseconds), then the same figures for the process.
[[nodiscard]] const MachineRoof& measured_machine_roof();

}  // namespace tscope::profile

#pragma GCC visibility pop
