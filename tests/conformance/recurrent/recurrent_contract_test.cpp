// SPDX-License-Identifier: Apache-2.0
// What the registry and the profile show of the recurrent ops: printed names, costs, every op
// complete, one node per layer direction in a profiled run, errors naming the operand, and an
// LSTM that trains.
#include <map>

#include "recurrent_test_util.h"
#include "tscope/graph/apply.h"

namespace tscope {
namespace {

std::string printed(const Variable& v) { return v.owner()->op_string(); }

Variable input(std::initializer_list<std::int64_t> dims, const char* name,
               DType dtype = DType::Float32) {
  return tensor(dtype, Dims(dims), name);
}

TEST(RecurrentContract, PrintedNamesShowHiddenDirectionAndSettings) {
  Variable x = input({5, 2, 3}, "x");
  EXPECT_EQ(printed(lstm(x, input({16, 3}, "w"), input({16, 4}, "r")).y), "Lstm{hidden=4,forward}");
  const RecurrentResult peep = lstm(x, input({16, 3}, "w"), input({16, 4}, "r"),
                                    {.peepholes = input({12}, "p"), .reverse = true});
  EXPECT_EQ(printed(peep.y), "Lstm{hidden=4,reverse,peepholes}");
  EXPECT_EQ(printed(grad(sum(peep.y), {x})[0]), "LstmGrad{hidden=4,reverse,peepholes}");
  EXPECT_EQ(printed(gru(x, input({9, 3}, "w"), input({9, 3}, "r"), {.linear_before_reset = true}).y),
            "Gru{hidden=3,forward,linear_before_reset}");
  EXPECT_EQ(printed(gru(x, input({9, 3}, "w"), input({9, 3}, "r")).last_h), "Gru{hidden=3,forward}");
  EXPECT_EQ(printed(rnn(x, input({2, 3}, "w"), input({2, 2}, "r"), {.activation = RnnActivation::Relu}).y),
            "Rnn{hidden=2,forward,relu}");
}

TEST(RecurrentContract, EveryRecurrentOpIsComplete) {
  for (const char* name : {"Rnn", "Gru", "Lstm", "RnnGrad", "GruGrad", "LstmGrad"}) {
    const OpDef& def = op_def(name);
    EXPECT_TRUE(def.reference.available()) << name;
    EXPECT_TRUE(def.fast.available()) << name;
    EXPECT_EQ(def.fast.name, "blas") << name;
    EXPECT_NE(def.cost, nullptr) << name;
    EXPECT_NE(def.print, nullptr) << name;
    // The forward ops differentiate into their Grad op; the Grad ops are not differentiable.
    EXPECT_EQ(def.pullback != nullptr, std::string(name).find("Grad") == std::string::npos) << name;
  }
}

// The kernel library the profile names for the node computing `result`.
std::string label_of(const RecurrentResult& result) {
  const ApplyNode& node = *result.y.owner();
  return std::string(node.op().fast.name_for(node.inputs(), node.attrs()));
}

// x, W and R of a recurrent op, of `dtype`.
std::vector<Variable> operands(DType dtype) {
  return {tensor3(dtype, "x"), matrix(dtype, "w"), matrix(dtype, "r")};
}

TEST(RecurrentContract, ProfileNamesTheLibraryOfTheProducts) {
  // Float32 runs on oneDNN: its LSTM and GRU primitives where they apply, and the BLAS loops
  // (peepholes, sequence_lens, Rnn, every Grad op) on oneDNN's sgemm. Float64 loops run OpenBLAS.
  std::vector<Variable> f32 = operands(DType::Float32);
  std::vector<Variable> f64 = operands(DType::Float64);
  EXPECT_EQ(label_of(lstm(f32[0], f32[1], f32[2])), "dnnl");
  EXPECT_EQ(label_of(lstm(f64[0], f64[1], f64[2])), "blas");
  EXPECT_EQ(
      label_of(lstm(f32[0], f32[1], f32[2], {.peepholes = vector(DType::Float32, "p", {12})})),
      "dnnl");
  for (bool linear_before_reset : {false, true}) {
    EXPECT_EQ(label_of(gru(f32[0], f32[1], f32[2], {.linear_before_reset = linear_before_reset})),
              "dnnl")
        << linear_before_reset;
  }
  EXPECT_EQ(label_of(gru(f64[0], f64[1], f64[2])), "blas");
  const Variable lengths = vector(DType::Int64, "lengths");
  EXPECT_EQ(label_of(gru(f32[0], f32[1], f32[2], {.sequence_lens = lengths})), "dnnl");
  EXPECT_EQ(label_of(rnn(f32[0], f32[1], f32[2])), "dnnl");
  EXPECT_EQ(label_of(rnn(f64[0], f64[1], f64[2])), "blas");
  for (const std::vector<Variable>& operands_of : {f32, f64}) {
    const Variable dw =
        grad(sum(lstm(operands_of[0], operands_of[1], operands_of[2]).y), {operands_of[1]})[0];
    const ApplyNode& backward = *dw.owner();
    EXPECT_EQ(backward.op().name, "LstmGrad");
    EXPECT_EQ(backward.op().fast.name_for(backward.inputs(), backward.attrs()),
              operands_of[0].dtype() == DType::Float32 ? "dnnl" : "blas");
  }
}

Cost cost_of(const Variable& v) {
  const ApplyNode& node = *v.owner();
  std::vector<Dims> inputs, outputs;
  std::vector<DType> dtypes;
  for (const Variable& in : node.inputs()) {
    inputs.push_back(in.type().dims);
    dtypes.push_back(in.dtype());
  }
  for (const Variable& out : node.outputs()) outputs.push_back(out.type().dims);
  return node.op().cost(CostContext{node.op(), inputs, outputs, dtypes, node.attrs()});
}

TEST(RecurrentContract, CostCountsProductsAndBytes) {
  // LSTM, seq 32, batch 8, input 64, hidden 128: 2 * 256 rows * 512 gate units * (64 + 128)
  // multiply-adds, plus 14 flops per hidden unit and step.
  Variable x = input({32, 8, 64}, "x");
  const RecurrentResult out = lstm(x, input({512, 64}, "w"), input({512, 128}, "r"));
  const Cost forward = cost_of(out.y);
  const double products = 2.0 * 256 * 512 * (64 + 128);
  EXPECT_EQ(forward.flops, products + 256.0 * 128 * 14);
  const double elements = 32.0 * 8 * 64 + 512 * 64 + 512 * 128 + 32 * 8 * 128 + 2 * 8 * 128;
  EXPECT_EQ(forward.bytes, elements * 4);
  const Cost backward = cost_of(grad(sum(out.y), {x})[0]);
  EXPECT_EQ(backward.flops, 3 * products + 3 * 256.0 * 128 * 14);
  // An RNN's single gate: 2 * rows * hidden * (input + hidden).
  Variable xr = input({4, 2, 3}, "xr", DType::Float64);
  const RecurrentResult rout = rnn(xr, input({5, 3}, "w", DType::Float64), input({5, 5}, "r", DType::Float64));
  EXPECT_EQ(cost_of(rout.y).flops, 2.0 * 8 * 5 * 8 + 8 * 5 * 3);
  EXPECT_EQ(cost_of(rout.y).bytes, (24.0 + 15 + 25 + 40 + 10) * 8);
}

TEST(RecurrentContract, ProfileShowsOneNodePerDirectionAndOneGradNode) {
  // A bidirectional layer trained one step: Lstm twice (forward, reverse), LstmGrad twice.
  Variable x = input({6, 2, 3}, "x");
  Variable wf = shared(testing::random_tensor(DType::Float32, {16, 3}, 1), "wf");
  Variable rf = shared(testing::random_tensor(DType::Float32, {16, 4}, 2), "rf");
  Variable wb = shared(testing::random_tensor(DType::Float32, {16, 3}, 3), "wb");
  Variable rb = shared(testing::random_tensor(DType::Float32, {16, 4}, 4), "rb");
  const RecurrentResult forward = lstm(x, wf, rf);
  const RecurrentResult backward = lstm(x, wb, rb, {.reverse = true});
  Variable loss = sum(sqr(stack({forward.y, backward.y}, 1)));
  const std::vector<Variable> g = grad(loss, {wf, rf, wb, rb});
  FunctionOptions options;
  options.profile = true;
  Function f = function({x}, {loss}, {{wf, wf - g[0] * 0.1}, {rf, rf - g[1] * 0.1},
                                      {wb, wb - g[2] * 0.1}, {rb, rb - g[3] * 0.1}}, options);
  (void)f({testing::random_tensor(DType::Float32, {6, 2, 3}, 5)});
  std::map<std::string, int> counts;
  for (const profile::NodeRecord& node : f.profile_record().nodes) ++counts[node.op_kind];
  EXPECT_EQ(counts["Lstm"], 2);
  EXPECT_EQ(counts["LstmGrad"], 2);
  EXPECT_EQ(counts["Dot"] + counts["Dot22"] + counts["Gemm"], 0);
}

TEST(RecurrentContract, TrainingAnLstmLowersTheLoss) {
  const std::int64_t steps = 8, batch = 4, features = 3, hidden = 5;
  Variable x = input({steps, batch, features}, "x");
  Variable target = input({batch, hidden}, "target");
  Variable w = shared_fixed_shape(testing::random_tensor(DType::Float32, {4 * hidden, features}, 1, -0.5, 0.5), "w");
  Variable r = shared(testing::random_tensor(DType::Float32, {4 * hidden, hidden}, 2, -0.5, 0.5), "r");
  Variable b = shared(Tensor::zeros(DType::Float32, {8 * hidden}), "b");
  const RecurrentResult out = lstm(x, w, r, {.bias = b});
  Variable loss = mean(sqr(out.last_h - target));
  const std::vector<Variable> g = grad(loss, {w, r, b});
  Function step = function({x, target}, {loss},
                           {{w, w - g[0] * 2.0}, {r, r - g[1] * 2.0}, {b, b - g[2] * 2.0}});
  const Tensor xs = testing::random_tensor(DType::Float32, {steps, batch, features}, 3);
  const Tensor ts = testing::random_tensor(DType::Float32, {batch, hidden}, 4, -0.8, 0.8);
  const double first = step({xs, ts})[0].at(0);
  double last = first;
  for (int i = 0; i < 300; ++i) last = step({xs, ts})[0].at(0);
  EXPECT_LT(last, 0.3 * first) << "first " << first << " last " << last;
}

TEST(RecurrentContract, ErrorsNameTheOperandAndShapes) {
  Variable x = input({5, 2, 3}, "x");
  Variable w = input({16, 3}, "w");
  Variable r = input({16, 4}, "r");
  auto kind_of = [](auto&& build) {
    try {
      build();
    } catch (const Error& error) {
      return error.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of([&] { (void)lstm(x, input({12, 3}, "w"), r); }), ErrorKind::ShapeMismatch);
  EXPECT_EQ(kind_of([&] { (void)lstm(x, input({16, 2}, "w"), r); }), ErrorKind::ShapeMismatch);
  EXPECT_EQ(kind_of([&] { (void)lstm(x, w, r, {.bias = input({16}, "b")}); }), ErrorKind::ShapeMismatch);
  EXPECT_EQ(kind_of([&] { (void)lstm(x, w, r, {.initial_h = input({3, 4}, "h")}); }),
            ErrorKind::ShapeMismatch);
  EXPECT_EQ(kind_of([&] { (void)lstm(x, w, r, {.peepholes = input({8}, "p")}); }),
            ErrorKind::ShapeMismatch);
  EXPECT_EQ(kind_of([&] { (void)lstm(x, w, input({16, 4}, "r", DType::Float64)); }),
            ErrorKind::TypeMismatch);
  EXPECT_EQ(kind_of([&] { (void)lstm(input({5, 6}, "x2"), w, r); }), ErrorKind::TypeMismatch);
  EXPECT_EQ(kind_of([&] { (void)lstm(x, w, r, {.sequence_lens = input({2}, "lens")}); }),
            ErrorKind::TypeMismatch);
  EXPECT_EQ(kind_of([&] {
              (void)lstm(x, w, r, {.sequence_lens = tensor(DType::Int64, {3}, "lens")});
            }),
            ErrorKind::ShapeMismatch);
  EXPECT_EQ(kind_of([&] { (void)lstm(x, w, input({12, 3}, "r")); }), ErrorKind::ShapeMismatch);
  // A hidden extent unknown statically leaves the outputs' last axis unknown.
  EXPECT_EQ(gru(x, input({9, 3}, "w"), matrix(DType::Float32, "r")).y.type().dims, (Dims{5, 2, kUnknownDim}));
  // The message names the op and the operand; the node and its creation site are context.
  try {
    (void)gru(x, input({9, 3}, "w"), input({9, 3}, "r"), {.initial_h = input({2, 5}, "h")});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(error.message().find("Gru"), std::string::npos) << error.what();
    EXPECT_NE(error.message().find("initial_h"), std::string::npos) << error.what();
  }
  // Extents known only at call time are checked by the kernel, naming the node.
  Variable xd = tensor3(DType::Float64, "xd");
  Variable hd = matrix(DType::Float64, "hd");
  Variable rd = matrix(DType::Float64, "rd");
  const RecurrentResult out =
      rnn(xd, constant(Tensor::zeros(DType::Float64, {2, 2})), rd, {.initial_h = hd});
  Function f = function({xd, rd, hd}, {out.y});
  const Tensor r_ok = Tensor::zeros(DType::Float64, {2, 2});
  auto call_error = [&](const Tensor& r_value, const Tensor& h_value) {
    try {
      (void)f({Tensor::zeros(DType::Float64, {3, 2, 2}), r_value, h_value});
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch) << error.what();
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(call_error(r_ok, Tensor::zeros(DType::Float64, {4, 2})).find("initial_h"), std::string::npos);
  EXPECT_NE(call_error(Tensor::zeros(DType::Float64, {3, 3}), Tensor::zeros(DType::Float64, {2, 3}))
                .find("w must have shape"),
            std::string::npos);
  EXPECT_EQ(f({Tensor::zeros(DType::Float64, {3, 2, 2}), r_ok, Tensor::zeros(DType::Float64, {2, 2})})[0]
                .shape(),
            (Dims{3, 2, 2}));
  // sequence_lens outside [0, steps] is caught by the kernel.
  Variable lens = tensor(DType::Int64, {2}, "lens");
  const RecurrentResult masked = gru(xd, constant(Tensor::zeros(DType::Float64, {3, 2})),
                                     constant(Tensor::zeros(DType::Float64, {3, 1})),
                                     {.sequence_lens = lens});
  EXPECT_EQ(printed(masked.y), "Gru{hidden=1,forward,sequence_lens}");
  Function g = function({xd, lens}, {masked.y});
  try {
    (void)g({Tensor::zeros(DType::Float64, {3, 2, 2}), Tensor::from_vector<std::int64_t>({2}, {1, 4})});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::ShapeMismatch) << error.what();
    EXPECT_NE(error.message().find("sequence_lens[1] = 4"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace tscope
