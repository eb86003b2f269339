// Errors are values with a message that says what to do; nothing deep inside
// the suite calls exit().
#pragma once

#include <string>
#include <utility>

namespace tracebench {

class [[nodiscard]] Status {
 public:
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message)); }

  bool is_ok() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  Status() = default;
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

// Errno-carrying helper: "open /sys/kernel/tracing/foo: Permission denied".
Status errno_status(const std::string& what, int err);

}  // namespace tracebench

#define TB_TRY(expr)                          \
  do {                                        \
    ::tracebench::Status tb_status_ = (expr); \
    if (!tb_status_) return tb_status_;       \
  } while (0)
