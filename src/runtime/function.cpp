// SPDX-License-Identifier: Apache-2.0
#include "tscope/runtime/function.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "profile_merge.h"
#include "program.h"
#include "signature_cost.h"
#include "static_dims.h"
#include "thread_mark.h"
#include "trace_labels.h"
#include "tscope/ops/linalg.h"
#include "tscope/profile/global_profiles.h"
#include "tscope/profile/machine_roof.h"
#include "tscope/profile/tick_clock.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/profile/zones.h"
#include "tscope/rewrite/fusion_role.h"
#include "tscope/rewrite/inplace_rules.h"
#include "tscope/rewrite/pipeline.h"

namespace tscope {
namespace detail {

class FunctionImpl final : public profile::ProfileSource {
 public:
  FunctionImpl(std::string name, FunctionOptions options)
      : name_(std::move(name)),
        options_(std::move(options)),
        zone_site_(profile::intern_zone_site(name_, "", 0, profile::ZoneKind::Function)) {}
  ~FunctionImpl() override {
    if (options_.collector) options_.collector->retire(this, snapshot());
    Frame* frame = frames_.load(std::memory_order_acquire);
    while (frame != nullptr) {
      runtime::release(frame->kept_by.load(std::memory_order_relaxed));
      delete std::exchange(frame, frame->next);
    }
  }
  FunctionImpl(const FunctionImpl&) = delete;
  FunctionImpl& operator=(const FunctionImpl&) = delete;

  void compile(const std::vector<Variable>& inputs,
               const std::vector<Variable>& outputs,
               const std::vector<Update>& updates);
  std::vector<Tensor> call(const std::vector<Tensor>& inputs);
  [[nodiscard]] profile::FunctionRecord snapshot() const override;
  /// Drops the timings so far, as ignore_first_call does after the first call.
  void reset_timings();

  std::string name_;
  FunctionOptions options_;
  FunctionGraph graph_;
  /// The zone a call records while host zones are on, so graph calls nest under the caller's
  /// zones (zones.h); shared by functions of the same name.
  const profile::ZoneSite* zone_site_;

 private:
  using Frame = runtime::Frame;
  /// A frame no other call is using (the calling thread's usual one when free), made when all
  /// are busy. The caller owns it until release_frame.
  Frame& acquire_frame();
  static void release_frame(Frame& frame) noexcept {
    frame.in_use.store(false, std::memory_order_release);
  }
  /// Unprofiled calls: the frame this thread keeps, adopting a free one or making one the first
  /// time. No other call uses it while the thread lives, so nothing is released after the call.
  /// Snapshots may still take it: they read only what profiled calls write.
  Frame& kept_frame() {
    runtime::ThreadMark* const mark = runtime::this_thread_mark();
    Frame* const first = frames_.load(std::memory_order_acquire);
    // The usual case, one thread calling: its frame is the first.
    if (first->kept_by.load(std::memory_order_relaxed) == mark && !first->kept_in_call) {
      return *first;
    }
    return find_kept_frame(mark, first);
  }
  Frame& find_kept_frame(runtime::ThreadMark* mark, Frame* first);
  /// Publishes a frame made for the caller at the head of the list (lock-free; frames are never
  /// removed until the Function dies).
  Frame& push_frame(Frame* fresh);
  /// Waits until `frame` is free and takes it (snapshots and resets).
  static void take_frame(Frame& frame) noexcept;
  /// Runs `visit` on every frame, each taken in turn.
  template <typename Visit>
  void for_each_frame(Visit&& visit) const;

  void bind_inputs(Frame& frame, const std::vector<Tensor>& inputs);
  std::vector<Tensor> run_call(Frame& frame, const std::vector<Tensor>& inputs);
  void forget_timings(Frame& frame);
  [[nodiscard]] std::vector<BlasCopyStats> blas_copies_now() const;
  Clock& clock() const { return options_.clock != nullptr ? *options_.clock : steady_clock(); }
  // Node timings read the TSC only when no clock was injected and the measurement chose it.
  bool use_tsc() const {
    return options_.clock == nullptr && profile::measured_tick_source().use_tsc;
  }
  double ns_per_tick() const {
    return use_tsc() ? profile::measured_tick_source().ns_per_tick : 1.0;
  }

  runtime::Program program_;
  std::size_t output_count_ = 0;
  std::vector<int> output_slots_;
  std::vector<int> input_slots_;
  std::vector<std::pair<std::shared_ptr<SharedStorage>, int>> update_slots_;
  // Every frame made so far, newest first; a lock-free list that only grows, so a call finds a
  // free frame with one exchange and no lock. The first frame is made at compile time.
  std::atomic<Frame*> frames_{nullptr};
  // Held while a thread adopts a frame kept by another: adopting drops the frame's reference to
  // the old keeper's mark, which may free it, so no other adopter may be reading that mark then.
  // Only a thread's first call takes it; repeated calls find their frame without it.
  std::mutex adoption_mutex_;
  // The id this function's timeline events carry (trace_recorder.h); registered on the first
  // traced call, under trace_mutex_.
  std::atomic<std::int64_t> trace_function_{-1};
  std::mutex trace_mutex_;
  std::uint32_t trace_function();
  // Held for the whole call by functions with updates (see call()).
  std::mutex update_calls_mutex_;
  // BLAS input copies per node counted before the timed calls (blas_copy_stats_for_node()); the
  // counts are per node, not per frame, so a reset by one frame's warm-up restarts them for all.
  mutable std::mutex copies_mutex_;
  std::vector<BlasCopyStats> copies_before_;
  std::vector<std::int64_t> kept_slots_;
  profile::CompileRecord compile_record_;
};

void FunctionImpl::compile(const std::vector<Variable>& inputs,
                           const std::vector<Variable>& outputs,
                           const std::vector<Update>& updates) {
  Clock& timer = clock();
  const std::int64_t start_ns = timer.now_ns();
  std::vector<Variable> roots = outputs;
  for (const Update& update : updates) {
    if (!update.shared.defined() || update.shared.kind() != VariableKind::Shared) {
      throw_error(ErrorKind::InvalidArgument, "update target '{}' is not a shared variable",
                  update.shared.defined() ? update.shared.to_string() : "<undefined>");
    }
    const Type& target = update.shared.type();
    const Type& value = update.new_value.type();
    if (target.dtype != value.dtype || !runtime::dims_compatible(target.dims, value.dims)) {
      Error error(ErrorKind::TypeMismatch,
                  fmt::format("update of shared variable '{}' ({}) with a value of type {}",
                              update.shared.name(), target.to_string(), value.to_string()));
      if (update.new_value.owner() != nullptr) {
        error.add_context("the value comes from " + update.new_value.owner()->describe());
      }
      throw error;
    }
    roots.push_back(update.new_value);
  }
  graph_ = FunctionGraph::clone_of(inputs, roots);
  compile_record_.rewrite_ns = 0;
  const std::int64_t rewrite_start_ns = timer.now_ns();
  rewrite::RewriteReport rewrite_report = rewrite::run_default_pipeline(
      graph_, timer, {.excluded = options_.excluded_rewrites,
                  .channel_block = options_.channel_block,
                  .winograd = options_.winograd});
  compile_record_.rewrite_ns = timer.now_ns() - rewrite_start_ns;
  compile_record_.validate_ns = rewrite_report.validate_ns;
  // Plain copies: the profile layer depends on core only and never sees rewrite types.
  for (const rewrite::RuleReport& rule : rewrite_report.rules) {
    compile_record_.rewrites.push_back({rule.name, rule.duration_ns, rule.changes, rule.attempts,
                                        rule.nodes_created, rule.nodes_removed});
  }
  compile_record_.nodes_before_rewrite = rewrite_report.nodes_before;
  compile_record_.nodes_after_rewrite = rewrite_report.nodes_after;

  program_ = runtime::Program::link(
      graph_, graph_.outputs(),
      {.allow_gc = options_.allow_gc, .reference_kernels = options_.reference_kernels}, timer,
      compile_record_);
  output_count_ = outputs.size();
  for (const Variable& input : graph_.inputs()) input_slots_.push_back(program_.slot_of(input));
  for (std::size_t i = 0; i < graph_.outputs().size(); ++i) {
    const int slot = program_.slot_of(graph_.outputs()[i]);
    if (i < output_count_) {
      output_slots_.push_back(slot);
    } else {
      update_slots_.emplace_back(updates[i - output_count_].shared.node()->shared, slot);
    }
  }
  frames_.store(program_.make_frame(options_.profile).release(), std::memory_order_release);
  copies_before_ = blas_copies_now();
  for (const Variable& kept : graph_.outputs()) kept_slots_.push_back(program_.slot_of(kept));
  compile_record_.total_ns = timer.now_ns() - start_ns;
}

FunctionImpl::Frame& FunctionImpl::acquire_frame() {
  for (Frame* frame = frames_.load(std::memory_order_acquire); frame != nullptr;
       frame = frame->next) {
    // The load first: a busy frame costs a read, not a cache-line steal.
    if (!frame->in_use.load(std::memory_order_relaxed) &&
        !frame->in_use.exchange(true, std::memory_order_acquire)) {
      return *frame;
    }
  }
  // Every frame is in use by another thread: a new one, owned by this call from the start.
  Frame* fresh = program_.make_frame(options_.profile).release();
  fresh->in_use.store(true, std::memory_order_relaxed);
  return push_frame(fresh);
}

FunctionImpl::Frame& FunctionImpl::push_frame(Frame* fresh) {
  Frame* head = frames_.load(std::memory_order_relaxed);
  do {
    fresh->next = head;
  } while (!frames_.compare_exchange_weak(head, fresh, std::memory_order_release,
                                          std::memory_order_relaxed));
  return *fresh;
}

FunctionImpl::Frame& FunctionImpl::find_kept_frame(runtime::ThreadMark* mark, Frame* first) {
  for (Frame* frame = first; frame != nullptr; frame = frame->next) {
    if (frame->kept_by.load(std::memory_order_relaxed) == mark && !frame->kept_in_call) {
      return *frame;
    }
  }
  const std::lock_guard adoption_lock(adoption_mutex_);
  for (Frame* frame = first; frame != nullptr; frame = frame->next) {
    runtime::ThreadMark* keeper = frame->kept_by.load(std::memory_order_acquire);
    // Acquire on `alive`: the exited thread's last writes to the frame happen before ours.
    const bool free = keeper == nullptr || !keeper->alive.load(std::memory_order_acquire);
    if (free && frame->kept_by.compare_exchange_strong(keeper, mark, std::memory_order_acq_rel)) {
      runtime::retain(mark);
      runtime::release(keeper);
      return *frame;
    }
  }
  Frame* fresh = program_.make_frame(options_.profile).release();
  runtime::retain(mark);
  fresh->kept_by.store(mark, std::memory_order_relaxed);
  return push_frame(fresh);
}

void FunctionImpl::take_frame(Frame& frame) noexcept {
  while (frame.in_use.load(std::memory_order_relaxed) ||
         frame.in_use.exchange(true, std::memory_order_acquire)) {
    std::this_thread::yield();
  }
}

template <typename Visit>
void FunctionImpl::for_each_frame(Visit&& visit) const {
  for (Frame* frame = frames_.load(std::memory_order_acquire); frame != nullptr;
       frame = frame->next) {
    take_frame(*frame);
    try {
      visit(*frame);
    } catch (...) {
      release_frame(*frame);
      throw;
    }
    release_frame(*frame);
  }
}

void FunctionImpl::reset_timings() {
  for_each_frame([this](Frame& frame) {
    forget_timings(frame);
    frame.totals.first_call_pending = false;
  });
}

void FunctionImpl::bind_inputs(Frame& frame, const std::vector<Tensor>& inputs) {
  const auto& graph_inputs = graph_.inputs();
  if (inputs.size() != graph_inputs.size()) {
    throw_error(ErrorKind::InvalidArgument, "function '{}' takes {} inputs, {} given", name_,
                graph_inputs.size(), inputs.size());
  }
  std::vector<Tensor>& slots = frame.slots;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Type& type = graph_inputs[i].type();
    const Tensor& value = inputs[i];
    if (!type.accepts(value)) {
      const bool dtype_or_rank =
          !value.defined() || value.dtype() != type.dtype || value.rank() != type.rank();
      throw_error(dtype_or_rank ? ErrorKind::TypeMismatch : ErrorKind::ShapeMismatch,
                  "function '{}': input {} ('{}') expects {}, got {}", name_, i,
                  graph_inputs[i].to_string(), type.to_string(),
                  value.defined()
                      ? fmt::format("{} {}", dtype_name(value.dtype()), value.shape().to_string())
                      : std::string("an undefined tensor"));
    }
    slots[static_cast<std::size_t>(input_slots_[i])] = value;
  }
  if (program_.shared_slots().empty()) return;
  // One consistent set of values, not half before and half after another call's updates.
  std::lock_guard lock(shared_values_mutex());
  for (const auto& [slot, shared] : program_.shared_slots()) {
    slots[static_cast<std::size_t>(slot)] = shared.node()->shared->value;
    if (!slots[static_cast<std::size_t>(slot)].defined()) {
      throw_error(ErrorKind::InvalidArgument, "shared variable '{}' has no value", shared.name());
    }
  }
}

std::vector<Tensor> FunctionImpl::call(const std::vector<Tensor>& inputs) {
  TSCOPE_ZONE_SITE(zone_site_);
  // A function with updates runs one call at a time: each call must start from the values the
  // previous one left, or concurrent training steps would silently drop each other's updates.
  std::unique_lock<std::mutex> one_at_a_time(update_calls_mutex_, std::defer_lock);
  if (!update_slots_.empty()) one_at_a_time.lock();
  if (!options_.profile) {
    Frame& frame = kept_frame();
    frame.kept_in_call = true;
    try {
      std::vector<Tensor> results = run_call(frame, inputs);
      frame.kept_in_call = false;
      return results;
    } catch (...) {
      frame.kept_in_call = false;
      throw;
    }
  }
  Frame& frame = acquire_frame();
  try {
    std::vector<Tensor> results = run_call(frame, inputs);
    if (options_.ignore_first_call && frame.totals.first_call_pending) forget_timings(frame);
    frame.totals.first_call_pending = false;
    release_frame(frame);
    profile::GlobalProfiles::note_call();
    return results;
  } catch (...) {
    release_frame(frame);
    // A failing call may end the process without running exit handlers: write what was collected.
    profile::GlobalProfiles::note_call();
    profile::GlobalProfiles::instance().write_if_active();
    throw;
  }
}

void FunctionImpl::forget_timings(Frame& frame) {
  // Signatures (and their call counts) and compile figures stay: they describe the graph, not the
  // warm-up's timing; the signatures' times and timed calls restart with the node counters, and
  // so do the loops' bodies.
  runtime::forget_frame_timings(frame);
  std::lock_guard lock(copies_mutex_);
  copies_before_ = blas_copies_now();
}

std::vector<BlasCopyStats> FunctionImpl::blas_copies_now() const {
  std::vector<BlasCopyStats> copies;
  copies.reserve(program_.instruction_count());
  for (std::size_t index = 0; index < program_.instruction_count(); ++index) {
    copies.push_back(blas_copy_stats_for_node(program_.node(index)->id()));
  }
  return copies;
}

std::vector<Tensor> FunctionImpl::run_call(Frame& frame, const std::vector<Tensor>& inputs) {
  const bool profiling = options_.profile;
  // Looked up only when profiling: the unprofiled call path stays as short as it can be.
  Clock* timer = nullptr;
  TrackingAllocator* allocator = nullptr;
  std::int64_t call_start_ns = 0;
  std::int64_t live_at_start = 0;
  profile::TraceRing* trace = nullptr;
  std::int64_t trace_start_ticks = 0;
  if (profiling) {
    timer = &clock();
    call_start_ns = timer->now_ns();
    allocator = &default_allocator();
    live_at_start = allocator->live_bytes();
    allocator->reset_peak();
    if (profile::tracing()) [[unlikely]] {
      trace = profile::this_thread_trace_ring();
      // The call's slice reads the nodes' tick source, so that it encloses them exactly.
      trace_start_ticks = use_tsc() ? profile::read_tsc() : timer->now_ns();
    }
  }
  std::vector<Tensor>& slots = frame.slots;
  // Graph inputs and shared values are the caller's: never keep them alive between calls, also
  // when the call fails.
  auto release_caller_values = [&] {
    for (int slot : input_slots_) slots[static_cast<std::size_t>(slot)] = Tensor();
    for (const auto& [slot, shared] : program_.shared_slots())
      slots[static_cast<std::size_t>(slot)] = Tensor();
  };
  try {
    bind_inputs(frame, inputs);
    if (profiling) {
      runtime::FrameTotals& totals = frame.totals;
      totals.input_bytes = 0;
      for (int slot : input_slots_)
        totals.input_bytes += slots[static_cast<std::size_t>(slot)].nbytes();
      for (const auto& [slot, shared] : program_.shared_slots()) {
        totals.input_bytes += slots[static_cast<std::size_t>(slot)].nbytes();
      }
      for (int slot : program_.constant_slots()) {
        totals.input_bytes += slots[static_cast<std::size_t>(slot)].nbytes();
      }
      const runtime::ProfileSink sink{frame.counters.data(),
                                      frame.signatures.data(),
                                      timer,
                                      trace,
                                      trace != nullptr ? trace_function() : 0,
                                      allocator};
      const std::int64_t vm_start_ns = timer->now_ns();
      if (use_tsc()) {
        program_.run<true, true>(frame, sink);
      } else {
        program_.run<true, false>(frame, sink);
      }
      totals.vm_ns += timer->now_ns() - vm_start_ns;
    } else {
      program_.run<false>(frame, {});
    }
  } catch (...) {
    release_caller_values();
    throw;
  }
  std::vector<Tensor> results;
  results.reserve(output_count_);
  for (int slot : output_slots_) results.push_back(slots[static_cast<std::size_t>(slot)]);
  if (!update_slots_.empty()) {
    // All of one call's updates at once, in the order the calls finish.
    std::lock_guard lock(shared_values_mutex());
    for (auto& [storage, slot] : update_slots_)
      storage->value = slots[static_cast<std::size_t>(slot)];
  }
  release_caller_values();
  if (options_.allow_gc) {
    for (int slot : program_.slots_held_after_run()) slots[static_cast<std::size_t>(slot)] = Tensor();
  }
  if (profiling) {
    runtime::FrameTotals& totals = frame.totals;
    ++totals.call_count;
    totals.call_ns += timer->now_ns() - call_start_ns;
    totals.measured_peak_bytes =
        std::max(totals.measured_peak_bytes, allocator->stats().peak_bytes - live_at_start);
    if (trace != nullptr) {
      const bool tsc = use_tsc();
      trace->write(trace_start_ticks, tsc ? profile::read_tsc() : timer->now_ns(),
                   profile::trace_meta(profile::TraceEventKind::Call, tsc, 0), trace_function(), 0,
                   allocator->live_bytes());
    }
  }
  return results;
}

std::uint32_t FunctionImpl::trace_function() {
  const std::int64_t known = trace_function_.load(std::memory_order_acquire);
  if (known >= 0) return static_cast<std::uint32_t>(known);
  std::lock_guard lock(trace_mutex_);
  if (trace_function_.load(std::memory_order_relaxed) < 0) {
    trace_function_.store(
        profile::register_trace_function(name_, runtime::trace_node_labels(program_)),
        std::memory_order_release);
  }
  return static_cast<std::uint32_t>(trace_function_.load(std::memory_order_relaxed));
}

namespace {
// A loop's body is timed with its function's clock: its record carries the same figures, so that
// it renders as a function of its own.
void inherit_clock(const profile::FunctionRecord& function, profile::LoopRecord& loop) {
  profile::FunctionRecord& body = loop.body;
  body.clock = function.clock;
  body.clock_read_ns = function.clock_read_ns;
  body.overhead_ns_per_node = function.overhead_ns_per_node;
  body.roof_bytes_per_second = function.roof_bytes_per_second;
  body.roof_flops_per_second = function.roof_flops_per_second;
  for (profile::LoopRecord& inner : body.loops) inherit_clock(body, inner);
}
}  // namespace

profile::FunctionRecord FunctionImpl::snapshot() const {
  profile::FunctionRecord record;
  record.name = name_;
  record.compile = compile_record_;
  record.allow_gc = options_.allow_gc;
  // Each frame is taken in turn, so a call in flight on another thread finishes first and the
  // counters read are whole calls.
  runtime::ProfileMerge merge(program_);
  for_each_frame([&](const Frame& frame) {
    const runtime::FrameTotals& totals = frame.totals;
    record.call_count += totals.call_count;
    record.call_ns += totals.call_ns;
    record.vm_ns += totals.vm_ns;
    record.measured_peak_bytes = std::max(record.measured_peak_bytes, totals.measured_peak_bytes);
    record.input_bytes = std::max(record.input_bytes, totals.input_bytes);
    merge.add(frame);
  });
  if (options_.clock != nullptr) {
    record.clock = "injected";  // tests: deterministic, no measured figures
  } else {
    const profile::TickSource& ticks = profile::measured_tick_source();
    record.clock = ticks.name;
    record.clock_read_ns = ticks.read_cost_ns;
    record.overhead_ns_per_node = runtime::Program::measured_overhead_ns_per_node();
    const profile::MachineRoof& roof = profile::measured_machine_roof();
    record.roof_bytes_per_second = roof.bytes_per_second;
    record.roof_flops_per_second = roof.flops_per_second;
  }
  for (int slot : input_slots_) record.input_ids.push_back(slot);
  for (const auto& [slot, shared] : program_.shared_slots()) record.input_ids.push_back(slot);
  for (int slot : program_.constant_slots()) record.input_ids.push_back(slot);
  record.output_ids = kept_slots_;
  std::vector<BlasCopyStats> copies_before;
  {
    std::lock_guard lock(copies_mutex_);
    copies_before = copies_before_;
  }
  record.nodes = merge.node_records(ns_per_tick(), copies_before);
  record.loops = merge.loop_records(ns_per_tick());
  for (profile::LoopRecord& loop : record.loops) inherit_clock(record, loop);
  return record;
}

}  // namespace detail

std::vector<Tensor> Function::operator()(const std::vector<Tensor>& inputs) const {
  return impl_->call(inputs);
}

const std::string& Function::name() const { return impl_->name_; }

const FunctionGraph& Function::graph() const { return impl_->graph_; }

std::shared_ptr<profile::ProfileCollector> Function::collector() const {
  return impl_->options_.collector;
}

profile::FunctionRecord Function::profile_record() const { return impl_->snapshot(); }

void Function::reset_profile_timings() const { impl_->reset_timings(); }

Function function(const std::vector<Variable>& inputs,
                  const std::vector<Variable>& outputs,
                  const std::vector<Update>& updates,
                  FunctionOptions options,
                  const std::source_location& location) {
  std::string name =
      options.name.empty() ? SourceSite::from(location).short_string() : options.name;
  if (options.profile && !options.collector) {
    options.collector = std::make_shared<profile::ProfileCollector>();
  }
  auto impl = std::make_shared<detail::FunctionImpl>(name, options);
  try {
    impl->compile(inputs, outputs, updates);
  } catch (Error& error) {
    error.add_context(fmt::format("while compiling function '{}'", name));
    throw;
  }
  if (impl->options_.collector) {
    impl->options_.collector->attach(impl);
    // The global flag: every profiled function joins the list printed at exit (and on SIGINT,
    // SIGTERM or a failing call).
    if (profile::process_flags().profile) {
      profile::GlobalProfiles::instance().add(impl->options_.collector);
    }
  }
  return Function(std::move(impl));
}

}  // namespace tscope
