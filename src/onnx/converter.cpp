// SPDX-License-Identifier: Apache-2.0
#include "converter.h"

#include <fmt/format.h>

#include <algorithm>

#include "reader.h"

namespace tscope::onnx {

using ::onnx::AttributeProto;

NodeContext::NodeContext(const ::onnx::NodeProto& node,
                         std::int64_t opset,
                         std::vector<Variable> inputs,
                         SubgraphConverter* subgraphs,
                         TrainingState* training)
    : node_(node),
      opset_(opset),
      inputs_(std::move(inputs)),
      subgraphs_(subgraphs),
      training_(training) {}

void TrainingState::add_state_update(const Variable& state, const Variable& new_value) {
  state_updates_.push_back({state, new_value});
}

bool TrainingState::is_state(const Variable& variable) const {
  return std::any_of(state_updates_.begin(), state_updates_.end(),
                     [&](const Update& update) { return update.shared.node() == variable.node(); });
}

std::vector<Update> TrainingState::updates() const {
  std::vector<Update> updates = state_updates_;
  for (const RandomStateUpdate& update : random_.state_updates()) {
    updates.push_back({update.shared, update.new_value});
  }
  return updates;
}

bool NodeContext::has_input(int index) const noexcept {
  return index >= 0 && index < num_inputs() && inputs_[static_cast<std::size_t>(index)].defined();
}

const Variable& NodeContext::input(int index) const {
  if (!has_input(index)) {
    throw_error(ErrorKind::InvalidArgument, "input {} is required but {}", index,
                index < num_inputs() ? "omitted" : fmt::format("the node has {}", num_inputs()));
  }
  return inputs_[static_cast<std::size_t>(index)];
}

std::vector<Variable> NodeContext::inputs_from(int first) const {
  std::vector<Variable> present;
  for (int i = first; i < num_inputs(); ++i) {
    if (has_input(i)) present.push_back(inputs_[static_cast<std::size_t>(i)]);
  }
  return present;
}

std::optional<Tensor> NodeContext::constant_input(int index) const {
  if (!has_input(index)) return std::nullopt;
  const Variable& value = input(index);
  if (value.kind() == VariableKind::Constant) return value.constant_value();
  if (value.kind() == VariableKind::Shared) return value.get_value();
  return std::nullopt;
}

Tensor NodeContext::required_constant_input(int index, std::string_view what) const {
  std::optional<Tensor> value = constant_input(index);
  if (!value) {
    throw_error(ErrorKind::Unsupported,
                "input {} ({}) {} (a constant or an initializer, or computed from them)", index,
                what, kNeedsImportTimeValue);
  }
  return *value;
}

std::vector<std::int64_t> NodeContext::constant_ints(int index, std::string_view what) const {
  const Tensor value = required_constant_input(index, what);
  if (value.dtype() != DType::Int64 && value.dtype() != DType::Int32) {
    throw_error(ErrorKind::TypeMismatch, "input {} ({}) must be int64, got {}", index, what,
                dtype_name(value.dtype()));
  }
  std::vector<std::int64_t> values;
  values.reserve(static_cast<std::size_t>(value.numel()));
  for (std::int64_t i = 0; i < value.numel(); ++i) values.push_back(exact_int_at(value, i));
  return values;
}

std::int64_t exact_int_at(const Tensor& value, std::int64_t flat_index) {
  if (value.dtype() == DType::Int64) return value.contiguous().data<std::int64_t>()[flat_index];
  if (value.dtype() == DType::Int32) return value.contiguous().data<std::int32_t>()[flat_index];
  return static_cast<std::int64_t>(value.at(flat_index));
}

const AttributeProto* NodeContext::find_attribute(std::string_view name,
                                                  AttributeProto::AttributeType type) const {
  for (const AttributeProto& attribute : node_.attribute()) {
    if (attribute.name() != name) continue;
    read_.insert(std::string(name));
    // Old exporters leave `type` unset; trust the field that holds data then.
    if (attribute.type() != AttributeProto::UNDEFINED && attribute.type() != type) {
      throw_error(ErrorKind::Parse, "attribute '{}' has type {}, expected {}", name,
                  AttributeProto::AttributeType_Name(attribute.type()),
                  AttributeProto::AttributeType_Name(type));
    }
    return &attribute;
  }
  return nullptr;
}

bool NodeContext::has_attribute(std::string_view name) const {
  return std::any_of(node_.attribute().begin(), node_.attribute().end(),
                     [&](const AttributeProto& attribute) { return attribute.name() == name; });
}

std::int64_t NodeContext::attribute_int(std::string_view name, std::int64_t fallback) const {
  const AttributeProto* attribute = find_attribute(name, AttributeProto::INT);
  return attribute != nullptr ? attribute->i() : fallback;
}

std::int64_t NodeContext::required_attribute_int(std::string_view name) const {
  const AttributeProto* attribute = find_attribute(name, AttributeProto::INT);
  if (attribute == nullptr) {
    throw_error(ErrorKind::InvalidArgument, "attribute '{}' is required", name);
  }
  return attribute->i();
}

double NodeContext::attribute_float(std::string_view name, double fallback) const {
  const AttributeProto* attribute = find_attribute(name, AttributeProto::FLOAT);
  return attribute != nullptr ? static_cast<double>(attribute->f()) : fallback;
}

std::string NodeContext::attribute_string(std::string_view name, std::string fallback) const {
  const AttributeProto* attribute = find_attribute(name, AttributeProto::STRING);
  return attribute != nullptr ? attribute->s() : std::move(fallback);
}

std::vector<std::int64_t> NodeContext::attribute_ints(std::string_view name,
                                                      std::vector<std::int64_t> fallback) const {
  const AttributeProto* attribute = find_attribute(name, AttributeProto::INTS);
  if (attribute == nullptr) return fallback;
  return {attribute->ints().begin(), attribute->ints().end()};
}

std::vector<double> NodeContext::attribute_floats(std::string_view name) const {
  const AttributeProto* attribute = find_attribute(name, AttributeProto::FLOATS);
  if (attribute == nullptr) return {};
  return {attribute->floats().begin(), attribute->floats().end()};
}

Tensor NodeContext::attribute_tensor(std::string_view name) const {
  const AttributeProto* attribute = find_attribute(name, AttributeProto::TENSOR);
  if (attribute == nullptr) {
    throw_error(ErrorKind::InvalidArgument, "attribute '{}' is required", name);
  }
  return tensor_from_proto(attribute->t());
}

const ::onnx::GraphProto& NodeContext::attribute_graph(std::string_view name) const {
  const AttributeProto* attribute = find_attribute(name, AttributeProto::GRAPH);
  if (attribute == nullptr || !attribute->has_g()) {
    throw_error(ErrorKind::InvalidArgument, "attribute '{}' (a graph) is required", name);
  }
  return attribute->g();
}

std::vector<Variable> NodeContext::convert_subgraph(std::string_view name,
                                                    const std::vector<Variable>& inputs) const {
  const ::onnx::GraphProto& graph = attribute_graph(name);
  TSCOPE_CHECK(subgraphs_ != nullptr, "a converter of graph attributes runs without an importer");
  try {
    return subgraphs_->convert(graph, inputs);
  } catch (Error& error) {
    error.add_context(fmt::format("in graph '{}' (attribute '{}')", graph.name(), name));
    throw;
  }
}

void NodeContext::ignore_attribute(std::string_view name) const {
  if (has_attribute(name)) read_.insert(std::string(name));
}

std::vector<std::string> NodeContext::unread_attributes() const {
  std::vector<std::string> unread;
  for (const AttributeProto& attribute : node_.attribute()) {
    if (read_.count(attribute.name()) == 0) unread.push_back(attribute.name());
  }
  return unread;
}

void NodeContext::unsupported(std::string_view what) const {
  throw_error(ErrorKind::Unsupported, "{} is not supported", what);
}

std::int64_t NodeContext::axis(std::int64_t value, int rank, std::string_view what) const {
  if (value < -rank || value >= std::max(rank, 1)) {
    throw_error(ErrorKind::IndexOutOfRange, "{} {} is out of range for rank {}", what, value,
                rank);
  }
  return value < 0 ? value + rank : value;
}

void ConverterTable::add(std::string_view op_type, std::int64_t since_version, ConvertFn convert) {
  entries_.push_back({op_type, since_version, convert});
}

const ConverterEntry* ConverterTable::find(std::string_view op_type, std::int64_t opset) const {
  const ConverterEntry* best = nullptr;
  for (const ConverterEntry& entry : entries_) {
    if (entry.op_type != op_type || entry.since_version > opset) continue;
    if (best == nullptr || entry.since_version > best->since_version) best = &entry;
  }
  return best;
}

std::vector<std::string> ConverterTable::op_types() const {
  std::vector<std::string> names;
  for (const ConverterEntry& entry : entries_) names.emplace_back(entry.op_type);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

const ConverterTable& converter_table() {
  // Leaked, as every registry is (scripts/check_repository, rule 4).
  static const ConverterTable& table = *new ConverterTable([] {
    ConverterTable built;
    register_control_converters(built);
    register_conv_converters(built);
    register_einsum_converters(built);
    register_elementwise_converters(built);
    register_layout_converters(built);
    register_linalg_converters(built);
    register_loss_converters(built);
    register_nnet_converters(built);
    register_ordering_converters(built);
    register_recurrent_converters(built);
    register_reduce_converters(built);
    register_resize_converters(built);
    register_shape_converters(built);
    return built;
  }());
  return table;
}

std::vector<std::string> supported_op_types() { return converter_table().op_types(); }

}  // namespace tscope::onnx
