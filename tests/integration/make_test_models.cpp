// SPDX-License-Identifier: Apache-2.0
// Writes the small ONNX models, .npy and JSON files the CLI error tests run `tscope` on, into the
// directory given as the only argument (a CTest fixture; nothing binary is checked in).
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "model_builder.h"
#include "training_models.h"

namespace {

using tscope::onnx::testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;
constexpr std::int64_t kTwoTo32 = std::int64_t{1} << 32;

bool write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream stream(path, std::ios::binary);
  stream << bytes;
  return static_cast<bool>(stream);
}

/// A version 1.0 .npy file: magic, header padded with spaces to a 64-byte multiple, no data.
std::string npy_header(const std::string& dict) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tscope_make_test_models DIR\n");
    return 2;
  }
  const std::filesystem::path directory = argv[1];
  std::filesystem::create_directories(directory);
  bool ok = true;

  // Softmax over a declared [2^32, 2^32] input: 2^64 elements.
  ModelBuilder huge;
  huge.input("x", kFloat, {kTwoTo32, kTwoTo32}).output("y", kFloat, {kTwoTo32, kTwoTo32});
  huge.node("Softmax", {"x"}, {"y"}, "softmax");
  ok = write(directory / "huge_input.onnx", huge.bytes()) && ok;

  // Softmax over (N, 4): dims come from --input.
  ModelBuilder symbolic;
  symbolic.input("x", kFloat, {"N", 4}).output("y", kFloat, {"N", 4});
  symbolic.node("Softmax", {"x"}, {"y"}, "softmax");
  ok = write(directory / "symbolic_softmax.onnx", symbolic.bytes()) && ok;

  // Two nodes write 'y': invalid ONNX (each value has one producer).
  ModelBuilder twice;
  twice.input("x", kFloat, {2}).output("y", kFloat, {2});
  twice.node("Relu", {"x"}, {"y"}, "first");
  twice.node("Neg", {"x"}, {"y"}, "second");
  ok = write(directory / "duplicate_output.onnx", twice.bytes()) && ok;

  // Conv + BatchNormalization + Gemm with weights, for `--train` (its output is (4, 3)); a
  // weighted model whose output is 3-D; int64 labels of the wrong length for the first.
  ok = write(directory / "train_cnn.onnx", tscope::onnx::testing::conv_bn_gemm_model().bytes()) &&
       ok;
  ModelBuilder scaled;
  scaled.input("x", kFloat, {2, 3, 4}).output("y", kFloat, {2, 3, 4});
  scaled.float_initializer("w", {4}, {1.0f, 2.0f, 3.0f, 4.0f});
  scaled.node("Mul", {"x", "w"}, {"y"}, "scale");
  ok = write(directory / "scaled_image.onnx", scaled.bytes()) && ok;
  std::string labels = npy_header("{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }");
  labels.append(5 * sizeof(std::int64_t), '\0');
  ok = write(directory / "five_labels.npy", labels) && ok;

  // 128 bytes claiming (2^62, 4) float32, and one with a negative extent.
  ok = write(directory / "huge_shape.npy",
             npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, "
                        "4), }")) &&
       ok;
  ok = write(directory / "negative_shape.npy",
             npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }")) &&
       ok;
  // A file where a --save directory should go.
  ok = write(directory / "not_a_directory", "") && ok;
  // Profiles whose fields have the wrong JSON type.
  ok = write(directory / "format_is_number.json", R"({"format": 5})") && ok;
  ok = write(directory / "version_is_string.json",
             R"({"format": "tscope-profile", "schema_version": "1", "profiles": []})") &&
       ok;
  if (!ok) std::fprintf(stderr, "tscope_make_test_models: cannot write into '%s'\n", argv[1]);
  return ok ? 0 : 1;
}
