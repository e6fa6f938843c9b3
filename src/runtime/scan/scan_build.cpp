// SPDX-License-Identifier: Apache-2.0
// scan(): calls the step function on placeholders, closes its graph over the values it captures
// from the enclosing graph, checks it against outputs_info and applies a Scan node.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "../static_dims.h"
#include "scan_body.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/clone_replace.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/random.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"
#include "tscope/rewrite/pipeline.h"
#include "tscope/runtime/scan.h"

namespace tscope {
namespace runtime {

int ScanLayout::state_count() const noexcept {
  return static_cast<int>(
      std::count_if(outputs.begin(), outputs.end(), [](const Output& o) { return o.is_state(); }));
}

int ScanLayout::initial_input(int o) const noexcept {
  int index = 1 + sequence_count();
  for (int k = 0; k < o; ++k) index += outputs[static_cast<std::size_t>(k)].is_state() ? 1 : 0;
  return index;
}

int ScanLayout::sequence_tap_input(int j, int k) const noexcept {
  int index = 0;
  for (int i = 0; i < j; ++i)
    index += static_cast<int>(sequence_taps[static_cast<std::size_t>(i)].size());
  return index + k;
}

int ScanLayout::state_tap_input(int o, int k) const noexcept {
  int index = sequence_tap_input(sequence_count(), 0);
  for (int i = 0; i < o; ++i)
    index += static_cast<int>(outputs[static_cast<std::size_t>(i)].taps.size());
  return index + k;
}

int ScanLayout::body_non_sequence_input(int p) const noexcept {
  return state_tap_input(static_cast<int>(outputs.size()), 0) + p;
}

int ScanLayout::body_input_count() const noexcept {
  return body_non_sequence_input(non_sequence_count);
}

namespace {
std::int64_t next_body_id() {
  static std::atomic<std::int64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Type of one row of `type` (axis 0 dropped).
Type row_type(const Type& type) {
  Dims dims;
  if (type.rank() > 0)
    dims = Dims(std::span<const std::int64_t>(type.dims.begin() + 1, type.dims.end()));
  return Type{type.dtype, dims};
}

}  // namespace

ScanBody::ScanBody(ScanLayout layout, std::vector<Variable> inputs, std::vector<Variable> outputs)
    : layout_(std::move(layout)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      id_(next_body_id()) {}

std::string ScanBody::label() const { return fmt::format("{}#{}", layout_.name, id_); }

std::vector<Type> ScanBody::output_types(const InferContext& context) const {
  const ScanLayout& layout = layout_;
  if (context.num_inputs() != layout.outer_input_count()) {
    throw_error(ErrorKind::InvalidArgument, "scan '{}' takes {} inputs, {} given", layout.name,
                layout.outer_input_count(), context.num_inputs());
  }
  const Type& steps = context.input_type(0);
  if (steps.rank() != 0 || steps.dtype != DType::Int64) {
    throw_error(ErrorKind::TypeMismatch, "scan '{}': n_steps must be an int64 scalar, not {}",
                layout.name, steps.to_string());
  }
  // Outer inputs must still fit the placeholders the body was built for (a rewrite of the
  // enclosing graph replaces them only by values of the same type).
  auto check = [&](int outer, int body, bool rows, const std::string& what) {
    const Type& given = context.input_type(outer);
    const Type& placeholder = inputs_[static_cast<std::size_t>(body)].type();
    const bool fits =
        rows ? given.rank() >= 1 && row_type(given).dtype == placeholder.dtype &&
                   dims_compatible(row_type(given).dims, placeholder.dims)
             : given.dtype == placeholder.dtype && dims_compatible(given.dims, placeholder.dims);
    if (!fits) {
      throw_error(ErrorKind::TypeMismatch, "scan '{}': {} is {}; the body reads {}{}", layout.name,
                  what, given.to_string(), rows ? "rows of " : "", placeholder.to_string());
    }
  };
  for (int j = 0; j < layout.sequence_count(); ++j) {
    check(layout.sequence_input(j), layout.sequence_tap_input(j, 0), true,
          fmt::format("sequence {}", j));
  }
  for (int o = 0; o < static_cast<int>(layout.outputs.size()); ++o) {
    if (!layout.outputs[static_cast<std::size_t>(o)].is_state()) continue;
    check(layout.initial_input(o), layout.state_tap_input(o, 0), true,
          fmt::format("the initial value of output {}", o));
  }
  for (int p = 0; p < layout.non_sequence_count; ++p) {
    check(layout.non_sequence_input(p), layout.body_non_sequence_input(p), false,
          fmt::format("non-sequence {}", p));
  }
  // A while loop may stop early, so its bound (INT64_MAX for "no limit") says nothing about its
  // rows; n_steps is read as the int64 it is, which a double cannot hold exactly.
  std::int64_t step_count = kUnknownDim;
  if (const Variable& n = context.inputs[0]; n.kind() == VariableKind::Constant && !layout.until) {
    step_count = n.constant_value().data<std::int64_t>()[0];
  }
  std::vector<Type> types;
  for (std::size_t o = 0; o < layout.outputs.size(); ++o) {
    const Type& row = outputs_[o].type();
    if (layout.outputs[o].last_only) {
      types.push_back(row);
      continue;
    }
    Dims dims = Dims::filled(row.rank() + 1, step_count);
    for (int axis = 0; axis < row.rank(); ++axis) dims[axis + 1] = row.dims[axis];
    types.push_back(Type{row.dtype, dims});
  }
  return types;
}

const ScanBody::Linked& ScanBody::linked() const {
  std::call_once(link_once_, [this] {
    auto linked = std::make_unique<Linked>();
    Clock& clock = steady_clock();
    const std::int64_t start_ns = clock.now_ns();
    linked->graph = FunctionGraph::clone_of(inputs_, outputs_);
    const std::int64_t rewrite_start_ns = clock.now_ns();
    rewrite::RewriteReport report = rewrite::run_default_pipeline(linked->graph, clock);
    linked->compile.rewrite_ns = clock.now_ns() - rewrite_start_ns;
    linked->compile.validate_ns = report.validate_ns;
    for (const rewrite::RuleReport& rule : report.rules) {
      linked->compile.rewrites.push_back({rule.name, rule.duration_ns, rule.changes, rule.attempts,
                                          rule.nodes_created, rule.nodes_removed});
    }
    linked->compile.nodes_before_rewrite = report.nodes_before;
    linked->compile.nodes_after_rewrite = report.nodes_after;
    // Without allow_gc each body node keeps its output buffer from one step to the next, so the
    // steady state of a loop allocates nothing.
    linked->program = Program::link(linked->graph, linked->graph.outputs(), {.allow_gc = false},
                                    clock, linked->compile);
    for (const Variable& input : linked->graph.inputs()) {
      linked->input_slots.push_back(linked->program.slot_of(input));
    }
    for (int p = 0; p < layout_.non_sequence_count; ++p) {
      linked->invariant_inputs.push_back(
          linked->graph.inputs()[static_cast<std::size_t>(layout_.body_non_sequence_input(p))]);
    }
    for (const Variable& output : linked->graph.outputs()) {
      const int slot = linked->program.slot_of(output);
      linked->output_slots.push_back(slot);
      if (output.owner() != nullptr &&
          std::find(linked->released_output_slots.begin(), linked->released_output_slots.end(),
                    slot) == linked->released_output_slots.end()) {
        linked->released_output_slots.push_back(slot);
      }
    }
    linked->compile.total_ns = clock.now_ns() - start_ns;
    linked_ = std::move(linked);
  });
  return *linked_;
}

std::vector<Variable> apply_scan(std::shared_ptr<const ScanBody> body,
                                 std::vector<Variable> outer_inputs,
                                 const std::source_location& location) {
  Attrs attrs;
  attrs.set("body", std::shared_ptr<const Subgraph>(std::move(body)));
  return apply_op(op_def("Scan"), std::move(outer_inputs), std::move(attrs), location);
}

namespace {

// The values the step's graph reads from outside it: walking up from the outputs, a value that
// is not a placeholder or a constant, and does not depend on a placeholder, is captured whole
// (a shared variable, a graph input, or a value computed outside the loop, which then runs once,
// before the loop).
std::vector<Variable> captured_values(const std::vector<Variable>& outputs,
                                      const std::vector<Variable>& placeholders) {
  std::unordered_set<const VariableNode*> inside(placeholders.size());
  for (const Variable& placeholder : placeholders) inside.insert(placeholder.node());
  std::unordered_map<const ApplyNode*, bool> depends;
  // Iterative post-order: a node depends on a placeholder when one of its inputs does.
  auto reads_placeholder = [&](const ApplyNode* root) {
    std::vector<std::pair<const ApplyNode*, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [node, expanded] = stack.back();
      stack.pop_back();
      if (depends.count(node) != 0) continue;
      if (!expanded) {
        stack.emplace_back(node, true);
        for (const Variable& input : node->inputs()) {
          if (input.owner() != nullptr && depends.count(input.owner()) == 0) {
            stack.emplace_back(input.owner(), false);
          }
        }
        continue;
      }
      bool any = false;
      for (const Variable& input : node->inputs()) {
        any = any || inside.count(input.node()) != 0 ||
              (input.owner() != nullptr && depends[input.owner()]);
      }
      depends[node] = any;
    }
    return depends[root];
  };
  std::vector<Variable> captured;
  std::unordered_set<const VariableNode*> seen;
  std::vector<Variable> pending = outputs;
  while (!pending.empty()) {
    Variable value = std::move(pending.back());
    pending.pop_back();
    if (!seen.insert(value.node()).second || inside.count(value.node()) != 0) continue;
    if (value.kind() == VariableKind::Constant) continue;
    if (value.owner() != nullptr && reads_placeholder(value.owner())) {
      for (const Variable& input : value.owner()->inputs()) pending.push_back(input);
      continue;
    }
    captured.push_back(value);
  }
  // Creation order: stable across runs, and the order a reader expects.
  std::sort(captured.begin(), captured.end(),
            [](const Variable& a, const Variable& b) { return a.node()->id < b.node()->id; });
  return captured;
}

std::string tap_name(const std::string& base, std::int64_t tap) {
  const std::string name = base.empty() ? std::string("seq") : base;
  if (tap == 0) return name + "[t]";
  return fmt::format("{}[t{:+d}]", name, tap);
}

std::vector<std::int64_t> sorted_taps(std::vector<std::int64_t> taps,
                                      const std::string& scan,
                                      const std::string& what) {
  std::sort(taps.begin(), taps.end());
  if (std::adjacent_find(taps.begin(), taps.end()) != taps.end()) {
    throw_error(ErrorKind::InvalidArgument, "scan '{}': {} lists a tap twice: [{}]", scan, what,
                fmt::join(taps, ", "));
  }
  return taps;
}

// The step's own updates, then its draws' (a draw the step also returns is listed once);
// checked: a shared target, a value of its type, each target once.
std::vector<Update> step_updates(const std::vector<Update>& returned,
                                 const std::vector<RandomDrawRecorder::Draw>& draws,
                                 const std::string& scan) {
  std::vector<Update> updates;
  auto same = [](const Variable& a, const Variable& b) { return a.node() == b.node(); };
  auto add = [&](const Update& update, bool drawn) {
    if (!update.shared.defined() || update.shared.kind() != VariableKind::Shared) {
      throw_error(ErrorKind::InvalidArgument,
                  "scan '{}': the step updates '{}', which is not a shared variable", scan,
                  update.shared.defined() ? update.shared.to_string() : "<undefined>");
    }
    for (const Update& known : updates) {
      if (!same(known.shared, update.shared)) continue;
      if (drawn && same(known.new_value, update.new_value)) return;
      throw_error(ErrorKind::InvalidArgument,
                  "scan '{}': the step updates shared variable '{}' twice", scan,
                  update.shared.name());
    }
    if (!update.new_value.defined()) {
      throw_error(ErrorKind::InvalidArgument, "scan '{}': the step's update of '{}' has no value",
                  scan, update.shared.name());
    }
    const Type& target = update.shared.type();
    const Type& value = update.new_value.type();
    if (value.dtype != target.dtype || !dims_compatible(value.dims, target.dims)) {
      Error error(ErrorKind::TypeMismatch,
                  fmt::format("scan '{}': the step updates shared variable '{}' ({}) with a "
                              "value of type {}",
                              scan, update.shared.name(), target.to_string(), value.to_string()));
      if (update.new_value.owner() != nullptr) {
        error.add_context("the value comes from " + update.new_value.owner()->describe());
      }
      throw error;
    }
    updates.push_back(update);
  };
  for (const Update& update : returned) add(update, false);
  for (const RandomDrawRecorder::Draw& draw : draws) {
    add({draw.update.shared, draw.update.new_value}, true);
  }
  return updates;
}

}  // namespace
}  // namespace runtime

ScanResult scan(const ScanStepFn& step,
                const std::vector<ScanSequence>& sequences,
                const std::vector<ScanOutput>& outputs_info,
                const std::vector<Variable>& non_sequences,
                const ScanOptions& options,
                const std::source_location& location) {
  using runtime::ScanLayout;
  const std::string& name = options.name;
  std::optional<ProvenanceScope> provenance;
  if (options.provenance.has_value()) provenance.emplace(*options.provenance, false);
  if (outputs_info.empty()) {
    throw_error(ErrorKind::InvalidArgument,
                "scan '{}': outputs_info is empty; a loop needs at least one output", name);
  }
  ScanLayout layout;
  layout.name = name;
  layout.go_backwards = options.go_backwards;
  std::vector<Variable> placeholders;
  std::vector<Variable> outer_inputs{Variable()};  // n_steps, set below

  // Sequences: one placeholder per tap, of the sequence's row type.
  Variable steps_from_sequences;
  for (std::size_t j = 0; j < sequences.size(); ++j) {
    const ScanSequence& sequence = sequences[j];
    const std::string what = fmt::format("sequence {}", j);
    if (!sequence.value.defined() || sequence.value.rank() < 1) {
      throw_error(ErrorKind::InvalidArgument, "scan '{}': {} must be a tensor of rank >= 1{}", name,
                  what, sequence.value.defined() ? ", not a scalar" : "");
    }
    if (sequence.taps.empty()) {
      throw_error(ErrorKind::InvalidArgument, "scan '{}': {} has no taps", name, what);
    }
    std::vector<std::int64_t> taps = runtime::sorted_taps(sequence.taps, name, what);
    const Type row = runtime::row_type(sequence.value.type());
    for (std::int64_t tap : taps) {
      placeholders.push_back(
          make_input(row.dtype, row.dims, runtime::tap_name(sequence.value.name(), tap), location));
    }
    const std::int64_t span = taps.back() - taps.front();
    Variable available = shape_i(sequence.value, 0, location);
    if (span != 0) available = sub(available, static_cast<int>(span), location);
    steps_from_sequences = steps_from_sequences.defined()
                               ? minimum(steps_from_sequences, available, location)
                               : available;
    layout.sequence_taps.push_back(std::move(taps));
    outer_inputs.push_back(sequence.value);
  }

  // Fed-back outputs: one placeholder per tap, of the state's type.
  std::vector<Variable> initial_inputs;
  for (std::size_t o = 0; o < outputs_info.size(); ++o) {
    const ScanOutput& info = outputs_info[o];
    ScanLayout::Output output;
    if (!info.initial.defined()) {
      layout.outputs.push_back(output);
      continue;
    }
    const std::string what = fmt::format("outputs_info[{}]", o);
    if (info.taps.empty()) {
      throw_error(ErrorKind::InvalidArgument, "scan '{}': {} has an initial value but no taps",
                  name, what);
    }
    output.taps = runtime::sorted_taps(info.taps, name, what);
    if (output.taps.back() >= 0) {
      throw_error(ErrorKind::InvalidArgument,
                  "scan '{}': {} has tap {}; a fed-back output's taps must be negative (-1 is "
                  "the previous step)",
                  name, what, output.taps.back());
    }
    const bool single = output.taps.size() == 1 && output.taps[0] == -1;
    // The node always reads rows of an initial "window": a lone state gets a leading axis.
    Variable window = info.initial;
    if (single) {
      std::vector<std::int64_t> pattern{-1};
      for (int axis = 0; axis < info.initial.rank(); ++axis) pattern.push_back(axis);
      window = dimshuffle(info.initial, pattern, location);
    } else if (info.initial.rank() < 1) {
      throw_error(ErrorKind::InvalidArgument,
                  "scan '{}': {} has taps [{}], so its initial value needs an axis 0 of {} "
                  "values; it is a scalar",
                  name, what, fmt::join(output.taps, ", "), output.window());
    } else if (const std::int64_t rows = info.initial.type().dims[0];
               rows != kUnknownDim && rows != output.window()) {
      throw_error(ErrorKind::ShapeMismatch,
                  "scan '{}': {} has taps [{}], so its initial value's axis 0 must hold {} "
                  "values; it holds {}",
                  name, what, fmt::join(output.taps, ", "), output.window(), rows);
    }
    const Type row = runtime::row_type(window.type());
    const std::string base =
        info.initial.name().empty() ? fmt::format("out{}", o) : info.initial.name();
    for (std::int64_t tap : output.taps) {
      placeholders.push_back(
          make_input(row.dtype, row.dims, runtime::tap_name(base, tap), location));
    }
    initial_inputs.push_back(window);
    layout.outputs.push_back(std::move(output));
  }
  outer_inputs.insert(outer_inputs.end(), initial_inputs.begin(), initial_inputs.end());

  // Non-sequences: placeholders of the same type.
  for (const Variable& value : non_sequences) {
    placeholders.push_back(make_input(value.dtype(), value.type().dims, value.name(), location));
  }
  // The step count.
  Variable n_steps;
  if (options.n_steps.has_value()) {
    n_steps = options.n_steps->as_variable();
    if (n_steps.rank() != 0 || !is_integral(n_steps.dtype())) {
      throw_error(ErrorKind::TypeMismatch, "scan '{}': n_steps must be an integer scalar, not {}",
                  name, n_steps.type().to_string());
    }
    if (n_steps.kind() == VariableKind::Constant && n_steps.constant_value().at(0) < 0) {
      throw_error(ErrorKind::InvalidArgument, "scan '{}': n_steps is {}; it must be >= 0", name,
                  n_steps.constant_value().at(0));
    }
  } else if (steps_from_sequences.defined()) {
    n_steps = steps_from_sequences;
  } else {
    throw_error(ErrorKind::InvalidArgument, "scan '{}': without sequences, n_steps must be given",
                name);
  }
  if (n_steps.dtype() != DType::Int64) n_steps = cast(n_steps, DType::Int64, location);
  outer_inputs[0] = n_steps;

  // Draws made by the step are recorded, so they advance their state every step; the recorder
  // lives to the end, so that an enclosing loop's step sees them with this loop's final states.
  RandomDrawRecorder draws;
  std::vector<Variable> step_inputs = placeholders;
  ScanStep returned = [&] {
    // The step's nodes take their own sites, not the loop's.
    provenance.reset();
    ScanStep result = step(step_inputs);
    if (options.provenance.has_value()) provenance.emplace(*options.provenance, false);
    return result;
  }();
  std::vector<Variable> results = std::move(returned.outputs);
  // The condition comes last, whether the options announced it or the step returned it.
  const bool until = options.until || returned.until.defined();
  if (returned.until.defined()) results.push_back(returned.until);
  const std::size_t user_outputs = outputs_info.size();
  const std::size_t expected = user_outputs + (until ? 1 : 0);
  if (results.size() != expected) {
    throw_error(ErrorKind::InvalidArgument,
                "scan '{}': the step returned {} outputs; outputs_info has {} entries{}", name,
                results.size(), outputs_info.size(),
                until ? ", and with until the stop condition comes last" : "");
  }
  if (until) {
    const Variable& condition = results.back();
    if (!condition.defined() || condition.rank() != 0 ||
        !(is_integral(condition.dtype()) || condition.dtype() == DType::Bool)) {
      throw_error(ErrorKind::TypeMismatch,
                  "scan '{}': the stop condition (the step's last output) must be a boolean or "
                  "integer scalar, not {}",
                  name, condition.defined() ? condition.type().to_string() : "undefined");
    }
    layout.until = true;
  }
  for (std::size_t o = 0; o < outputs_info.size(); ++o) {
    if (!results[o].defined()) {
      throw_error(ErrorKind::InvalidArgument, "scan '{}': step output {} is undefined", name, o);
    }
    if (!layout.outputs[o].is_state()) continue;
    const Type& expected =
        placeholders[static_cast<std::size_t>(layout.state_tap_input(static_cast<int>(o), 0))]
            .type();
    const Type& got = results[o].type();
    if (got.dtype != expected.dtype || !runtime::dims_compatible(got.dims, expected.dims)) {
      Error error(got.dtype != expected.dtype || got.rank() != expected.rank()
                      ? ErrorKind::TypeMismatch
                      : ErrorKind::ShapeMismatch,
                  fmt::format("scan '{}': step output {} is {}, but it is fed back as "
                              "outputs_info[{}], which is {}",
                              name, o, got.to_string(), o, expected.to_string()));
      if (results[o].owner() != nullptr) {
        error.add_context("the output comes from " + results[o].owner()->describe());
      }
      throw error;
    }
  }

  // Updated shared variables become states after the outputs: placeholders before the
  // non-sequences', initial values after the outputs', new values before the stop condition.
  const std::vector<Update> updates = runtime::step_updates(returned.updates, draws.draws(), name);
  std::vector<Variable> body_results(results.begin(),
                                     results.begin() + static_cast<std::ptrdiff_t>(user_outputs));
  std::vector<Variable> update_placeholders;
  std::vector<std::pair<Variable, Variable>> replacements;
  for (const Update& update : updates) {
    const Variable& target = update.shared;
    update_placeholders.push_back(make_input(target.dtype(), target.type().dims,
                                             runtime::tap_name(target.name(), -1), location));
    replacements.emplace_back(target, update_placeholders.back());
    std::vector<std::int64_t> pattern{-1};
    for (int axis = 0; axis < target.rank(); ++axis) pattern.push_back(axis);
    outer_inputs.push_back(dimshuffle(target, pattern, location));
    ScanLayout::Output output;
    output.taps = {-1};
    layout.outputs.push_back(std::move(output));
    body_results.push_back(update.new_value);
  }
  if (until) body_results.push_back(results.back());
  placeholders.insert(placeholders.end() - static_cast<std::ptrdiff_t>(non_sequences.size()),
                      update_placeholders.begin(), update_placeholders.end());

  // Values read from the enclosing graph join the non-sequences, through placeholders, so that
  // the body is a closed graph. Updated shared variables are read through their states.
  std::vector<Variable> inside = placeholders;
  for (const Update& update : updates) inside.push_back(update.shared);
  std::vector<Variable> captured = runtime::captured_values(body_results, inside);
  for (const Variable& value : captured) {
    Variable placeholder =
        make_input(value.dtype(), value.type().dims,
                   value.name().empty() ? value.to_string() : value.name(), location);
    replacements.emplace_back(value, placeholder);
    placeholders.push_back(placeholder);
  }
  std::vector<Variable> body_outputs =
      replacements.empty() ? body_results : clone_replace(body_results, replacements);
  layout.non_sequence_count = static_cast<int>(non_sequences.size() + captured.size());
  outer_inputs.insert(outer_inputs.end(), non_sequences.begin(), non_sequences.end());
  outer_inputs.insert(outer_inputs.end(), captured.begin(), captured.end());

  auto body = std::make_shared<const runtime::ScanBody>(std::move(layout), std::move(placeholders),
                                                        std::move(body_outputs));
  std::vector<Variable> outputs =
      runtime::apply_scan(std::move(body), std::move(outer_inputs), location);
  ScanResult result;
  result.outputs.assign(outputs.begin(),
                        outputs.begin() + static_cast<std::ptrdiff_t>(user_outputs));
  for (std::size_t k = 0; k < updates.size(); ++k) {
    const Variable final_value = subtensor(outputs[user_outputs + k], {-1}, location);
    result.updates.push_back({updates[k].shared, final_value});
    for (RandomDrawRecorder::Draw& draw : draws.draws()) {
      if (draw.update.shared.node() != updates[k].shared.node()) continue;
      draw.update.new_value = final_value;
      if (draw.stream != nullptr) draw.stream->set_state_update(draw.index, final_value);
    }
  }
  return result;
}

}  // namespace tscope
