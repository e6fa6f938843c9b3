// SPDX-License-Identifier: Apache-2.0
// RandomStream: one shared state per draw, keyed from the stream's seed and the draw's index.
#include "philox.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/random.h"
#include "tscope/ops/registry.h"

namespace tscope {
namespace {
std::vector<std::int64_t> shape_list(const Dims& shape) {
  return {shape.begin(), shape.end()};
}
}  // namespace

Tensor random_state(std::uint64_t seed, std::uint64_t draw) {
  const std::uint64_t key = ops::detail::mix64(seed ^ ops::detail::mix64(draw));
  return Tensor::from_vector<std::int64_t>({2}, {static_cast<std::int64_t>(key), 0});
}

namespace {
thread_local RandomDrawRecorder* t_recorder = nullptr;
}  // namespace

RandomDrawRecorder::RandomDrawRecorder() noexcept : enclosing_(t_recorder) { t_recorder = this; }

RandomDrawRecorder::~RandomDrawRecorder() {
  t_recorder = enclosing_;
  if (enclosing_ != nullptr) {
    enclosing_->draws_.insert(enclosing_->draws_.end(), draws_.begin(), draws_.end());
  }
}

RandomStream::RandomStream(std::uint64_t seed) : seed_(seed) {}

RandomStream::~RandomStream() {
  for (RandomDrawRecorder* recorder = t_recorder; recorder != nullptr;
       recorder = recorder->enclosing_) {
    for (RandomDrawRecorder::Draw& draw : recorder->draws_) {
      if (draw.stream == this) draw.stream = nullptr;
    }
  }
}

void RandomStream::set_state_update(std::size_t draw, const Variable& new_value) {
  if (draw >= updates_.size()) {
    throw_error(ErrorKind::InvalidArgument, "RandomStream: no draw number {} (it has made {})",
                draw, updates_.size());
  }
  updates_[draw].new_value = new_value;
}

Variable RandomStream::recorded(Variable samples) {
  if (t_recorder != nullptr) {
    t_recorder->draws_.push_back({this, updates_.size() - 1, updates_.back()});
  }
  return samples;
}

Variable RandomStream::next_state() {
  const std::uint64_t draw = updates_.size();
  Variable state = shared(random_state(seed_, draw), "random_state_" + std::to_string(draw));
  updates_.push_back({state, Variable()});
  return state;
}

// Each builder appends the state first and fills in its advanced value once the node exists; a
// builder that throws (bad arguments) removes the state again.
namespace {
Variable draw(std::vector<RandomStateUpdate>& updates, const Variable& state, const char* op_name,
              Attrs attrs, const std::source_location& location) {
  try {
    std::vector<Variable> outputs = apply_op(op_def(op_name), {state}, std::move(attrs), location);
    updates.back().new_value = outputs[0];
    return outputs[1];
  } catch (...) {
    updates.pop_back();
    throw;
  }
}
}  // namespace

Variable RandomStream::uniform(double low, double high, const Dims& shape, DType dtype,
                               const std::source_location& location) {
  Variable state = next_state();
  return recorded(
      draw(updates_, state, "RandomUniform",
           Attrs{{"low", low}, {"high", high}, {"shape", shape_list(shape)}, {"dtype", dtype}},
           location));
}

Variable RandomStream::normal(double mean, double std, const Dims& shape, DType dtype,
                              const std::source_location& location) {
  Variable state = next_state();
  return recorded(
      draw(updates_, state, "RandomNormal",
           Attrs{{"mean", mean}, {"std", std}, {"shape", shape_list(shape)}, {"dtype", dtype}},
           location));
}

Variable RandomStream::integers(std::int64_t low, std::int64_t high, const Dims& shape,
                                DType dtype, const std::source_location& location) {
  Variable state = next_state();
  return recorded(
      draw(updates_, state, "RandomIntegers",
           Attrs{{"low", low}, {"high", high}, {"shape", shape_list(shape)}, {"dtype", dtype}},
           location));
}

Variable RandomStream::dropout(const Variable& x, double p, bool training,
                               const std::source_location& location) {
  if (!(p >= 0.0 && p < 1.0)) {
    throw_error(ErrorKind::InvalidArgument, "dropout: need 0 <= p < 1; got p = {}", p);
  }
  if (!is_floating(x.dtype())) {
    throw_error(ErrorKind::TypeMismatch, "dropout: x must be float; got {}", x.type().to_string());
  }
  if (!training || p == 0.0) return x;
  if (!x.type().is_fully_known()) {
    throw_error(ErrorKind::InvalidArgument,
                "dropout: training needs x's dims statically known for the mask; got {}",
                x.type().to_string());
  }
  const Variable keep = cast(uniform(0.0, 1.0, x.type().dims, x.dtype(), location) >= p, x.dtype());
  return x * (keep * (1.0 / (1.0 - p)));
}

void RandomStream::reseed(std::uint64_t seed) {
  seed_ = seed;
  for (std::size_t draw_index = 0; draw_index < updates_.size(); ++draw_index) {
    updates_[draw_index].shared.set_value(random_state(seed, draw_index));
  }
}

}  // namespace tscope
