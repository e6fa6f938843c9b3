// SPDX-License-Identifier: Apache-2.0
#include "tscope/graph/constructors.h"

namespace tscope {

Variable tensor(DType dtype, const Dims& dims, std::string name, const std::source_location& location) {
  return make_input(dtype, dims, std::move(name), location);
}
Variable scalar(DType dtype, std::string name, const std::source_location& location) {
  return make_input(dtype, Dims{}, std::move(name), location);
}
Variable vector(DType dtype, std::string name, Dims dims, const std::source_location& location) {
  if (dims.rank() != 1) throw_error(ErrorKind::InvalidArgument, "vector() needs one dim, got {}", dims.to_string());
  return make_input(dtype, dims, std::move(name), location);
}
Variable matrix(DType dtype, std::string name, Dims dims, const std::source_location& location) {
  if (dims.rank() != 2) throw_error(ErrorKind::InvalidArgument, "matrix() needs two dims, got {}", dims.to_string());
  return make_input(dtype, dims, std::move(name), location);
}
Variable tensor3(DType dtype, std::string name, const std::source_location& location) {
  return make_input(dtype, Dims::filled(3, kUnknownDim), std::move(name), location);
}
Variable tensor4(DType dtype, std::string name, const std::source_location& location) {
  return make_input(dtype, Dims::filled(4, kUnknownDim), std::move(name), location);
}
Variable tensor5(DType dtype, std::string name, const std::source_location& location) {
  return make_input(dtype, Dims::filled(5, kUnknownDim), std::move(name), location);
}
Variable constant(const Tensor& value, std::string name, const std::source_location& location) {
  return make_constant(value, std::move(name), location);
}

namespace {

Variable make_shared_variable(const Tensor& value, std::string name, const Dims& dims,
                              const std::source_location& location) {
  if (!value.defined()) {
    throw_error(ErrorKind::InvalidArgument, "shared variable '{}' needs a defined initial value", name);
  }
  auto node = std::make_shared<VariableNode>();
  node->id = detail::next_graph_id();
  node->type = Type{value.dtype(), dims};
  node->name = name;
  node->kind = VariableKind::Shared;
  node->shared = std::make_shared<SharedStorage>(SharedStorage{std::move(name), node->type, value});
  node->provenance = Provenance{SourceSite::from(location), "shared"};
  return Variable(std::move(node));
}

}  // namespace

Variable shared(const Tensor& value, std::string name, const std::source_location& location) {
  // Unknown dims (Theano's default: shared variables are not broadcastable), so a later value
  // may have another shape.
  return make_shared_variable(value, std::move(name), Dims::filled(value.rank(), kUnknownDim),
                              location);
}

Variable shared_fixed_shape(const Tensor& value, std::string name,
                            const std::source_location& location) {
  return make_shared_variable(value, std::move(name), value.shape(), location);
}

}  // namespace tscope
