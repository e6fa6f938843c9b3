// SPDX-License-Identifier: Apache-2.0
#include "reader.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "bool_bytes.h"
#include "tscope/core/error.h"

namespace tscope::onnx {
namespace {

using ::onnx::TensorProto;

// Little-endian host assumed, like ONNX's raw_data layout (checked once at compile time).
static_assert(std::endian::native == std::endian::little, "ONNX raw_data is little-endian");

template <class T, class Field>
void copy_typed(const Field& field, Tensor& out) {
  T* data = out.data<T>();
  for (int i = 0; i < field.size(); ++i) data[i] = static_cast<T>(field.Get(i));
}

/// Number of values the typed field holding `data_type` contains.
int typed_field_size(const TensorProto& proto, int data_type) {
  switch (data_type) {
    case TensorProto::FLOAT: return proto.float_data_size();
    case TensorProto::DOUBLE: return proto.double_data_size();
    case TensorProto::INT64: return proto.int64_data_size();
    default: return proto.int32_data_size();  // int8, uint8, int32, bool
  }
}

}  // namespace

::onnx::ModelProto parse_model(std::string_view bytes, std::string_view source) {
  ::onnx::ModelProto model;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw_error(ErrorKind::Unsupported, "{}: model of {} bytes exceeds the 2 GiB protobuf limit",
                source, bytes.size());
  }
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw_error(ErrorKind::Parse,
                "{}: not a valid ONNX model (the protobuf message is truncated or corrupt, {} "
                "bytes)",
                source, bytes.size());
  }
  if (!model.has_graph()) {
    throw_error(ErrorKind::Parse, "{}: the model has no graph (not an ONNX model?)", source);
  }
  return model;
}

std::string_view onnx_type_name(int data_type) {
  if (!TensorProto::DataType_IsValid(data_type)) return "invalid";
  static thread_local std::string name;
  name = TensorProto::DataType_Name(static_cast<TensorProto::DataType>(data_type));
  return name;
}

DType dtype_from_onnx(int data_type, std::string_view what) {
  switch (data_type) {
    case TensorProto::FLOAT: return DType::Float32;
    case TensorProto::DOUBLE: return DType::Float64;
    case TensorProto::INT8: return DType::Int8;
    case TensorProto::UINT8: return DType::UInt8;
    case TensorProto::INT32: return DType::Int32;
    case TensorProto::INT64: return DType::Int64;
    case TensorProto::BOOL: return DType::Bool;
    default:
      throw_error(ErrorKind::Unsupported,
                  "'{}' has ONNX data type {} ({}); supported: FLOAT, DOUBLE, INT8, UINT8, INT32, "
                  "INT64, BOOL",
                  what, onnx_type_name(data_type), data_type);
  }
}

Tensor tensor_from_proto(const TensorProto& proto) {
  const std::string& name = proto.name();
  if (proto.data_location() == TensorProto::EXTERNAL) {
    throw_error(ErrorKind::Unsupported, "tensor '{}' keeps its data in an external file", name);
  }
  if (proto.has_segment()) {
    throw_error(ErrorKind::Unsupported, "tensor '{}' is a segment of a larger tensor", name);
  }
  const DType dtype = dtype_from_onnx(proto.data_type(), name);
  if (proto.dims_size() > kMaxRank) {
    throw_error(ErrorKind::Unsupported, "tensor '{}' has rank {}; at most {} is supported", name,
                proto.dims_size(), kMaxRank);
  }
  Dims shape = Dims::filled(proto.dims_size(), 0);
  std::int64_t count = 1;
  for (int i = 0; i < proto.dims_size(); ++i) {
    const std::int64_t extent = proto.dims(i);
    if (extent < 0 || (extent > 0 && count > std::numeric_limits<std::int32_t>::max() / extent)) {
      throw_error(ErrorKind::Parse, "tensor '{}' has an invalid dim {} at axis {}", name, extent,
                  i);
    }
    shape[i] = extent;
    count *= extent;
  }
  const std::size_t item = dtype_size(dtype);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != static_cast<std::size_t>(count) * item) {
      throw_error(ErrorKind::Parse,
                  "tensor '{}': raw_data holds {} bytes; dims {} of {} need {}", name, raw.size(),
                  shape.to_string(), dtype_name(dtype), static_cast<std::size_t>(count) * item);
    }
    Tensor out = Tensor::empty(dtype, shape);
    if (!raw.empty()) std::memcpy(out.raw_data(), raw.data(), raw.size());
    // A bool is one byte in raw_data; a byte other than 0 or 1 is no valid C++ bool.
    if (dtype == DType::Bool) normalize_bool_bytes(out);
    return out;
  }
  const int stored = typed_field_size(proto, proto.data_type());
  if (stored != count) {
    throw_error(ErrorKind::Parse, "tensor '{}': {} values stored; dims {} need {}", name, stored,
                shape.to_string(), count);
  }
  Tensor out = Tensor::empty(dtype, shape);
  switch (dtype) {
    case DType::Float32: copy_typed<float>(proto.float_data(), out); break;
    case DType::Float64: copy_typed<double>(proto.double_data(), out); break;
    case DType::Int64: copy_typed<std::int64_t>(proto.int64_data(), out); break;
    case DType::Int32: copy_typed<std::int32_t>(proto.int32_data(), out); break;
    case DType::Int8: copy_typed<std::int8_t>(proto.int32_data(), out); break;
    case DType::UInt8: copy_typed<std::uint8_t>(proto.int32_data(), out); break;
    case DType::Bool: copy_typed<bool>(proto.int32_data(), out); break;
  }
  return out;
}

::onnx::TensorProto tensor_to_proto(const Tensor& value, const std::string& name) {
  static constexpr std::pair<DType, int> kTypes[] = {
      {DType::Float32, TensorProto::FLOAT}, {DType::Float64, TensorProto::DOUBLE},
      {DType::Int8, TensorProto::INT8},     {DType::UInt8, TensorProto::UINT8},
      {DType::Int32, TensorProto::INT32},   {DType::Int64, TensorProto::INT64},
      {DType::Bool, TensorProto::BOOL}};
  TensorProto proto;
  proto.set_name(name);
  for (const auto& [dtype, onnx_type] : kTypes) {
    if (dtype == value.dtype()) proto.set_data_type(onnx_type);
  }
  for (std::int64_t extent : value.shape()) proto.add_dims(extent);
  const Tensor packed = value.contiguous();
  proto.set_raw_data(packed.raw_data(), static_cast<std::size_t>(packed.nbytes()));
  return proto;
}

}  // namespace tscope::onnx
