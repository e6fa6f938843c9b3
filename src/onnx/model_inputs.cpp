// SPDX-License-Identifier: Apache-2.0
#include "tscope/onnx/model_inputs.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <random>
#include <type_traits>

#include "bool_bytes.h"
#include "reader.h"
#include "tscope/core/checked_math.h"
#include "tscope/core/error.h"

namespace tscope::onnx {
namespace {

/// The dtype of a NumPy descr ("<f4", "|b1", ...).
DType dtype_from_numpy(std::string_view descr, const std::filesystem::path& path) {
  static const std::pair<std::string_view, DType> kKnown[] = {
      {"<f4", DType::Float32}, {"<f8", DType::Float64}, {"|i1", DType::Int8},
      {"|u1", DType::UInt8},   {"<i4", DType::Int32},   {"<i8", DType::Int64},
      {"|b1", DType::Bool}};
  for (const auto& [name, dtype] : kKnown) {
    if (descr == name) return dtype;
  }
  throw_error(ErrorKind::Unsupported, "'{}': NumPy dtype '{}' is not supported", path.string(),
              descr);
}

/// The value of `key` in a NumPy header dict, raw text up to the next top-level comma.
std::string_view header_field(std::string_view header, std::string_view key,
                              const std::filesystem::path& path) {
  const std::string quoted = fmt::format("'{}':", key);
  const std::size_t at = header.find(quoted);
  if (at == std::string_view::npos) {
    throw_error(ErrorKind::Parse, "'{}': .npy header has no '{}'", path.string(), key);
  }
  std::string_view rest = header.substr(at + quoted.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) {
    throw_error(ErrorKind::Parse, "'{}': .npy header has no value for '{}'", path.string(), key);
  }
  if (rest.front() != '(') return rest.substr(0, rest.find(','));
  const std::size_t close = rest.find(')');
  if (close == std::string_view::npos) {
    throw_error(ErrorKind::Parse, "'{}': .npy header's '{}' has no ')'", path.string(), key);
  }
  return rest.substr(0, close + 1);
}

/// The extents of a NumPy shape tuple "(2, 3)", "(5,)" or "()". Negative or non-integer extents
/// are Parse errors naming the file: numpy never writes them, so the header is corrupt.
Dims parse_npy_shape(std::string_view text, const std::filesystem::path& path) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    throw_error(ErrorKind::Parse, "'{}': .npy shape '{}' is not a tuple", path.string(), text);
  }
  text = text.substr(1, text.size() - 2);
  Dims shape;
  while (true) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.empty()) break;
    std::int64_t extent = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), extent);
    if (error != std::errc() || extent < 0) {
      throw_error(ErrorKind::Parse, "'{}': .npy shape has a bad extent '{}' (expected an integer "
                  "from 0 to 2^63-1)", path.string(), text.substr(0, text.find(',')));
    }
    if (shape.rank() == kMaxRank) {
      throw_error(ErrorKind::Unsupported, "'{}': .npy array has rank above {}", path.string(),
                  kMaxRank);
    }
    shape.push_back(extent);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.empty()) break;
    if (text.front() != ',') {
      throw_error(ErrorKind::Parse, "'{}': .npy shape has stray '{}'", path.string(), text);
    }
    text.remove_prefix(1);
  }
  return shape;
}

Tensor read_npy(const std::string& bytes, const std::filesystem::path& path) {
  constexpr std::string_view kMagic = "\x93NUMPY";
  if (bytes.size() < 10 || std::string_view(bytes).substr(0, 6) != kMagic) {
    throw_error(ErrorKind::Parse, "'{}' is not a .npy file", path.string());
  }
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_length = 0;
  std::size_t header_start = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else {
    if (bytes.size() < 12) throw_error(ErrorKind::Parse, "'{}': truncated .npy header", path.string());
    for (int i = 3; i >= 0; --i) header_length = header_length << 8 | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  }
  if (header_start + header_length > bytes.size()) {
    throw_error(ErrorKind::Parse, "'{}': truncated .npy header", path.string());
  }
  const std::string_view header(bytes.data() + header_start, header_length);
  std::string_view descr = header_field(header, "descr", path);
  if (descr.size() < 2) throw_error(ErrorKind::Parse, "'{}': bad descr", path.string());
  descr = descr.substr(1, descr.size() - 2);  // strip quotes
  const DType dtype = dtype_from_numpy(descr, path);
  if (header_field(header, "fortran_order", path).starts_with("True")) {
    throw_error(ErrorKind::Unsupported, "'{}': Fortran-order arrays are not supported", path.string());
  }
  const Dims shape = parse_npy_shape(header_field(header, "shape", path), path);
  const std::size_t data_start = header_start + header_length;
  // A 128-byte header can claim any shape: the byte count is checked before it is compared.
  const auto needed = static_cast<std::size_t>(checked_byte_count(
      shape, dtype, fmt::format("'{}': .npy header", path.string()), ErrorKind::Parse));
  if (bytes.size() - data_start != needed) {
    throw_error(ErrorKind::Parse, "'{}': {} data bytes, shape {} of {} needs {}", path.string(),
                bytes.size() - data_start, shape.to_string(), dtype_name(dtype), needed);
  }
  Tensor out = Tensor::empty(dtype, shape);
  if (needed > 0) std::memcpy(out.raw_data(), bytes.data() + data_start, needed);
  // NumPy reads any non-zero byte of a '|b1' array as True; in C++ only 0 and 1 are bools.
  if (dtype == DType::Bool) normalize_bool_bytes(out);
  return out;
}

// Values are drawn straight into the tensor (no staging vector of doubles: an input may be
// gigabytes), one draw per element in order, so a seed fixes the inputs.
Tensor random_input(const NamedVariable& input, std::mt19937_64& rng) {
  const DType dtype = input.variable.dtype();
  Tensor value = Tensor::empty(dtype, input.variable.type().dims);
  const std::int64_t count = value.numel();
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> integer(0, 9);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(value.raw_data());
    for (std::int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        out[i] = integer(rng) % 2 != 0;
      } else if constexpr (std::is_floating_point_v<T>) {
        out[i] = static_cast<T>(real(rng));
      } else {
        out[i] = static_cast<T>(integer(rng));
      }
    }
  });
  return value;
}

}  // namespace

Dims parse_dims(std::string_view text) {
  Dims dims;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('x', start), text.size());
    std::int64_t extent = -1;
    const auto [ptr, error] = std::from_chars(text.data() + start, text.data() + end, extent);
    if (error != std::errc() || ptr != text.data() + end || extent < 0) {
      throw_error(ErrorKind::InvalidArgument, "bad dims '{}': expected extents like 1x3x224x224",
                  text);
    }
    dims.push_back(extent);
    start = end + 1;
  }
  (void)checked_product(dims, fmt::format("dims '{}'", text));
  return dims;
}

std::pair<std::string, std::string> split_assignment(std::string_view text, std::string_view option) {
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    throw_error(ErrorKind::InvalidArgument, "{} expects NAME=VALUE, got '{}'", option, text);
  }
  return {std::string(text.substr(0, equals)), std::string(text.substr(equals + 1))};
}

Tensor read_input_file(const std::filesystem::path& path) {
  if (path.extension() == ".npy") return read_npy(read_file_bytes(path), path);
  return read_tensor_file(path);
}

void write_tensor_file(const std::filesystem::path& path, const Tensor& value,
                       const std::string& name) {
  ::onnx::TensorProto proto = tensor_to_proto(value, name);
  const std::string bytes = proto.SerializeAsString();
  std::FILE* file = std::fopen(path.string().c_str(), "wb");
  if (file == nullptr) throw_error(ErrorKind::Io, "cannot create '{}'", path.string());
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  if (std::fclose(file) != 0 || !written) throw_error(ErrorKind::Io, "cannot write '{}'", path.string());
}

std::vector<Tensor> model_inputs(const ImportedModel& model,
                                 const std::map<std::string, std::filesystem::path, std::less<>>& files,
                                 std::uint64_t seed) {
  for (const auto& [name, file] : files) {
    const bool known = std::any_of(model.inputs.begin(), model.inputs.end(),
                                   [&](const NamedVariable& input) { return input.name == name; });
    if (!known) {
      throw_error(ErrorKind::InvalidArgument, "data file '{}' is for '{}', which is not an input "
                  "of the model", file.string(), name);
    }
  }
  std::mt19937_64 rng(seed);
  std::vector<Tensor> values;
  for (const NamedVariable& input : model.inputs) {
    const auto file = files.find(input.name);
    if (file == files.end()) {
      if (!input.variable.type().is_fully_known()) {
        throw_error(ErrorKind::InvalidArgument,
                    "input '{}' has type {} with unknown dims; give them with --input {}=D1xD2... "
                    "or give data with --input-data {}=FILE",
                    input.name, input.variable.type().to_string(), input.name, input.name);
      }
      try {
        values.push_back(random_input(input, rng));
      } catch (Error& error) {
        error.add_context(fmt::format("while drawing random values for input '{}' {}", input.name,
                                      input.variable.type().to_string()));
        throw;
      }
      continue;
    }
    Tensor value;
    try {
      value = read_input_file(file->second);
    } catch (Error& error) {
      error.add_context(fmt::format("while reading input '{}' from '{}'", input.name,
                                    file->second.string()));
      throw;
    }
    const Type& type = input.variable.type();
    if (value.dtype() != type.dtype) {
      throw_error(ErrorKind::TypeMismatch, "input '{}' is {}, but '{}' holds {}", input.name,
                  dtype_name(type.dtype), file->second.string(), dtype_name(value.dtype()));
    }
    if (!type.accepts(value)) {
      throw_error(ErrorKind::ShapeMismatch, "input '{}' is declared {}, but '{}' holds dims {}",
                  input.name, type.to_string(), file->second.string(), value.shape().to_string());
    }
    values.push_back(std::move(value));
  }
  return values;
}

// Kept apart from read_npy so that tests and the fuzz target reach the parser without a file.
Tensor read_npy_bytes(const std::string& bytes, const std::filesystem::path& source) {
  return read_npy(bytes, source);
}

}  // namespace tscope::onnx
