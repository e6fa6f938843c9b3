// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Random numbers from seedable, reproducible streams (Theano's RandomStreams).
///
///   RandomStream rng(42);
///   Variable noise = rng.normal(0.0, 1.0, {64, 784}, DType::Float32);
///   std::vector<Update> updates;
///   for (const RandomStateUpdate& u : rng.state_updates()) updates.push_back({u.shared, u.new_value});
///   Function f = function({x}, {x + noise}, updates);   // each call draws fresh noise
///
/// Design. Every draw (each call of uniform/normal/integers) owns a shared variable holding its
/// generator state, an int64 vector [key, counter]. The random op reads the state and has two
/// outputs: the advanced state [key, counter + numel] and the samples. Sample i is a pure function
/// of (key, counter + i) through the counter-based Philox4x32-10 generator, so results depend on
/// the seed only, never on thread count or call order of other draws. Successive calls of a
/// compiled function give fresh samples only when the function applies state_updates() (the
/// states advance after each call, like Theano's default updates); without them every call
/// repeats the same samples. The same seed gives the same sequence in every run. The ops have zero
/// gradient with respect to the state.

#include <cstdint>
#include <source_location>
#include <vector>

#include "tscope/graph/variable.h"

#pragma GCC visibility push(default)

namespace tscope {

/// One state update to pass to function(): after each call, `shared` takes `new_value` (the
/// fields match tscope::Update so the conversion is a plain copy).
struct RandomStateUpdate {
  Variable shared;
  Variable new_value;
};

class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed);

  /// Samples uniform in [low, high), float dtype. Throws InvalidArgument unless low < high and
  /// every dim >= 0; TypeMismatch for a non-float dtype.
  Variable uniform(double low, double high, const Dims& shape, DType dtype = DType::Float64,
                   const std::source_location& location = std::source_location::current());
  /// Samples from N(mean, std^2) (Box-Muller), float dtype. Throws InvalidArgument for std < 0.
  Variable normal(double mean, double std, const Dims& shape, DType dtype = DType::Float64,
                  const std::source_location& location = std::source_location::current());
  /// Integers uniform in [low, high), integer dtype. Throws InvalidArgument unless low < high and
  /// both fit the dtype.
  Variable integers(std::int64_t low, std::int64_t high, const Dims& shape,
                    DType dtype = DType::Int64,
                    const std::source_location& location = std::source_location::current());

  /// The same draws with a symbolic sample shape: an integer vector of static length, such as
  /// shape(x) or make_vector({n, 3}). Extents known at build time stay static; the others are read
  /// when the function runs (a negative one throws InvalidArgument naming the node). Throws
  /// TypeMismatch for a shape that is not such a vector.
  Variable uniform(double low,
                   double high,
                   const Variable& shape,
                   DType dtype = DType::Float64,
                   const std::source_location& location = std::source_location::current());
  Variable normal(double mean,
                  double std,
                  const Variable& shape,
                  DType dtype = DType::Float64,
                  const std::source_location& location = std::source_location::current());
  Variable integers(std::int64_t low,
                    std::int64_t high,
                    const Variable& shape,
                    DType dtype = DType::Int64,
                    const std::source_location& location = std::source_location::current());

  /// Inverted dropout of a float x. Training: each element is kept with probability 1 - p (a
  /// Bernoulli mask, uniform(0, 1) >= p, from a draw of this stream over x's shape) and
  /// scaled by 1 / (1 - p), so the expectation is x; the gradient is the same mask and scale.
  /// Inference (training false) and p = 0: x itself, no draw. Throws InvalidArgument unless
  /// 0 <= p < 1; TypeMismatch for a non-float x.
  Variable dropout(const Variable& x, double p, bool training = true,
                   const std::source_location& location = std::source_location::current());

  /// The updates that advance every state this stream created; pass them to function().
  [[nodiscard]] const std::vector<RandomStateUpdate>& state_updates() const noexcept {
    return updates_;
  }
  /// Resets every state to the one a fresh RandomStream(seed) would give its draws.
  void reseed(std::uint64_t seed);
  /// Sets the value draw number `draw`'s state takes after each call: scan() points a draw made
  /// inside a step at the loop's final state. Throws InvalidArgument for a draw this stream has
  /// not made.
  void set_state_update(std::size_t draw, const Variable& new_value);

  RandomStream(const RandomStream&) = default;
  RandomStream& operator=(const RandomStream&) = default;
  ~RandomStream();

 private:
  Variable next_state();
  Variable recorded(Variable samples);

  std::uint64_t seed_;
  std::vector<RandomStateUpdate> updates_;
};

/// While alive, records the draws made on this thread by any RandomStream. scan() holds one while
/// the step function runs, so that draws inside a step advance their state every step. Recorders
/// nest: the innermost records, and when it ends its draws pass to the enclosing one (a loop
/// inside a loop's step). A stream that ends while recorded is dropped from the draws' `stream`.
class RandomDrawRecorder {
 public:
  struct Draw {
    RandomStream* stream;  // null once the stream has ended
    std::size_t index;     // the draw's index in the stream's state_updates()
    RandomStateUpdate update;
  };
  RandomDrawRecorder() noexcept;
  ~RandomDrawRecorder();
  RandomDrawRecorder(const RandomDrawRecorder&) = delete;
  RandomDrawRecorder& operator=(const RandomDrawRecorder&) = delete;

  [[nodiscard]] std::vector<Draw>& draws() noexcept { return draws_; }

 private:
  friend class RandomStream;
  std::vector<Draw> draws_;
  RandomDrawRecorder* enclosing_;
};

/// The state a stream seeded with `seed` gives its draw number `draw`: int64 [key, 0].
[[nodiscard]] Tensor random_state(std::uint64_t seed, std::uint64_t draw);

}  // namespace tscope

#pragma GCC visibility pop
