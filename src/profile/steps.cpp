// SPDX-License-Identifier: Apache-2.0
// The step log (steps.h). A mark takes one mutex: steps are milliseconds apart, and the log is
// shared with the snapshots that read it from other threads. An epoch mark also snapshots the
// zone totals, so that each epoch's zones are the difference between two snapshots.
#include "tscope/profile/steps.h"

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "steps_recorder.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"

namespace tscope::profile {
namespace {

// A million steps (40 MB) is days of training at typical step times; later ones are counted.
constexpr std::size_t kMaxSteps = std::size_t{1} << 20;

// A site by what it is rather than by its index, which differs between snapshots.
using SiteKey = std::tuple<std::string, std::string, std::int64_t, std::string>;
using SiteTotals = std::map<SiteKey, ZoneTotals>;

struct EpochMark {
  std::int64_t epoch = 0;
  std::size_t first_step = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = -1;  // -1: still running
  SiteTotals zones_at_start;
  SiteTotals zones_at_end;
};

struct StepLog {
  std::mutex mutex;
  std::vector<StepRecord> steps;
  std::int64_t dropped = 0;
  std::int64_t last_mark_ns = -1;  // -1: no mark yet
  std::vector<EpochMark> epochs;
};

StepLog& step_log() {
  // Leaked: the exit-time writer reads it during static destruction.
  static StepLog& log = *new StepLog();
  return log;
}

constinit thread_local std::int64_t t_input_wait_ns = 0;

SiteKey key_of(const ZoneSiteRecord& site) { return {site.name, site.file, site.line, site.kind}; }

SiteTotals totals_by_site(const HostRecord& host) {
  SiteTotals by_site;
  for (const ZoneTotals& totals : zone_totals(merge_zone_threads(host))) {
    by_site[key_of(host.sites[static_cast<std::size_t>(totals.site)])] = totals;
  }
  return by_site;
}

// The zones of one epoch: what closed between its start and its end, as rows over host's sites.
std::vector<ZoneTotals> epoch_zones(const SiteTotals& at_start,
                                    const SiteTotals& at_end,
                                    const HostRecord& host) {
  std::map<SiteKey, std::int64_t> index_of;
  for (std::size_t i = 0; i < host.sites.size(); ++i) {
    index_of.emplace(key_of(host.sites[i]), static_cast<std::int64_t>(i));
  }
  std::vector<ZoneTotals> rows;
  for (const auto& [key, end] : at_end) {
    ZoneTotals row = end;
    if (const auto start = at_start.find(key); start != at_start.end()) {
      row.call_count -= start->second.call_count;
      row.self_ns -= start->second.self_ns;
      row.cumulative_ns -= start->second.cumulative_ns;
    }
    const auto index = index_of.find(key);
    if (row.call_count <= 0 || index == index_of.end()) continue;
    row.site = index->second;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

void add_input_wait_ns(std::int64_t ns) noexcept { t_input_wait_ns += ns; }

void mark_step(std::int64_t examples) noexcept {
  if (!zones_enabled()) return;
  const std::int64_t now_ns = zone_clock_ns();
  const std::int64_t wait_ns = std::exchange(t_input_wait_ns, 0);
  StepLog& log = step_log();
  std::lock_guard lock(log.mutex);
  if (log.last_mark_ns >= 0) {
    const StepRecord step{.epoch = log.epochs.empty() ? 0 : log.epochs.back().epoch,
                          .start_ns = log.last_mark_ns,
                          .duration_ns = now_ns - log.last_mark_ns,
                          .input_wait_ns = wait_ns,
                          .examples = examples};
    if (log.steps.size() < kMaxSteps) {
      try {
        log.steps.push_back(step);
      } catch (...) {
        log.dropped += 1;  // out of memory: the step is counted, not kept
      }
    } else {
      log.dropped += 1;
    }
  }
  log.last_mark_ns = now_ns;
}

void mark_epoch(std::int64_t epoch) noexcept {
  if (!zones_enabled()) return;
  try {
    // The trees only: the steps and data sources a full snapshot adds are not needed here.
    SiteTotals totals = totals_by_site(snapshot_zone_trees());
    const std::int64_t now_ns = zone_clock_ns();
    t_input_wait_ns = 0;  // a wait before the epoch starts belongs to no step of it
    StepLog& log = step_log();
    std::lock_guard lock(log.mutex);
    if (!log.epochs.empty() && log.epochs.back().end_ns < 0) {
      log.epochs.back().end_ns = now_ns;
      log.epochs.back().zones_at_end = totals;
    }
    log.epochs.push_back({.epoch = epoch,
                          .first_step = log.steps.size(),
                          .start_ns = now_ns,
                          .zones_at_start = std::move(totals)});
    log.last_mark_ns = now_ns;
  } catch (...) {
    // Out of memory: the epoch is not marked; its steps count in the previous one.
  }
}

void attach_steps(HostRecord& host) {
  StepLog& log = step_log();
  std::lock_guard lock(log.mutex);
  host.steps = log.steps;
  host.dropped_step_count = log.dropped;
  if (log.epochs.empty()) return;
  const SiteTotals now = totals_by_site(host);
  for (std::size_t i = 0; i < log.epochs.size(); ++i) {
    const EpochMark& mark = log.epochs[i];
    const std::size_t end_step =
        i + 1 < log.epochs.size() ? log.epochs[i + 1].first_step : log.steps.size();
    EpochRecord epoch{.epoch = mark.epoch,
                      .first_step = static_cast<std::int64_t>(mark.first_step),
                      .step_count = static_cast<std::int64_t>(end_step - mark.first_step),
                      .start_ns = mark.start_ns,
                      .end_ns = mark.end_ns};
    if (mark.end_ns < 0) {
      // Still running: it ends with its last step, or now when none finished yet.
      epoch.end_ns = end_step > mark.first_step
                         ? log.steps[end_step - 1].start_ns + log.steps[end_step - 1].duration_ns
                         : zone_clock_ns();
    }
    epoch.zones = epoch_zones(mark.zones_at_start, mark.end_ns < 0 ? now : mark.zones_at_end, host);
    host.epochs.push_back(std::move(epoch));
  }
}

void reset_step_log() {
  StepLog& log = step_log();
  std::lock_guard lock(log.mutex);
  log.steps.clear();
  log.dropped = 0;
  log.last_mark_ns = -1;
  log.epochs.clear();
  t_input_wait_ns = 0;
}

}  // namespace tscope::profile
