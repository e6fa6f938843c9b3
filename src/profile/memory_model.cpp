// SPDX-License-Identifier: Apache-2.0
#include "tscope/profile/memory_model.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tscope::profile {
namespace {

struct DtypeBytes {
  std::string_view dtype;
  std::int64_t bytes;
};
// Constant data: the memory section is rendered by the exit-time writer (see tips.cpp).
constexpr std::array<DtypeBytes, 15> kDtypeBytes = {{
    {"bool", 1},    {"int8", 1},     {"uint8", 1},   {"int16", 2},     {"uint16", 2},
    {"float16", 2}, {"bfloat16", 2}, {"int32", 4},   {"uint32", 4},    {"float32", 4},
    {"int64", 8},   {"uint64", 8},   {"float64", 8}, {"complex64", 8}, {"complex128", 16}}};

std::int64_t dtype_bytes(std::string_view dtype) {
  for (const DtypeBytes& known : kDtypeBytes) {
    if (known.dtype == dtype) return known.bytes;
  }
  return 0;
}

}  // namespace

std::int64_t tensor_bytes(const TensorRecord& tensor) {
  std::int64_t count = 1;
  for (std::int64_t extent : tensor.shape) count *= extent;
  return count * dtype_bytes(tensor.dtype);
}

std::vector<std::size_t> executed_order(const FunctionRecord& function) {
  std::vector<std::size_t> order(function.nodes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return function.nodes[a].topo_index < function.nodes[b].topo_index;
  });
  return order;
}

std::vector<std::size_t> topological_order(const FunctionRecord& function) {
  std::unordered_map<std::int64_t, std::size_t> producer;
  for (std::size_t i = 0; i < function.nodes.size(); ++i) {
    for (std::int64_t id : function.nodes[i].output_ids) producer[id] = i;
  }
  std::vector<int> missing(function.nodes.size(), 0);
  std::vector<std::vector<std::size_t>> consumers(function.nodes.size());
  for (std::size_t i = 0; i < function.nodes.size(); ++i) {
    std::set<std::size_t> producers;
    for (std::int64_t id : function.nodes[i].input_ids) {
      const auto it = producer.find(id);
      if (it != producer.end() && it->second != i) producers.insert(it->second);
    }
    missing[i] = static_cast<int>(producers.size());
    for (std::size_t p : producers) consumers[p].push_back(i);
  }
  std::deque<std::size_t> ready;
  for (std::size_t i : executed_order(function)) {
    if (missing[i] == 0) ready.push_back(i);
  }
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t node = ready.front();
    ready.pop_front();
    order.push_back(node);
    for (std::size_t consumer : consumers[node]) {
      if (--missing[consumer] == 0) ready.push_back(consumer);
    }
  }
  return order;
}

MemoryRun simulate_memory(const FunctionRecord& function,
                          const std::vector<std::size_t>& order,
                          bool respect_inplace) {
  std::unordered_map<std::int64_t, std::int64_t> size;
  std::unordered_map<std::int64_t, int> pending_readers;
  for (const NodeRecord& node : function.nodes) {
    for (std::size_t k = 0; k < node.output_ids.size(); ++k) {
      size[node.output_ids[k]] = k < node.outputs.size() ? tensor_bytes(node.outputs[k]) : 0;
    }
    const std::set<std::int64_t> distinct(node.input_ids.begin(), node.input_ids.end());
    for (std::int64_t id : distinct) ++pending_readers[id];
  }
  const std::unordered_set<std::int64_t> inputs(function.input_ids.begin(),
                                                function.input_ids.end());
  const std::unordered_set<std::int64_t> kept(function.output_ids.begin(),
                                              function.output_ids.end());
  std::unordered_map<std::int64_t, std::int64_t> origin;
  std::unordered_map<std::int64_t, int> live_aliases;
  std::unordered_set<std::int64_t> dead, freed;
  auto origin_of = [&](std::int64_t id) {
    const auto it = origin.find(id);
    return it == origin.end() ? id : it->second;
  };

  MemoryRun run;
  std::int64_t running = 0;
  auto try_free = [&](std::int64_t id) {
    if (dead.count(id) == 0 || live_aliases[id] > 0 || kept.count(id) != 0 ||
        inputs.count(id) != 0 || freed.count(id) != 0) {
      return;
    }
    freed.insert(id);
    running -= size[id];
  };
  auto release = [&](std::int64_t id) {
    if (kept.count(id) != 0) return;  // an output keeps its origin alive through live_aliases
    const std::int64_t root = origin_of(id);
    if (root != id) --live_aliases[root];
    dead.insert(id);
    try_free(root);
  };

  for (std::size_t index : order) {
    const NodeRecord& node = function.nodes[index];
    for (std::size_t k = 0; k < node.output_ids.size(); ++k) {
      const std::int64_t id = node.output_ids[k];
      const std::string code = k < node.output_alias.size() ? node.output_alias[k] : "c";
      const std::int64_t aliased_input =
          k < node.output_alias_input.size() ? node.output_alias_input[k] : -1;
      if (code == "i" && respect_inplace) run.saved_by_inplace_bytes += size[id];
      if (code == "v") run.saved_by_view_bytes += size[id];
      const bool aliases = (code == "v" || (code == "i" && respect_inplace)) &&
                           aliased_input >= 0 &&
                           static_cast<std::size_t>(aliased_input) < node.input_ids.size();
      if (aliases) {
        const std::int64_t root =
            origin_of(node.input_ids[static_cast<std::size_t>(aliased_input)]);
        origin[id] = root;
        ++live_aliases[root];
      } else {
        running += size[id];
        run.total_allocated_bytes += size[id];
      }
    }
    run.peak_bytes = std::max(run.peak_bytes, running);
    run.step_bytes.push_back(running);
    const std::set<std::int64_t> distinct(node.input_ids.begin(), node.input_ids.end());
    for (std::int64_t id : distinct) {
      if (--pending_readers[id] == 0) release(id);
    }
    // Outputs nobody reads (unused extra outputs) die with their node.
    for (std::int64_t id : node.output_ids) {
      if (pending_readers[id] == 0) release(id);
    }
  }
  return run;
}

}  // namespace tscope::profile
