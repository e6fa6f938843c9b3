// SPDX-License-Identifier: Apache-2.0
// Writing the timeline to its file (trace_recorder.h): snapshot, render, replace atomically.
#include <cerrno>
#include <utility>

#include "tscope/profile/atomic_file.h"
#include "tscope/profile/trace_recorder.h"

namespace tscope::profile {

TraceSummary write_trace(const std::string& path, TraceRecord* written) {
  TraceRecord trace = snapshot_trace();
  trace.process_name = program_invocation_short_name;  // the process track's title
  write_file_atomically(path, render_chrome_trace(trace));
  const TraceSummary summary{path, trace.recorded_event_count, trace.dropped_event_count,
                             trace.ring_capacity_events};
  if (written != nullptr) *written = std::move(trace);
  return summary;
}

}  // namespace tscope::profile
