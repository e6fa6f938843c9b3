// SPDX-License-Identifier: Apache-2.0
#include "recurrent_reference.h"

#include <cmath>
#include <vector>

namespace tscope::testing {
namespace {

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

struct Extents {
  std::int64_t steps, batch, input, hidden;
};

Extents extents_of(const RecurrentPoint& p) {
  return {p.x.shape()[0], p.x.shape()[1], p.x.shape()[2], p.r.shape()[1]};
}

/// Row `unit` of matrix m (units, width) dotted with `v`.
double row_dot(const Tensor& m, std::int64_t unit, const std::vector<double>& v) {
  const std::int64_t width = m.shape()[1];
  double total = 0;
  for (std::int64_t k = 0; k < width; ++k) total += m.at(unit * width + k) * v[k];
  return total;
}

double optional_at(const Tensor& t, std::int64_t index) { return t.defined() ? t.at(index) : 0.0; }

std::vector<double> x_at(const RecurrentPoint& p, const Extents& n, std::int64_t t, std::int64_t b) {
  std::vector<double> v(n.input);
  for (std::int64_t k = 0; k < n.input; ++k) v[k] = p.x.at((t * n.batch + b) * n.input + k);
  return v;
}

std::vector<std::vector<double>> initial_state(const Tensor& t, const Extents& n) {
  std::vector<std::vector<double>> state(n.batch, std::vector<double>(n.hidden, 0.0));
  for (std::int64_t b = 0; b < n.batch; ++b) {
    for (std::int64_t j = 0; j < n.hidden; ++j) state[b][j] = optional_at(t, b * n.hidden + j);
  }
  return state;
}

Tensor to_tensor(const std::vector<std::vector<std::vector<double>>>& values) {
  const std::int64_t a = values.size();
  const std::int64_t b = a > 0 ? values[0].size() : 0;
  const std::int64_t c = b > 0 ? values[0][0].size() : 0;
  std::vector<double> flat;
  for (const auto& plane : values) {
    for (const auto& row : plane) flat.insert(flat.end(), row.begin(), row.end());
  }
  return Tensor::from_doubles(DType::Float64, {a, b, c}, flat);
}

Tensor to_tensor(const std::vector<std::vector<double>>& values, const Extents& n) {
  std::vector<double> flat;
  for (const auto& row : values) flat.insert(flat.end(), row.begin(), row.end());
  return Tensor::from_doubles(DType::Float64, {n.batch, n.hidden}, flat);
}

/// Runs `step(t, b, h_prev_row) -> h_row` over the sequence in processing order.
template <class Step>
RecurrentExpected run_sequence(const RecurrentPoint& p, Step&& step) {
  const Extents n = extents_of(p);
  std::vector<std::vector<double>> h = initial_state(p.initial_h, n);
  std::vector<std::vector<std::vector<double>>> y(
      n.steps, std::vector<std::vector<double>>(n.batch, std::vector<double>(n.hidden)));
  for (std::int64_t s = 0; s < n.steps; ++s) {
    const std::int64_t t = p.reverse ? n.steps - 1 - s : s;
    for (std::int64_t b = 0; b < n.batch; ++b) {
      const bool runs = !p.sequence_lens.defined() || t < static_cast<std::int64_t>(p.sequence_lens.at(b));
      if (!runs) continue;  // the state is kept; y stays zero
      h[b] = step(t, b, h[b]);
      y[t][b] = h[b];
    }
  }
  return {to_tensor(y), to_tensor(h, n), Tensor()};
}

}  // namespace

RecurrentExpected reference_rnn(const RecurrentPoint& p, bool relu) {
  const Extents n = extents_of(p);
  return run_sequence(p, [&](std::int64_t t, std::int64_t b, const std::vector<double>& h) {
    const std::vector<double> x = x_at(p, n, t, b);
    std::vector<double> next(n.hidden);
    for (std::int64_t j = 0; j < n.hidden; ++j) {
      const double a = row_dot(p.w, j, x) + row_dot(p.r, j, h) + optional_at(p.bias, j) +
                       optional_at(p.bias, n.hidden + j);
      next[j] = relu ? std::max(a, 0.0) : std::tanh(a);
    }
    return next;
  });
}

RecurrentExpected reference_gru(const RecurrentPoint& p, bool linear_before_reset) {
  const Extents n = extents_of(p);
  const std::int64_t H = n.hidden;
  return run_sequence(p, [&](std::int64_t t, std::int64_t b, const std::vector<double>& h) {
    const std::vector<double> x = x_at(p, n, t, b);
    auto wb = [&](std::int64_t unit) { return optional_at(p.bias, unit); };
    auto rb = [&](std::int64_t unit) { return optional_at(p.bias, 3 * H + unit); };
    std::vector<double> z(H), reset(H), reset_h(H), next(H);
    for (std::int64_t j = 0; j < H; ++j) {
      z[j] = sigmoid(row_dot(p.w, j, x) + row_dot(p.r, j, h) + wb(j) + rb(j));
      reset[j] = sigmoid(row_dot(p.w, H + j, x) + row_dot(p.r, H + j, h) + wb(H + j) + rb(H + j));
      reset_h[j] = reset[j] * h[j];
    }
    for (std::int64_t j = 0; j < H; ++j) {
      const std::int64_t unit = 2 * H + j;
      const double candidate =
          linear_before_reset
              ? std::tanh(row_dot(p.w, unit, x) + reset[j] * (row_dot(p.r, unit, h) + rb(unit)) + wb(unit))
              : std::tanh(row_dot(p.w, unit, x) + row_dot(p.r, unit, reset_h) + rb(unit) + wb(unit));
      next[j] = (1.0 - z[j]) * candidate + z[j] * h[j];
    }
    return next;
  });
}

RecurrentExpected reference_lstm(const RecurrentPoint& p) {
  const Extents n = extents_of(p);
  const std::int64_t H = n.hidden;
  std::vector<std::vector<double>> c = initial_state(p.initial_c, n);
  RecurrentExpected result =
      run_sequence(p, [&](std::int64_t t, std::int64_t b, const std::vector<double>& h) {
        const std::vector<double> x = x_at(p, n, t, b);
        auto pre = [&](std::int64_t unit) {
          return row_dot(p.w, unit, x) + row_dot(p.r, unit, h) + optional_at(p.bias, unit) +
                 optional_at(p.bias, 4 * H + unit);
        };
        std::vector<double> next(H);
        for (std::int64_t j = 0; j < H; ++j) {
          const double c_prev = c[b][j];
          const double in = sigmoid(pre(j) + optional_at(p.peepholes, j) * c_prev);
          const double forget = sigmoid(pre(2 * H + j) + optional_at(p.peepholes, 2 * H + j) * c_prev);
          const double cell = std::tanh(pre(3 * H + j));
          c[b][j] = forget * c_prev + in * cell;
          const double out = sigmoid(pre(H + j) + optional_at(p.peepholes, H + j) * c[b][j]);
          next[j] = out * std::tanh(c[b][j]);
        }
        return next;
      });
  result.last_c = to_tensor(c, n);
  return result;
}

RecurrentPoint random_point(DType dtype, int gates, std::int64_t steps, std::int64_t batch,
                            std::int64_t input, std::int64_t hidden, bool bias, bool initial_h,
                            bool initial_c, bool peepholes, std::uint64_t seed) {
  RecurrentPoint p;
  p.x = random_tensor(dtype, {steps, batch, input}, seed);
  p.w = random_tensor(dtype, {gates * hidden, input}, seed + 1);
  p.r = random_tensor(dtype, {gates * hidden, hidden}, seed + 2);
  if (bias) p.bias = random_tensor(dtype, {2 * gates * hidden}, seed + 3);
  if (initial_h) p.initial_h = random_tensor(dtype, {batch, hidden}, seed + 4);
  if (initial_c) p.initial_c = random_tensor(dtype, {batch, hidden}, seed + 5);
  if (peepholes) p.peepholes = random_tensor(dtype, {3 * hidden}, seed + 6);
  return p;
}

}  // namespace tscope::testing
