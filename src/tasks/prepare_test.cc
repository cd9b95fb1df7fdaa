#include "tasks/prepare.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/temp_dir_fixture.h"
#include "tasks/task.h"

namespace anvil {
namespace {

// Fixtures with a tiny ReLU task written into their folder.
class TinyTaskTest : public TempDirTest {
 protected:
  Result<Task> TinyRelu() {
    return LoadTask(Write("tiny_relu.py",
                          "import torch\n"
                          "class Model(torch.nn.Module):\n"
                          "    def forward(self, x):\n"
                          "        return torch.relu(x)\n"
                          "def get_inputs():\n"
                          "    return [torch.randn(64)]\n"
                          "def get_init_inputs():\n"
                          "    return []\n"));
  }
};

class BaselineTest : public TinyTaskTest {};

// A baseline is set up, then waits for its word to time: the hooks run in
// that order, the second on another thread while the worker waits, and a
// cached baseline needs neither.
TEST_F(BaselineTest, TheWorkerIsSetUpBeforeItAsksToTimeAndTimesOnlyAfterward) {
  auto task = TinyRelu();
  ASSERT_TRUE(task.ok()) << task.message();
  auto backend = Backend::FromName("cpu");
  ASSERT_TRUE(backend.ok());
  PrepareOptions po;
  po.cache_dir = dir_ / "cache";
  po.trials = 1;
  auto prepared = PrepareTask(task.value(), backend.value(), "test", po);
  ASSERT_TRUE(prepared.ok()) << prepared.message();

  std::mutex mu;
  std::vector<std::string> events;
  std::thread::id timing_thread;
  BaselineHooks hooks;
  hooks.before_start = [&] {
    std::lock_guard<std::mutex> l(mu);
    events.push_back("start");
  };
  hooks.before_timing = [&] {
    // The worker waits meanwhile (anvil waiting for the device alone).
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::lock_guard<std::mutex> l(mu);
    events.push_back("timing");
    timing_thread = std::this_thread::get_id();
  };
  BaselineOptions bo;
  bo.iters = 7;
  bo.deadline = std::chrono::seconds(120);
  Baseline b = MeasureBaseline(task.value(), prepared.value(), backend.value(), BaselineMode::kEager, bo, hooks);
  ASSERT_TRUE(b.stats.has_value()) << b.error;
  EXPECT_EQ(b.stats->samples, 7);
  EXPECT_FALSE(b.cached);
  EXPECT_EQ(events, (std::vector<std::string>{"start", "timing"}));
  EXPECT_NE(timing_thread, std::this_thread::get_id());

  events.clear();
  Baseline again = MeasureBaseline(task.value(), prepared.value(), backend.value(), BaselineMode::kEager, bo, hooks);
  EXPECT_TRUE(again.cached);
  ASSERT_TRUE(again.stats.has_value());
  EXPECT_EQ(again.stats->median_ms, b.stats->median_ms);
  EXPECT_TRUE(events.empty());
}

class PrepareTaskTest : public TinyTaskTest {};

// A preparation takes the device's turn (before_device) only when it runs
// the task worker: a folder found in the cache needs no device, so its
// verdict does not queue behind other tasks' preparations.
TEST_F(PrepareTaskTest, TakesTheDevicesTurnOnlyWhenItPrepares) {
  auto task = TinyRelu();
  ASSERT_TRUE(task.ok()) << task.message();
  auto backend = Backend::FromName("cpu");
  ASSERT_TRUE(backend.ok());
  int turns = 0;
  PrepareOptions po;
  po.cache_dir = dir_ / "cache";
  po.trials = 1;
  po.before_device = [&] { ++turns; };
  auto made = PrepareTask(task.value(), backend.value(), "test", po);
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_FALSE(made.value().cached);
  EXPECT_EQ(turns, 1);
  auto found = PrepareTask(task.value(), backend.value(), "test", po);
  ASSERT_TRUE(found.ok()) << found.message();
  EXPECT_TRUE(found.value().cached);
  EXPECT_EQ(turns, 1);
}

}  // namespace
}  // namespace anvil
