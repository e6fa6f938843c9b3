// SPDX-License-Identifier: Apache-2.0
// Input files and generated inputs for `tscope run`: headers that claim impossible shapes,
// directories and endless devices, and random inputs too large to allocate.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "model_builder.h"
#include "support/test_util.h"
#include "tscope/onnx/import.h"
#include "tscope/onnx/model_inputs.h"

namespace tscope::onnx {
namespace {

using tscope::testing::contains;
using tscope::testing::error_of;

using testing::ModelBuilder;
constexpr int kFloat = ::onnx::TensorProto::FLOAT;

/// A .npy file with header `dict` and `data_bytes` zero bytes of data, in the test's temp dir.
std::filesystem::path write_npy(const std::string& name, const std::string& dict,
                                std::size_t data_bytes = 0) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header + std::string(data_bytes, '\0');
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(NpyReader, ReadsAValidFile) {
  const Tensor value = read_input_file(
      write_npy("ok.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24));
  EXPECT_EQ(value.shape(), (Dims{2, 3}));
  EXPECT_EQ(value.dtype(), DType::Float32);
}

TEST(NpyReader, ShapeWhoseCountOverflowsIsAParseError) {
  // A 128-byte header claiming (2^62, 4): the count wraps to 0 without a check.
  const std::filesystem::path path = write_npy(
      "huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }");
  EXPECT_EQ(std::filesystem::file_size(path), 128u);
  const Error error = error_of([&] { (void)read_input_file(path); });
  EXPECT_EQ(error.kind(), ErrorKind::Parse);
  EXPECT_TRUE(contains(error, ".npy header: the element count of shape (4611686018427387904, 4) "
                              "overflows"))
      << error.what();
}

TEST(NpyReader, NegativeExtentIsAParseError) {
  // The old reader skipped the '-' and read (3, 4).
  const Error error = error_of([] {
    (void)read_input_file(
        write_npy("negative.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }",
                  48));
  });
  EXPECT_EQ(error.kind(), ErrorKind::Parse);
  EXPECT_TRUE(contains(error, "bad extent '-3'")) << error.what();
}

TEST(NpyReader, ExtentBeyondInt64IsAParseError) {
  EXPECT_EQ(error_of([] {
              (void)read_input_file(write_npy(
                  "beyond.npy",
                  "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"));
            }).kind(),
            ErrorKind::Parse);
}

TEST(InputFiles, DirectoryIsNamedAsSuch) {
  const Error error = error_of([] { (void)read_input_file(::testing::TempDir()); });
  EXPECT_EQ(error.kind(), ErrorKind::Io);
  EXPECT_TRUE(contains(error, "is a directory, not a file")) << error.what();
}

TEST(InputFiles, EndlessDeviceStopsAtTheLimit) {
  const Error error = error_of([] { (void)read_input_file("/dev/zero"); });
  EXPECT_EQ(error.kind(), ErrorKind::Io);
  EXPECT_TRUE(contains(error, "'/dev/zero' is not a regular file and yields more than"))
      << error.what();
}

TEST(InputDims, CountThatOverflowsIsRejected) {
  const Error error = error_of([] { (void)parse_dims("4294967296x4294967296"); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(contains(error, "dims '4294967296x4294967296': the element count")) << error.what();
}

ImportedModel softmax_model(const Dims& dims) {
  ModelBuilder model;
  model.input("x", kFloat, {"N", 4}).output("y", kFloat, {"N", 4});
  model.node("Softmax", {"x"}, {"y"});
  ImportOptions options;
  options.input_dims["x"] = dims;
  return import_model_bytes(model.bytes(), "softmax.onnx", options);
}

// The values are drawn straight into the tensor now; a seed must still give the same inputs.
TEST(RandomInputs, SeedGivesTheSameUniformValues) {
  const std::vector<Tensor> inputs = model_inputs(softmax_model({2, 4}), {}, 7);
  ASSERT_EQ(inputs.size(), 1u);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (std::int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(inputs[0].at(i), static_cast<double>(static_cast<float>(real(rng)))) << i;
  }
}

TEST(RandomInputs, TooLargeToAllocateIsOutOfMemoryNamingTheInput) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer aborts on this request unless allocator_may_return_null=1";
#endif
  // 2^56 x 4 floats: 2^60 bytes.
  const ImportedModel model = softmax_model({std::int64_t{1} << 56, 4});
  const Error error = error_of([&] { (void)model_inputs(model, {}, 0); });
  EXPECT_EQ(error.kind(), ErrorKind::OutOfMemory);
  EXPECT_TRUE(contains(error, "out of memory allocating 1152921504606846976 bytes"))
      << error.what();
  EXPECT_TRUE(contains(error, "input 'x'")) << error.what();
}

}  // namespace
}  // namespace tscope::onnx
