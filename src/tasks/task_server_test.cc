#include "tasks/task_server.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/temp_dir_fixture.h"
#include "core/unix_message.h"
#include "integrity/candidate_sandbox.h"

namespace anvil {
namespace {

class TaskServerTest : public TempDirTest {
 protected:
  PreparedTask Prepare(const Task& task) {
    PrepareOptions po;
    po.cache_dir = dir_ / "cache";
    po.trials = 2;
    auto prepared = PrepareTask(task, Backend::FromName("cpu").value(), "test", po);
    EXPECT_TRUE(prepared.ok()) << prepared.message();
    return prepared.value();
  }
  Task TinyTask() {
    auto task = LoadTask(Write("tiny_relu.py",
                               "import torch\n"
                               "class Model(torch.nn.Module):\n"
                               "    def forward(self, x):\n"
                               "        return torch.relu(x)\n"
                               "def get_inputs():\n"
                               "    return [torch.randn(64)]\n"
                               "def get_init_inputs():\n"
                               "    return []\n"));
    EXPECT_TRUE(task.ok()) << task.message();
    return task.value();
  }
};

// A candidate's side of the session, by hand: the hello, then one trial.
nlohmann::json Ask(int fd, const std::string& request) {
  EXPECT_TRUE(SendUnixMessage(fd, request));
  return nlohmann::json::parse(ReceiveUnixMessage(fd), nullptr, false);
}

TEST_F(TaskServerTest, PreparingKeepsTheTrialSeedsWhereNoCandidateReads) {
  const PreparedTask prepared = Prepare(TinyTask());
  ASSERT_EQ(prepared.seeds.size(), 2u);
  EXPECT_FALSE(prepared.streamed);
  EXPECT_NE(prepared.seeds[0], prepared.seeds[1]);
  for (const auto& path : CandidateReadablePrepared(prepared.dir)) {
    EXPECT_EQ(path.string().find("seeds"), std::string::npos) << path;
  }
}

TEST_F(TaskServerTest, ASessionFitsWhenItsTrialsAndMarginFitTheBudget) {
  // The server says its rule in its hello: 4 trials' bytes and 1 GiB.
  constexpr int64_t kGiB = int64_t{1} << 30;
  auto server = TaskServer::For(Backend::FromName("cpu").value(), 3 * kGiB);
  ASSERT_TRUE(server.ok()) << server.message();
  EXPECT_TRUE(server.value()->SessionFits(0));  // Not streamed: no size known.
  EXPECT_TRUE(server.value()->SessionFits(kGiB / 2));
  EXPECT_FALSE(server.value()->SessionFits(kGiB / 2 + 1));
  EXPECT_FALSE(server.value()->SessionFits(std::numeric_limits<int64_t>::max()));
  auto small = TaskServer::For(Backend::FromName("cpu").value(), kGiB / 2);  // Below the margin alone.
  ASSERT_TRUE(small.ok()) << small.message();
  EXPECT_FALSE(small.value()->SessionFits(1));
}

TEST_F(TaskServerTest, SessionsAndBaselinesReserveTheirBytesOfTheBudgetOnAGpuAlone) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  auto server = TaskServer::For(Backend::FromName("cpu").value(), 40 * kGiB);
  ASSERT_TRUE(server.ok()) << server.message();
  // A session: 4 trials' bytes and the 1 GiB margin; a baseline: 2 and the margin.
  EXPECT_EQ(server.value()->SessionBytes(8 * kGiB), 33 * kGiB);
  EXPECT_EQ(server.value()->BaselineBytes(8 * kGiB), 17 * kGiB);
  EXPECT_EQ(server.value()->SessionBytes(0), kGiB);
  EXPECT_EQ(server.value()->SessionBytes(std::numeric_limits<int64_t>::max()), 40 * kGiB + 1);
  EXPECT_EQ(server.value()->BaselineBytes(std::numeric_limits<int64_t>::max()), 40 * kGiB + 1);
  // On the cpu the budget is the kept tasks' alone: two sessions beyond it reserve nothing (else this would wait
  // forever for the first).
  RoomHold first = server.value()->ReserveSession(std::numeric_limits<int64_t>::max());
  RoomHold second = server.value()->ReserveSession(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(second.waited(), 0);
}

TEST_F(TaskServerTest, ServesASessionAndADeadServerIsAnvilsErrorThenStartsAgain) {
  const Task task = TinyTask();
  const PreparedTask prepared = Prepare(task);
  // A budget of its own: a server of this test's alone.
  auto server = TaskServer::For(Backend::FromName("cpu").value(), 12345);
  ASSERT_TRUE(server.ok()) << server.message();
  auto session = server.value()->Open(task, prepared);
  ASSERT_TRUE(session.ok()) << session.message();
  const int fd = session.value()->candidate_fd();
  EXPECT_EQ(nlohmann::json::parse(ReceiveUnixMessage(fd), nullptr, false)["trials"], 2);
  nlohmann::json reply = Ask(fd, R"({"get": "trial", "k": 1})");
  ASSERT_TRUE(reply.contains("tensors")) << reply.dump();
  EXPECT_EQ(reply["tensors"][0]["shape"], nlohmann::json::array({64}));
  auto end = session.value()->Close();
  ASSERT_TRUE(end.ok()) << end.message();
  EXPECT_EQ(end.value().served, std::vector<int>{1});
  EXPECT_EQ(end.value().error, "");
  EXPECT_EQ(end.value().candidate_error, "");
  auto stats = server.value()->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(nlohmann::json::parse(stats.value())["loads"], 1);

  // The server dies while a candidate runs: closing that session is anvil's error.
  auto second = server.value()->Open(task, prepared);
  ASSERT_TRUE(second.ok()) << second.message();
  const pid_t dead = server.value()->pid();
  ASSERT_EQ(kill(dead, SIGKILL), 0);
  auto closed = second.value()->Close();
  ASSERT_FALSE(closed.ok());
  EXPECT_TRUE(closed.status().machine_error()) << closed.message();
  EXPECT_NE(closed.message().find("task server"), std::string::npos) << closed.message();
  EXPECT_FALSE(server.value()->alive());
  auto again = TaskServer::For(Backend::FromName("cpu").value(), 12345);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_NE(again.value()->pid(), dead);
  EXPECT_TRUE(again.value()->Open(task, prepared).ok());
}

TEST_F(TaskServerTest, ATaskThatFailsThereIsAnErrorOfAnvilsNamingIt) {
  const Task task = TinyTask();
  PreparedTask prepared = Prepare(task);
  std::ofstream(task.path) << "raise ValueError('gone since it was prepared')\n";
  auto server = TaskServer::For(Backend::FromName("cpu").value(), 12345);
  ASSERT_TRUE(server.ok()) << server.message();
  prepared.dir = dir_ / "elsewhere";  // Not the entry the other test left warm.
  auto session = server.value()->Open(task, prepared);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.message().find("gone since it was prepared"), std::string::npos) << session.message();
  EXPECT_NE(session.message().find("tiny_relu"), std::string::npos) << session.message();
}

}  // namespace
}  // namespace anvil
