// SPDX-License-Identifier: Apache-2.0
#pragma once
/// The Profile model: plain, serialisable data with units in every field name. Recording (the VM)
/// fills it; renderers (report_text.h, ...) read it. Nothing here formats or measures.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#pragma GCC visibility push(default)

namespace tscope::profile {

inline constexpr int kProfileSchemaVersion = 1;

/// dtype/shape/strides of one input or output of a node at its last call.
struct TensorRecord {
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides_bytes;
  bool contiguous = true;
};

/// One distinct signature (dtypes, shapes and strides of the inputs) a node was called with.
struct SignatureRecord {
  std::vector<TensorRecord> inputs;
  std::vector<TensorRecord> outputs;  ///< as produced by the first call with this signature
  std::int64_t call_count = 0;        ///< every call, including one dropped by ignore_first_call
  std::int64_t timed_call_count = 0;  ///< the calls counted in the node's timings
  std::int64_t total_ns = 0;          ///< time of those calls
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
  /// A record merged from repeated runs (merge_repeated_runs): each run's slowest call summed,
  /// and how many runs those are. 0 for one run, whose slowest call is max_ns. A comparison
  /// leaves these calls (each run's first, as a rule) out of a row's warm mean.
  std::int64_t run_slowest_ns = 0;
  std::int64_t run_count = 0;
  double flops_per_call = -1;  ///< negative: the op has no cost rule
  double bytes_per_call = -1;  ///< memory the cost rule says a call moves; negative: no cost rule
  std::vector<TensorRecord> inputs;
  std::vector<TensorRecord> outputs;
  std::int64_t output_bytes = 0;          ///< bytes of all outputs at the last call
  std::vector<std::string> output_alias;  ///< per output: "c" created, "i" inplace, "v" view
  /// Per output: index of the input it views or overwrites, -1 when freshly created.
  std::vector<std::int64_t> output_alias_input;
  std::string source_site;  ///< "mlp.cpp:42"
  std::string user_op;      ///< "softmax", "grad(dot)"
  std::string op_kind;      ///< registry name of the op: "Exp", "Dot"
  bool elementwise = false;
  bool fast_impl_available = false;  ///< the op has a fast kernel (even if `impl` is not it)
  /// What elementwise fusion can do with the node (rewrite/fusion_role.h): "elementwise" (a step
  /// of a fused loop, or a Composite), "reduction" (a Sum or Max a fused loop can end with, or a
  /// Composite ending with one), "none"; empty in profiles written before the field existed.
  std::string fusion_role;
  /// Inputs a BLAS kernel copied to a contiguous buffer because their strides fit no BLAS layout,
  /// over the timed calls: number of copies and bytes copied.
  std::int64_t copied_input_count = 0;
  std::int64_t copied_input_bytes = 0;
  /// Variables (ids local to the function) read and written by the node: the graph structure
  /// the memory simulation and the tips need.
  std::vector<std::int64_t> input_ids;
  std::vector<std::int64_t> output_ids;
  /// Distinct input signatures seen, in first-seen order (inputs/outputs above: the last call's).
  std::vector<SignatureRecord> signatures;
};

struct PrepareRecord {
  std::string apply_name;
  std::int64_t duration_ns = 0;
};

/// One rewrite of the pipeline as it ran when the function was compiled (profile_optimizer).
struct RewriteRecord {
  std::string name;  ///< "merge_duplicate_nodes", "use_blas_products", ...
  std::int64_t duration_ns = 0;
  std::int64_t applied_count = 0;  ///< changes it made: nodes merged or replaced
  std::int64_t attempts = 0;       ///< nodes it looked at
  std::int64_t nodes_created = 0;  ///< nodes that joined the graph through its changes
  std::int64_t nodes_removed = 0;  ///< nodes that left it
};

struct CompileRecord {
  std::int64_t total_ns = 0;
  std::int64_t rewrite_ns = 0;
  std::int64_t validate_ns = 0;  ///< part of rewrite_ns
  std::int64_t link_ns = 0;
  std::int64_t node_prepare_ns = 0;             ///< part of link_ns
  std::vector<PrepareRecord> slowest_prepares;  ///< at most 5, slowest first
  std::int64_t node_count = 0;
  std::vector<RewriteRecord> rewrites;  ///< in pipeline order; validate_ns covers them all
  std::int64_t nodes_before_rewrite = 0;
  std::int64_t nodes_after_rewrite = 0;
};

/// Minimum of the simulated peak (memory_model.h) over every valid node order, searched when
/// profiling.min_peak_memory is on (min_peak_search.h).
struct MinPeakRecord {
  bool searched = false;               ///< false: no search ran (the flag was off)
  bool exact = false;                  ///< the search finished: peak_bytes is the minimum
  std::int64_t peak_bytes = 0;         ///< the minimum, or the best valid order found (upper bound)
  std::int64_t lower_bound_bytes = 0;  ///< no order can do better; equals peak_bytes when exact
  std::int64_t search_ns = 0;          ///< time the search took
  std::string stop_reason;             ///< when not exact: why the exact search stopped
};

struct LoopRecord;

struct FunctionRecord {
  std::string name;  ///< the report's "Message"
  std::int64_t call_count = 0;
  std::int64_t call_ns = 0;  ///< whole Function call (validation, VM, updates)
  std::int64_t vm_ns = 0;    ///< the VM loop alone
  CompileRecord compile;
  std::vector<NodeRecord> nodes;
  std::int64_t measured_peak_bytes = 0;  ///< allocator high-water mark during calls, above the
                                         ///< bytes live when the call started
  std::int64_t input_bytes = 0;          ///< graph inputs and shared values at the last call
  /// Variables available before the first node runs (inputs, shared variables, constants).
  std::vector<std::int64_t> input_ids;
  /// Variables that must survive the call (outputs and update values).
  std::vector<std::int64_t> output_ids;
  bool allow_gc = true;
  std::string clock;          ///< time source of node timings: "rdtsc", "steady_clock", "injected"
  double clock_read_ns = -1;  ///< measured cost of one read; negative: not measured
  double overhead_ns_per_node = -1;  ///< measured profiler cost; negative: not measured
  double roof_bytes_per_second = -1;  ///< machine_roof.h; negative: not measured
  double roof_flops_per_second = -1;
  MinPeakRecord min_peak;
  /// One record per loop node (Scan) of this function, in node order, each holding its body's
  /// record, whose own loops nest in turn.
  std::vector<LoopRecord> loops;
};

/// The profile of one loop node: its steps, the time of its body (a FunctionRecord, whose
/// call_count counts steps) and the work the op does around the body, split by kind. Timings
/// honour ignore_first_call as the enclosing function's do.
struct LoopRecord {
  std::int64_t topo_index = 0;  ///< the loop node's position in the enclosing function
  std::string name;             ///< "scan_fn", "grad_of_scan_fn"
  std::string apply_name;       ///< the loop node's Apply row
  std::int64_t call_count = 0;  ///< timed executions of the loop node
  std::int64_t step_count = 0;  ///< body runs over those executions
  std::int64_t call_ns = 0;     ///< whole executions: the steps and the work around them
  std::int64_t vm_ns = 0;       ///< the body's VM runs, summed over steps
  std::int64_t bind_ns = 0;     ///< slicing sequences and binding the body's inputs
  std::int64_t store_ns = 0;    ///< copying the body's outputs into the stacked outputs
  std::int64_t setup_ns = 0;    ///< per execution: checks, output stacks, initial states
  /// Step times (bind, VM and store of one step): the first step of each execution apart, then
  /// min / median / max over the other steps (median to within 10%).
  std::int64_t first_step_ns = 0;
  std::int64_t step_min_ns = 0;
  std::int64_t step_median_ns = 0;
  std::int64_t step_max_ns = 0;
  /// Body nodes (topo indices) that read only non-sequences and constants: the same result at
  /// every step (left in the loop when the rewrite hoist_loop_invariants did not run).
  std::vector<std::int64_t> invariant_nodes;
  FunctionRecord body;  ///< name = the loop's name; call_count = step_count
};

/// One zone call site (zones.h), resolved to names when the profile was snapshotted.
struct ZoneSiteRecord {
  std::string name;      ///< "voxelize"; the function's name for TSCOPE_FUNCTION
  std::string function;  ///< the enclosing function
  std::string file;      ///< as the compiler spelled __FILE__; empty for graph functions
  std::int64_t line = 0;
  std::string kind;  ///< "zone", "value" or "function" (a graph Function call)
};

/// One node of a thread's zone call tree: a site reached through one chain of callers.
struct ZoneNodeRecord {
  std::int64_t site = 0;     ///< index into HostRecord::sites
  std::int64_t parent = -1;  ///< index into the thread's nodes; -1: a root (no enclosing zone)
  std::int64_t call_count = 0;
  std::int64_t total_ns = 0;  ///< entry to exit, children included
  std::int64_t self_ns = 0;   ///< total_ns less the children's total_ns
};

/// The numbers recorded at one value site (TSCOPE_ZONE_VALUE) by one thread.
struct ZoneValueRecord {
  std::int64_t site = 0;  ///< index into HostRecord::sites
  std::int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
};

/// The zones of one thread. Only closed zones are counted: a zone still open when the profile was
/// snapshotted has no call yet, though its finished children do.
struct ZoneThreadRecord {
  std::int64_t thread_index = 0;  ///< order in which threads first recorded (0 = first)
  std::int64_t os_thread_id = 0;  ///< the kernel's thread id (gettid)
  std::string name;               ///< set_zone_thread_name(), or empty
  bool exited = false;            ///< the thread had ended; its data was kept
  std::vector<ZoneNodeRecord> nodes;  ///< parents come before their children
  std::vector<ZoneValueRecord> values;
  std::int64_t process = 0;  ///< index into HostRecord::processes (when it has any)
};

/// Flat figures of one site over a call tree, in cProfile's terms.
struct ZoneTotals {
  std::int64_t site = 0;
  std::int64_t call_count = 0;
  std::int64_t self_ns = 0;        ///< cProfile's tottime
  std::int64_t cumulative_ns = 0;  ///< cProfile's cumtime: recursive re-entries counted once
};

/// One training step, from one mark_step() (or the epoch's start) to the next (steps.h).
struct StepRecord {
  std::int64_t epoch = 0;
  std::int64_t start_ns = 0;  ///< on the zone clock
  std::int64_t duration_ns = 0;
  std::int64_t input_wait_ns = 0;  ///< time in input-wait zones of the marking thread
  std::int64_t examples = 0;       ///< as passed to mark_step; 0: not given
};

/// One epoch (mark_epoch): its steps and the zones that closed while it ran.
struct EpochRecord {
  std::int64_t epoch = 0;
  std::int64_t first_step = 0;  ///< index into HostRecord::steps
  std::int64_t step_count = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;        ///< the last step's end, or the snapshot for an open epoch
  std::vector<ZoneTotals> zones;  ///< merged over threads; site indices into HostRecord::sites
};

/// One worker of a data source: a thread or a process that produced batches.
struct DataWorkerRecord {
  std::string label;       ///< "worker 0"
  std::int64_t os_id = 0;  ///< thread id or process id
  std::int64_t batches = 0;
  std::int64_t busy_ns = 0;      ///< producing batches
  std::int64_t lifetime_ns = 0;  ///< from start to stop (or to the snapshot)
};

/// A producer of input batches and its consumer's view of it (tscope::data::Loader, or any
/// producer reporting through data_source_stats.h).
struct DataSourceRecord {
  std::string name;
  std::string worker_kind;  ///< "thread", "process" or "inline" (no workers)
  std::int64_t queue_capacity = 0;
  std::vector<DataWorkerRecord> workers;
  std::int64_t batches_taken = 0;  ///< by the consumer
  std::int64_t wait_ns = 0;        ///< the consumer's total wait for a batch
  /// occupancy[k]: how many takes found k batches ready (k = 0 .. queue_capacity).
  std::vector<std::int64_t> occupancy;
};

/// One process whose zones a profile holds (worker_processes.h): the process that wrote the
/// profile, or a worker process (forked, or a program using tscope started by exec) with or
/// without a shard. Times are on the zone clock of the profile's main process.
struct ProcessRecord {
  std::int64_t pid = 0;
  std::int64_t parent_pid = 0;
  std::string label;  ///< "main", "fork" or "exec": how it became a worker
  /// "main" (wrote the profile), "worker" (a shard not merged yet), "merged" (its shard is in),
  /// "missing" (started, no shard, no longer alive), "running" (no shard yet, still alive).
  std::string state;
  std::int64_t start_ns = 0;  ///< when it became a worker (main: when profiling started)
  std::int64_t end_ns = 0;    ///< when its shard or profile was written; 0: not written
  /// CLOCK_MONOTONIC, which every process on the machine shares, read together with start_ns and
  /// end_ns: what aligns the zone clocks of different processes.
  std::int64_t start_monotonic_ns = 0;
  std::int64_t end_monotonic_ns = 0;
  /// Bound on the error of start_ns and end_ns against the main process's clock; -1: unknown.
  std::int64_t clock_error_ns = -1;
  std::int64_t busy_ns = 0;  ///< its threads' top-level zone time, added up
};

/// Host-code zones of one process: per-thread call trees over shared sites. The merged view and
/// the per-zone totals are computed from these (merge_zone_threads, zone_totals).
struct HostRecord {
  std::vector<ZoneSiteRecord> sites;
  std::vector<ZoneThreadRecord> threads;
  std::string clock;             ///< zone time source: "rdtsc", "steady_clock", "injected"
  double zone_overhead_ns = -1;  ///< measured cost of one zone enter+exit; negative: unknown
  std::vector<StepRecord> steps;        ///< marked steps, in order (steps.h)
  std::int64_t dropped_step_count = 0;  ///< steps past the log's capacity (counted, not kept)
  std::vector<EpochRecord> epochs;      ///< marked epochs, in order
  std::vector<DataSourceRecord> data_sources;
  /// The main process first, then worker processes; empty: one process, not recorded.
  std::vector<ProcessRecord> processes;

  [[nodiscard]] bool empty() const noexcept {
    return threads.empty() && steps.empty() && data_sources.empty() && processes.empty();
  }
  /// Whether any site is a zone or value of the program's own, not only graph Function calls.
  [[nodiscard]] bool has_program_zones() const noexcept;
};

/// One caller -> callee edge of the merged call tree, summed over every path that reaches it.
struct ZoneEdge {
  std::int64_t caller = -1;  ///< site index; -1: the callee ran outside any zone
  std::int64_t callee = 0;
  std::int64_t call_count = 0;
  std::int64_t self_ns = 0;   ///< the callee's own time under this caller
  std::int64_t total_ns = 0;  ///< the callee's total time under this caller
};

/// Every thread's tree merged into one (nodes with the same chain of sites add up); the result
/// has thread_index -1.
[[nodiscard]] ZoneThreadRecord merge_zone_threads(const HostRecord& host);
/// Per-site totals of one tree (zone sites only, in site order; sites with no call left out).
[[nodiscard]] std::vector<ZoneTotals> zone_totals(const ZoneThreadRecord& tree);
/// The caller -> callee edges of one tree, in first-seen order.
[[nodiscard]] std::vector<ZoneEdge> zone_edges(const ZoneThreadRecord& tree);
/// Both hosts' threads in one record (sites of `b` appended and renumbered; b's processes follow
/// a's, and b's threads point at them).
[[nodiscard]] HostRecord merge_host_records(const HostRecord& a, const HostRecord& b);

/// The timeline written with the profile (profiling.trace, --trace; trace.h), for the header.
struct TraceSummary {
  std::string path;  ///< empty: no timeline was written
  std::int64_t event_count = 0;
  std::int64_t dropped_event_count = 0;  ///< lost when a thread's ring wrapped
  std::int64_t ring_capacity_events = 0;
};

struct Profile {
  int schema_version = kProfileSchemaVersion;
  std::string title;  ///< empty for a single function; "Sum of all(N) ..." for sums
  std::vector<FunctionRecord> functions;
  std::int64_t grad_ns = 0;
  std::int64_t since_load_ns = 0;
  std::string blas;                  ///< BLAS library and threading
  std::string openmp;                ///< OpenMP runtime of the oneDNN kernels: threads, wait policy
  double overhead_ns_per_node = -1;  ///< the profiler's own measured cost; negative: unknown
  std::string clock;                 ///< time source of node timings (functions' sources joined)
  double clock_read_ns = -1;         ///< measured cost of one clock read; negative: unknown
  double roof_bytes_per_second = -1; ///< the recording machine's roof (machine_roof.h);
  double roof_flops_per_second = -1; ///< negative: unknown
  HostRecord host;                   ///< host-code zones (zones.h); empty when none ran
  TraceSummary trace;                ///< the timeline written alongside, if any

  /// Sum of node times over all functions.
  [[nodiscard]] std::int64_t kernel_ns() const;
};

/// One profile holding every function of `profiles` (their counters add up in the report; memory
/// figures are maxima over functions; host zones are merged), titled `title`.
[[nodiscard]] Profile sum_profiles(const std::vector<Profile>& profiles, std::string title);

}  // namespace tscope::profile

#pragma GCC visibility pop
