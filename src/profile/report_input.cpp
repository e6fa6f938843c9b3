// SPDX-License-Identifier: Apache-2.0
// The "Input pipeline" section that opens a report of a training loop, and the "Epochs" section.
// Every figure is printed with how it was computed, since a verdict that cannot be checked is not
// worth reading.
#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <map>
#include <vector>

#include "report_text_sections.h"
#include "tscope/profile/input_verdict.h"

namespace tscope::profile::detail {
namespace {

std::string time_text(double ns) {
  if (ns < 10'000) return fmt::format("{:.0f}ns", ns);
  if (ns < 1'000'000) return fmt::sprintf("%.1fus", ns * 1e-3);
  if (ns < 10'000'000'000) return fmt::sprintf("%.2fms", ns * 1e-6);
  return fmt::sprintf("%.3fs", ns * 1e-9);
}

std::string percent(double share) { return fmt::sprintf("%.1f%%", 100.0 * share); }

void render_sources(const HostRecord& host, const InputVerdict& verdict, std::string& out) {
  for (std::size_t s = 0; s < verdict.sources.size(); ++s) {
    const DataSourceVerdict& source = verdict.sources[s];
    const DataSourceRecord& record = host.data_sources[s];
    out += fmt::format("  Data source '{}': {} {} worker{}, queue of {} batches\n", source.name,
                       source.workers, source.worker_kind, source.workers == 1 ? "" : "s",
                       source.queue_capacity);
    out += fmt::sprintf(
        "    %d batches taken, waited %s in all; the queue was empty at %s of the takes, "
        "%.2f batches ready on average\n",
        record.batches_taken, time_text(static_cast<double>(record.wait_ns)),
        percent(source.empty_share), source.mean_ready);
    if (record.workers.empty()) continue;
    out += "      worker        os id  batches        busy        idle  utilisation   per batch\n";
    for (std::size_t w = 0; w < record.workers.size(); ++w) {
      const DataWorkerRecord& worker = record.workers[w];
      out += fmt::sprintf(
          "    %-10s %9d %8d %11s %11s %12s %11s\n", worker.label, worker.os_id, worker.batches,
          time_text(static_cast<double>(worker.busy_ns)),
          time_text(
              static_cast<double>(std::max<std::int64_t>(worker.lifetime_ns - worker.busy_ns, 0))),
          percent(source.utilisation[w]),
          worker.batches > 0
              ? time_text(static_cast<double>(worker.busy_ns) / static_cast<double>(worker.batches))
              : std::string("-"));
    }
  }
}

void render_if_free(const InputVerdict& verdict, std::string& out) {
  const double speedup = verdict.free_steps_per_second / verdict.steps_per_second;
  if (verdict.examples > 0) {
    const double per_step =
        static_cast<double>(verdict.examples) / static_cast<double>(verdict.step_count);
    out += fmt::sprintf(
        "  If data were free: %s per step, %.1f examples/s instead of %.1f (%.2fx)\n",
        time_text(verdict.compute_ns_per_step), per_step * verdict.free_steps_per_second,
        per_step * verdict.steps_per_second, speedup);
  } else {
    out += fmt::sprintf("  If data were free: %s per step, %.2f steps/s instead of %.2f (%.2fx)\n",
                        time_text(verdict.compute_ns_per_step), verdict.free_steps_per_second,
                        verdict.steps_per_second, speedup);
  }
  for (const DataSourceVerdict& source : verdict.sources) {
    if (source.workers_needed <= 0) continue;
    out += fmt::sprintf(
        "  Workers to keep up ('%s'): %d (now %d): a worker is busy %s per batch, %.2f batches "
        "per step, a step computes for %s\n",
        source.name, source.workers_needed, source.workers, time_text(source.busy_ns_per_batch),
        source.batches_per_step, time_text(verdict.compute_ns_per_step));
  }
}

// The epoch's own top zones by tottime, so that each epoch's picture is kept, not overwritten.
void render_epoch_zones(const HostRecord& host, const EpochRecord& epoch, std::string& out) {
  constexpr std::size_t kZonesPerEpoch = 3;
  std::vector<ZoneTotals> zones;
  for (const ZoneTotals& zone : epoch.zones) {
    if (host.sites[static_cast<std::size_t>(zone.site)].kind != "input_wait") zones.push_back(zone);
  }
  std::stable_sort(zones.begin(), zones.end(),
                   [](const ZoneTotals& a, const ZoneTotals& b) { return a.self_ns > b.self_ns; });
  if (zones.empty()) return;
  out += fmt::format("  epoch {}, zones by tottime:", epoch.epoch);
  for (std::size_t i = 0; i < zones.size() && i < kZonesPerEpoch; ++i) {
    out += fmt::format("{} {} {} ({} calls)", i == 0 ? "" : ";", site_label(host, zones[i].site),
                       time_text(static_cast<double>(zones[i].self_ns)), zones[i].call_count);
  }
  out += "\n";
}

}  // namespace

std::string render_input_section(const HostRecord& host) {
  if (host.steps.empty() && host.data_sources.empty()) return {};
  const InputVerdict verdict = compute_input_verdict(host);
  std::string out = "Input pipeline\n==============\n";
  if (verdict.level == InputBound::Unknown) {
    out += "  Verdict: unknown: no step was marked (tscope::profile::mark_step after each step)\n";
  } else {
    out += fmt::sprintf(
        "  Verdict: %s input-bound: the loop waited for input %s of the step time "
        "(HIGHLY >= 20%%, MODERATELY >= 5%%)\n",
        std::string(input_bound_name(verdict.level)), percent(verdict.wait_share));
    out += fmt::sprintf("  Steps: %d, %s in all; step time median %s, p90 %s\n", verdict.step_count,
                        time_text(static_cast<double>(verdict.step_ns)),
                        time_text(static_cast<double>(verdict.step_median_ns)),
                        time_text(static_cast<double>(verdict.step_p90_ns)));
    out += fmt::sprintf("  Input wait per step: median %s, p90 %s; %s in all\n",
                        time_text(static_cast<double>(verdict.wait_median_ns)),
                        time_text(static_cast<double>(verdict.wait_p90_ns)),
                        time_text(static_cast<double>(verdict.input_wait_ns)));
  }
  render_sources(host, verdict, out);
  if (!verdict.data_zones.empty()) {
    out += "  Data side, by tottime:";
    for (std::size_t i = 0; i < verdict.data_zones.size(); ++i) {
      const ZoneTotals& zone = verdict.data_zones[i];
      out += fmt::format("{} {} {}", i == 0 ? "" : ";", site_label(host, zone.site),
                         time_text(static_cast<double>(zone.self_ns)));
    }
    out += "\n";
  }
  if (verdict.level != InputBound::Unknown && verdict.compute_ns_per_step > 0) {
    render_if_free(verdict, out);
  }
  out +=
      "  How: a step runs from one mark_step to the next; its wait is the time in input-wait "
      "zones\n"
      "  (TSCOPE_INPUT_WAIT, data::Loader::next) in it. If data were free, a step would take its "
      "mean\n"
      "  time less its mean wait. Workers to keep up = ceil(busy per batch x batches per step / "
      "that time).\n\n";
  return out;
}

std::string render_epoch_section(const HostRecord& host) {
  if (host.steps.empty()) return {};
  std::string out = "\nEpochs and steps\n================\n";
  if (!host.epochs.empty()) {
    out += "    epoch  steps         time  step median     step p90  input wait\n";
    std::vector<std::int64_t> first_epoch;
    std::vector<std::int64_t> other_epochs;
    for (const EpochRecord& epoch : host.epochs) {
      std::vector<std::int64_t> steps;
      std::int64_t step_ns = 0;
      std::int64_t wait_ns = 0;
      for (std::int64_t i = 0; i < epoch.step_count; ++i) {
        const StepRecord& step = host.steps[static_cast<std::size_t>(epoch.first_step + i)];
        steps.push_back(step.duration_ns);
        step_ns += step.duration_ns;
        wait_ns += step.input_wait_ns;
      }
      out += fmt::sprintf("  %7d %6d %12s %12s %12s %11s\n", epoch.epoch, epoch.step_count,
                          time_text(static_cast<double>(epoch.end_ns - epoch.start_ns)),
                          time_text(static_cast<double>(percentile_ns(steps, 50))),
                          time_text(static_cast<double>(percentile_ns(steps, 90))),
                          step_ns > 0
                              ? percent(static_cast<double>(wait_ns) / static_cast<double>(step_ns))
                              : std::string("-"));
      std::vector<std::int64_t>& group =
          &epoch == &host.epochs.front() ? first_epoch : other_epochs;
      group.insert(group.end(), steps.begin(), steps.end());
    }
    for (const EpochRecord& epoch : host.epochs) render_epoch_zones(host, epoch, out);
    if (!first_epoch.empty() && !other_epochs.empty()) {
      const std::int64_t first_ns = percentile_ns(first_epoch, 50);
      const std::int64_t steady_ns = percentile_ns(other_epochs, 50);
      out += fmt::sprintf(
          "  First epoch against the others (warm-up, caches): median step %s against %s "
          "(%.2fx)\n",
          time_text(static_cast<double>(first_ns)), time_text(static_cast<double>(steady_ns)),
          steady_ns > 0 ? static_cast<double>(first_ns) / static_cast<double>(steady_ns) : 0.0);
    }
  }
  std::vector<std::int64_t> all;
  for (const StepRecord& step : host.steps) all.push_back(step.duration_ns);
  out += fmt::sprintf("  Step time over %d steps:", all.size());
  for (const double p : {0.0, 10.0, 50.0, 90.0, 99.0, 100.0}) {
    const std::int64_t ns =
        p == 0.0 ? *std::min_element(all.begin(), all.end()) : percentile_ns(all, p);
    out += fmt::format(" {} {}",
                       p == 0.0     ? "min"
                       : p == 100.0 ? "max"
                                    : fmt::format("p{:.0f}", p),
                       time_text(static_cast<double>(ns)));
  }
  out += "\n";
  if (host.dropped_step_count > 0) {
    out += fmt::format("  {} more steps were counted but not kept (the log is full)\n",
                       host.dropped_step_count);
  }
  return out;
}

}  // namespace tscope::profile::detail
