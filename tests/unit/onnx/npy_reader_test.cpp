// SPDX-License-Identifier: Apache-2.0
// The .npy reader (`tscope run --input-data NAME=FILE.npy`) on a table of byte strings, each with
// the tensor it must give or the kind of error it must raise.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "tscope/onnx/model_inputs.h"

namespace tscope::onnx {
namespace {

/// A version 1.0 file: magic, version, header length, the header padded to 64 bytes, the data.
std::string npy(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + major + '\0';
  const std::size_t length = header.size();
  out += static_cast<char>(length & 0xFF);
  out += static_cast<char>((length >> 8) & 0xFF);
  if (major != 1) out += std::string(2, '\0');
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

struct NpyCase {
  const char* name;
  std::string bytes;
  std::optional<ErrorKind> error;  ///< set: the read must raise this kind
  DType dtype = DType::Float32;
  Dims shape;
  std::vector<double> values;
};

std::vector<NpyCase> cases() {
  return {
      {"float32_2x3",
       npy(dict("<f4", "(2, 3)"), bytes_of<float>({1, 2, 3, 4, 5, -6})),
       std::nullopt,
       DType::Float32,
       {2, 3},
       {1, 2, 3, 4, 5, -6}},
      {"float64_vector",
       npy(dict("<f8", "(2,)"), bytes_of<double>({0.5, -1e300})),
       std::nullopt,
       DType::Float64,
       {2},
       {0.5, -1e300}},
      {"int64_scalar",
       npy(dict("<i8", "()"), bytes_of<std::int64_t>({-7})),
       std::nullopt,
       DType::Int64,
       {},
       {-7}},
      {"int32_version2",
       npy(dict("<i4", "(2, 1)"), bytes_of<std::int32_t>({3, -4}), 2),
       std::nullopt,
       DType::Int32,
       {2, 1},
       {3, -4}},
      {"int8",
       npy(dict("|i1", "(3,)"), bytes_of<std::int8_t>({-128, 0, 127})),
       std::nullopt,
       DType::Int8,
       {3},
       {-128, 0, 127}},
      {"uint8_empty", npy(dict("|u1", "(0, 4)"), ""), std::nullopt, DType::UInt8, {0, 4}, {}},
      {"bool",
       npy(dict("|b1", "(2,)"), std::string("\x01\x00", 2)),
       std::nullopt,
       DType::Bool,
       {2},
       {1, 0}},
      // NumPy reads any non-zero byte as True; a C++ bool must hold 0 or 1 (a fuzz finding).
      {"bool_bytes_other_than_0_and_1",
       npy(dict("|b1", "(3,)"), std::string("\x02\x00\xff", 3)),
       std::nullopt,
       DType::Bool,
       {3},
       {1, 0, 1}},
      {"not_npy", "PK\x03\x04 a zip file, not an array", ErrorKind::Parse},
      {"too_short", std::string("\x93NUMPY\x01", 7), ErrorKind::Parse},
      {"truncated_header", npy(dict("<f4", "(1,)"), bytes_of<float>({1})).substr(0, 20),
       ErrorKind::Parse},
      {"no_descr", npy("{'fortran_order': False, 'shape': (1,), }", bytes_of<float>({1})),
       ErrorKind::Parse},
      {"no_shape", npy("{'descr': '<f4', 'fortran_order': False, }", bytes_of<float>({1})),
       ErrorKind::Parse},
      {"data_too_short", npy(dict("<f4", "(2, 3)"), bytes_of<float>({1, 2, 3})), ErrorKind::Parse},
      {"data_too_long", npy(dict("<f4", "(1,)"), bytes_of<float>({1, 2})), ErrorKind::Parse},
      {"big_endian", npy(dict(">f4", "(1,)"), bytes_of<float>({1})), ErrorKind::Unsupported},
      {"float16", npy(dict("<f2", "(1,)"), std::string(2, '\0')), ErrorKind::Unsupported},
      {"fortran_order", npy(dict("<f4", "(2, 2)", true), bytes_of<float>({1, 2, 3, 4})),
       ErrorKind::Unsupported},
  };
}

TEST(NpyReader, TableOfFiles) {
  for (const NpyCase& c : cases()) {
    SCOPED_TRACE(c.name);
    if (c.error) {
      try {
        (void)read_npy_bytes(c.bytes, std::string(c.name) + ".npy");
        ADD_FAILURE() << "read succeeded";
      } catch (const Error& error) {
        EXPECT_EQ(error.kind(), *c.error) << error.what();
      }
      continue;
    }
    const Tensor value = read_npy_bytes(c.bytes, std::string(c.name) + ".npy");
    EXPECT_EQ(value.dtype(), c.dtype);
    EXPECT_EQ(value.shape(), c.shape);
    EXPECT_EQ(value.to_doubles(), c.values);
  }
}

}  // namespace
}  // namespace tscope::onnx
