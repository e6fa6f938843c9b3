// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The Profile model: plain, serialisable data with units in every field name. Recording (the VM)
/// fills it; renderers (report_text.h, ...) read it. Nothing here formats or measures.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tscope::profile {

inline constexpr int kProfileSchemaVersion = 1;

/// dtype/shape/strides of one input or output of a node at its last call.
struct TensorRecord {
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides_bytes;
  bool contiguous = true;
};

struct NodeRecord {
  std::int64_t topo_index = 0;  ///< position in the function's topological order
  std::string apply_name;       ///< "Elemwise{add,no_inplace}(x, b)"
  std::string op_name;          ///< "Elemwise{add,no_inplace}"
  std::string class_name;       ///< "Elemwise"
  std::string impl;             ///< kernel implementation that ran: "blas", "cpu", "ref", ...
  std::int64_t call_count = 0;
  std::int64_t total_ns = 0;
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double flops_per_call = -1;  ///< negative: the op has no cost rule
  std::vector<TensorRecord> inputs;
  std::vector<TensorRecord> outputs;
  std::int64_t output_bytes = 0;           ///< bytes of all outputs at the last call
  std::vector<std::string> output_alias;   ///< per output: "c" created, "i" inplace, "v" view
  std::string source_site;                 ///< "mlp.cpp:42"
  std::string user_op;                     ///< "softmax", "grad(dot)"
};

struct PrepareRecord {
  std::string apply_name;
  std::int64_t duration_ns = 0;
};

struct CompileRecord {
  std::int64_t total_ns = 0;
  std::int64_t rewrite_ns = 0;
  std::int64_t validate_ns = 0;  ///< part of rewrite_ns
  std::int64_t link_ns = 0;
  std::int64_t node_prepare_ns = 0;  ///< part of link_ns
  std::vector<PrepareRecord> slowest_prepares;  ///< at most 5, slowest first
  std::int64_t node_count = 0;
};

struct FunctionRecord {
  std::string name;  ///< the report's "Message"
  std::int64_t call_count = 0;
  std::int64_t call_ns = 0;  ///< whole Function call (validation, VM, updates)
  std::int64_t vm_ns = 0;    ///< the VM loop alone
  CompileRecord compile;
  std::vector<NodeRecord> nodes;
  std::int64_t measured_peak_bytes = 0;  ///< allocator high-water mark during calls
};

struct Profile {
  int schema_version = kProfileSchemaVersion;
  std::string title;  ///< empty for a single function; "Sum of all(N) ..." for sums
  std::vector<FunctionRecord> functions;
  std::int64_t grad_ns = 0;
  std::int64_t since_load_ns = 0;
  std::string blas;  ///< BLAS library and threading
  double overhead_ns_per_node = -1;  ///< the profiler's own measured cost; negative: unknown

  /// Sum of node times over all functions.
  [[nodiscard]] std::int64_t kernel_ns() const;
};

}  // namespace tscope::profile
