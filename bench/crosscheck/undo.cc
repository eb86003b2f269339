#include "undo.h"

#include <map>
#include <mutex>
#include <utility>

#include "tracebench/tracer.h"

namespace tracebench::crosscheck {
namespace {

std::mutex& mu() {
  static std::mutex m;
  return m;
}

std::map<unsigned long, std::function<void()>>& pending() {
  static std::map<unsigned long, std::function<void()>> p;
  return p;
}

unsigned long next_id = 1;

void release_for_exit() { (void)undo_all(); }

// Takes the undo `id` out of the registry (empty when it ran or was dismissed).
std::function<void()> take(unsigned long id) {
  std::lock_guard<std::mutex> lock(mu());
  auto it = pending().find(id);
  if (it == pending().end()) return {};
  std::function<void()> fn = std::move(it->second);
  pending().erase(it);
  return fn;
}

}  // namespace

Undo::Undo(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu());
    id_ = next_id++;
    pending().emplace(id_, std::move(fn));
  }
  keep_until_exit(release_for_exit);
}

Undo& Undo::operator=(Undo&& o) noexcept {
  if (this != &o) {
    run();
    id_ = o.id_;
    o.id_ = 0;
  }
  return *this;
}

void Undo::run() {
  if (id_ == 0) return;
  std::function<void()> fn = take(id_);
  id_ = 0;
  if (fn) fn();
}

void Undo::dismiss() {
  if (id_ != 0) (void)take(id_);
  id_ = 0;
}

std::size_t undo_all() {
  std::size_t n = 0;
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu());
      if (pending().empty()) return n;
      auto last = std::prev(pending().end());
      fn = std::move(last->second);
      pending().erase(last);
    }
    if (fn) fn();
    ++n;
  }
}

}  // namespace tracebench::crosscheck
