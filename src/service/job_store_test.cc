#include "service/job_store.h"

#include <gtest/gtest.h>

#include "core/temp_dir_fixture.h"
#include "runs/sqlite.h"

namespace anvil {
namespace {

class JobStoreTest : public TempDirTest {};

StoredJob Row(const std::string& id) {
  StoredJob j;
  j.id = id;
  j.request = "{\"n\":\"" + id + "\"}";
  return j;
}

TEST_F(JobStoreTest, JobsLiveThroughAReopenUntilTheirVerdict) {
  const auto path = dir_ / "jobs.db";
  {
    auto store = JobStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.message();
    ASSERT_TRUE(store.value()->Add({Row("a"), Row("b"), Row("c")}).ok());
    ASSERT_TRUE(store.value()->Finish("b", "{\"status\":\"pass\"}").ok());
  }
  auto store = JobStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.message();
  auto unfinished = store.value()->Unfinished();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished.value().size(), 2u);
  EXPECT_EQ(unfinished.value()[0].id, "a");  // In the order accepted.
  EXPECT_EQ(unfinished.value()[1].id, "c");
  EXPECT_EQ(unfinished.value()[1].request, "{\"n\":\"c\"}");
  auto b = store.value()->Get("b");
  ASSERT_TRUE(b.ok() && b.value());
  EXPECT_EQ(b.value()->state, "done");
  EXPECT_EQ(b.value()->verdict, "{\"status\":\"pass\"}");
  EXPECT_GT(b.value()->finished_at, 0);
  auto none = store.value()->Get("zzz");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none.value().has_value());
}

TEST_F(JobStoreTest, CancelKeepsDoneJobsAndAVerdictAfterCancelStaysCancelled) {
  auto store = JobStore::Open(dir_ / "jobs.db");
  ASSERT_TRUE(store.ok());
  JobStore& s = *store.value();
  ASSERT_TRUE(s.Add({Row("q"), Row("d")}).ok());
  ASSERT_TRUE(s.Finish("d", "{}").ok());
  EXPECT_EQ(s.Cancel("d").value().value(), "done");
  EXPECT_EQ(s.Cancel("q").value().value(), "cancelled");
  EXPECT_FALSE(s.Cancel("nope").value().has_value());
  ASSERT_TRUE(s.Finish("q", "{\"late\":true}").ok());  // A running job's verdict, after its cancel.
  EXPECT_EQ(s.Get("q").value()->state, "cancelled");
  EXPECT_EQ(s.Get("q").value()->verdict, "{\"late\":true}");
  EXPECT_TRUE(s.Unfinished().value().empty());
}

TEST_F(JobStoreTest, AnIdempotencyKeyNamesItsJobsAndIsRecordedWithThem) {
  auto store = JobStore::Open(dir_ / "jobs.db");
  ASSERT_TRUE(store.ok());
  JobStore& s = *store.value();
  ASSERT_TRUE(s.Add({Row("x"), Row("y")}, "step-7").ok());
  auto ids = s.JobsOfKey("step-7");
  ASSERT_TRUE(ids.ok() && ids.value());
  EXPECT_EQ(*ids.value(), (std::vector<std::string>{"x", "y"}));
  EXPECT_FALSE(s.JobsOfKey("step-8").value().has_value());
  // A key used twice is refused, and nothing of the second batch is kept.
  EXPECT_FALSE(s.Add({Row("z")}, "step-7").ok());
  EXPECT_FALSE(s.Get("z").value().has_value());
}

TEST_F(JobStoreTest, OneServerHoldsTheStore) {
  auto first = JobStore::Open(dir_ / "jobs.db");
  ASSERT_TRUE(first.ok());
  auto second = JobStore::Open(dir_ / "jobs.db");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.message().find("held by another anvil serve"), std::string::npos) << second.message();
  first.value().reset();
  EXPECT_TRUE(JobStore::Open(dir_ / "jobs.db").ok());  // Free again once the first is closed.
}

TEST_F(JobStoreTest, AnotherSqliteFileIsNotTakenForAStore) {
  {
    auto db = Sqlite::Open(dir_ / "run.db", true, false);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db.value()->Exec("CREATE TABLE runs (id INTEGER); PRAGMA user_version = 2;").ok());
  }
  auto store = JobStore::Open(dir_ / "run.db");
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.message().find("not a job store"), std::string::npos) << store.message();
  Write("text.db", "hello, not SQLite at all, but long enough to have a header of some kind........");
  EXPECT_FALSE(JobStore::Open(dir_ / "text.db").ok());
}

}  // namespace
}  // namespace anvil
