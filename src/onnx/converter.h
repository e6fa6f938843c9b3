// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ONNX op table: (op_type, since_version) -> a function that builds Tensorscope ops for one
// node. The importer picks the newest entry whose since_version is <= the model's opset. Each
// src/onnx/ops/<category>.cpp registers its entries; nothing else lists ONNX op types.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tscope/core/error.h"
#include "tscope/core/tensor.h"
#include "tscope/graph/variable.h"
#include "tscope/onnx/import.h"
#include "tscope/ops/random.h"
#include "tscope/runtime/function.h"

namespace tscope::onnx {

/// The words of the Unsupported error for an input a converter needs at import time (the
/// conformance runner recognises it and binds the test's parameter inputs instead).
inline constexpr std::string_view kNeedsImportTimeValue = "must be known when the model is imported";

/// Converts a graph attribute (a Loop's or Scan's body, an If's branch) with the importer's own
/// converters. Names the subgraph does not define resolve to the values of the enclosing graphs,
/// innermost first, so a body may read any value its node could.
class SubgraphConverter {
 public:
  SubgraphConverter() = default;
  SubgraphConverter(const SubgraphConverter&) = delete;
  SubgraphConverter& operator=(const SubgraphConverter&) = delete;
  virtual ~SubgraphConverter() = default;
  /// `inputs` bind the subgraph's inputs, in order (InvalidArgument when the counts differ);
  /// returns the subgraph's outputs, in order.
  [[nodiscard]] virtual std::vector<Variable> convert(const ::onnx::GraphProto& graph,
                                                      const std::vector<Variable>& inputs) = 0;
};

/// What a trainable import (ImportOptions::trainable) collects from its converters: the updates a
/// training function applies after each call (BatchNormalization's running averages, the random
/// states of active Dropouts). The shared variables those updates own are model state, never
/// trainable parameters.
class TrainingState {
 public:
  explicit TrainingState(std::uint64_t seed) : random_(seed) {}

  /// The stream active Dropouts draw their masks from.
  [[nodiscard]] RandomStream& random() noexcept { return random_; }
  /// Records `state <- new_value` after each call; `state` is no trainable parameter then.
  void add_state_update(const Variable& state, const Variable& new_value);
  [[nodiscard]] bool is_state(const Variable& variable) const;
  /// The state updates, then the random stream's.
  [[nodiscard]] std::vector<Update> updates() const;

 private:
  RandomStream random_;
  std::vector<Update> state_updates_;
};

/// What a converter sees: the node, its inputs as Variables and typed attribute access. Every
/// attribute a converter reads is marked; the importer rejects nodes with attributes nobody read,
/// so an unsupported attribute is an error rather than silently ignored.
class NodeContext {
 public:
  NodeContext(const ::onnx::NodeProto& node,
              std::int64_t opset,
              std::vector<Variable> inputs,
              SubgraphConverter* subgraphs = nullptr,
              TrainingState* training = nullptr);

  [[nodiscard]] const ::onnx::NodeProto& node() const noexcept { return node_; }
  [[nodiscard]] std::string_view op_type() const { return node_.op_type(); }
  [[nodiscard]] std::int64_t opset() const noexcept { return opset_; }
  /// The trainable import's state (ImportOptions::trainable); nullptr for inference.
  [[nodiscard]] TrainingState* training() const noexcept { return training_; }

  [[nodiscard]] int num_inputs() const noexcept { return static_cast<int>(inputs_.size()); }
  [[nodiscard]] int num_outputs() const noexcept { return node_.output_size(); }
  /// True when input `index` exists and is not omitted (an empty name).
  [[nodiscard]] bool has_input(int index) const noexcept;
  /// Input `index`; InvalidArgument when it is missing.
  [[nodiscard]] const Variable& input(int index) const;
  /// Inputs from `first` on that are present.
  [[nodiscard]] std::vector<Variable> inputs_from(int first) const;
  /// The value of input `index` when it is known at import time (a constant or an initializer);
  /// std::nullopt otherwise.
  [[nodiscard]] std::optional<Tensor> constant_input(int index) const;
  /// As constant_input, but Unsupported naming `what` ("shape", "axes") when not known.
  [[nodiscard]] Tensor required_constant_input(int index, std::string_view what) const;
  /// An int64 list from a constant input (shapes, axes, pads).
  [[nodiscard]] std::vector<std::int64_t> constant_ints(int index, std::string_view what) const;

  [[nodiscard]] bool has_attribute(std::string_view name) const;
  [[nodiscard]] std::int64_t attribute_int(std::string_view name, std::int64_t fallback) const;
  [[nodiscard]] std::int64_t required_attribute_int(std::string_view name) const;
  [[nodiscard]] double attribute_float(std::string_view name, double fallback) const;
  [[nodiscard]] std::string attribute_string(std::string_view name, std::string fallback) const;
  [[nodiscard]] std::vector<std::int64_t> attribute_ints(std::string_view name,
                                                         std::vector<std::int64_t> fallback) const;
  [[nodiscard]] std::vector<double> attribute_floats(std::string_view name) const;
  [[nodiscard]] Tensor attribute_tensor(std::string_view name) const;
  /// A GRAPH attribute; InvalidArgument when the node has none of that name.
  [[nodiscard]] const ::onnx::GraphProto& attribute_graph(std::string_view name) const;
  /// Converts the GRAPH attribute `name` with its inputs bound to `inputs` and returns its
  /// outputs; errors inside it name the subgraph and its node.
  [[nodiscard]] std::vector<Variable> convert_subgraph(std::string_view name,
                                                       const std::vector<Variable>& inputs) const;
  /// Marks attributes the converter accepts but has nothing to do with (a seed, a hint).
  void ignore_attribute(std::string_view name) const;
  /// Attributes present on the node that no accessor read.
  [[nodiscard]] std::vector<std::string> unread_attributes() const;

  /// Unsupported error naming the attribute and the value the converter cannot handle.
  [[noreturn]] void unsupported(std::string_view what) const;
  /// Normalises a possibly negative axis against `rank`; IndexOutOfRange otherwise.
  [[nodiscard]] std::int64_t axis(std::int64_t value, int rank, std::string_view what) const;

 private:
  const ::onnx::AttributeProto* find_attribute(std::string_view name,
                                               ::onnx::AttributeProto::AttributeType type) const;

  const ::onnx::NodeProto& node_;
  std::int64_t opset_;
  std::vector<Variable> inputs_;
  SubgraphConverter* subgraphs_;
  TrainingState* training_;
  mutable std::set<std::string, std::less<>> read_;
};

/// Builds the outputs of one node, in ONNX output order (an undefined Variable for an optional
/// output the converter does not produce).
using ConvertFn = std::vector<Variable> (*)(NodeContext&);

struct ConverterEntry {
  std::string_view op_type;
  std::int64_t since_version = 1;
  ConvertFn convert = nullptr;
};

class ConverterTable {
 public:
  void add(std::string_view op_type, std::int64_t since_version, ConvertFn convert);
  /// The newest entry for `op_type` with since_version <= opset; nullptr when none.
  [[nodiscard]] const ConverterEntry* find(std::string_view op_type, std::int64_t opset) const;
  [[nodiscard]] std::vector<std::string> op_types() const;

 private:
  std::vector<ConverterEntry> entries_;
};

/// Element `flat_index` of an integer tensor read exactly: int64 values beyond 2^53 (exporters'
/// INT64_MAX for "to the end" or "no limit") do not survive Tensor::at's double. Other dtypes go
/// through at().
[[nodiscard]] std::int64_t exact_int_at(const Tensor& value, std::int64_t flat_index);

/// The table of every converter, built once.
[[nodiscard]] const ConverterTable& converter_table();

// One registration function per src/onnx/ops/<category>.cpp.
void register_control_converters(ConverterTable& table);
void register_conv_converters(ConverterTable& table);
void register_einsum_converters(ConverterTable& table);
void register_elementwise_converters(ConverterTable& table);
void register_layout_converters(ConverterTable& table);
void register_linalg_converters(ConverterTable& table);
void register_loss_converters(ConverterTable& table);
void register_nnet_converters(ConverterTable& table);
void register_ordering_converters(ConverterTable& table);
void register_recurrent_converters(ConverterTable& table);
void register_reduce_converters(ConverterTable& table);
void register_resize_converters(ConverterTable& table);
void register_shape_converters(ConverterTable& table);

}  // namespace tscope::onnx
