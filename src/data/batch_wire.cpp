// SPDX-License-Identifier: Apache-2.0
#include "batch_wire.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace tscope::data {
namespace {

constexpr std::uint32_t kMagic = 0x74736231;  // "tsb1"
constexpr std::uint32_t kMaxTensors = 1024;
constexpr std::uint32_t kMaxRank = 16;
constexpr std::uint32_t kMaxErrorText = 1 << 16;

struct Header {
  std::uint32_t magic;
  std::uint32_t failed;
  std::int64_t index;
  std::int64_t busy_ns;
  std::uint32_t count;  // tensors, or the error text's bytes
  std::uint32_t error_kind;
};

struct TensorHeader {
  std::uint8_t dtype;
  std::uint8_t rank;
  std::uint8_t pad[6];
};

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

// Reads exactly `size` bytes; false at end of file before the first byte when `eof_ok`.
bool read_all(int fd, void* data, std::size_t size, const std::string& source, bool eof_ok) {
  auto* bytes = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t read_now = ::read(fd, bytes + got, size - got);
    if (read_now < 0 && errno == EINTR) continue;
    if (read_now < 0) {
      throw_error(ErrorKind::Io, "{}: reading a batch failed: {}", source, std::strerror(errno));
    }
    if (read_now == 0) {
      if (got == 0 && eof_ok) return false;
      throw_error(ErrorKind::Parse, "{}: a batch message was cut short ({} of {} bytes)", source,
                  got, size);
    }
    got += static_cast<std::size_t>(read_now);
  }
  return true;
}

}  // namespace

bool write_message(int fd, const WireMessage& message) {
  Header header{.magic = kMagic,
                .failed = message.failed ? 1U : 0U,
                .index = message.index,
                .busy_ns = message.busy_ns,
                .count = 0,
                .error_kind = static_cast<std::uint32_t>(message.error_kind)};
  if (message.failed) {
    const std::size_t size = std::min<std::size_t>(message.error_text.size(), kMaxErrorText);
    header.count = static_cast<std::uint32_t>(size);
    return write_all(fd, &header, sizeof header) && write_all(fd, message.error_text.data(), size);
  }
  header.count = static_cast<std::uint32_t>(message.batch.size());
  if (!write_all(fd, &header, sizeof header)) return false;
  for (const Tensor& tensor : message.batch) {
    const Tensor dense = tensor.is_contiguous() ? tensor : tensor.contiguous();
    TensorHeader tensor_header{.dtype = static_cast<std::uint8_t>(dense.dtype()),
                               .rank = static_cast<std::uint8_t>(dense.rank()),
                               .pad = {}};
    if (!write_all(fd, &tensor_header, sizeof tensor_header)) return false;
    if (!write_all(fd, dense.shape().begin(),
                   static_cast<std::size_t>(dense.rank()) * sizeof(std::int64_t))) {
      return false;
    }
    if (!write_all(fd, dense.raw_data(), static_cast<std::size_t>(dense.nbytes()))) return false;
  }
  return true;
}

std::optional<WireMessage> read_message(int fd, const std::string& source) {
  Header header{};
  if (!read_all(fd, &header, sizeof header, source, /*eof_ok=*/true)) return std::nullopt;
  if (header.magic != kMagic) {
    throw_error(ErrorKind::Parse, "{}: a batch message does not start with the loader's marker",
                source);
  }
  WireMessage message{.index = header.index, .busy_ns = header.busy_ns};
  if (header.failed != 0) {
    if (header.count > kMaxErrorText) {
      throw_error(ErrorKind::Parse, "{}: an error message of {} bytes is too long", source,
                  header.count);
    }
    message.failed = true;
    message.error_kind = header.error_kind <= static_cast<std::uint32_t>(ErrorKind::Internal)
                             ? static_cast<ErrorKind>(header.error_kind)
                             : ErrorKind::Internal;
    message.error_text.resize(header.count);
    read_all(fd, message.error_text.data(), header.count, source, false);
    return message;
  }
  if (header.count > kMaxTensors) {
    throw_error(ErrorKind::Parse, "{}: a batch of {} tensors is more than {}", source, header.count,
                kMaxTensors);
  }
  for (std::uint32_t t = 0; t < header.count; ++t) {
    TensorHeader tensor_header{};
    read_all(fd, &tensor_header, sizeof tensor_header, source, false);
    if (tensor_header.dtype > static_cast<std::uint8_t>(DType::Float64) ||
        tensor_header.rank > kMaxRank) {
      throw_error(ErrorKind::Parse, "{}: tensor {} of batch {} has dtype code {} and rank {}",
                  source, t, header.index, tensor_header.dtype, tensor_header.rank);
    }
    std::vector<std::int64_t> dims(tensor_header.rank);
    read_all(fd, dims.data(), dims.size() * sizeof(std::int64_t), source, false);
    Tensor tensor = Tensor::empty(static_cast<DType>(tensor_header.dtype), Dims(dims));
    read_all(fd, tensor.raw_data(), static_cast<std::size_t>(tensor.nbytes()), source, false);
    message.batch.push_back(std::move(tensor));
  }
  return message;
}

}  // namespace tscope::data
