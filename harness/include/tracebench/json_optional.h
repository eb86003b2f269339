// An optional value written to JSON: the value, or null when it is absent.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

namespace tracebench {

template <typename T>
nlohmann::json json_or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace tracebench
