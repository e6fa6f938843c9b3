// SPDX-License-Identifier: Apache-2.0
// The text report. Column formats follow Theano's ProfileStats so old eyes read it at once: each
// table row is a list of printf segments joined by one space, headers likewise.
#include "tscope/profile/report_text.h"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "report_text_sections.h"
#include "tscope/profile/memory_model.h"
#include "tscope/profile/tips.h"

namespace tscope::profile {
using detail::render_loop_sections;
using detail::render_node_sections;

namespace {
double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += separator;
    text += parts[i];
  }
  return text;
}

// Width left for the name column: line width minus the other headers (Theano's maxlen rule).
std::size_t name_width(const std::vector<std::string>& headers, int line_width) {
  std::size_t used = headers.size();
  for (const std::string& header : headers) used += header.size();
  return line_width > static_cast<int>(used) ? static_cast<std::size_t>(line_width) - used : 0;
}

std::string truncate(const std::string& text, std::size_t width) {
  return text.size() <= width ? text : text.substr(0, width);
}

struct Group {
  std::string name;
  std::int64_t total_ns = 0;
  std::int64_t call_count = 0;
  std::int64_t node_count = 0;
  std::vector<std::string> impls;  // distinct, first-seen order
};

void add_impl(Group& group, const std::string& impl) {
  if (std::find(group.impls.begin(), group.impls.end(), impl) == group.impls.end()) {
    group.impls.push_back(impl);
  }
}

std::vector<Group> group_nodes(const Profile& profile, bool by_class) {
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const FunctionRecord& function : profile.functions) {
    for (const NodeRecord& node : function.nodes) {
      const std::string& key = by_class ? node.class_name : node.op_name;
      auto [it, inserted] = groups.try_emplace(key);
      if (inserted) order.push_back(key);
      Group& group = it->second;
      group.name = key;
      group.total_ns += node.total_ns;
      group.call_count += node.call_count;
      group.node_count += 1;
      add_impl(group, node.impl);
    }
  }
  std::vector<Group> result;
  for (const std::string& key : order) result.push_back(groups[key]);
  std::stable_sort(result.begin(), result.end(), [](const Group& a, const Group& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.call_count != b.call_count) return a.call_count > b.call_count;
    return a.node_count > b.node_count;
  });
  return result;
}

void render_function_section(const Profile& profile, std::string& out) {
  std::int64_t calls = 0, call_ns = 0, vm_ns = 0;
  CompileRecord compile;
  std::vector<std::string> names;
  for (const FunctionRecord& function : profile.functions) {
    calls += function.call_count;
    call_ns += function.call_ns;
    vm_ns += function.vm_ns;
    compile.total_ns += function.compile.total_ns;
    compile.rewrite_ns += function.compile.rewrite_ns;
    compile.validate_ns += function.compile.validate_ns;
    compile.link_ns += function.compile.link_ns;
    compile.node_prepare_ns += function.compile.node_prepare_ns;
    compile.node_count += function.compile.node_count;
    for (const PrepareRecord& prepare : function.compile.slowest_prepares) {
      compile.slowest_prepares.push_back(prepare);
    }
    names.push_back(function.name);
  }
  std::stable_sort(
      compile.slowest_prepares.begin(), compile.slowest_prepares.end(),
      [](const PrepareRecord& a, const PrepareRecord& b) { return a.duration_ns > b.duration_ns; });
  if (compile.slowest_prepares.size() > 5) compile.slowest_prepares.resize(5);
  const std::int64_t kernel_ns = profile.kernel_ns();

  out += "Function profiling\n==================\n";
  out += "  Message: " + (profile.title.empty() ? join(names, ", ") : profile.title) + "\n";
  out += fmt::sprintf("  Time in %d calls to Function.__call__: %es\n", calls, seconds(call_ns));
  if (call_ns > 0) {
    out += fmt::sprintf("  Time in Function.vm.__call__: %es (%.3f%%)\n", seconds(vm_ns),
                        100.0 * static_cast<double>(vm_ns) / static_cast<double>(call_ns));
    if (kernel_ns > 0) {
      out += fmt::sprintf("  Time in thunks: %es (%.3f%%)\n", seconds(kernel_ns),
                          100.0 * static_cast<double>(kernel_ns) / static_cast<double>(call_ns));
    }
  }
  if (profile.overhead_ns_per_node >= 0) {
    out += fmt::sprintf("  Profiler overhead: %.1f ns per node execution (measured)\n",
                        profile.overhead_ns_per_node);
  }
  if (profile.host.zone_overhead_ns >= 0) {
    out += fmt::sprintf(
        "  Zone overhead: %.1f ns per zone enter+exit (measured; Host zones below)\n",
        profile.host.zone_overhead_ns);
  }
  if (!profile.clock.empty()) {
    out += "  Node clock: " + profile.clock;
    if (profile.clock_read_ns >= 0)
      out += fmt::sprintf(" (%.1f ns per read)", profile.clock_read_ns);
    out += "\n";
  }
  if (!profile.trace.path.empty()) {
    out += fmt::sprintf("  Timeline: %d events written to %s (Chrome trace format)\n",
                        profile.trace.event_count - profile.trace.dropped_event_count,
                        profile.trace.path);
    if (profile.trace.dropped_event_count > 0) {
      out += fmt::sprintf(
          "  Timeline: %d older events dropped: a thread's ring (%d events) wrapped; raise "
          "profiling.trace_buffer_mb to keep them\n",
          profile.trace.dropped_event_count, profile.trace.ring_capacity_events);
    }
  }
  out += fmt::sprintf("  Total compilation time: %es\n", seconds(compile.total_ns));
  out += fmt::sprintf("    Number of Apply nodes: %d\n", compile.node_count);
  out += fmt::sprintf("    Rewriting time: %es\n", seconds(compile.rewrite_ns));
  out += fmt::sprintf("       Validate time: %es\n", seconds(compile.validate_ns));
  out += fmt::sprintf("    Linker time (kernel selection and instruction building): %es\n",
                      seconds(compile.link_ns));
  out += fmt::sprintf("       Node preparation time %es\n", seconds(compile.node_prepare_ns));
  for (const PrepareRecord& prepare : compile.slowest_prepares) {
    out += fmt::sprintf("           Node %s time %es\n", prepare.apply_name,
                        seconds(prepare.duration_ns));
  }
  if (!profile.blas.empty()) out += "    BLAS: " + profile.blas + "\n";
  if (!profile.openmp.empty()) out += "    OpenMP: " + profile.openmp + "\n";
  out += "\n";
}

void render_globals(const Profile& profile, std::string& out) {
  out += fmt::sprintf("Time in all call to tscope::grad() %es\n", seconds(profile.grad_ns));
  out += fmt::sprintf("Time since tscope load %.3fs\n", seconds(profile.since_load_ns));
}

void render_group_table(const Profile& profile,
                        bool by_class,
                        const TextReportOptions& options,
                        std::string& out) {
  const std::int64_t local_ns = profile.kernel_ns();
  const char* title = by_class ? "Class" : "Ops";
  out += std::string(title) + "\n---\n";
  if (local_ns == 0) {
    out +=
        fmt::format("ProfileStats.summary_{}: total time 0 (did you forget to enable counters?)\n",
                    by_class ? "class" : "ops");
    return;
  }
  const std::vector<std::string> headers = {
      "<% time>", "<sum %>", "<apply time>", "<time per call>",
      "<impl>",   "<#call>", "<#apply>",     by_class ? "<Class name>" : "<Op name>"};
  out += join(headers, " ") + "\n";
  const std::size_t width = name_width(headers, options.line_width);
  const std::vector<Group> groups = group_nodes(profile, by_class);
  std::int64_t running_ns = 0;
  const std::size_t shown =
      std::min<std::size_t>(groups.size(), static_cast<std::size_t>(options.n_ops));
  for (std::size_t i = 0; i < shown; ++i) {
    const Group& group = groups[i];
    if (group.call_count == 0) continue;
    running_ns += group.total_ns;
    const double percent =
        100.0 * static_cast<double>(group.total_ns) / static_cast<double>(local_ns);
    const double sum_percent =
        100.0 * static_cast<double>(running_ns) / static_cast<double>(local_ns);
    const double per_call = seconds(group.total_ns) / static_cast<double>(group.call_count);
    const std::vector<std::string> cells = {fmt::sprintf("  %4.1f%% ", percent),
                                            fmt::sprintf(" %5.1f%% ", sum_percent),
                                            fmt::sprintf("   %7.3fs ", seconds(group.total_ns)),
                                            fmt::sprintf("     %8.2es ", per_call),
                                            fmt::sprintf("%6s ", join(group.impls, ",")),
                                            fmt::sprintf("  %4d  ", group.call_count),
                                            fmt::sprintf("  %4d  ", group.node_count),
                                            truncate(group.name, width)};
    out += join(cells, " ") + "\n";
  }
  if (groups.size() > shown) {
    std::int64_t rest_ns = 0;
    for (std::size_t i = shown; i < groups.size(); ++i) rest_ns += groups[i].total_ns;
    out += fmt::sprintf("   ... (remaining %d %s account for %6.2f%%(%.2fs) of the runtime)\n",
                        groups.size() - shown, by_class ? "Classes" : "Ops",
                        100.0 * static_cast<double>(rest_ns) / static_cast<double>(local_ns),
                        seconds(rest_ns));
  }
  out += "\n";
}

std::string describe_tensor(const TensorRecord& record) {
  std::string shape = "(";
  for (std::size_t i = 0; i < record.shape.size(); ++i) {
    shape += (i > 0 ? ", " : "") + std::to_string(record.shape[i]);
  }
  if (record.shape.size() == 1) shape += ",";
  shape += ")";
  std::string strides = "c";
  if (!record.contiguous) {
    strides = "(";
    for (std::size_t i = 0; i < record.strides_bytes.size(); ++i) {
      strides += (i > 0 ? ", " : "") + std::to_string(record.strides_bytes[i]);
    }
    strides += ")";
  }
  return fmt::format("dtype={}, shape={}, strides={}", record.dtype, shape, strides);
}

void render_apply_table(const Profile& profile,
                        const TextReportOptions& options,
                        std::string& out) {
  const std::int64_t local_ns = profile.kernel_ns();
  out += "Apply\n------\n";
  if (local_ns == 0) {
    out += "ProfileStats.summary_nodes: total time 0 (did you forget to enable counters?)\n";
    return;
  }
  std::vector<const NodeRecord*> nodes;
  for (const FunctionRecord& function : profile.functions) {
    for (const NodeRecord& node : function.nodes) nodes.push_back(&node);
  }
  std::stable_sort(nodes.begin(), nodes.end(), [](const NodeRecord* a, const NodeRecord* b) {
    if (a->total_ns != b->total_ns) return a->total_ns > b->total_ns;
    return a->topo_index > b->topo_index;
  });
  std::vector<std::string> headers = {"<% time>",        "<sum %>", "<apply time>",
                                      "<time per call>", "<#call>", "<id>"};
  if (options.show_distribution) {
    headers.push_back("<min time>");
    headers.push_back("<max time>");
  }
  headers.push_back("<Mflops>");
  headers.push_back("<Gflops/s>");
  headers.push_back("<Apply name>");
  out += join(headers, " ") + "\n";
  const std::size_t width = name_width(headers, options.line_width);
  std::int64_t running_ns = 0;
  const std::size_t shown =
      std::min<std::size_t>(nodes.size(), static_cast<std::size_t>(options.n_apply));
  for (std::size_t i = 0; i < shown; ++i) {
    const NodeRecord& node = *nodes[i];
    if (node.call_count == 0) continue;
    running_ns += node.total_ns;
    std::vector<std::string> cells = {
        fmt::sprintf("  %4.1f%% ",
                     100.0 * static_cast<double>(node.total_ns) / static_cast<double>(local_ns)),
        fmt::sprintf(" %5.1f%% ",
                     100.0 * static_cast<double>(running_ns) / static_cast<double>(local_ns)),
        fmt::sprintf("   %7.3fs ", seconds(node.total_ns)),
        fmt::sprintf("     %8.2es ", seconds(node.total_ns) / static_cast<double>(node.call_count)),
        fmt::sprintf("  %4d ", node.call_count),
        fmt::sprintf("%4d ", node.topo_index)};
    if (options.show_distribution) {
      cells.push_back(fmt::sprintf("  %8.2es ", seconds(node.min_ns)));
      cells.push_back(fmt::sprintf("  %8.2es ", seconds(node.max_ns)));
    }
    if (node.flops_per_call >= 0 && node.total_ns > 0) {
      // Gflops/s = flops per call x calls / total time (Theano divided one call's flops by the
      // time of all calls).
      const double gflops =
          node.flops_per_call * static_cast<double>(node.call_count) / seconds(node.total_ns) / 1e9;
      cells.push_back(fmt::sprintf("%8.1f", node.flops_per_call / 1e6));
      cells.push_back(fmt::sprintf("%10.1f", gflops));
    } else {
      cells.push_back(std::string(8, ' '));
      cells.push_back(std::string(10, ' '));
    }
    cells.push_back(" " + truncate(node.apply_name, width));
    out += join(cells, " ") + "\n";
    // Every node names the user-level op and the line of code (or the model node) that built it,
    // so a costly row leads back to where it came from. Nodes without a recorded site (profiles
    // written before sites were kept) print nothing.
    if (!node.source_site.empty() && node.source_site != "<unknown>") {
      out += node.user_op.empty()
                 ? fmt::format("    <- {}\n", node.source_site)
                 : fmt::format("    <- {} at {}\n", node.user_op, node.source_site);
    }
    if (options.show_io) {
      for (std::size_t k = 0; k < node.inputs.size(); ++k) {
        out += fmt::format("    input {}: {}\n", k, describe_tensor(node.inputs[k]));
      }
      for (std::size_t k = 0; k < node.outputs.size(); ++k) {
        out += fmt::format("    output {}: {}\n", k, describe_tensor(node.outputs[k]));
      }
      if (node.signatures.size() > 1) {
        out += fmt::format("    {} input signatures seen:\n", node.signatures.size());
        for (const SignatureRecord& signature : node.signatures) {
          std::string shapes;
          for (const TensorRecord& input : signature.inputs) {
            shapes += (shapes.empty() ? "" : " ") + describe_tensor(input);
          }
          out += fmt::format("      {} calls: {}\n", signature.call_count, shapes);
        }
      }
    }
  }
  if (nodes.size() > shown) {
    std::int64_t rest_ns = 0;
    for (std::size_t i = shown; i < nodes.size(); ++i) rest_ns += nodes[i]->total_ns;
    out += fmt::sprintf(
        "   ... (remaining %d Apply instances account for %.2f%%(%.2fs) of the runtime)\n",
        nodes.size() - shown, 100.0 * static_cast<double>(rest_ns) / static_cast<double>(local_ns),
        seconds(rest_ns));
  }
  out += "\n";
}
}  // namespace

namespace detail {
void render_node_sections(const Profile& profile,
                          const TextReportOptions& options,
                          std::string& out) {
  render_group_table(profile, /*by_class=*/true, options, out);
  render_group_table(profile, /*by_class=*/false, options, out);
  render_apply_table(profile, options, out);
  out += render_signature_section(profile, options, options.show_signatures);
  if (options.show_memory) {
    out += render_memory_section(
        profile, {.n_apply = options.n_apply, .min_memory_size = options.min_memory_size});
  }
}
}  // namespace detail

TextReportOptions report_options(const ProfileOptions& options) {
  TextReportOptions report;
  report.n_ops = options.n_ops;
  report.n_apply = options.n_apply;
  report.line_width = options.output_line_width;
  report.show_io = options.profile_memory;
  report.show_memory = options.profile_memory;
  report.min_memory_size = options.min_memory_size;
  report.show_optimizer = options.profile_optimizer;
  report.n_zones = options.n_zones;
  report.sort_zones_by_cumtime = options.zones_by_cumtime;
  return report;
}

std::string render_text(const Profile& profile, const TextReportOptions& options) {
  std::string out;
  if (options.show_input_section) out += detail::render_input_section(profile.host);
  if (profile.functions.empty() && !profile.host.empty()) {
    return out + render_zone_section(profile.host, options) +
           detail::render_epoch_section(profile.host);
  }
  render_function_section(profile, out);
  render_globals(profile, out);
  render_node_sections(profile, options, out);
  if (options.show_optimizer) out += render_optimizer_section(profile);
  if (options.show_tips) out += render_tips(profile);
  out += render_loop_sections(profile, options);
  out += render_zone_section(profile.host, options);
  out += detail::render_epoch_section(profile.host);
  return out;
}

std::string render_profiles(const std::vector<Profile>& profiles,
                            const TextReportOptions& options) {
  if (profiles.empty()) return {};
  if (profiles.size() == 1) return render_text(profiles.front(), options) + "\n";
  // The input verdict opens the report. Host zones are process-wide: printed once, in the sum.
  std::string out;
  TextReportOptions without_input = options;
  without_input.show_input_section = false;
  for (const Profile& profile : profiles) {
    if (options.show_input_section) out += detail::render_input_section(profile.host);
  }
  for (const Profile& profile : profiles) {
    if (!profile.host.empty()) {
      Profile without_zones = profile;
      without_zones.host = HostRecord{};
      if (!without_zones.functions.empty()) out += render_text(without_zones, options) + "\n";
      continue;
    }
    out += render_text(profile, options) + "\n";
  }
  Profile sum = sum_profiles(
      profiles, fmt::format("Sum of all({}) printed profiles at exit.", profiles.size()));
  // Each loop's section was printed with its function's profile above.
  for (FunctionRecord& function : sum.functions) function.loops.clear();
  out += render_text(sum, without_input);
  return out;
}

}  // namespace tscope::profile
