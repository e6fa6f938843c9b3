// SPDX-License-Identifier: Apache-2.0
// What every oneDNN kernel shares: one CPU engine, one stream per thread, plain (dense
// row-major) memory descriptors, and the conversion of oneDNN's errors. Kernels describe their
// tensors in the layout they already have (nchw / ncdhw / oihw / goihw); where a convolution runs
// on oneDNN's blocked layouts instead, it reorders its operands within its own call
// (conv_dnnl.cpp), so the time of a node is still the time of all the work it does.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "tscope/core/dims.h"
#include "tscope/graph/variable.h"
#include "dnnl_accepts.h"
#include "window.h"

namespace tscope::ops::detail {

/// The shared CPU engine (created on first use; thread-safe initialisation).
[[nodiscard]] const dnnl::engine& dnnl_engine();

/// A dense row-major float32 descriptor of `shape`.
[[nodiscard]] dnnl::memory::desc dnnl_plain_desc(const Dims& shape);

/// The first `rank` entries of `values`, each minus `offset` (oneDNN counts dilation from 0).
[[nodiscard]] dnnl::memory::dims dnnl_spatial(const Spatial& values, int rank,
                                              std::int64_t offset = 0);

/// A memory object over `desc` whose data pointer is set per call (set_data_handle).
[[nodiscard]] dnnl::memory dnnl_unbound_memory(const dnnl::memory::desc& desc);

/// A primitive with its arguments (memory handles whose data pointers are set before each call),
/// prepared for one set of shapes.
struct DnnlCall {
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
  /// The implementation oneDNN chose ("gemm:jit", "jit:avx2", ...), for docs and debugging.
  std::string impl;
  /// The scratchpad, when the call borrows the executing thread's (dnnl_add_thread_scratchpad)
  /// rather than holding one in `args`; a zero descriptor otherwise.
  dnnl::memory::desc thread_scratchpad;
};

/// Attributes every executed primitive is built with: a scratchpad of its own (user mode), which
/// dnnl_add_scratchpad allocates. oneDNN's default shares one process-wide scratchpad between all
/// primitives, which breaks as soon as two threads run primitives at once (one Function called
/// from several threads: each frame holds its own kernel states, hence its own scratchpads).
[[nodiscard]] dnnl::primitive_attr dnnl_attr();

/// Allocates the scratchpad that `pd` (built with dnnl_attr() or an attr in user scratchpad mode)
/// asks for and adds it to `call`'s arguments.
void dnnl_add_scratchpad(DnnlCall& call, const dnnl::primitive_desc_base& pd);

/// Like dnnl_add_scratchpad, for primitives whose scratchpad is large (oneDNN's training-time
/// Winograd keeps its transformed weights and tiles there, tens of megabytes per convolution):
/// `call` keeps no scratchpad of its own, and dnnl_execute lends it one buffer of the executing
/// thread, shared by every such call that thread runs and grown to the largest. Calls run one at
/// a time on a thread, so a training step holds one such buffer instead of one per convolution.
void dnnl_add_thread_scratchpad(DnnlCall& call, const dnnl::primitive_desc_base& pd);

/// Points argument `arg` of `call` at `data` (which must hold the argument's elements).
void dnnl_bind(DnnlCall& call, int arg, const void* data);

/// Runs `call` on the shared stream and waits.
void dnnl_execute(const DnnlCall& call);

/// Runs `call` on `stream` and waits: for primitives run concurrently from several threads, each
/// with a stream of its own.
void dnnl_execute(const DnnlCall& call, dnnl::stream& stream);

/// True when oneDNN reports that it has no implementation for a descriptor (the caller then runs
/// its reference kernel); other oneDNN errors become ErrorKind::Internal naming `what`.
[[nodiscard]] bool is_unimplemented(const dnnl::error& error, std::string_view what);

}  // namespace tscope::ops::detail
