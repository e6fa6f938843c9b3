// SPDX-License-Identifier: Apache-2.0
// The TensorProto reader (`tscope run --input-data NAME=FILE.pb`, and initializers) on inputs the
// fuzz target found.
#include <onnx/onnx_pb.h>

#include "support/test_util.h"
#include "tscope/onnx/import.h"

namespace tscope::onnx {
namespace {

TEST(TensorProtoReader, BoolRawDataBytesOtherThan0And1AreTrue) {
  ::onnx::TensorProto proto;
  proto.set_data_type(::onnx::TensorProto::BOOL);
  proto.add_dims(3);
  proto.set_raw_data(std::string("\x81\x00\x01", 3));
  const Tensor value = read_tensor_bytes(proto.SerializeAsString(), "bools.pb");
  EXPECT_EQ(value.dtype(), DType::Bool);
  EXPECT_EQ(value.to_doubles(), (std::vector<double>{1, 0, 1}));
}

TEST(TensorProtoReader, BytesThatAreNoTensorProtoAreAParseError) {
  try {
    (void)read_tensor_bytes(std::string("\xff\xff\xff\xff", 4), "bad.pb");
    FAIL() << "read succeeded";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Parse);
  }
}

}  // namespace
}  // namespace tscope::onnx
