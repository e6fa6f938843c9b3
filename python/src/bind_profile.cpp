// SPDX-License-Identifier: Apache-2.0
// Profiles as Python objects. A Profile is the engine's plain profile model plus the report
// options to render it with; summary() and to_json() call the same renderers as the C++ side and
// the CLI, so the text is byte for byte the same. apply_rows() gives the Apply table's data as
// dicts for notebooks. Flags: ts.config reads and writes the process's profile options through
// the engine's own parser, so names, values and errors are those of TSCOPE_FLAGS.
#include <pybind11/stl.h>

#include "binding.h"
#include "python_site.h"
#include "tscope/core/error.h"
#include "tscope/core/file_io.h"
#include "tscope/profile/global_profiles.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/profile_collector.h"
#include "tscope/profile/profile_options.h"
#include "tscope/profile/report_text.h"
#include "tscope/profile/steps.h"
#include "tscope/profile/worker_processes.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"

namespace tscope::python {
namespace {

struct PythonProfile {
  profile::Profile profile;
  profile::TextReportOptions report;
};

PythonProfile live_profile(const profile::ProfileCollector& collector) {
  profile::Profile snapshot;
  {
    py::gil_scoped_release no_gil;  // waits for calls in flight, which may need the GIL to end
    snapshot = collector.snapshot();
  }
  return {std::move(snapshot),
          profile::report_options(profile::GlobalProfiles::instance().options())};
}

py::dict tensor_record(const profile::TensorRecord& record) {
  py::dict row;
  row["dtype"] = record.dtype;
  row["shape"] = py::tuple(py::cast(record.shape));
  row["strides_bytes"] = py::tuple(py::cast(record.strides_bytes));
  row["contiguous"] = record.contiguous;
  return row;
}

py::list apply_rows(const profile::Profile& profile) {
  py::list rows;
  for (const profile::FunctionRecord& function : profile.functions) {
    for (const profile::NodeRecord& node : function.nodes) {
      py::dict row;
      row["function"] = function.name;
      row["topo_index"] = node.topo_index;
      row["apply"] = node.apply_name;
      row["op"] = node.op_name;
      row["op_class"] = node.class_name;
      row["op_kind"] = node.op_kind;
      row["impl"] = node.impl;
      row["calls"] = node.call_count;
      row["total_ns"] = node.total_ns;
      row["min_ns"] = node.min_ns;
      row["max_ns"] = node.max_ns;
      row["flops_per_call"] = node.flops_per_call < 0 ? py::object(py::none())
                                                      : py::object(py::float_(node.flops_per_call));
      row["output_bytes"] = node.output_bytes;
      row["source_site"] = node.source_site;
      row["user_op"] = node.user_op;
      py::list inputs;
      for (const auto& input : node.inputs) inputs.append(tensor_record(input));
      row["inputs"] = inputs;
      py::list outputs;
      for (const auto& output : node.outputs) outputs.append(tensor_record(output));
      row["outputs"] = outputs;
      rows.append(row);
    }
  }
  return rows;
}

py::list function_rows(const profile::Profile& profile) {
  py::list rows;
  for (const profile::FunctionRecord& function : profile.functions) {
    py::dict row;
    row["name"] = function.name;
    row["calls"] = function.call_count;
    row["call_ns"] = function.call_ns;
    row["vm_ns"] = function.vm_ns;
    row["compile_ns"] = function.compile.total_ns;
    row["nodes"] = static_cast<std::int64_t>(function.nodes.size());
    rows.append(row);
  }
  return rows;
}

// The flags as TSCOPE_FLAGS spells them, name -> text value.
std::vector<std::pair<std::string, std::string>> flag_values(const profile::ProfileOptions& o) {
  auto text = [](bool value) { return std::string(value ? "true" : "false"); };
  return {
      {"profile", text(o.profile)},
      {"profile_memory", text(o.profile_memory)},
      {"profile_optimizer", text(o.profile_optimizer)},
      {"allow_gc", text(o.allow_gc)},
      {"profiling.n_apply", std::to_string(o.n_apply)},
      {"profiling.n_ops", std::to_string(o.n_ops)},
      {"profiling.min_memory_size", std::to_string(o.min_memory_size)},
      {"profiling.destination", o.destination},
      {"profiling.ignore_first_call", text(o.ignore_first_call)},
      {"profiling.output_line_width", std::to_string(o.output_line_width)},
      {"profiling.min_peak_memory", text(o.min_peak_memory)},
      {"profiling.n_zones", std::to_string(o.n_zones)},
      {"profiling.zone_sort", o.zones_by_cumtime ? "cumtime" : "tottime"},
  };
}

void set_flag(const std::string& name, const std::string& value) {
  if (value.find(',') != std::string::npos) {
    throw_error(ErrorKind::BadFlag, "flag '{}': the value '{}' must not contain ','", name,
                value);
  }
  std::string text;
  for (const auto& [flag, current] : flag_values(profile::GlobalProfiles::instance().options())) {
    if (flag != name) text += flag + "=" + current + ",";
  }
  text += name + "=" + value;
  profile::ProfileOptions options = profile::parse_flags(text);
  profile::check_destination(options);
  profile::GlobalProfiles::instance().set_options(options);
}

}  // namespace

void bind_profile(py::module_& module) {
  py::class_<PythonProfile>(module, "Profile",
                            "A profile: one or several functions' records (tensorscope.profile).")
      .def("text", [](const PythonProfile& p) { return profile::render_text(p.profile, p.report); },
           "The text report, as the C++ side and `tscope report` print it.")
      .def("to_json", [](const PythonProfile& p) {
        return profile::to_json_text({p.profile}, p.report);
      }, "The versioned JSON form (docs/profiler_formats.md).")
      .def("apply_rows", [](const PythonProfile& p) { return apply_rows(p.profile); },
           "One dict per graph node of every function: the Apply table's data.")
      .def("function_rows", [](const PythonProfile& p) { return function_rows(p.profile); })
      .def_property_readonly("title", [](const PythonProfile& p) { return p.profile.title; });

  py::class_<profile::ProfileCollector, std::shared_ptr<profile::ProfileCollector>>(
      module, "ProfileCollector",
      "Where compiled functions accumulate their profiles; shared by several functions, it sums "
      "them (Theano's ProfileStats).")
      .def(py::init<std::string>(), py::arg("title") = "")
      .def("snapshot", [](const profile::ProfileCollector& c) { return live_profile(c); })
      .def_property_readonly("title", &profile::ProfileCollector::title);

  module.def("load_profiles", [](const std::string& path) {
    const profile::ProfileDocument document =
        profile::parse_profile_json(read_file_bytes(path), path);
    std::vector<PythonProfile> profiles;
    for (const profile::Profile& p : document.profiles) profiles.push_back({p, document.report});
    return profiles;
  });
  module.def("sum_profiles", [](const std::vector<PythonProfile>& profiles) {
    std::vector<profile::Profile> models;
    for (const PythonProfile& p : profiles) models.push_back(p.profile);
    PythonProfile sum{profile::sum_profiles(models, profile::sum_title(models.size())),
                      profiles.empty() ? profile::TextReportOptions{} : profiles.front().report};
    return sum;
  });
  module.def("flags", [] {
    py::dict flags;
    for (const auto& [name, value] : flag_values(profile::GlobalProfiles::instance().options())) {
      flags[py::str(name)] = value;
    }
    return flags;
  }, "The process's profile flags, name -> value as TSCOPE_FLAGS spells them.");
  module.def("set_flag", &set_flag, py::arg("name"), py::arg("value"),
             "Sets one flag through the TSCOPE_FLAGS parser (BadFlagError on a bad name or value).");
  module.def(
      "mark_step", [](std::int64_t examples) { profile::mark_step(examples); },
      py::arg("examples") = 0, "Ends the current training step (steps.h).");
  module.def(
      "mark_epoch", [](std::int64_t epoch) { profile::mark_epoch(epoch); }, py::arg("epoch"),
      "Starts epoch `epoch` (steps.h).");
  // A Python zone: its site is the caller's file:line, interned once per (name, site). Entered
  // and left by a context manager on one thread, so zones nest as the with-statements do.
  module.def(
      "zone_site",
      [](const std::string& name, bool input_wait) {
        const SourceSite site = python_caller_site();
        const auto* zone_site = profile::intern_zone_site(
            name, site.file, site.line,
            input_wait ? profile::ZoneKind::InputWait : profile::ZoneKind::Zone);
        return reinterpret_cast<std::uintptr_t>(zone_site);
      },
      py::arg("name"), py::arg("input_wait") = false);
  module.def("zone_begin", [](std::uintptr_t site, bool input_wait) -> std::int64_t {
    const auto* zone_site = reinterpret_cast<const profile::ZoneSite*>(site);
    if (input_wait) return profile::detail::input_wait_begin(zone_site);
    return profile::detail::zone_begin(zone_site) ? 0 : -1;
  });
  module.def("zone_end", [](std::int64_t token, bool input_wait) {
    if (token < 0) return;
    if (input_wait) {
      profile::detail::input_wait_end(token);
    } else {
      profile::detail::zone_end();
    }
  });
  module.def("set_zones_enabled", &profile::set_zones_enabled, py::arg("enabled"));
  module.def("is_worker_process", &profile::is_worker_process,
             "Whether this process is a profiled worker, which writes a shard at its end.");
  module.def("write_global_profiles", [] {
    py::gil_scoped_release no_gil;
    profile::GlobalProfiles::instance().write();
  }, "Writes every globally registered profile to profiling.destination now.");
}

}  // namespace tscope::python
