// SPDX-License-Identifier: Apache-2.0
// RandomStream: one shared state per draw, keyed from the stream's seed and the draw's index.
#include "../shape/shape_values.h"
#include "philox.h"
#include "tscope/graph/apply.h"
#include "tscope/graph/constructors.h"
#include "tscope/ops/elementwise.h"
#include "tscope/ops/elementwise_more.h"
#include "tscope/ops/indexing.h"
#include "tscope/ops/random.h"
#include "tscope/ops/registry.h"
#include "tscope/ops/shape.h"

namespace tscope {
namespace {
// The "shape" attr and the extent inputs of a draw: static entries in the attr, the others
// kUnknownDim there and read at run time from one integer scalar input each.
struct SampleShape {
  std::vector<std::int64_t> attr;
  std::vector<Variable> extents;
};

SampleShape static_sample_shape(const Dims& shape) { return {{shape.begin(), shape.end()}, {}}; }

// Entry `i` of an integer vector as a scalar Variable, without a node where the vector was built
// from scalars (MakeVector) or is a Shape.
Variable vector_entry(const Variable& vector, int i) {
  const ApplyNode* owner = vector.owner();
  if (owner != nullptr && owner->op().name == "MakeVector") return owner->input(i);
  if (owner != nullptr && owner->op().name == "Shape") return shape_i(owner->input(0), i);
  return subtensor(vector, {i});
}

SampleShape symbolic_sample_shape(const Variable& shape, const char* what) {
  if (!is_integral(shape.dtype()) || shape.rank() != 1 || shape.type().dims[0] == kUnknownDim) {
    throw_error(ErrorKind::TypeMismatch,
                "{}: a symbolic sample shape must be an integer vector of static length; got {}",
                what, shape.type().to_string());
  }
  const auto entries = ops::detail::static_vector(shape);
  SampleShape result;
  for (int i = 0; i < static_cast<int>(shape.type().dims[0]); ++i) {
    const std::optional<std::int64_t> known =
        entries ? (*entries)[static_cast<std::size_t>(i)] : std::nullopt;
    if (known) {
      result.attr.push_back(*known);
    } else {
      result.attr.push_back(kUnknownDim);
      result.extents.push_back(vector_entry(shape, i));
    }
  }
  return result;
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
Variable draw(std::vector<RandomStateUpdate>& updates,
              const Variable& state,
              const char* op_name,
              Attrs attrs,
              const SampleShape& shape,
              const std::source_location& location) {
  try {
    attrs.set("shape", shape.attr);
    std::vector<Variable> inputs{state};
    inputs.insert(inputs.end(), shape.extents.begin(), shape.extents.end());
    std::vector<Variable> outputs =
        apply_op(op_def(op_name), std::move(inputs), std::move(attrs), location);
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
  return recorded(draw(updates_, state, "RandomUniform",
                       Attrs{{"low", low}, {"high", high}, {"dtype", dtype}},
                       static_sample_shape(shape), location));
}

Variable RandomStream::uniform(double low,
                               double high,
                               const Variable& shape,
                               DType dtype,
                               const std::source_location& location) {
  const SampleShape sample = symbolic_sample_shape(shape, "RandomUniform");
  Variable state = next_state();
  return recorded(draw(updates_, state, "RandomUniform",
                       Attrs{{"low", low}, {"high", high}, {"dtype", dtype}}, sample, location));
}

Variable RandomStream::normal(double mean, double std, const Dims& shape, DType dtype,
                              const std::source_location& location) {
  Variable state = next_state();
  return recorded(draw(updates_, state, "RandomNormal",
                       Attrs{{"mean", mean}, {"std", std}, {"dtype", dtype}},
                       static_sample_shape(shape), location));
}

Variable RandomStream::normal(double mean,
                              double std,
                              const Variable& shape,
                              DType dtype,
                              const std::source_location& location) {
  const SampleShape sample = symbolic_sample_shape(shape, "RandomNormal");
  Variable state = next_state();
  return recorded(draw(updates_, state, "RandomNormal",
                       Attrs{{"mean", mean}, {"std", std}, {"dtype", dtype}}, sample, location));
}

Variable RandomStream::integers(std::int64_t low, std::int64_t high, const Dims& shape,
                                DType dtype, const std::source_location& location) {
  Variable state = next_state();
  return recorded(draw(updates_, state, "RandomIntegers",
                       Attrs{{"low", low}, {"high", high}, {"dtype", dtype}},
                       static_sample_shape(shape), location));
}

Variable RandomStream::integers(std::int64_t low,
                                std::int64_t high,
                                const Variable& shape,
                                DType dtype,
                                const std::source_location& location) {
  const SampleShape sample = symbolic_sample_shape(shape, "RandomIntegers");
  Variable state = next_state();
  return recorded(draw(updates_, state, "RandomIntegers",
                       Attrs{{"low", low}, {"high", high}, {"dtype", dtype}}, sample, location));
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
  // A static mask shape where x's is static; the unknown extents are read when the function runs.
  const Variable mask = x.type().is_fully_known()
                            ? uniform(0.0, 1.0, x.type().dims, x.dtype(), location)
                            : uniform(0.0, 1.0, shape(x, location), x.dtype(), location);
  const Variable keep = cast(mask >= p, x.dtype());
  return x * (keep * (1.0 / (1.0 - p)));
}

void RandomStream::reseed(std::uint64_t seed) {
  seed_ = seed;
  for (std::size_t draw_index = 0; draw_index < updates_.size(); ++draw_index) {
    updates_[draw_index].shared.set_value(random_state(seed, draw_index));
  }
}

}  // namespace tscope
