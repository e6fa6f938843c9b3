// SPDX-License-Identifier: Apache-2.0
// Minimum-peak search. After running a set S of nodes, the running bytes and which buffers are
// dead, freed or still aliased depend only on S (not on the order within S): that is what makes
// memoising on S exact. The state is stepped forward and undone through a change log, so a
// branch costs only the changes it makes.
#include "tscope/profile/min_peak_search.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <unordered_map>

#include "tscope/profile/memory_model.h"

namespace tscope::profile {
namespace {

// Reading the clock on every expansion would dominate small searches.
constexpr std::int64_t kClockCheckInterval = 64;

// Graph facts in dense indices, fixed for the whole search. Variables are numbered 0..V-1 and
// nodes are indices into function.nodes.
struct Graph {
  std::size_t node_count = 0;
  std::vector<std::int64_t> size_bytes;    // per variable
  std::vector<char> kept;                  // must survive the call
  std::vector<char> is_input;              // graph input, shared value or constant
  std::vector<std::int32_t> root;          // the buffer a variable lives in (itself if it owns one)
  std::vector<std::int32_t> reader_count;  // distinct nodes reading the variable
  std::vector<std::int64_t> allocated_bytes;               // per node: its created outputs
  std::vector<std::vector<std::int32_t>> distinct_inputs;  // per node
  std::vector<std::vector<std::int32_t>> outputs;          // per node
  std::vector<std::vector<std::int32_t>> alias_roots;      // per node: one per aliasing output
  std::vector<std::vector<std::int32_t>> successors;       // per node: nodes that wait for it
  std::vector<std::int32_t> predecessor_count;             // per node
  std::vector<std::size_t> executed;                       // the VM's order
};

// The same aliasing decision as simulate_memory() with inplace respected.
std::int64_t aliased_input_of(const NodeRecord& node, std::size_t k) {
  const std::string code = k < node.output_alias.size() ? node.output_alias[k] : "c";
  const std::int64_t input = k < node.output_alias_input.size() ? node.output_alias_input[k] : -1;
  const bool aliases = (code == "v" || code == "i") && input >= 0 &&
                       static_cast<std::size_t>(input) < node.input_ids.size();
  return aliases ? input : -1;
}

Graph build_graph(const FunctionRecord& function) {
  Graph graph;
  graph.node_count = function.nodes.size();
  std::unordered_map<std::int64_t, std::int32_t> dense;
  auto index_of = [&](std::int64_t id) {
    const auto [it, inserted] = dense.try_emplace(id, static_cast<std::int32_t>(dense.size()));
    if (inserted) {
      graph.size_bytes.push_back(0);
      graph.kept.push_back(0);
      graph.is_input.push_back(0);
      graph.root.push_back(it->second);
      graph.reader_count.push_back(0);
    }
    return it->second;
  };
  for (std::int64_t id : function.input_ids) graph.is_input[index_of(id)] = 1;
  for (std::int64_t id : function.output_ids) graph.kept[index_of(id)] = 1;

  const std::size_t n = graph.node_count;
  graph.executed = executed_order(function);
  std::vector<std::size_t> position(n);
  for (std::size_t i = 0; i < n; ++i) position[graph.executed[i]] = i;
  graph.allocated_bytes.assign(n, 0);
  graph.distinct_inputs.resize(n);
  graph.outputs.resize(n);
  graph.alias_roots.resize(n);
  std::unordered_map<std::int32_t, std::size_t> producer;
  for (std::size_t i = 0; i < n; ++i) {
    const NodeRecord& node = function.nodes[i];
    for (std::size_t k = 0; k < node.output_ids.size(); ++k) {
      const std::int32_t v = index_of(node.output_ids[k]);
      graph.size_bytes[v] = k < node.outputs.size() ? tensor_bytes(node.outputs[k]) : 0;
      graph.outputs[i].push_back(v);
      producer[v] = i;
    }
    const std::set<std::int64_t> distinct(node.input_ids.begin(), node.input_ids.end());
    for (std::int64_t id : distinct) {
      const std::int32_t v = index_of(id);
      graph.distinct_inputs[i].push_back(v);
      ++graph.reader_count[v];
    }
  }
  // Roots in executed order, which is topological: an input's root is known before its readers.
  for (std::size_t i : graph.executed) {
    const NodeRecord& node = function.nodes[i];
    for (std::size_t k = 0; k < node.output_ids.size(); ++k) {
      const std::int32_t v = graph.outputs[i][k];
      const std::int64_t input = aliased_input_of(node, k);
      if (input < 0) {
        graph.allocated_bytes[i] += graph.size_bytes[v];
        continue;
      }
      const std::int32_t source = index_of(node.input_ids[static_cast<std::size_t>(input)]);
      graph.root[v] = graph.root[source];
      graph.alias_roots[i].push_back(graph.root[v]);
    }
  }

  std::vector<std::set<std::size_t>> predecessors(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::int32_t v : graph.distinct_inputs[i]) {
      const auto it = producer.find(v);
      if (it != producer.end() && it->second != i) predecessors[i].insert(it->second);
    }
  }
  // An in-place node overwrites its input's buffer: whoever read that buffer before it in the
  // executed order (the VM's order, valid by construction) must still run before it.
  for (std::size_t i = 0; i < n; ++i) {
    const NodeRecord& node = function.nodes[i];
    for (std::size_t k = 0; k < node.output_ids.size(); ++k) {
      const std::string code = k < node.output_alias.size() ? node.output_alias[k] : "c";
      const std::int64_t input = aliased_input_of(node, k);
      if (code != "i" || input < 0) continue;
      const std::int32_t buffer =
          graph.root[index_of(node.input_ids[static_cast<std::size_t>(input)])];
      for (std::size_t reader = 0; reader < n; ++reader) {
        if (reader == i || position[reader] > position[i]) continue;
        for (std::int32_t v : graph.distinct_inputs[reader]) {
          if (graph.root[v] == buffer) predecessors[i].insert(reader);
        }
      }
    }
  }
  graph.successors.resize(n);
  graph.predecessor_count.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    graph.predecessor_count[i] = static_cast<std::int32_t>(predecessors[i].size());
    for (std::size_t p : predecessors[i])
      graph.successors[p].push_back(static_cast<std::int32_t>(i));
  }
  return graph;
}

struct BitsetHash {
  std::size_t operator()(const std::vector<std::uint64_t>& bits) const noexcept {
    std::uint64_t hash = 1469598103934665603ULL;
    for (std::uint64_t word : bits) hash = (hash ^ word) * 1099511628211ULL;
    return static_cast<std::size_t>(hash);
  }
};

// The simulation state of simulate_memory(), steppable one node at a time and undoable.
class MemoryState {
 public:
  explicit MemoryState(const Graph& graph)
      : graph_(graph),
        pending_(graph.reader_count),
        live_aliases_(graph.size_bytes.size(), 0),
        dead_(graph.size_bytes.size(), 0),
        freed_(graph.size_bytes.size(), 0),
        missing_(graph.predecessor_count) {}

  struct Mark {
    std::size_t log_size;
    std::int64_t running_bytes;
  };
  [[nodiscard]] Mark mark() const { return {log_.size(), running_bytes_}; }
  void undo(const Mark& mark) {
    while (log_.size() > mark.log_size) {
      *log_.back().slot = log_.back().previous;
      log_.pop_back();
    }
    running_bytes_ = mark.running_bytes;
  }

  /// Runs `node`; returns the running bytes after its outputs are allocated, before any free.
  std::int64_t step(std::size_t node) {
    running_bytes_ += graph_.allocated_bytes[node];
    const std::int64_t peak = running_bytes_;
    for (std::int32_t root : graph_.alias_roots[node])
      set(live_aliases_[root], live_aliases_[root] + 1);
    for (std::int32_t v : graph_.distinct_inputs[node]) {
      set(pending_[v], pending_[v] - 1);
      if (pending_[v] == 0) release(v);
    }
    // Outputs nobody reads die with their node.
    for (std::int32_t v : graph_.outputs[node]) {
      if (pending_[v] == 0) release(v);
    }
    for (std::int32_t next : graph_.successors[node]) set(missing_[next], missing_[next] - 1);
    return peak;
  }

  [[nodiscard]] bool is_ready(std::int32_t node) const { return missing_[node] == 0; }
  [[nodiscard]] std::int64_t running_bytes() const { return running_bytes_; }

 private:
  struct Change {
    std::int32_t* slot;
    std::int32_t previous;
  };
  void set(std::int32_t& slot, std::int32_t value) {
    log_.push_back({&slot, slot});
    slot = value;
  }
  void release(std::int32_t v) {
    if (graph_.kept[v] != 0) return;  // a kept alias keeps its buffer alive through live_aliases
    const std::int32_t root = graph_.root[v];
    if (root != v) set(live_aliases_[root], live_aliases_[root] - 1);
    set(dead_[v], 1);
    try_free(root);
  }
  void try_free(std::int32_t root) {
    if (dead_[root] == 0 || live_aliases_[root] > 0 || graph_.kept[root] != 0 ||
        graph_.is_input[root] != 0 || freed_[root] != 0) {
      return;
    }
    set(freed_[root], 1);
    running_bytes_ -= graph_.size_bytes[root];
  }

  const Graph& graph_;
  std::vector<std::int32_t> pending_, live_aliases_, dead_, freed_, missing_;
  std::vector<Change> log_;
  std::int64_t running_bytes_ = 0;
};

std::vector<std::int32_t> initial_ready(const Graph& graph) {
  std::vector<std::int32_t> ready;
  for (std::size_t i : graph.executed) {
    if (graph.predecessor_count[i] == 0) ready.push_back(static_cast<std::int32_t>(i));
  }
  return ready;
}

// `ready` without `chosen`, plus the nodes `chosen` was the last predecessor of.
std::vector<std::int32_t> next_ready(const Graph& graph,
                                     const MemoryState& state,
                                     const std::vector<std::int32_t>& ready,
                                     std::int32_t chosen) {
  std::vector<std::int32_t> next;
  next.reserve(ready.size() + graph.successors[static_cast<std::size_t>(chosen)].size());
  for (std::int32_t node : ready) {
    if (node != chosen) next.push_back(node);
  }
  for (std::int32_t node : graph.successors[static_cast<std::size_t>(chosen)]) {
    if (state.is_ready(node)) next.push_back(node);
  }
  return next;
}

// Repeatedly runs the ready node with the lowest step peak (then lowest bytes left running, then
// earliest executed position). Empty when the constraints leave no complete order.
std::vector<std::size_t> greedy_order(const Graph& graph) {
  MemoryState state(graph);
  std::vector<std::size_t> position(graph.node_count);
  for (std::size_t i = 0; i < graph.node_count; ++i) position[graph.executed[i]] = i;
  std::vector<std::int32_t> ready = initial_ready(graph);
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    std::int32_t best = ready.front();
    std::int64_t best_peak = std::numeric_limits<std::int64_t>::max();
    std::int64_t best_after = best_peak;
    for (std::int32_t node : ready) {
      const MemoryState::Mark mark = state.mark();
      const std::int64_t peak = state.step(static_cast<std::size_t>(node));
      const std::int64_t after = state.running_bytes();
      state.undo(mark);
      const auto key = std::tuple(peak, after, position[static_cast<std::size_t>(node)]);
      if (key < std::tuple(best_peak, best_after, position[static_cast<std::size_t>(best)])) {
        best = node, best_peak = peak, best_after = after;
      }
    }
    state.step(static_cast<std::size_t>(best));
    order.push_back(static_cast<std::size_t>(best));
    ready = next_ready(graph, state, ready, best);
  }
  if (order.size() != graph.node_count) order.clear();
  return order;
}

// The most bytes some node needs live at once (the buffers behind its inputs plus its created
// outputs), and the bytes still live when every node has run: no order can go below either.
std::int64_t peak_lower_bound(const Graph& graph) {
  std::int64_t bound = 0;
  for (std::size_t node = 0; node < graph.node_count; ++node) {
    std::set<std::int32_t> buffers;
    for (std::int32_t v : graph.distinct_inputs[node]) {
      if (graph.is_input[graph.root[v]] == 0) buffers.insert(graph.root[v]);
    }
    std::int64_t live_bytes = graph.allocated_bytes[node];
    for (std::int32_t buffer : buffers) live_bytes += graph.size_bytes[buffer];
    bound = std::max(bound, live_bytes);
  }
  MemoryState state(graph);
  for (std::size_t node : graph.executed) (void)state.step(node);
  return std::max(bound, state.running_bytes());
}

// Depth-first branch and bound: only paths whose peak stays strictly below the best complete
// order found so far are followed; a set of executed nodes reached before with a path peak no
// higher is not expanded again.
class ExactSearch {
 public:
  ExactSearch(const Graph& graph,
              const MinPeakOptions& options,
              Clock& clock,
              std::int64_t deadline_ns,
              std::int64_t best_bytes,
              std::int64_t lower_bound_bytes)
      : graph_(graph),
        options_(options),
        clock_(clock),
        deadline_ns_(deadline_ns),
        state_(graph),
        done_((graph.node_count + 63) / 64, 0),
        best_bytes_(best_bytes),
        lower_bound_bytes_(lower_bound_bytes) {}

  /// False when the time budget ran out before the search finished.
  bool run() {
    std::vector<std::int32_t> ready = initial_ready(graph_);
    expand(ready, 0);
    return !out_of_time_;
  }
  [[nodiscard]] std::int64_t best_bytes() const { return best_bytes_; }
  /// Empty unless the search found an order better than the starting bound.
  [[nodiscard]] const std::vector<std::size_t>& best_order() const { return best_order_; }

 private:
  void expand(const std::vector<std::int32_t>& ready, std::int64_t path_peak) {
    if (expansions_++ % kClockCheckInterval == 0 && clock_.now_ns() >= deadline_ns_) {
      out_of_time_ = true;
    }
    if (out_of_time_) return;
    if (expand_forced_move(ready, path_peak)) return;
    if (path_.size() == graph_.node_count) {
      if (path_peak < best_bytes_) best_bytes_ = path_peak, best_order_ = path_;
      return;
    }
    const auto [it, inserted] = memo_.try_emplace(done_, path_peak);
    if (!inserted) {
      if (it->second <= path_peak) return;
      it->second = path_peak;
    } else if (memo_.size() > options_.max_memo_states) {
      memo_.erase(it);  // full: keep searching, with fewer prunes
    }
    for (std::int32_t node : ready) {
      const MemoryState::Mark mark = state_.mark();
      const std::int64_t peak = std::max(path_peak, state_.step(static_cast<std::size_t>(node)));
      if (peak < best_bytes_) descend(ready, node, peak);
      state_.undo(mark);
      if (out_of_time_ || best_bytes_ <= lower_bound_bytes_) return;
    }
  }

  // A ready node that neither raises the path peak nor leaves more bytes running than before can
  // run now without losing optimality: moved earlier, its outputs appear sooner but the buffers it
  // frees (at least as many bytes) go sooner too, so no later step grows. No branching needed.
  bool expand_forced_move(const std::vector<std::int32_t>& ready, std::int64_t path_peak) {
    for (std::int32_t node : ready) {
      const MemoryState::Mark mark = state_.mark();
      const std::int64_t peak = state_.step(static_cast<std::size_t>(node));
      if (peak <= path_peak && state_.running_bytes() <= mark.running_bytes) {
        descend(ready, node, path_peak);
        state_.undo(mark);
        return true;
      }
      state_.undo(mark);
    }
    return false;
  }

  // Continues the path with `node`, already stepped.
  void descend(const std::vector<std::int32_t>& ready, std::int32_t node, std::int64_t peak) {
    const auto word = static_cast<std::size_t>(node) / 64;
    const std::uint64_t bit = std::uint64_t{1} << (static_cast<std::size_t>(node) % 64);
    done_[word] |= bit;
    path_.push_back(static_cast<std::size_t>(node));
    expand(next_ready(graph_, state_, ready, node), peak);
    path_.pop_back();
    done_[word] &= ~bit;
  }

  const Graph& graph_;
  const MinPeakOptions& options_;
  Clock& clock_;
  std::int64_t deadline_ns_;
  MemoryState state_;
  std::vector<std::uint64_t> done_;
  std::vector<std::size_t> path_;
  std::unordered_map<std::vector<std::uint64_t>, std::int64_t, BitsetHash> memo_;
  std::int64_t best_bytes_;
  std::int64_t lower_bound_bytes_;
  std::vector<std::size_t> best_order_;
  std::int64_t expansions_ = 0;
  bool out_of_time_ = false;
};

}  // namespace

MinPeakResult search_min_peak(const FunctionRecord& function,
                              const MinPeakOptions& options,
                              std::int64_t budget_ns) {
  Clock& clock = options.clock != nullptr ? *options.clock : steady_clock();
  const std::int64_t start_ns = clock.now_ns();
  const Graph graph = build_graph(function);
  MinPeakResult result;
  MinPeakRecord& record = result.record;
  record.searched = true;

  // Starting upper bound: the better of the executed order and the greedy order (both valid).
  result.order = graph.executed;
  record.peak_bytes = simulate_memory(function, graph.executed, true).peak_bytes;
  const std::vector<std::size_t> greedy = greedy_order(graph);
  if (!greedy.empty()) {
    const std::int64_t greedy_bytes = simulate_memory(function, greedy, true).peak_bytes;
    if (greedy_bytes < record.peak_bytes) record.peak_bytes = greedy_bytes, result.order = greedy;
  }
  record.lower_bound_bytes = std::min(peak_lower_bound(graph), record.peak_bytes);

  if (record.lower_bound_bytes == record.peak_bytes) {
    record.exact = true;  // the bound is reached: nothing to search
  } else if (graph.node_count > options.max_exact_nodes) {
    record.stop_reason = std::to_string(graph.node_count) + " nodes, over the exact search's " +
                         std::to_string(options.max_exact_nodes);
  } else {
    ExactSearch search(graph, options, clock, start_ns + std::max<std::int64_t>(budget_ns, 0),
                       record.peak_bytes, record.lower_bound_bytes);
    record.exact = search.run();
    if (!search.best_order().empty()) {
      record.peak_bytes = search.best_bytes();
      result.order = search.best_order();
    }
    if (record.exact) {
      record.lower_bound_bytes = record.peak_bytes;
    } else {
      record.stop_reason = "time budget used up";
    }
  }
  record.search_ns = clock.now_ns() - start_ns;
  return result;
}

void add_min_peaks(Profile& profile, const MinPeakOptions& options) {
  Clock& clock = options.clock != nullptr ? *options.clock : steady_clock();
  const std::int64_t start_ns = clock.now_ns();
  for (FunctionRecord& function : profile.functions) {
    const std::int64_t left_ns = options.time_budget_ns - (clock.now_ns() - start_ns);
    function.min_peak = search_min_peak(function, options, left_ns).record;
  }
}

}  // namespace tscope::profile
