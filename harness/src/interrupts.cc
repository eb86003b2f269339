#include "tracebench/interrupts.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

namespace tracebench {

InterruptSnapshot parse_interrupts(const std::string& text) {
  InterruptSnapshot s;
  std::istringstream in(text);
  std::string header;
  if (!std::getline(in, header)) return s;
  std::size_t ncpu = 0;
  {
    std::istringstream h(header);
    for (std::string w; h >> w;) {
      if (w.rfind("CPU", 0) != 0) return {};
      ++ncpu;
    }
  }
  if (ncpu == 0) return s;
  for (std::string line; std::getline(in, line);) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name.empty()) continue;
    const bool device = std::isdigit(static_cast<unsigned char>(name[0])) != 0;
    std::istringstream rest(line.substr(colon + 1));
    std::vector<std::uint64_t> v;
    std::string w;
    while (v.size() < ncpu && rest >> w) {
      if (w.empty() || !std::isdigit(static_cast<unsigned char>(w[0]))) break;
      v.push_back(std::stoull(w));
    }
    if (v.size() != ncpu) continue;  // ERR:, MIS: have one column
    std::string desc;
    if (!device) std::getline(rest >> std::ws, desc);
    std::string key = device ? "device" : name;
    auto& dst = s.counts[key];
    if (dst.empty()) dst.assign(ncpu, 0);
    for (std::size_t c = 0; c < ncpu; ++c) dst[c] += v[c];
    s.descriptions[key] = device ? "device interrupts (numbered rows, summed)" : desc;
  }
  return s;
}

InterruptSnapshot read_interrupts() {
  std::ifstream f("/proc/interrupts");
  if (!f) return {};
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_interrupts(ss.str());
}

void InterruptTally::add(const InterruptSnapshot& before, const InterruptSnapshot& after, bool traced,
                         std::uint64_t events) {
  Side& side = traced ? traced_ : baseline_;
  side.events += events;
  for (const auto& [kind, a] : after.counts) {
    auto b = before.counts.find(kind);
    if (b == before.counts.end() || b->second.size() != a.size()) continue;
    auto& d = side.delta[kind];
    if (d.empty()) d.assign(a.size(), 0);
    for (std::size_t c = 0; c < a.size() && c < d.size(); ++c) d[c] += a[c] >= b->second[c] ? a[c] - b->second[c] : 0;
    if (auto it = after.descriptions.find(kind); it != after.descriptions.end()) descriptions_[kind] = it->second;
  }
}

std::map<std::string, std::map<int, double>> InterruptTally::extra_per_event(double min_abs) const {
  std::map<std::string, std::map<int, double>> out;
  if (traced_.events == 0 || baseline_.events == 0) return out;
  for (const auto& [kind, t] : traced_.delta) {
    auto b = baseline_.delta.find(kind);
    std::map<int, double> per_cpu;
    bool notable = false;
    for (std::size_t c = 0; c < t.size(); ++c) {
      double base = b != baseline_.delta.end() && c < b->second.size()
                        ? static_cast<double>(b->second[c]) / static_cast<double>(baseline_.events)
                        : 0.0;
      double x = static_cast<double>(t[c]) / static_cast<double>(traced_.events) - base;
      per_cpu[static_cast<int>(c)] = x;
      notable |= std::fabs(x) >= min_abs;
    }
    if (notable) out[kind] = per_cpu;
  }
  return out;
}

}  // namespace tracebench
