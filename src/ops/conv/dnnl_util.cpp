// SPDX-License-Identifier: Apache-2.0
#include "dnnl_util.h"

#include <cstdlib>
#include <new>

#include "tscope/core/error.h"

namespace tscope::ops::detail {
namespace {
// oneDNN streams are cheap handles over the engine's thread pool; CPU execution is synchronous,
// so one stream per thread serves every kernel that thread runs. A stream is not meant to be used
// by two threads at once, and one function may run on several threads (one frame each).
dnnl::stream& shared_stream() {
  thread_local dnnl::stream stream(dnnl_engine());
  return stream;
}

// The buffer dnnl_add_thread_scratchpad's calls share on this thread: at least `bytes`, page
// aligned. Growing frees the old buffer first, so the thread never holds two.
void* thread_scratchpad(std::size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    std::size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.bytes < bytes) {
    constexpr std::size_t kAlignment = 4096;
    const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    std::free(buffer.data);
    buffer.data = nullptr;
    buffer.bytes = 0;
    buffer.data = std::aligned_alloc(kAlignment, rounded);
    if (buffer.data == nullptr) throw std::bad_alloc();
    buffer.bytes = rounded;
  }
  return buffer.data;
}
}  // namespace

const dnnl::engine& dnnl_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::memory::desc dnnl_plain_desc(const Dims& shape) {
  const dnnl::memory::dims dims(shape.begin(), shape.end());
  const Dims strides = contiguous_strides(shape);
  const dnnl::memory::dims plain(strides.begin(), strides.end());
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, plain);
}

dnnl::memory::dims dnnl_spatial(const Spatial& values, int rank, std::int64_t offset) {
  dnnl::memory::dims dims;
  for (int axis = 0; axis < rank; ++axis) {
    dims.push_back(values[static_cast<std::size_t>(axis)] - offset);
  }
  return dims;
}

dnnl::memory dnnl_unbound_memory(const dnnl::memory::desc& desc) {
  return dnnl::memory(desc, dnnl_engine(), DNNL_MEMORY_NONE);
}

dnnl::primitive_attr dnnl_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void dnnl_add_scratchpad(DnnlCall& call, const dnnl::primitive_desc_base& pd) {
  const dnnl::memory::desc scratchpad = pd.scratchpad_desc();
  if (scratchpad.get_size() == 0) return;
  call.args.insert_or_assign(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad, dnnl_engine()));
}

void dnnl_add_thread_scratchpad(DnnlCall& call, const dnnl::primitive_desc_base& pd) {
  const dnnl::memory::desc scratchpad = pd.scratchpad_desc();
  if (scratchpad.get_size() == 0) return;
  call.args.erase(DNNL_ARG_SCRATCHPAD);
  call.thread_scratchpad = scratchpad;
}

void dnnl_bind(DnnlCall& call, int arg, const void* data) {
  // oneDNN only reads through source handles; its API takes them as void*.
  call.args.at(arg).set_data_handle(const_cast<void*>(data));
}

void dnnl_execute(const DnnlCall& call) { dnnl_execute(call, shared_stream()); }

void dnnl_execute(const DnnlCall& call, dnnl::stream& stream) {
  try {
    if (call.thread_scratchpad.get_size() == 0) {
      call.primitive.execute(stream, call.args);
    } else {
      std::unordered_map<int, dnnl::memory> args = call.args;
      args.insert_or_assign(DNNL_ARG_SCRATCHPAD,
                            dnnl::memory(call.thread_scratchpad, dnnl_engine(),
                                         thread_scratchpad(call.thread_scratchpad.get_size())));
      call.primitive.execute(stream, args);
    }
    stream.wait();
  } catch (const dnnl::error& error) {
    throw Error(ErrorKind::Internal, fmt::format("oneDNN failed to execute: {}", error.what()));
  }
}

bool is_unimplemented(const dnnl::error& error, std::string_view what) {
  if (error.status == dnnl_unimplemented) return true;
  throw Error(ErrorKind::Internal, fmt::format("oneDNN rejected {}: {}", what, error.what()));
}

bool inputs_are_float32(std::span<const Variable> inputs, std::initializer_list<int> indices) {
  for (int index : indices) {
    if (inputs[static_cast<std::size_t>(index)].dtype() != DType::Float32) return false;
  }
  return true;
}

}  // namespace tscope::ops::detail
