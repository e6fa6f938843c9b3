// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builds small ONNX models in memory for importer tests.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tscope::onnx::testing {

/// A dim: a value >= 0, or a symbolic name when `symbol` is non-empty.
struct DimSpec {
  std::int64_t value = -1;
  std::string symbol;
  DimSpec(std::int64_t extent) : value(extent) {}  // NOLINT(google-explicit-constructor)
  DimSpec(const char* name) : symbol(name) {}      // NOLINT(google-explicit-constructor)
};

inline void describe(::onnx::ValueInfoProto* info,
                     const std::string& name,
                     int elem_type,
                     const std::vector<DimSpec>& dims) {
  info->set_name(name);
  auto* tensor_type = info->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(elem_type);
  auto* shape = tensor_type->mutable_shape();
  for (const DimSpec& dim : dims) {
    auto* entry = shape->add_dim();
    if (dim.symbol.empty()) {
      entry->set_dim_value(dim.value);
    } else {
      entry->set_dim_param(dim.symbol);
    }
  }
}

class ModelBuilder {
 public:
  explicit ModelBuilder(std::int64_t opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("tscope-tests");
    auto* entry = model_.add_opset_import();
    entry->set_domain("");
    entry->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  ModelBuilder& input(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
    describe(model_.mutable_graph()->add_input(), name, elem_type, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
    describe(model_.mutable_graph()->add_output(), name, elem_type, dims);
    return *this;
  }
  ModelBuilder& float_initializer(const std::string& name, const std::vector<std::int64_t>& dims,
                                  const std::vector<float>& values) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(::onnx::TensorProto::FLOAT);
    for (std::int64_t extent : dims) tensor->add_dims(extent);
    for (float value : values) tensor->add_float_data(value);
    return *this;
  }
  ModelBuilder& int64_initializer(const std::string& name, const std::vector<std::int64_t>& values) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(::onnx::TensorProto::INT64);
    tensor->add_dims(static_cast<std::int64_t>(values.size()));
    for (std::int64_t value : values) tensor->add_int64_data(value);
    return *this;
  }
  /// A rank-0 initializer of an integer, bool or float type (`data_type` is ONNX's).
  ModelBuilder& scalar_initializer(const std::string& name, int data_type, double value) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(data_type);
    if (data_type == ::onnx::TensorProto::FLOAT) {
      tensor->add_float_data(static_cast<float>(value));
    } else if (data_type == ::onnx::TensorProto::DOUBLE) {
      tensor->add_double_data(value);
    } else if (data_type == ::onnx::TensorProto::INT64) {
      tensor->add_int64_data(static_cast<std::int64_t>(value));
    } else {
      tensor->add_int32_data(static_cast<std::int32_t>(value));  // BOOL and narrow integers
    }
    return *this;
  }
  /// Adds a node; returns it so a test can add attributes.
  ::onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* node = model_.mutable_graph()->add_node();
    node->set_op_type(op_type);
    node->set_name(name);
    for (const std::string& input : inputs) node->add_input(input);
    for (const std::string& output : outputs) node->add_output(output);
    return *node;
  }
  [[nodiscard]] std::string bytes() const { return model_.SerializeAsString(); }
  [[nodiscard]] ::onnx::ModelProto& proto() { return model_; }

 private:
  ::onnx::ModelProto model_;
};

/// Builds a graph attribute: a Loop's or Scan's body, an If's branch.
class GraphBuilder {
 public:
  explicit GraphBuilder(const std::string& name) { graph_.set_name(name); }

  GraphBuilder& input(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
    describe(graph_.add_input(), name, elem_type, dims);
    return *this;
  }
  /// An input without a type, as exporters write loop-carried values.
  GraphBuilder& untyped_input(const std::string& name) {
    graph_.add_input()->set_name(name);
    return *this;
  }
  GraphBuilder& output(const std::string& name) {
    graph_.add_output()->set_name(name);
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op_type,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs,
                          const std::string& name = "") {
    auto* node = graph_.add_node();
    node->set_op_type(op_type);
    node->set_name(name);
    for (const std::string& input : inputs) node->add_input(input);
    for (const std::string& output : outputs) node->add_output(output);
    return *node;
  }
  [[nodiscard]] const ::onnx::GraphProto& proto() const { return graph_; }

 private:
  ::onnx::GraphProto graph_;
};

inline void add_graph_attribute(::onnx::NodeProto& node,
                                const std::string& name,
                                const GraphBuilder& graph) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(::onnx::AttributeProto::GRAPH);
  *attribute->mutable_g() = graph.proto();
}

inline void add_int_attribute(::onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(::onnx::AttributeProto::INT);
  attribute->set_i(value);
}

inline void add_float_attribute(::onnx::NodeProto& node, const std::string& name, float value) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(::onnx::AttributeProto::FLOAT);
  attribute->set_f(value);
}

inline void add_string_attribute(::onnx::NodeProto& node, const std::string& name,
                                 const std::string& value) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(::onnx::AttributeProto::STRING);
  attribute->set_s(value);
}

inline void add_ints_attribute(::onnx::NodeProto& node, const std::string& name,
                               const std::vector<std::int64_t>& values) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(::onnx::AttributeProto::INTS);
  for (std::int64_t value : values) attribute->add_ints(value);
}

}  // namespace tscope::onnx::testing
