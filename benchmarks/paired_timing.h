// SPDX-License-Identifier: Apache-2.0
// Times two ways of doing the same work (a Tensorscope node and the oneDNN primitive it wraps, or
// two nodes) call by call, alternating which goes first, and reports each way's median as a
// counter. On a shared machine the load changes over seconds: two benchmarks run one after the
// other see different loads, while alternating calls see the same. Medians ignore the calls that
// lost their core to another process for a scheduler slice.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace tscope::bench {

/// The counters time_pair reports: each way's median and second / first.
struct PairCounters {
  const char* first = "tscope_us";
  const char* second = "dnnl_us";
  const char* ratio = "dnnl_per_tscope";
};

template <typename Tscope, typename Direct>
void time_pair(benchmark::State& state,
               Tscope&& tscope_call,
               Direct&& direct_call,
               const PairCounters& counters = {}) {
  std::vector<double> tscope_us;
  std::vector<double> direct_us;
  const auto timed = [](auto& call, std::vector<double>& samples) {
    const auto start = std::chrono::steady_clock::now();
    call();
    samples.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  };
  bool tscope_first = true;
  for (auto _ : state) {
    if (tscope_first) {
      timed(tscope_call, tscope_us);
      timed(direct_call, direct_us);
    } else {
      timed(direct_call, direct_us);
      timed(tscope_call, tscope_us);
    }
    tscope_first = !tscope_first;
  }
  const auto median = [](std::vector<double>& samples) {
    std::nth_element(samples.begin(), samples.begin() + static_cast<long>(samples.size() / 2),
                     samples.end());
    return samples[samples.size() / 2];
  };
  const double tscope_median = median(tscope_us);
  const double direct_median = median(direct_us);
  state.counters[counters.first] = tscope_median;
  state.counters[counters.second] = direct_median;
  state.counters[counters.ratio] = direct_median / tscope_median;
}

}  // namespace tscope::bench
