// SPDX-License-Identifier: Apache-2.0
// The importer: walks an ONNX graph in order and builds Tensorscope Variables for its inputs,
// initializers and nodes through the converter table (converter.h). Graph attributes (loop
// bodies, If branches) go through the same walk, with names resolved from the enclosing graphs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "converter.h"
#include "reader.h"
#include "tscope/graph/constructors.h"
#include "tscope/graph/provenance.h"
#include "tscope/graph/traversal.h"
#include "tscope/onnx/import.h"
#include "tscope/runtime/function.h"

namespace tscope::onnx {
namespace {

// Nodes whose inputs are all constants are evaluated at import time up to this many output
// elements; larger results stay in the graph rather than bloating the model with constants.
constexpr std::int64_t kMaxFoldedElements = std::int64_t{1} << 20;

std::int64_t default_domain_opset(const ::onnx::ModelProto& model, std::string_view source) {
  std::string other_domains;
  for (const ::onnx::OperatorSetIdProto& entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") return entry.version();
    other_domains += (other_domains.empty() ? "" : ", ") + entry.domain();
  }
  if (!other_domains.empty()) {
    throw_error(ErrorKind::Unsupported, "{}: the model uses only the domains {}, not ai.onnx",
                source, other_domains);
  }
  throw_error(ErrorKind::Parse, "{}: the model imports no opset", source);
}

// A graph input given a value at import (ImportOptions::input_values): a constant.
Variable bound_input(const ::onnx::ValueInfoProto& info, const Tensor& value) {
  if (info.type().has_tensor_type()) {
    const DType declared = dtype_from_onnx(info.type().tensor_type().elem_type(), info.name());
    if (declared != value.dtype()) {
      throw_error(ErrorKind::InvalidArgument, "graph input '{}' is declared {} but its value is {}",
                  info.name(), dtype_name(declared), dtype_name(value.dtype()));
    }
  }
  return constant(value, info.name());
}

Variable graph_input(const ::onnx::ValueInfoProto& info, const ImportOptions& options) {
  const std::string& name = info.name();
  if (!info.type().has_tensor_type()) {
    throw_error(ErrorKind::Unsupported,
                "graph input '{}' is not a tensor (sequence, map and optional inputs are not "
                "supported)",
                name);
  }
  const ::onnx::TypeProto::Tensor& tensor_type = info.type().tensor_type();
  const DType dtype = dtype_from_onnx(tensor_type.elem_type(), name);
  const auto given = options.input_dims.find(name);
  if (!tensor_type.has_shape()) {
    if (given == options.input_dims.end()) {
      throw_error(ErrorKind::Unsupported,
                  "graph input '{}' declares no shape; give its dims (tscope: --input {}=D1xD2...)",
                  name, name);
    }
    return tensor(dtype, given->second, name);
  }
  const ::onnx::TensorShapeProto& declared = tensor_type.shape();
  if (declared.dim_size() > kMaxRank) {
    throw_error(ErrorKind::Unsupported, "graph input '{}' has rank {}; at most {} is supported",
                name, declared.dim_size(), kMaxRank);
  }
  Dims dims;
  for (const ::onnx::TensorShapeProto::Dimension& dim : declared.dim()) {
    dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : kUnknownDim);
  }
  if (given != options.input_dims.end()) {
    const Dims& bound = given->second;
    if (bound.rank() != dims.rank()) {
      throw_error(ErrorKind::ShapeMismatch, "graph input '{}' has rank {}, the dims given {} have {}",
                  name, dims.rank(), bound.to_string(), bound.rank());
    }
    for (int axis = 0; axis < dims.rank(); ++axis) {
      if (dims[axis] != kUnknownDim && dims[axis] != bound[axis]) {
        throw_error(ErrorKind::ShapeMismatch,
                    "graph input '{}' declares dim {} = {}, the dims given {} say {}", name, axis,
                    dims[axis], bound.to_string(), bound[axis]);
      }
    }
    dims = bound;
  }
  return tensor(dtype, dims, name);
}

bool all_inputs_constant(const std::vector<Variable>& inputs) {
  bool any = false;
  for (const Variable& input : inputs) {
    if (!input.defined()) continue;
    if (input.kind() != VariableKind::Constant) return false;
    any = true;
  }
  return any;
}

/// Replaces outputs computed from constants only by their values (import-time evaluation).
void fold_constants(std::vector<Variable>& outputs) {
  std::vector<Variable> computed;
  for (const Variable& output : outputs) {
    if (!output.defined() || output.kind() != VariableKind::Output) continue;
    if (!output.type().is_fully_known() || output.type().dims.product() > kMaxFoldedElements) {
      return;
    }
    computed.push_back(output);
  }
  if (computed.empty()) return;
  FunctionOptions options;
  options.name = "onnx constant folding";
  options.profile = false;
  Function evaluate = function({}, computed, {}, options);
  const std::vector<Tensor> values = evaluate({});
  std::size_t next = 0;
  for (Variable& output : outputs) {
    if (!output.defined() || output.kind() != VariableKind::Output) continue;
    output = constant(values[next++], output.name());
  }
}

bool has_graph_attribute(const ::onnx::NodeProto& node) {
  return std::any_of(node.attribute().begin(), node.attribute().end(),
                     [](const ::onnx::AttributeProto& attribute) {
                       return attribute.type() == ::onnx::AttributeProto::GRAPH ||
                              attribute.has_g();
                     });
}

class Importer final : public SubgraphConverter {
 public:
  Importer(std::string source, const ImportOptions& options)
      : source_(std::move(source)), options_(options) {}

  ImportedModel run(const ::onnx::ModelProto& model) {
    ImportedModel result;
    result.source = source_;
    result.opset = default_domain_opset(model, source_);
    result.producer = model.producer_name();
    if (!model.producer_version().empty()) result.producer += " " + model.producer_version();
    if (result.opset < kMinOpset || result.opset > kMaxOpset) {
      throw_error(ErrorKind::Unsupported, "opset {} of the default domain is not supported; {} to {} are",
                  result.opset, kMinOpset, kMaxOpset);
    }
    opset_ = result.opset;
    if (options_.trainable) {
      if (options_.initializers_as_constants) {
        throw_error(ErrorKind::InvalidArgument,
                    "a trainable import needs its initializers as shared variables; "
                    "initializers_as_constants is set too");
      }
      training_.emplace(options_.random_seed);
    }
    scopes_.emplace_back();
    const ::onnx::GraphProto& graph = model.graph();
    for (const ::onnx::TensorProto& initializer : graph.initializer()) {
      Variable variable = initializer_variable(initializer);
      scopes_.back()[initializer.name()] = variable;
      result.initializers.push_back({initializer.name(), variable});
    }
    for (const ::onnx::ValueInfoProto& input : graph.input()) {
      if (scopes_.back().count(input.name()) != 0) continue;  // an initializer also listed as input
      if (const auto given = options_.input_values.find(input.name());
          given != options_.input_values.end()) {
        scopes_.back()[input.name()] = bound_input(input, given->second);
        continue;
      }
      Variable variable = graph_input(input, options_);
      scopes_.back()[input.name()] = variable;
      result.inputs.push_back({input.name(), variable});
    }
    check_input_dims_names(result.inputs);
    convert_nodes(graph);
    result.node_count = graph.node_size();
    for (const ::onnx::ValueInfoProto& output : graph.output()) {
      result.outputs.push_back({output.name(), graph_output(output.name())});
    }
    if (training_) collect_training_form(result);
    return result;
  }

  std::vector<Variable> convert(const ::onnx::GraphProto& graph,
                                const std::vector<Variable>& inputs) override {
    if (static_cast<std::size_t>(graph.input_size()) != inputs.size()) {
      throw_error(ErrorKind::InvalidArgument, "the graph has {} inputs; the node binds {}",
                  graph.input_size(), inputs.size());
    }
    scopes_.emplace_back();
    const struct PopScope {
      std::vector<Scope>& scopes;
      ~PopScope() { scopes.pop_back(); }
    } pop{scopes_};
    for (const ::onnx::TensorProto& initializer : graph.initializer()) {
      scopes_.back()[initializer.name()] =
          constant(initializer_value(initializer), initializer.name());
    }
    for (int k = 0; k < graph.input_size(); ++k) {
      scopes_.back()[graph.input(k).name()] = inputs[static_cast<std::size_t>(k)];
    }
    convert_nodes(graph);
    std::vector<Variable> outputs;
    for (const ::onnx::ValueInfoProto& output : graph.output()) {
      outputs.push_back(graph_output(output.name()));
    }
    return outputs;
  }

 private:
  // Names visible to a node: its graph's, then those of the graphs that enclose it.
  using Scope = std::unordered_map<std::string, Variable>;

  // A node whose graph attributes are being converted: the nodes inside them take its line in
  // the model and prefix their labels with its own ("loop/add").
  struct EnclosingNode {
    std::uint32_t line = 0;
    std::string label;
  };

  // Inference: a shared variable, or a constant with initializers_as_constants. Trainable: only
  // float initializers of rank >= 1 can be weights; integer ones (shapes, axes, indices) and
  // scalars (Clip's bounds, exporters' folded operands) stay constants, so shape arithmetic
  // still folds at import and nothing a framework does not train gets a gradient step.
  Variable initializer_variable(const ::onnx::TensorProto& initializer) const {
    const Tensor value = initializer_value(initializer);
    const bool as_shared = options_.trainable
                               ? is_floating(value.dtype()) && value.shape().rank() >= 1
                               : !options_.initializers_as_constants;
    return as_shared ? shared_fixed_shape(value, initializer.name())
                     : constant(value, initializer.name());
  }

  // The trainable import's parameters and updates. A shared initializer the outputs do not reach
  // through the graph was read only at import (Resize's scales): it becomes the constant it
  // effectively is. Running averages are state, not parameters.
  void collect_training_form(ImportedModel& result) const {
    const std::vector<Variable> outputs = result.output_variables();
    std::unordered_set<const VariableNode*> reached;
    for (const Variable& output : outputs) reached.insert(output.node());
    for (const ApplyNode* node : ancestors_in_topological_order(outputs)) {
      for (const Variable& input : node->inputs()) reached.insert(input.node());
    }
    for (NamedVariable& initializer : result.initializers) {
      const Variable& variable = initializer.variable;
      if (variable.kind() != VariableKind::Shared || training_->is_state(variable)) continue;
      if (reached.count(variable.node()) != 0) {
        result.parameters.push_back(initializer);
      } else {
        initializer.variable = constant(variable.get_value(), initializer.name);
      }
    }
    result.updates = training_->updates();
  }

  static Tensor initializer_value(const ::onnx::TensorProto& initializer) {
    try {
      return tensor_from_proto(initializer);
    } catch (Error& error) {
      error.add_context(fmt::format("in initializer '{}'", initializer.name()));
      throw;
    }
  }

  [[nodiscard]] const Variable* lookup(const std::string& name) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      if (const auto it = scope->find(name); it != scope->end()) return &it->second;
    }
    return nullptr;
  }

  [[nodiscard]] Variable graph_output(const std::string& name) const {
    const Variable* value = lookup(name);
    if (value == nullptr) {
      throw_error(ErrorKind::Parse,
                  "graph output '{}' is produced by no node, input or initializer", name);
    }
    return *value;
  }

  void convert_nodes(const ::onnx::GraphProto& graph) {
    for (int index = 0; index < graph.node_size(); ++index) {
      const ::onnx::NodeProto& node = graph.node(index);
      try {
        convert_node(node, index);
      } catch (Error& error) {
        error.add_context(fmt::format("in node {} '{}' ({}, opset {})", index, node.name(),
                                      node.op_type(), opset_));
        throw;
      }
    }
  }

  void convert_node(const ::onnx::NodeProto& node, int index) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      throw_error(ErrorKind::Unsupported, "op {} of domain '{}' is not supported", node.op_type(),
                  node.domain());
    }
    const ConverterEntry* entry = converter_table().find(node.op_type(), opset_);
    if (entry == nullptr) {
      throw_error(ErrorKind::Unsupported, "op type {} (opset {}) is not supported", node.op_type(),
                  opset_);
    }
    std::vector<Variable> inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        inputs.emplace_back();
        continue;
      }
      const Variable* value = lookup(name);
      if (value == nullptr) {
        throw_error(ErrorKind::Parse,
                    "reads '{}', which no earlier node, graph input or initializer produces", name);
      }
      inputs.push_back(*value);
    }
    const std::string own_label = node.name().empty() ? node.op_type() : node.name();
    const bool top_level = enclosing_.empty();
    const EnclosingNode site_node{
        top_level ? static_cast<std::uint32_t>(index + 1) : enclosing_.front().line,
        top_level ? own_label : enclosing_.back().label + "/" + own_label};
    SourceSite site{source_, site_node.line, site_node.label};
    ProvenanceScope scope(
        Provenance{std::move(site), fmt::format("onnx:{} '{}'", node.op_type(), site_node.label)},
        /*forced=*/true);
    NodeContext context(node, opset_, inputs, this, training_ ? &*training_ : nullptr);
    enclosing_.push_back(site_node);
    const struct PopEnclosing {
      std::vector<EnclosingNode>& nodes;
      ~PopEnclosing() { nodes.pop_back(); }
    } pop{enclosing_};
    std::vector<Variable> outputs = entry->convert(context);
    const std::vector<std::string> unread = context.unread_attributes();
    if (!unread.empty()) {
      throw_error(ErrorKind::Unsupported, "attribute{} {} of {} not supported",
                  unread.size() > 1 ? "s" : "", fmt::join(unread, ", "), node.op_type());
    }
    // A subgraph may read values of the enclosing graphs that are not constants even when the
    // node's own inputs all are.
    if (all_inputs_constant(inputs) && !has_graph_attribute(node)) fold_constants(outputs);
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& name = node.output(k);
      if (name.empty()) continue;
      if (static_cast<std::size_t>(k) >= outputs.size() || !outputs[static_cast<std::size_t>(k)].defined()) {
        throw_error(ErrorKind::Unsupported, "output {} ('{}') of {} is not produced", k, name,
                    node.op_type());
      }
      // ONNX graphs are in SSA form: a second writer would silently replace the first value for
      // every later reader.
      if (scopes_.back().count(name) != 0) {
        throw_error(ErrorKind::Parse,
                    "writes '{}', which an earlier node, a graph input or an initializer already "
                    "produces; each ONNX value has one producer",
                    name);
      }
      Variable& output = outputs[static_cast<std::size_t>(k)];
      // Name fresh results after the ONNX value so profiles read like the model; never rename a
      // variable a converter passed through (Identity, a no-op Reshape).
      if (output.kind() == VariableKind::Output && output.node()->name.empty()) {
        output.node()->name = name;
      }
      scopes_.back()[name] = output;
    }
  }

  // A dims entry for a name that is no graph input would otherwise be ignored without a word
  // (a typo in `--input`).
  void check_input_dims_names(const std::vector<NamedVariable>& inputs) const {
    for (const auto& [name, dims] : options_.input_dims) {
      const auto is_named = [&](const NamedVariable& input) { return input.name == name; };
      if (std::any_of(inputs.begin(), inputs.end(), is_named)) continue;
      std::vector<std::string> names;
      for (const NamedVariable& input : inputs) names.push_back("'" + input.name + "'");
      const std::string listed = names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
      throw_error(ErrorKind::InvalidArgument,
                  "dims {} are given for '{}', which is not an input of the model (inputs: {})",
                  dims.to_string(), name, listed);
    }
  }

  std::string source_;
  const ImportOptions& options_;
  std::int64_t opset_ = 0;
  std::vector<Scope> scopes_;
  std::vector<EnclosingNode> enclosing_;
  std::optional<TrainingState> training_;  // trainable imports only
};

}  // namespace

std::vector<Variable> ImportedModel::input_variables() const {
  std::vector<Variable> variables;
  for (const NamedVariable& input : inputs) variables.push_back(input.variable);
  return variables;
}

std::vector<Variable> ImportedModel::output_variables() const {
  std::vector<Variable> variables;
  for (const NamedVariable& output : outputs) variables.push_back(output.variable);
  return variables;
}

ImportedModel import_model_bytes(std::string_view bytes,
                                 std::string source,
                                 const ImportOptions& options) {
  try {
    const ::onnx::ModelProto model = parse_model(bytes, source);
    return Importer(source, options).run(model);
  } catch (Error& error) {
    error.add_context(fmt::format("while importing ONNX model '{}'", source));
    throw;
  }
}

ImportedModel import_model(const std::filesystem::path& path, const ImportOptions& options) {
  return import_model_bytes(read_file_bytes(path), path.string(), options);
}

Tensor read_tensor_file(const std::filesystem::path& path) {
  return read_tensor_bytes(read_file_bytes(path), path.string());
}

Tensor read_tensor_bytes(std::string_view bytes, std::string_view source) {
  ::onnx::TensorProto proto;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw_error(ErrorKind::Parse, "'{}' is not a serialized ONNX TensorProto", source);
  }
  try {
    return tensor_from_proto(proto);
  } catch (Error& error) {
    error.add_context(fmt::format("while reading tensor file '{}'", source));
    throw;
  }
}

}  // namespace tscope::onnx
