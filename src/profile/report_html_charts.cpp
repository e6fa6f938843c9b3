// SPDX-License-Identifier: Apache-2.0
// The HTML report's drawn sections: live bytes over one call, and the flame graph. Both are SVG
// written here; a <title> in each element is its tooltip, so they need no script.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "report_html_sections.h"
#include "tscope/profile/html_page.h"
#include "tscope/profile/memory_model.h"

namespace tscope::profile::detail {
namespace {

constexpr int kChartWidth = 1100;

std::string peak_cell(std::int64_t bytes) {
  return fmt::format("<td data-sort=\"{}\">{}</td>", bytes,
                     escape_html(format_bytes(static_cast<double>(bytes))));
}

// The running bytes after each node of one call, as a step line, with both peaks as lines.
std::string live_bytes_chart(const FunctionRecord& function,
                             const std::vector<std::size_t>& order,
                             const MemoryRun& run) {
  constexpr int kLeft = 80, kRight = 1080, kTop = 16, kBottom = 216, kHeight = 250;
  const std::size_t steps = run.step_bytes.size();
  const double top_bytes = std::max<double>(
      1.0, static_cast<double>(std::max(run.peak_bytes, function.measured_peak_bytes)) * 1.1);
  const double step_width = static_cast<double>(kRight - kLeft) / static_cast<double>(steps);
  auto y_of = [&](double bytes) { return kBottom - (kBottom - kTop) * bytes / top_bytes; };
  const std::string caption = fmt::format(
      "{}: simulated live bytes over one call, {} nodes in executed order (graph inputs and "
      "shared values not counted)",
      function.name, steps);
  std::string out = fmt::format(
      "<figure><svg class=\"chart\" role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" "
      "height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>\n",
      kChartWidth, kHeight, kChartWidth, kHeight, escape_html(caption));
  for (int tick = 0; tick <= 4; ++tick) {
    const double bytes = top_bytes * tick / 4.0;
    out += fmt::format(
        "<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>"
        "<text class=\"value\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        kLeft, y_of(bytes), kRight, y_of(bytes), kLeft - 6, y_of(bytes) + 4,
        escape_html(format_bytes(bytes)));
  }
  std::string points = fmt::format("{},{} ", kLeft, kBottom);
  for (std::size_t i = 0; i < steps; ++i) {
    const double y = y_of(static_cast<double>(run.step_bytes[i]));
    points += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", kLeft + step_width * i, y,
                          kLeft + step_width * (i + 1), y);
  }
  out += fmt::format("<polygon class=\"live\" points=\"{}{},{}\"/>\n", points, kRight, kBottom);
  out += fmt::format("<polyline class=\"live\" points=\"{}\"/>\n", points);
  for (std::size_t i = 0; i < steps; ++i) {
    const NodeRecord& node = function.nodes[order[i]];
    out += fmt::format(
        "<rect class=\"hover\" x=\"{:.1f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\"><title>node "
        "{}: {} &#10;live {} once its outputs are allocated</title></rect>\n",
        kLeft + step_width * i, kTop, step_width, kBottom - kTop, node.topo_index,
        escape_html(node.apply_name),
        escape_html(format_bytes(static_cast<double>(run.step_bytes[i]))));
  }
  const double simulated_y = y_of(static_cast<double>(run.peak_bytes));
  out += fmt::format(
      "<line class=\"simulated\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"><title>simulated "
      "peak</title></line><text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">simulated peak "
      "{}</text>\n",
      kLeft, simulated_y, kRight, simulated_y, kRight - 4, simulated_y - 4,
      escape_html(format_bytes(static_cast<double>(run.peak_bytes))));
  if (function.measured_peak_bytes > 0) {
    const double measured_y = y_of(static_cast<double>(function.measured_peak_bytes));
    // The labels sit on opposite sides so that close peaks stay readable.
    out += fmt::format(
        "<line class=\"measured\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"><title>measured "
        "peak</title></line><text x=\"{}\" y=\"{:.1f}\">measured peak (allocator) {}</text>\n",
        kLeft, measured_y, kRight, measured_y, kLeft + 4, measured_y - 4,
        escape_html(format_bytes(static_cast<double>(function.measured_peak_bytes))));
  }
  out += fmt::format(
      "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
      "<text class=\"value\" x=\"{}\" y=\"{}\">node 0</text>"
      "<text class=\"value\" x=\"{}\" y=\"{}\" text-anchor=\"end\">node {} (executed "
      "order)</text>\n",
      kLeft, kBottom, kRight, kBottom, kLeft, kBottom + 16, kRight, kBottom + 16,
      steps == 0 ? 0 : steps - 1);
  out += "</svg><figcaption>" + escape_html(caption) + "</figcaption></figure>\n";
  return out;
}

struct Frame {
  std::string name;
  std::int64_t total_ns = 0;
  std::int64_t self_ns = 0;
  std::vector<std::unique_ptr<Frame>> children;  // first-seen order
  std::map<std::string, Frame*> by_name;
};

Frame build_tree(const std::vector<FoldedStack>& stacks) {
  Frame root{.name = "all"};
  for (const FoldedStack& stack : stacks) {
    Frame* frame = &root;
    root.total_ns += stack.self_ns;
    for (const std::string& name : stack.frames) {
      Frame*& child = frame->by_name[name];
      if (child == nullptr) {
        frame->children.push_back(std::make_unique<Frame>(Frame{.name = name}));
        child = frame->children.back().get();
      }
      child->total_ns += stack.self_ns;
      frame = child;
    }
    frame->self_ns += stack.self_ns;
  }
  return root;
}

int tree_depth(const Frame& frame) {
  int depth = 0;
  for (const auto& child : frame.children) depth = std::max(depth, tree_depth(*child));
  return depth + 1;
}

void draw_frame(
    const Frame& frame, double x, int depth, double ns_to_px, double root_ns, std::string& out) {
  constexpr int kRowHeight = 18;
  const double width = static_cast<double>(frame.total_ns) * ns_to_px;
  if (width < 0.2) return;  // narrower than a pixel can show
  const int y = depth * kRowHeight;
  std::size_t hash = 0;
  for (char c : frame.name) hash = hash * 31 + static_cast<unsigned char>(c);
  out += fmt::format(
      "<g><title>{}&#10;total {} ({:.1f}%), self {}</title><rect class=\"frame c{}\" x=\"{:.2f}\" "
      "y=\"{}\" width=\"{:.2f}\" height=\"{}\"/>",
      escape_html(frame.name), escape_html(format_duration(static_cast<double>(frame.total_ns))),
      root_ns > 0 ? 100.0 * static_cast<double>(frame.total_ns) / root_ns : 0.0,
      escape_html(format_duration(static_cast<double>(frame.self_ns))), hash % 7, x, y, width,
      kRowHeight - 1);
  const auto fits = static_cast<std::size_t>(width / 6.5);
  if (fits >= 3) {
    out += fmt::format("<text class=\"frame\" x=\"{:.2f}\" y=\"{}\">{}</text>", x + 3, y + 13,
                       escape_html(shorten(frame.name, fits)));
  }
  out += "</g>\n";
  double child_x = x;
  for (const auto& child : frame.children) {
    draw_frame(*child, child_x, depth + 1, ns_to_px, root_ns, out);
    child_x += static_cast<double>(child->total_ns) * ns_to_px;
  }
}

}  // namespace

HtmlSection html_memory_section(const Profile& profile, int max_charts) {
  HtmlSection section{.id = "memory", .heading = "Memory"};
  std::string& out = section.html;
  out +=
      "<p class=\"note\">Simulated from the outputs' sizes at the last call and the ops' "
      "aliasing (the text report's Memory section); the measured peak is the allocator's "
      "high-water mark during calls, above the bytes live when the call began.</p>\n";
  out +=
      "<table class=\"sortable\"><thead><tr><th class=\"name\">function</th><th>simulated peak "
      "(executed order)</th><th>simulated peak (breadth-first order)</th><th>without GC</th>"
      "<th>measured peak</th><th>graph inputs and shared values</th><th>minimum over node "
      "orders</th></tr></thead><tbody>\n";
  struct Chart {
    const FunctionRecord* function;
    std::vector<std::size_t> order;
    MemoryRun run;
  };
  std::vector<Chart> charts;
  for (const FunctionRecord& function : profile.functions) {
    std::vector<std::size_t> order = executed_order(function);
    MemoryRun run = simulate_memory(function, order, true);
    const MemoryRun breadth_first = simulate_memory(function, topological_order(function), true);
    out += "<tr><td class=\"name\">" + escape_html(function.name) + "</td>" +
           peak_cell(run.peak_bytes) + peak_cell(breadth_first.peak_bytes) +
           peak_cell(run.total_allocated_bytes) + peak_cell(function.measured_peak_bytes) +
           peak_cell(function.input_bytes);
    const MinPeakRecord& min_peak = function.min_peak;
    if (!min_peak.searched) {
      out += "<td data-sort=\"-1\">not searched</td>";
    } else if (min_peak.exact) {
      out += peak_cell(min_peak.peak_bytes);
    } else {
      out += fmt::format("<td data-sort=\"{}\">{} to {}</td>", min_peak.peak_bytes,
                         escape_html(format_bytes(static_cast<double>(min_peak.lower_bound_bytes))),
                         escape_html(format_bytes(static_cast<double>(min_peak.peak_bytes))));
    }
    out += "</tr>\n";
    if (!function.nodes.empty() && run.peak_bytes > 0) {
      charts.push_back({&function, std::move(order), std::move(run)});
    }
  }
  out += "</tbody></table>\n";
  std::stable_sort(charts.begin(), charts.end(), [](const Chart& a, const Chart& b) {
    return a.function->call_ns > b.function->call_ns;
  });
  if (charts.size() > static_cast<std::size_t>(std::max(max_charts, 0))) {
    out += fmt::format("<p class=\"note\">Live bytes of the {} costliest of {} functions.</p>\n",
                       max_charts, charts.size());
    charts.resize(static_cast<std::size_t>(std::max(max_charts, 0)));
  }
  for (const Chart& chart : charts) {
    out += "<h3>" + escape_html(chart.function->name) + "</h3>\n";
    out += live_bytes_chart(*chart.function, chart.order, chart.run);
    ++section.charts;
  }
  return section;
}

HtmlSection html_flame_graph_section(const std::vector<FoldedStack>& stacks, bool has_zones) {
  HtmlSection section{.id = "flame", .heading = "Flame graph"};
  const Frame root = build_tree(stacks);
  const int depth = tree_depth(root);
  const int height = depth * 18 + 2;
  const double root_ns = static_cast<double>(root.total_ns);
  const double ns_to_px = root_ns > 0 ? kChartWidth / root_ns : 0.0;
  std::string& out = section.html;
  out += "<p class=\"note\">";
  out += has_zones ? "Host zones (all threads merged) with the graph functions they called, and "
                     "each function's op classes and nodes below it"
                   : "Each graph function with its op classes and nodes below it";
  out +=
      "; a loop's body nests under its Scan node; width is time. Hover a frame for its total "
      "and self time. The same stacks as "
      "<code>--folded</code>.</p>\n";
  out += fmt::format(
      "<figure><svg class=\"chart\" role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" "
      "height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\"><title>Flame graph</title>\n",
      kChartWidth, height, kChartWidth, height);
  draw_frame(root, 0, 0, ns_to_px, root_ns, out);
  out += "</svg><figcaption>Flame graph (icicle: callers above callees)</figcaption></figure>\n";
  section.charts = 1;
  return section;
}

}  // namespace tscope::profile::detail
