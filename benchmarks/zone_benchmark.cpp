// SPDX-License-Identifier: Apache-2.0
// BM_Zone_EnterExit: one TSCOPE_ZONE entered and left per iteration, in a tight loop, with zones
// recording (on) and not (off). The figure per iteration is the zone's whole cost: the switch's
// load and branch when off; with recording on, also two clock reads, two 16-byte records and the
// amortised folding of full chunks into the thread's call tree. BM_Zone_Baseline is the same loop
// with no zone, for comparison. docs/host_profiling.md publishes the figures.
#include <benchmark/benchmark.h>

#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"

namespace {

void BM_Zone_Baseline(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_Zone_Baseline);

void BM_Zone_EnterExit(benchmark::State& state) {
  const bool on = state.range(0) != 0;
  tscope::profile::set_zones_enabled(on);
  for (auto _ : state) {
    TSCOPE_ZONE("benchmark zone");
    benchmark::ClobberMemory();
  }
  tscope::profile::set_zones_enabled(false);
  state.SetLabel(on ? "zones on" : "zones off");
}
BENCHMARK(BM_Zone_EnterExit)->Arg(0)->Arg(1)->ArgName("on");
BENCHMARK(BM_Zone_EnterExit)->Arg(1)->ArgName("on")->Threads(2)->UseRealTime();

void BM_Zone_NestedPair(benchmark::State& state) {
  tscope::profile::set_zones_enabled(true);
  for (auto _ : state) {
    TSCOPE_ZONE("outer");
    {
      TSCOPE_ZONE("inner");
      benchmark::ClobberMemory();
    }
  }
  tscope::profile::set_zones_enabled(false);
  state.SetItemsProcessed(2 * state.iterations());  // zones per second
}
BENCHMARK(BM_Zone_NestedPair);

// The cost the report prints ("Zone overhead"), measured the same way the exit writer does.
void BM_Zone_MeasuredOverhead(benchmark::State& state) {
  tscope::profile::set_zones_enabled(true);
  double overhead_ns = 0;
  for (auto _ : state) overhead_ns = tscope::profile::measure_zone_overhead_ns();
  tscope::profile::set_zones_enabled(false);
  state.counters["zone_ns"] = overhead_ns;
}
BENCHMARK(BM_Zone_MeasuredOverhead)->Iterations(3);

}  // namespace
BENCHMARK_MAIN();
