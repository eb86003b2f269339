// The wait for a tracer's consumer before a traced block: the state of its
// threads read from /proc, the wait until it is idle, the bound.
#include "tracebench/consumer_catch_up.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace tracebench {
namespace {

// A tracer that names the tasks it is given as its consumer.
class NamedConsumer final : public Tracer {
 public:
  explicit NamedConsumer(std::vector<ConsumerTask> tasks) : tasks_(std::move(tasks)) {}
  std::string_view name() const override { return "test_named_consumer"; }
  std::string_view description() const override { return "test"; }
  Availability available() override { return Availability::yes(); }
  std::vector<std::string> actions() const override { return {"count"}; }
  bool supports(const ProbePoint&) const override { return true; }
  Status attach(const AttachSpec&) override { return Status::ok(); }
  Status enable() override { return Status::ok(); }
  Status disable() override { return Status::ok(); }
  EventCounts counts() override { return {}; }
  std::vector<ConsumerTask> consumer_tasks() const override { return tasks_; }
  void teardown() noexcept override {}

 private:
  std::vector<ConsumerTask> tasks_;
};

TEST(ConsumerCatchUp, ReadsTheStateLetterPastTheCommand) {
  EXPECT_EQ(parse_stat_state("42 (lttng-consumerd) S 1 42 42 0 -1"), 'S');
  EXPECT_EQ(parse_stat_state("42 (a) b) R 1 42"), 'R');  // a command with ") " in it
  EXPECT_EQ(parse_stat_state("42 (x) D"), 'D');
  EXPECT_EQ(parse_stat_state(""), 0);
  EXPECT_EQ(parse_stat_state("42 (x)"), 0);
  EXPECT_EQ(parse_stat_state("42 x R"), 0);
}

// A real thread of this process: busy while it spins, idle while it sleeps;
// its whole process (tid 0) is busy too while it spins (this thread is
// running as well, so only the sleeping case tells the process apart); a
// spinning consumer that says so is never busy; a task that is gone is not.
TEST(ConsumerCatchUp, SeesAThreadThatRunsAndOneThatSleeps) {
  std::atomic<int> tid{0}, mode{0};  // 0 spin, 1 sleep, 2 stop
  std::thread t([&] {
    tid = static_cast<int>(syscall(SYS_gettid));
    while (mode != 2) {
      if (mode == 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  while (tid == 0) std::this_thread::yield();
  const ConsumerTask task{"spinner", getpid(), tid.load()};
  EXPECT_TRUE(consumer_busy({task}));
  EXPECT_TRUE(consumer_busy({{"process", getpid(), 0}}));
  EXPECT_FALSE(consumer_busy({{"spinner", getpid(), tid.load(), /*spins=*/true}}));
  mode = 1;
  bool idle = false;
  for (int i = 0; i < 200 && !idle; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    idle = !consumer_busy({task});
  }
  EXPECT_TRUE(idle) << "the sleeping thread was seen running 200 times in a row";
  mode = 2;
  t.join();
  EXPECT_FALSE(consumer_busy({task}));
}

TEST(ConsumerCatchUp, WaitsUntilTheConsumerIsIdle) {
  int polls = 0;
  ConsumerCatchUp c(std::chrono::milliseconds(500), [&](const std::vector<ConsumerTask>&) { return ++polls <= 5; });
  NamedConsumer t({{"writer", 1, 1}});
  c.before_traced_block(t);
  EXPECT_EQ(polls, 6);
  EXPECT_EQ(c.tally().waits, 1u);
  EXPECT_EQ(c.tally().timeouts, 0u);
  EXPECT_GE(c.tally().seconds, 5 * 200e-6);
  c.before_traced_block(t);  // idle at once: no wait
  EXPECT_EQ(polls, 7);
  EXPECT_EQ(c.tally().waits, 1u);
}

TEST(ConsumerCatchUp, GivesUpAfterTheBound) {
  ConsumerCatchUp c(std::chrono::milliseconds(5), [](const std::vector<ConsumerTask>&) { return true; });
  NamedConsumer t({{"writer", 1, 1}});
  const auto start = std::chrono::steady_clock::now();
  c.before_traced_block(t);
  c.before_traced_block(t);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(c.tally().waits, 2u);
  EXPECT_EQ(c.tally().timeouts, 2u);
  EXPECT_GE(c.tally().seconds, 0.010);
  EXPECT_GE(took, 0.010);
  EXPECT_LT(took, 1.0);
}

TEST(ConsumerCatchUp, ATracerWithoutAConsumerIsNotAsked) {
  int polls = 0;
  ConsumerCatchUp c(std::chrono::milliseconds(5), [&](const std::vector<ConsumerTask>&) { return ++polls > 0; });
  NamedConsumer t({});
  c.before_traced_block(t);
  EXPECT_EQ(polls, 0);
  EXPECT_EQ(c.tally().waits, 0u);
}

}  // namespace
}  // namespace tracebench
