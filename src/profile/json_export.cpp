// SPDX-License-Identifier: Apache-2.0
// JSON_DIAGNOSTICS (below) makes GCC 12 to 14 report a false -Warray-bounds in nlohmann's
// set_parents() (nlohmann/json#4819, fixed in GCC 15). The warning points into <map>, so it is
// turned off before the first include, for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include "tscope/profile/json_export.h"

// Type errors then name the field ("/profiles/0/title"). report_diff_json.cpp sets it too; 3.11
// tags the ABI with the setting, so a user without it could not clash anyway.
#define JSON_DIAGNOSTICS 1
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tscope/core/error.h"

namespace tscope::profile {

// Field names are the model's member names; every field is optional on input (default value), so
// a reader of schema N accepts files of schema N written by older builds that lacked a field.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    TensorRecord, dtype, shape, strides_bytes, contiguous)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    SignatureRecord, inputs, outputs, call_count, timed_call_count, total_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NodeRecord,
                                                topo_index,
                                                apply_name,
                                                op_name,
                                                class_name,
                                                impl,
                                                call_count,
                                                total_ns,
                                                min_ns,
                                                max_ns,
                                                run_slowest_ns,
                                                run_count,
                                                flops_per_call,
                                                bytes_per_call,
                                                inputs,
                                                outputs,
                                                output_bytes,
                                                output_alias,
                                                output_alias_input,
                                                source_site,
                                                user_op,
                                                op_kind,
                                                elementwise,
                                                fast_impl_available,
                                                fusion_role,
                                                copied_input_count,
                                                copied_input_bytes,
                                                input_ids,
                                                output_ids,
                                                signatures)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PrepareRecord, apply_name, duration_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RewriteRecord, name, duration_ns, applied_count,
                                                attempts, nodes_created, nodes_removed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CompileRecord,
                                                total_ns,
                                                rewrite_ns,
                                                validate_ns,
                                                link_ns,
                                                node_prepare_ns,
                                                slowest_prepares,
                                                node_count,
                                                rewrites,
                                                nodes_before_rewrite,
                                                nodes_after_rewrite)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    MinPeakRecord, searched, exact, peak_bytes, lower_bound_bytes, search_ns, stop_reason)
// FunctionRecord and LoopRecord contain each other: declared first, defined after both.
inline void to_json(nlohmann::json& json, const LoopRecord& record);
inline void from_json(const nlohmann::json& json, LoopRecord& record);
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FunctionRecord,
                                                name,
                                                call_count,
                                                call_ns,
                                                vm_ns,
                                                compile,
                                                nodes,
                                                measured_peak_bytes,
                                                input_bytes,
                                                input_ids,
                                                output_ids,
                                                allow_gc,
                                                clock,
                                                clock_read_ns,
                                                overhead_ns_per_node,
                                                roof_bytes_per_second,
                                                roof_flops_per_second,
                                                min_peak,
                                                loops)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LoopRecord,
                                                topo_index,
                                                name,
                                                apply_name,
                                                call_count,
                                                step_count,
                                                call_ns,
                                                vm_ns,
                                                bind_ns,
                                                store_ns,
                                                setup_ns,
                                                first_step_ns,
                                                step_min_ns,
                                                step_median_ns,
                                                step_max_ns,
                                                invariant_nodes,
                                                body)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ZoneSiteRecord, name, function, file, line, kind)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    ZoneNodeRecord, site, parent, call_count, total_ns, self_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ZoneValueRecord, site, count, sum, min, max)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    ZoneThreadRecord, thread_index, os_thread_id, name, exited, nodes, values, process)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProcessRecord,
                                                pid,
                                                parent_pid,
                                                label,
                                                state,
                                                start_ns,
                                                end_ns,
                                                start_monotonic_ns,
                                                end_monotonic_ns,
                                                clock_error_ns,
                                                busy_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    ZoneTotals, site, call_count, self_ns, cumulative_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    StepRecord, epoch, start_ns, duration_ns, input_wait_ns, examples)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    EpochRecord, epoch, first_step, step_count, start_ns, end_ns, zones)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    DataWorkerRecord, label, os_id, batches, busy_ns, lifetime_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    DataSourceRecord, name, worker_kind, queue_capacity, workers, batches_taken, wait_ns, occupancy)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HostRecord,
                                                sites,
                                                threads,
                                                clock,
                                                zone_overhead_ns,
                                                steps,
                                                dropped_step_count,
                                                epochs,
                                                data_sources,
                                                processes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    TraceSummary, path, event_count, dropped_event_count, ring_capacity_events)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Profile,
                                                schema_version,
                                                title,
                                                functions,
                                                grad_ns,
                                                since_load_ns,
                                                blas,
                                                openmp,
                                                overhead_ns_per_node,
                                                clock,
                                                clock_read_ns,
                                                roof_bytes_per_second,
                                                roof_flops_per_second,
                                                host,
                                                trace)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TextReportOptions,
                                                n_ops,
                                                n_apply,
                                                line_width,
                                                show_io,
                                                show_distribution,
                                                show_memory,
                                                min_memory_size,
                                                show_tips,
                                                show_optimizer,
                                                show_signatures,
                                                n_zones,
                                                sort_zones_by_cumtime,
                                                n_zone_callers)

namespace {
constexpr std::string_view kFormat = "tscope-profile";

// nlohmann converts a JSON number to an integer field with a plain cast, which is undefined
// behaviour when the value does not fit. The report options are int fields only; the profiles
// mix int64 and double fields, so any number must at least fit an int64, and the profile's own
// schema_version is an int.
void check_number_ranges(const nlohmann::json& node, const std::string& path, bool int_fields,
                         std::string_view source) {
  constexpr double kInt64Limit = 9223372036854775808.0;  // 2^63
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      const bool int_field = (int_fields && key != "min_memory_size") || key == "schema_version";
      check_number_ranges(value, path + "/" + key, int_field, source);
    }
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      check_number_ranges(node[i], path + "/" + std::to_string(i), int_fields, source);
    }
  } else if (node.is_number()) {
    const double value = node.get<double>();
    const double limit = int_fields ? 2147483648.0 : kInt64Limit;
    const bool fits = node.is_number_unsigned()
                          ? node.get<std::uint64_t>() < static_cast<std::uint64_t>(limit)
                          : value >= -limit && value < limit;
    if (!fits || (int_fields && node.is_number_float())) {
      throw_error(ErrorKind::Parse, "'{}' does not follow the profile schema: ({}) {} is not {}",
                  source, path, node.dump(), int_fields ? "an int" : "within the 64-bit range");
    }
  }
}

// Indices inside the host record must point inside it: the renderers follow them unchecked.
void check_host_indices(const HostRecord& host, const std::string& path, std::string_view source) {
  const auto sites = static_cast<std::int64_t>(host.sites.size());
  auto fail = [&](const std::string& field, std::int64_t value) {
    throw_error(ErrorKind::Parse,
                "'{}' does not follow the profile schema: ({}/{}) {} is out of range", source, path,
                field, value);
  };
  const auto processes = static_cast<std::int64_t>(host.processes.size());
  for (std::size_t t = 0; t < host.threads.size(); ++t) {
    const ZoneThreadRecord& thread = host.threads[t];
    if (thread.process < 0 || (processes > 0 && thread.process >= processes) ||
        (processes == 0 && thread.process != 0)) {
      fail(fmt::format("threads/{}/process", t), thread.process);
    }
    for (std::size_t n = 0; n < thread.nodes.size(); ++n) {
      const ZoneNodeRecord& node = thread.nodes[n];
      const std::string at = fmt::format("threads/{}/nodes/{}", t, n);
      if (node.site < 0 || node.site >= sites) fail(at + "/site", node.site);
      if (node.parent < -1 || node.parent >= static_cast<std::int64_t>(n)) {
        fail(at + "/parent", node.parent);
      }
    }
    for (std::size_t v = 0; v < thread.values.size(); ++v) {
      const std::int64_t site = thread.values[v].site;
      if (site < 0 || site >= sites) fail(fmt::format("threads/{}/values/{}/site", t, v), site);
    }
  }
  const auto steps = static_cast<std::int64_t>(host.steps.size());
  for (std::size_t e = 0; e < host.epochs.size(); ++e) {
    const EpochRecord& epoch = host.epochs[e];
    if (epoch.first_step < 0 || epoch.first_step > steps) {
      fail(fmt::format("epochs/{}/first_step", e), epoch.first_step);
    }
    if (epoch.step_count < 0 || epoch.step_count > steps - epoch.first_step) {
      fail(fmt::format("epochs/{}/step_count", e), epoch.step_count);
    }
    for (std::size_t z = 0; z < epoch.zones.size(); ++z) {
      const std::int64_t site = epoch.zones[z].site;
      if (site < 0 || site >= sites) fail(fmt::format("epochs/{}/zones/{}/site", e, z), site);
    }
  }
}
}  // namespace

std::string to_json_text(const std::vector<Profile>& profiles, const TextReportOptions& report) {
  nlohmann::json document;
  document["format"] = kFormat;
  document["schema_version"] = kProfileSchemaVersion;
  document["report"] = report;
  document["profiles"] = profiles;
  return document.dump(2) + "\n";
}

ProfileDocument parse_profile_json(std::string_view text, std::string_view source) {
  nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    throw_error(ErrorKind::Parse, "'{}' is not valid JSON", source);
  }
  // Checked by hand, not with value(): value() throws a bare type_error for "format": 5.
  const auto format = document.is_object() ? document.find("format") : document.end();
  if (!document.is_object() || format == document.end() || !format->is_string() ||
      format->get<std::string>() != kFormat) {
    throw_error(ErrorKind::Parse, "'{}' is not a tscope profile (expected \"format\": \"{}\")",
                source, kFormat);
  }
  const auto version = document.find("schema_version");
  if (version == document.end() || !version->is_number_integer()) {
    throw_error(ErrorKind::Parse, "'{}': \"schema_version\" must be an integer, not {}", source,
                version == document.end() ? "missing" : version->dump());
  }
  if (*version < 1 || *version > kProfileSchemaVersion) {
    throw_error(ErrorKind::Parse,
                "'{}' has profile schema version {}; this build reads versions 1 to {}", source,
                version->dump(), kProfileSchemaVersion);
  }
  if (const auto report = document.find("report"); report != document.end()) {
    check_number_ranges(*report, "/report", true, source);
  }
  if (const auto profiles = document.find("profiles"); profiles != document.end()) {
    check_number_ranges(*profiles, "/profiles", false, source);
  }
  ProfileDocument result;
  try {
    result.report = document.value("report", TextReportOptions{});
    result.profiles = document.at("profiles").get<std::vector<Profile>>();
  } catch (const nlohmann::json::exception& error) {
    // JSON_DIAGNOSTICS puts the field's JSON pointer into the message: "(/profiles/0/title)".
    throw_error(ErrorKind::Parse, "'{}' does not follow the profile schema: {}", source,
                error.what());
  }
  for (std::size_t i = 0; i < result.profiles.size(); ++i) {
    check_host_indices(result.profiles[i].host, fmt::format("/profiles/{}/host", i), source);
  }
  return result;
}

}  // namespace tscope::profile
