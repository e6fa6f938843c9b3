// SPDX-License-Identifier: Apache-2.0
#include "tscope/runtime/function.h"

#include <fmt/format.h>

#include "program.h"
#include "tscope/rewrite/pipeline.h"

namespace tscope {
namespace detail {

class FunctionImpl final : public profile::ProfileSource {
 public:
  FunctionImpl(std::string name, FunctionOptions options) : name_(std::move(name)), options_(std::move(options)) {}
  ~FunctionImpl() override {
    if (options_.collector) options_.collector->retire(this, snapshot());
  }
  FunctionImpl(const FunctionImpl&) = delete;
  FunctionImpl& operator=(const FunctionImpl&) = delete;

  void compile(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
               const std::vector<Update>& updates);
  std::vector<Tensor> call(const std::vector<Tensor>& inputs);
  [[nodiscard]] profile::FunctionRecord snapshot() const override;

  std::string name_;
  FunctionOptions options_;
  FunctionGraph graph_;

 private:
  void bind_inputs(const std::vector<Tensor>& inputs);
  Clock& clock() const { return options_.clock != nullptr ? *options_.clock : steady_clock(); }

  runtime::Program program_;
  std::size_t output_count_ = 0;
  std::vector<int> output_slots_;
  std::vector<int> input_slots_;
  std::vector<std::pair<std::shared_ptr<SharedStorage>, int>> update_slots_;
  // Profiling state: sized at link time, written by the VM.
  std::vector<runtime::NodeCounters> counters_;
  std::vector<runtime::SlotSnapshot> snapshots_;
  std::int64_t call_count_ = 0;
  std::int64_t call_ns_ = 0;
  std::int64_t vm_ns_ = 0;
  std::int64_t measured_peak_bytes_ = 0;
  profile::CompileRecord compile_record_;
};

void FunctionImpl::compile(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
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
    bool compatible = target.dtype == value.dtype && target.rank() == value.rank();
    for (int axis = 0; compatible && axis < target.rank(); ++axis) {
      compatible = target.dims[axis] == kUnknownDim || value.dims[axis] == kUnknownDim ||
                   target.dims[axis] == value.dims[axis];
    }
    if (!compatible) {
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
  rewrite::RewriteReport rewrite_report = rewrite::run_default_pipeline(graph_, timer);
  compile_record_.rewrite_ns = timer.now_ns() - rewrite_start_ns;
  compile_record_.validate_ns = rewrite_report.validate_ns;

  program_ = runtime::Program::link(graph_, graph_.outputs(),
                                    {.allow_gc = options_.allow_gc,
                                     .reference_kernels = options_.reference_kernels},
                                    timer, compile_record_);
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
  counters_.assign(program_.instruction_count(), runtime::NodeCounters{});
  snapshots_.assign(program_.slots().size(), runtime::SlotSnapshot{});
  compile_record_.total_ns = timer.now_ns() - start_ns;
}

void FunctionImpl::bind_inputs(const std::vector<Tensor>& inputs) {
  const auto& graph_inputs = graph_.inputs();
  if (inputs.size() != graph_inputs.size()) {
    throw_error(ErrorKind::InvalidArgument, "function '{}' takes {} inputs, {} given", name_,
                graph_inputs.size(), inputs.size());
  }
  std::vector<Tensor>& slots = program_.slots();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Type& type = graph_inputs[i].type();
    const Tensor& value = inputs[i];
    if (!type.accepts(value)) {
      const bool dtype_or_rank = !value.defined() || value.dtype() != type.dtype || value.rank() != type.rank();
      throw_error(dtype_or_rank ? ErrorKind::TypeMismatch : ErrorKind::ShapeMismatch,
                  "function '{}': input {} ('{}') expects {}, got {}", name_, i,
                  graph_inputs[i].to_string(), type.to_string(),
                  value.defined() ? fmt::format("{} {}", dtype_name(value.dtype()), value.shape().to_string())
                                  : std::string("an undefined tensor"));
    }
    slots[static_cast<std::size_t>(input_slots_[i])] = value;
  }
  for (const auto& [slot, leaf] : program_.leaf_slots()) {
    slots[static_cast<std::size_t>(slot)] =
        leaf.kind() == VariableKind::Constant ? leaf.constant_value() : leaf.node()->shared->value;
    if (!slots[static_cast<std::size_t>(slot)].defined()) {
      throw_error(ErrorKind::InvalidArgument, "shared variable '{}' has no value", leaf.name());
    }
  }
}

std::vector<Tensor> FunctionImpl::call(const std::vector<Tensor>& inputs) {
  const bool profiling = options_.profile;
  Clock& timer = clock();
  const std::int64_t call_start_ns = profiling ? timer.now_ns() : 0;
  TrackingAllocator& allocator = default_allocator();
  std::int64_t live_at_start = 0;
  if (profiling) {
    live_at_start = allocator.stats().live_bytes;
    allocator.reset_peak();
  }
  bind_inputs(inputs);
  std::vector<Tensor>& slots = program_.slots();
  if (profiling) {
    for (std::size_t slot = 0; slot < slots.size(); ++slot) {
      const Tensor& value = slots[slot];
      if (!value.defined()) continue;
      snapshots_[slot] = {true, value.dtype(), value.shape(), value.strides()};
    }
    const std::int64_t vm_start_ns = timer.now_ns();
    program_.run<true>(counters_.data(), snapshots_.data(), &timer);
    vm_ns_ += timer.now_ns() - vm_start_ns;
  } else {
    program_.run<false>(nullptr, nullptr, nullptr);
  }
  std::vector<Tensor> results;
  results.reserve(output_count_);
  for (int slot : output_slots_) results.push_back(slots[static_cast<std::size_t>(slot)]);
  for (auto& [storage, slot] : update_slots_) storage->value = slots[static_cast<std::size_t>(slot)];
  // Graph inputs and leaves are the caller's; never keep them alive between calls.
  for (int slot : input_slots_) slots[static_cast<std::size_t>(slot)] = Tensor();
  for (const auto& [slot, leaf] : program_.leaf_slots()) slots[static_cast<std::size_t>(slot)] = Tensor();
  if (options_.allow_gc) {
    for (int slot : program_.intermediate_slots()) slots[static_cast<std::size_t>(slot)] = Tensor();
  }
  if (profiling) {
    ++call_count_;
    call_ns_ += timer.now_ns() - call_start_ns;
    measured_peak_bytes_ = std::max(measured_peak_bytes_, allocator.stats().peak_bytes - live_at_start);
  }
  return results;
}

profile::FunctionRecord FunctionImpl::snapshot() const {
  profile::FunctionRecord record;
  record.name = name_;
  record.call_count = call_count_;
  record.call_ns = call_ns_;
  record.vm_ns = vm_ns_;
  record.compile = compile_record_;
  record.measured_peak_bytes = measured_peak_bytes_;
  auto tensor_record = [&](int slot) {
    profile::TensorRecord tensor;
    const runtime::SlotSnapshot& snapshot = snapshots_[static_cast<std::size_t>(slot)];
    if (!snapshot.defined) return tensor;
    tensor.dtype = std::string(dtype_name(snapshot.dtype));
    tensor.shape.assign(snapshot.shape.begin(), snapshot.shape.end());
    const auto item = static_cast<std::int64_t>(dtype_size(snapshot.dtype));
    for (std::int64_t stride : snapshot.strides) tensor.strides_bytes.push_back(stride * item);
    std::int64_t expected = 1;
    for (int axis = snapshot.shape.rank() - 1; axis >= 0; --axis) {
      if (snapshot.shape[axis] != 1 && snapshot.strides[axis] != expected) tensor.contiguous = false;
      expected *= snapshot.shape[axis];
    }
    return tensor;
  };
  for (std::size_t index = 0; index < program_.instruction_count(); ++index) {
    const ApplyNode* node = program_.node(index);
    const runtime::NodeCounters& counter = counters_[index];
    profile::NodeRecord out;
    out.topo_index = static_cast<std::int64_t>(index);
    out.apply_name = node->to_string();
    out.op_name = node->op_string();
    out.class_name = std::string(node->op().family);
    out.impl = std::string(program_.impl_name(index));
    out.call_count = counter.call_count;
    out.total_ns = counter.total_ns;
    out.min_ns = counter.call_count > 0 ? counter.min_ns : 0;
    out.max_ns = counter.max_ns;
    out.source_site = node->provenance().site.short_string();
    out.user_op = node->provenance().user_op;
    std::vector<Dims> input_shapes, output_shapes;
    std::vector<DType> input_dtypes;
    bool shapes_known = true;
    for (int slot : program_.input_slots(index)) {
      out.inputs.push_back(tensor_record(slot));
      const runtime::SlotSnapshot& snapshot = snapshots_[static_cast<std::size_t>(slot)];
      shapes_known = shapes_known && snapshot.defined;
      input_shapes.push_back(snapshot.shape);
      input_dtypes.push_back(snapshot.dtype);
    }
    for (int i = 0; i < node->num_outputs(); ++i) {
      const int slot = program_.output_slots(index)[static_cast<std::size_t>(i)];
      out.outputs.push_back(tensor_record(slot));
      const runtime::SlotSnapshot& snapshot = snapshots_[static_cast<std::size_t>(slot)];
      shapes_known = shapes_known && snapshot.defined;
      output_shapes.push_back(snapshot.shape);
      bool is_view = false, is_inplace = false;
      for (const auto& [output, input] : node->op().aliasing.views) is_view = is_view || output == i;
      for (const auto& [output, input] : node->op().aliasing.destroys) is_inplace = is_inplace || output == i;
      out.output_alias.push_back(is_inplace ? "i" : (is_view ? "v" : "c"));
      if (snapshot.defined) {
        out.output_bytes += snapshot.shape.product() * static_cast<std::int64_t>(dtype_size(snapshot.dtype));
      }
    }
    if (node->op().cost != nullptr && shapes_known && counter.call_count > 0) {
      out.flops_per_call = node->op().cost(CostContext{node->op(), input_shapes, output_shapes,
                                                       input_dtypes, node->attrs()}).flops;
    }
    record.nodes.push_back(std::move(out));
  }
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

Function function(const std::vector<Variable>& inputs, const std::vector<Variable>& outputs,
                  const std::vector<Update>& updates, FunctionOptions options,
                  const std::source_location& location) {
  std::string name = options.name.empty() ? SourceSite::from(location).short_string() : options.name;
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
  if (impl->options_.collector) impl->options_.collector->attach(impl);
  return Function(std::move(impl));
}

}  // namespace tscope
