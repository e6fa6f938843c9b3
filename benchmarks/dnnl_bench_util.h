// SPDX-License-Identifier: Apache-2.0
// What the oneDNN comparison benchmarks share: deterministic float32 inputs, plain oneDNN memory
// descriptors, shapes as the int64 constants the gradient ops take, and the two callables the
// paired timing compares: a compiled function and a sequence of oneDNN primitives.
#pragma once

#include <benchmark/benchmark.h>

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tscope/tscope.h"

namespace tscope::bench {

/// A float32 tensor of `shape` holding a repeating ramp (values in [-0.4, 0.6) plus `offset`).
inline Tensor filled(const Dims& shape, double offset = 0.0) {
  std::vector<double> values(static_cast<std::size_t>(shape.product()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<double>(i % 11) * 0.1 - 0.4 + offset;
  }
  return Tensor::from_doubles(DType::Float32, shape, values);
}

/// The dense row-major float32 descriptor the nodes use.
inline dnnl::memory::desc plain(const Dims& shape) {
  const dnnl::memory::dims dims(shape.begin(), shape.end());
  const Dims strides = contiguous_strides(shape);
  return {dims, dnnl::memory::data_type::f32, dnnl::memory::dims(strides.begin(), strides.end())};
}

/// A shape as the 1-D int64 constant the gradient ops take.
inline Variable shape_constant(const Dims& shape) {
  const std::vector<std::int64_t> extents(shape.begin(), shape.end());
  return constant(
      Tensor::from_vector<std::int64_t>({static_cast<std::int64_t>(extents.size())}, extents));
}

// A compiled function (profiling off, output buffers reused) and its inputs.
class FunctionCall {
 public:
  FunctionCall(const std::vector<Variable>& inputs,
               const std::vector<Variable>& outputs,
               std::vector<Tensor> values,
               bool reference_kernels = false) {
    FunctionOptions options;
    options.allow_gc = false;
    options.reference_kernels = reference_kernels;
    function_ = std::make_unique<Function>(function(inputs, outputs, {}, options));
    values_ = std::move(values);
    (*this)();  // first call: oneDNN primitives are built; time the steady state
  }
  void operator()() {
    std::vector<Tensor> outputs = (*function_)(values_);
    benchmark::DoNotOptimize(outputs);
  }

 private:
  std::unique_ptr<Function> function_;
  std::vector<Tensor> values_;
};

// oneDNN primitives executed in sequence, with tensors that own their memory.
class PrimitivesCall {
 public:
  PrimitivesCall() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}
  const dnnl::engine& engine() const { return engine_; }
  dnnl::memory memory(const dnnl::memory::desc& md, const Dims& shape) {
    tensors_.push_back(filled(shape, 0.05 * static_cast<double>(tensors_.size())));
    return {md, engine_, const_cast<void*>(tensors_.back().raw_data())};
  }
  dnnl::memory scratch(const dnnl::memory::desc& md) { return {md, engine_}; }
  void add(dnnl::primitive primitive, std::unordered_map<int, dnnl::memory> args) {
    steps_.push_back({std::move(primitive), std::move(args)});
  }
  void operator()() {
    for (auto& [primitive, args] : steps_) primitive.execute(stream_, args);
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<Tensor> tensors_;
  std::vector<std::pair<dnnl::primitive, std::unordered_map<int, dnnl::memory>>> steps_;
};

}  // namespace tscope::bench
