// The bounded liblttng-ctl call (tracers/lttng/ctl_call.h), without a
// daemon: a body that never returns is abandoned at the deadline and said
// so, later calls do not wait again, and a body's answer or error comes back.
#include "tracers/lttng/ctl_call.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

namespace tracebench::lttng {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST(BoundedCall, TheAnswerAndTheErrorComeBack) {
  forget_silent_sessiond();
  std::string out;
  ASSERT_TRUE(bounded_call(
                  "answer", milliseconds(5000),
                  [](std::string* o) {
                    *o = std::string("two\0words", 9);
                    return Status::ok();
                  },
                  &out)
                  .is_ok());
  EXPECT_EQ(out, std::string("two\0words", 9));
  Status s = bounded_call("error", milliseconds(5000), [](std::string*) { return Status::error("it said no"); });
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "it said no");
  // The body runs in another process: nothing it changes reaches this one.
  static int touched = 0;
  ASSERT_TRUE(bounded_call("child", milliseconds(5000), [](std::string*) {
                touched = 1;
                return Status::ok();
              }).is_ok());
  EXPECT_EQ(touched, 0);
}

TEST(BoundedCall, ABodyThatDiesIsAnError) {
  forget_silent_sessiond();
  Status s = bounded_call("crash", milliseconds(5000), [](std::string*) -> Status { ::_exit(3); });
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("died without an answer"), std::string::npos) << s.message();
}

TEST(BoundedCall, ABodyThatNeverReturnsIsAbandonedAtTheDeadlineAndNotWaitedForAgain) {
  forget_silent_sessiond();
  auto t0 = Clock::now();
  Status s = bounded_call("lttng: list sessions", milliseconds(300), [](std::string*) {
    for (;;) ::pause();
    return Status::ok();
  });
  const double took = seconds_since(t0);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("lttng: list sessions: LTTng session daemon (pid "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(") did not answer within 0.3 s (stopped?)"), std::string::npos) << s.message();
  EXPECT_GE(took, 0.3);
  EXPECT_LT(took, 5.0);
  // The same daemon is not asked again in this process.
  t0 = Clock::now();
  s = bounded_call("again", milliseconds(5000), [](std::string*) { return Status::ok(); });
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("did not answer earlier in this process"), std::string::npos) << s.message();
  EXPECT_LT(seconds_since(t0), 1.0);
  forget_silent_sessiond();
  EXPECT_TRUE(bounded_call("after", milliseconds(5000), [](std::string*) { return Status::ok(); }).is_ok());
}

}  // namespace
}  // namespace tracebench::lttng
