// SPDX-License-Identifier: Apache-2.0
// One Function called from several threads at once: every result must equal the sequential run's,
// profiles must count every call, updates must not be lost, and readers must never see half of
// another call's updates. CI also runs this binary under ThreadSanitizer (the tsan preset).
#include <atomic>
#include <thread>
#include <vector>

#include "support/test_util.h"

namespace tscope {
namespace {

using testing::all_close;
using testing::random_tensor;

constexpr int kThreads = 4;
constexpr int kCallsPerThread = 1000;
constexpr int kDistinctInputs = 16;

// A small network with BLAS, oneDNN and elementwise nodes, and a reduction.
Function small_network(bool allow_gc, bool profile) {
  Variable x = tensor4(DType::Float32, "x");
  Variable kernel = constant(random_tensor(DType::Float32, {4, 3, 3, 3}, 11));
  Variable w = shared(random_tensor(DType::Float32, {4 * 6 * 6, 10}, 12), "w");
  Variable features = relu(conv2d(x, kernel));
  Variable flat = reshape(features, {-1, 4 * 6 * 6});
  Variable logits = dot(flat, w);
  Variable probabilities = softmax(logits);
  FunctionOptions options;
  options.allow_gc = allow_gc;
  options.profile = profile;
  options.name = "small network";
  return function({x}, {probabilities, sum(exp(tanh(logits)))}, {}, options);
}

std::vector<Tensor> distinct_inputs() {
  std::vector<Tensor> inputs;
  for (int i = 0; i < kDistinctInputs; ++i) {
    inputs.push_back(random_tensor(DType::Float32, {2, 3, 8, 8}, 100 + static_cast<std::uint64_t>(i)));
  }
  return inputs;
}

// Runs `body(thread, call)` on kThreads threads, kCallsPerThread times each, all started together.
template <typename Body>
void on_threads(Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int call = 0; call < kCallsPerThread; ++call) body(t, call);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(Concurrency, EveryResultMatchesTheSequentialRun) {
  for (bool allow_gc : {true, false}) {
    SCOPED_TRACE(allow_gc ? "allow_gc" : "buffers kept between calls");
    Function f = small_network(allow_gc, false);
    const std::vector<Tensor> inputs = distinct_inputs();
    std::vector<std::vector<Tensor>> expected;
    for (const Tensor& input : inputs) expected.push_back(f({input}));
    std::atomic<int> mismatches{0};
    on_threads([&](int thread, int call) {
      const int which = (thread * 7 + call) % kDistinctInputs;
      const std::vector<Tensor> got = f({inputs[static_cast<std::size_t>(which)]});
      const auto& want = expected[static_cast<std::size_t>(which)];
      if (got.size() != want.size() || !all_close(got[0], want[0], 1e-6, 1e-7) ||
          !all_close(got[1], want[1], 1e-6, 1e-6)) {
        mismatches.fetch_add(1);
      }
    });
    EXPECT_EQ(mismatches.load(), 0);
  }
}

TEST(Concurrency, ProfileCountsEveryCallWhileSnapshotsAreTaken) {
  Function f = small_network(true, true);
  const std::vector<Tensor> inputs = distinct_inputs();
  std::atomic<bool> done{false};
  std::atomic<int> snapshots{0};
  std::int64_t last_seen = 0;
  bool monotonic = true;
  std::thread watcher([&] {
    while (!done.load()) {
      const profile::FunctionRecord record = f.profile_record();
      monotonic = monotonic && record.call_count >= last_seen;
      last_seen = record.call_count;
      // A snapshot holds whole calls only: every node has run exactly as often as the function.
      for (const profile::NodeRecord& node : record.nodes) {
        monotonic = monotonic && node.call_count == record.call_count;
      }
      snapshots.fetch_add(1);
    }
  });
  on_threads([&](int thread, int call) {
    (void)f({inputs[static_cast<std::size_t>((thread + call) % kDistinctInputs)]});
  });
  done.store(true);
  watcher.join();
  EXPECT_TRUE(monotonic);
  EXPECT_GT(snapshots.load(), 0);
  const profile::FunctionRecord record = f.profile_record();
  EXPECT_EQ(record.call_count, kThreads * kCallsPerThread);
  for (const profile::NodeRecord& node : record.nodes) {
    EXPECT_EQ(node.call_count, kThreads * kCallsPerThread) << node.apply_name;
    std::int64_t signature_calls = 0;
    for (const profile::SignatureRecord& signature : node.signatures) {
      signature_calls += signature.call_count;
    }
    EXPECT_EQ(signature_calls, kThreads * kCallsPerThread) << node.apply_name;
    EXPECT_EQ(node.signatures.size(), 1u) << node.apply_name;  // one shape: merged across frames
  }
}

TEST(Concurrency, UpdatesFromSeveralThreadsAreNotLost) {
  Variable step = scalar(DType::Float64, "step");
  Variable count = shared(Tensor::scalar(0.0, DType::Float64), "count");
  Variable total = shared(Tensor::scalar(0.0, DType::Float64), "total");
  Function accumulate =
      function({step}, {count}, {{count, count + 1.0}, {total, total + step}});
  on_threads([&](int thread, int /*call*/) {
    (void)accumulate({Tensor::scalar(static_cast<double>(thread + 1), DType::Float64)});
  });
  EXPECT_EQ(count.get_value().at(0), kThreads * kCallsPerThread);
  EXPECT_EQ(total.get_value().at(0), kCallsPerThread * (1 + 2 + 3 + 4));
}

TEST(Concurrency, ReadersNeverSeeHalfOfAnUpdate) {
  // Two shared variables updated together; another function reads both on other threads.
  Variable a = shared(Tensor::scalar(0.0, DType::Float64), "a");
  Variable b = shared(Tensor::scalar(0.0, DType::Float64), "b");
  Function advance = function({}, {}, {{a, a + 1.0}, {b, b + 1.0}});
  Function difference = function({}, {a - b});
  std::atomic<int> torn{0};
  on_threads([&](int thread, int /*call*/) {
    if (thread == 0) {
      (void)advance({});
    } else if (difference({})[0].at(0) != 0.0) {
      torn.fetch_add(1);
    }
  });
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(a.get_value().at(0), kCallsPerThread);
}

TEST(Concurrency, SetValueWhileOtherThreadsCall) {
  Variable x = vector(DType::Float32, "x");
  Variable scale = shared(Tensor::scalar(2.0, DType::Float32), "scale");
  Function f = function({x}, {x * scale});
  const Tensor input = Tensor::from_vector<float>({3}, {1, 2, 3});
  std::atomic<int> wrong{0};
  on_threads([&](int thread, int call) {
    if (thread == 0) {
      scale.set_value(Tensor::scalar(call % 2 == 0 ? 2.0 : 3.0, DType::Float32));
      return;
    }
    const double factor = f({input})[0].at(1) / 2.0;
    if (factor != 2.0 && factor != 3.0) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Concurrency, AFailingCallOnOneThreadLeavesOthersCorrect) {
  Variable x = matrix(DType::Float32, "x");
  Variable y = matrix(DType::Float32, "y");
  Function f = function({x, y}, {x + y});
  const Tensor good = Tensor::zeros(DType::Float32, {2, 3});
  const Tensor bad = Tensor::zeros(DType::Float32, {4, 5});
  std::atomic<int> unexpected{0};
  on_threads([&](int thread, int call) {
    if (thread == 0 && call % 3 == 0) {
      try {
        (void)f({good, bad});
        unexpected.fetch_add(1);
      } catch (const Error&) {
      }
      return;
    }
    if (f({good, good})[0].shape() != Dims{2, 3}) unexpected.fetch_add(1);
  });
  EXPECT_EQ(unexpected.load(), 0);
}

// An unprofiled Function lets each thread keep its frame between calls. A frame whose thread has
// exited must be adopted by the next thread, or a program that starts a thread per request would
// keep one frame (with its kept buffers) per thread it ever started.
TEST(Concurrency, FramesOfExitedThreadsAreReused) {
  Variable x = vector(DType::Float32, "x");
  FunctionOptions options;
  options.allow_gc = false;  // every frame keeps its output buffer: the live bytes count frames
  Function f = function({x}, {exp(x) * 2.0}, {}, options);
  // 16 KiB: small enough to run on the calling thread. A kernel split across OpenMP threads is
  // joined inside libgomp, which ThreadSanitizer cannot see (the tsan preset runs this test).
  const Tensor input = Tensor::full(DType::Float32, {4096}, 0.5);
  const Tensor expected = f({input})[0];
  TrackingAllocator& allocator = default_allocator();
  const std::int64_t live_before = allocator.stats().live_bytes;
  int wrong = 0;
  for (int round = 0; round < 20; ++round) {
    std::thread worker([&] {
      if (!all_close(f({input})[0], expected, 0, 0)) ++wrong;
    });
    worker.join();
  }
  EXPECT_EQ(wrong, 0);
  // The first worker makes a frame (the main thread keeps its own); every later worker adopts the
  // frame of the one before. Twenty frames would keep 320 KiB.
  EXPECT_LE(allocator.stats().live_bytes - live_before, std::int64_t{64} << 10);
}

// Threads that start and stop while others call: frames change hands under load.
TEST(Concurrency, ThreadsComingAndGoingGetCorrectResults) {
  Function f = small_network(false, false);
  const std::vector<Tensor> inputs = distinct_inputs();
  std::vector<std::vector<Tensor>> expected;
  for (const Tensor& input : inputs) expected.push_back(f({input}));
  std::atomic<int> mismatches{0};
  for (int wave = 0; wave < 10; ++wave) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int call = 0; call < 20 + 10 * t; ++call) {
          const int which = (wave + t * 5 + call) % kDistinctInputs;
          const auto& want = expected[static_cast<std::size_t>(which)];
          const std::vector<Tensor> got = f({inputs[static_cast<std::size_t>(which)]});
          if (!all_close(got[0], want[0], 1e-6, 1e-7)) mismatches.fetch_add(1);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  EXPECT_EQ(mismatches.load(), 0);
}

// Large tensors released on one thread and taken on another go through the shared block cache:
// every thread must see only its own values, and the live count must come back.
TEST(Concurrency, LargeTensorsReleasedAndTakenOnSeveralThreads) {
  const std::int64_t live_before = default_allocator().stats().live_bytes;
  std::atomic<int> wrong{0};
  std::vector<std::thread> workers;
  for (int id = 0; id < 4; ++id) {
    workers.emplace_back([id, &wrong] {
      for (int round = 0; round < 50; ++round) {
        // 128 KiB to about 1 MiB, so sizes overlap between threads and rounds.
        const std::int64_t count = (32 + (round * 7 + id * 13) % 224) << 10;
        Tensor t = Tensor::full(DType::Float32, {count}, static_cast<double>(id));
        const float* data = static_cast<const float*>(t.raw_data());
        if (data[0] != static_cast<float>(id) || data[count - 1] != static_cast<float>(id)) ++wrong;
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(default_allocator().stats().live_bytes, live_before);
}

}  // namespace
}  // namespace tscope
