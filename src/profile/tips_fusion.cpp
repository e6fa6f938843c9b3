// SPDX-License-Identifier: Apache-2.0
// unfused_chain: elementwise nodes that read one another's values yet ran as separate loops. After
// fuse_elementwise (rewrite/fusion_rules.h) such a boundary is left only for a reason the model
// can name from each node's fusion_role, dtypes and readers, the function's outputs and the
// rewrites that ran.
#include "tips_fusion.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_map>

namespace tscope::profile::detail {
namespace {

constexpr std::size_t kValuesExplained = 4;  // per tip; further stored values are only counted

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

// A node computing its value elementwise, in a fused loop or not (a comparison, a cast).
bool is_elementwise_producer(const NodeRecord& node) {
  return node.fusion_role == "elementwise" || (node.fusion_role == "none" && node.elementwise);
}

// A node that could take such a value into its own loop: an elementwise node, or a Sum or Max a
// fused loop can end with.
bool is_elementwise_consumer(const NodeRecord& node) {
  return node.fusion_role == "reduction" || is_elementwise_producer(node);
}

// The Apply table's op name and id: shorter than the apply name, which spells out every input.
std::string short_label(const NodeRecord& node) {
  return fmt::format("{} (node {})", node.op_name.empty() ? node.apply_name : node.op_name,
                     node.topo_index);
}

std::string sited_label(const NodeRecord& node) {
  if (node.source_site.empty()) return short_label(node);
  return fmt::format("{} (node {}, created at {})",
                     node.op_name.empty() ? node.apply_name : node.op_name, node.topo_index,
                     node.source_site);
}

bool is_float(const std::string& dtype) { return dtype == "float32" || dtype == "float64"; }

// Why a node whose fusion_role is "none" is no step of a fused loop: the loop computes in one
// float dtype, which leaves comparisons and casts out; any other such op lacks a block kernel.
std::string why_not_fusable(const NodeRecord& node) {
  std::vector<std::string> input_dtypes;
  for (const TensorRecord& input : node.inputs) {
    if (std::find(input_dtypes.begin(), input_dtypes.end(), input.dtype) == input_dtypes.end()) {
      input_dtypes.push_back(input.dtype);
    }
  }
  if (!node.outputs.empty()) {
    const std::string& output = node.outputs[0].dtype;
    if (std::any_of(input_dtypes.begin(), input_dtypes.end(),
                    [&](const std::string& dtype) { return dtype != output; })) {
      return fmt::format("changes the dtype ({} -> {}), and a fused loop keeps one float dtype",
                         fmt::join(input_dtypes, ", "), output);
    }
    if (!is_float(output)) {
      return fmt::format("computes in {}, and a fused loop computes in float32 or float64", output);
    }
  }
  return fmt::format("has no fused kernel (op {})", node.op_kind);
}

// A value stored between two elementwise nodes: its producer, every node reading it (each once,
// in node order) and those of them that could have taken it into their loop.
struct StoredValue {
  std::size_t producer = 0;
  std::int64_t id = 0;
  std::vector<std::size_t> readers;
  std::vector<std::size_t> consumers;
};

std::vector<StoredValue> stored_values(const FunctionRecord& function) {
  const std::vector<NodeRecord>& nodes = function.nodes;
  std::unordered_map<std::int64_t, std::vector<std::size_t>> readers;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::int64_t id :
         std::set<std::int64_t>(nodes[i].input_ids.begin(), nodes[i].input_ids.end())) {
      readers[id].push_back(i);
    }
  }
  std::vector<StoredValue> values;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!is_elementwise_producer(nodes[i])) continue;
    for (std::int64_t id : nodes[i].output_ids) {
      const auto found = readers.find(id);
      if (found == readers.end()) continue;
      StoredValue value{i, id, found->second, {}};
      for (std::size_t reader : value.readers) {
        if (is_elementwise_consumer(nodes[reader])) value.consumers.push_back(reader);
      }
      if (!value.consumers.empty()) values.push_back(std::move(value));
    }
  }
  return values;
}

// Nodes joined through stored values, in order of their first node; each with its values.
struct Group {
  std::vector<std::size_t> nodes;
  std::vector<const StoredValue*> values;
};

std::vector<Group> groups_of(std::size_t node_count, const std::vector<StoredValue>& values) {
  std::vector<std::size_t> parent(node_count);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto root = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::vector<bool> joined(node_count, false);
  for (const StoredValue& value : values) {
    joined[value.producer] = true;
    for (std::size_t consumer : value.consumers) {
      joined[consumer] = true;
      parent[root(consumer)] = root(value.producer);
    }
  }
  std::vector<Group> groups;
  std::unordered_map<std::size_t, std::size_t> group_of_root;
  for (std::size_t i = 0; i < node_count; ++i) {
    if (!joined[i]) continue;
    const auto [at, added] = group_of_root.try_emplace(root(i), groups.size());
    if (added) groups.emplace_back();
    groups[at->second].nodes.push_back(i);
  }
  for (const StoredValue& value : values) {
    groups[group_of_root.at(root(value.producer))].values.push_back(&value);
  }
  return groups;
}

bool is_function_output(const FunctionRecord& function, std::int64_t id) {
  return std::find(function.output_ids.begin(), function.output_ids.end(), id) !=
         function.output_ids.end();
}

enum class Fusion { Ran, Excluded, Unknown };

// The compile record lists every rewrite that ran; an empty list is a profile recorded without it.
Fusion fusion_of(const FunctionRecord& function) {
  const std::vector<RewriteRecord>& rewrites = function.compile.rewrites;
  if (rewrites.empty()) return Fusion::Unknown;
  const bool ran = std::any_of(rewrites.begin(), rewrites.end(), [](const RewriteRecord& rewrite) {
    return rewrite.name == "fuse_elementwise";
  });
  return ran ? Fusion::Ran : Fusion::Excluded;
}

// Fusion's conditions (fusion_rules.h), checked in turn: the producer can join a loop, its value is
// no output and has one reader, and that reader can hold it. When all hold and fusion ran, what is
// left is the bound on nodes per fused loop (the reader is a full Composite) or the dropped
// Composite whose inferred type differed from the node it replaced.
std::string why_stored(const FunctionRecord& function, const StoredValue& value, Fusion fusion) {
  const NodeRecord& producer = function.nodes[value.producer];
  std::vector<std::string> causes;
  if (producer.fusion_role == "none") causes.push_back(why_not_fusable(producer));
  if (is_function_output(function, value.id)) {
    causes.emplace_back(
        "is an output of the function, and a fused loop returns only its last value");
  }
  if (value.readers.size() > 1) {
    std::vector<std::string> names;
    for (std::size_t reader : value.readers) names.push_back(short_label(function.nodes[reader]));
    const std::size_t others = value.readers.size() - value.consumers.size();
    if (others == 0) {
      causes.push_back(
          fmt::format("is read by {} nodes ({}): fused into each, its {:.3e}s would be "
                      "spent {} times",
                      value.readers.size(), fmt::join(names, ", "), seconds(producer.total_ns),
                      value.readers.size()));
    } else {
      causes.push_back(
          fmt::format("is read by {} nodes ({}), {} of them not elementwise, so it is "
                      "stored anyway",
                      value.readers.size(), fmt::join(names, ", "), others));
    }
  }
  if (causes.empty()) {
    const NodeRecord& consumer = function.nodes[value.consumers.front()];
    if (consumer.fusion_role == "none") {
      causes.push_back(
          fmt::format("feeds {}, which {}", short_label(consumer), why_not_fusable(consumer)));
    } else if (fusion == Fusion::Unknown) {
      causes.push_back(
          fmt::format("feeds {}, and the profile does not record the rewrites that ran",
                      short_label(consumer)));
    } else if (consumer.op_kind == "Composite") {
      causes.push_back(fmt::format("feeds {}, a fused loop already at fusion's bound on nodes",
                                   short_label(consumer)));
    } else {
      causes.push_back(
          fmt::format("feeds {}, and the fused node was dropped because its inferred "
                      "type differed from that node's (a shape mismatch)",
                      short_label(consumer)));
    }
  }
  return fmt::format("{} {}", short_label(producer), fmt::join(causes, " and "));
}

// Fusing saves the value's reads by the nodes that would take it in, and its write when nothing
// else needs it stored; at the measured bandwidth, capped by the cheaper side of the boundary
// (which alone bounds it when no bandwidth was measured).
double gain_seconds(const FunctionRecord& function,
                    const StoredValue& value,
                    double bytes_per_second) {
  const NodeRecord& producer = function.nodes[value.producer];
  std::int64_t consumers_ns = 0;
  for (std::size_t consumer : value.consumers) consumers_ns += function.nodes[consumer].total_ns;
  const double cheaper_side = seconds(std::min(producer.total_ns, consumers_ns));
  if (bytes_per_second <= 0 || producer.output_bytes <= 0) return cheaper_side;
  const bool stored_anyway =
      value.readers.size() > value.consumers.size() || is_function_output(function, value.id);
  const double accesses = static_cast<double>(value.consumers.size()) + (stored_anyway ? 0.0 : 1.0);
  const double traffic_seconds = static_cast<double>(producer.output_bytes) * accesses *
                                 static_cast<double>(producer.call_count) / bytes_per_second;
  return std::min(cheaper_side, traffic_seconds);
}

}  // namespace

void unfused_chain_tips(const FunctionRecord& function,
                        double bytes_per_second,
                        double min_share,
                        std::vector<Tip>& tips) {
  std::int64_t function_ns = 0;
  for (const NodeRecord& node : function.nodes) function_ns += node.total_ns;
  if (function_ns <= 0) return;
  const std::vector<StoredValue> values = stored_values(function);
  const Fusion fusion = fusion_of(function);
  for (const Group& group : groups_of(function.nodes.size(), values)) {
    std::int64_t group_ns = 0;
    for (std::size_t i : group.nodes) group_ns += function.nodes[i].total_ns;
    const double share = static_cast<double>(group_ns) / static_cast<double>(function_ns);
    if (share < min_share) continue;
    std::string why;
    if (fusion == Fusion::Excluded) {
      why = "the fuse_elementwise rewrite was excluded when the function was compiled";
    } else {
      std::vector<std::string> reasons;
      for (std::size_t k = 0; k < group.values.size() && k < kValuesExplained; ++k) {
        reasons.push_back(why_stored(function, *group.values[k], fusion));
      }
      why = fmt::format("fusion stored {} value{} between them: {}", group.values.size(),
                        group.values.size() == 1 ? "" : "s", fmt::join(reasons, "; "));
      if (group.values.size() > kValuesExplained) {
        why += fmt::format("; and {} more", group.values.size() - kValuesExplained);
      }
    }
    double gain = 0;
    for (const StoredValue* value : group.values) {
      gain += gain_seconds(function, *value, bytes_per_second);
    }
    const std::string basis =
        bytes_per_second > 0
            ? fmt::format("the stored values' writes and reads at the measured {:.1f} GB/s",
                          bytes_per_second * 1e-9)
            : std::string("the cheaper side of each boundary");
    tips.push_back(
        {"unfused_chain",
         fmt::format("{} nodes of an elementwise chain, from {} to {}, ran as separate loops, "
                     "{:.1f}% of function '{}' ({:.3e}s); {} (est. gain up to {:.3e}s if fused: "
                     "{}).",
                     group.nodes.size(), sited_label(function.nodes[group.nodes.front()]),
                     short_label(function.nodes[group.nodes.back()]), share * 100.0, function.name,
                     seconds(group_ns), why, gain, basis)});
  }
}

}  // namespace tscope::profile::detail
