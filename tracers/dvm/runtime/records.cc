// What the consumer makes of the buffers: records decoded per EPID and
// printed (trace, printf), aggregations read and printed as dtrace(1) does.
#include "tracers/dvm/runtime/internal.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

namespace tbdvm {

// ---------------------------------------------------------------------------
// Record formatting.
namespace {
std::string format_printf(const std::string& fmt, const std::vector<const uint8_t*>& args,
                          const std::vector<ValueType>& types) {
  std::string out;
  size_t ai = 0;
  for (size_t i = 0; i < fmt.size(); i++) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      out += '%';
      i++;
      continue;
    }
    size_t j = i + 1;
    std::string spec = "%";
    while (j < fmt.size() && std::strchr("-+ #0", fmt[j])) spec += fmt[j++];
    while (j < fmt.size() && (std::isdigit(static_cast<unsigned char>(fmt[j])) || fmt[j] == '.')) spec += fmt[j++];
    while (j < fmt.size() && std::strchr("hlLqjzt", fmt[j])) j++;
    if (j >= fmt.size()) break;
    char conv = fmt[j];
    i = j;
    char buf[512];
    if (ai >= args.size()) break;
    const uint8_t* a = args[ai];
    ValueType t = types[ai++];
    if (conv == 's') {
      if (t == ValueType::kString) {
        std::snprintf(buf, sizeof buf, (spec + "s").c_str(), reinterpret_cast<const char*>(a));
      } else {
        int64_t v;
        std::memcpy(&v, a, 8);
        std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), static_cast<long long>(v));
      }
    } else {
      int64_t v = 0;
      if (t == ValueType::kInt) std::memcpy(&v, a, 8);
      if (conv == 'c') std::snprintf(buf, sizeof buf, (spec + "c").c_str(), static_cast<int>(v));
      else if (conv == 'p') std::snprintf(buf, sizeof buf, (spec + "llx").c_str(), static_cast<unsigned long long>(v)), out += "0x";
      else if (conv == 'x' || conv == 'X' || conv == 'o' || conv == 'u')
        std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(), static_cast<unsigned long long>(v));
      else std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), static_cast<long long>(v));
    }
    out += buf;
  }
  return out;
}
}  // namespace

int64_t agg_stddev(const std::vector<int64_t>& v) {
  if (v.size() != 4 || v[0] <= 0) return 0;
  // Population standard deviation from count, sum and the 128-bit sum of
  // squares, as dtrace prints it (an integer).
  const long double n = static_cast<long double>(v[0]), sum = static_cast<long double>(v[1]);
  const long double sumsq = static_cast<long double>(static_cast<uint64_t>(v[3])) * 18446744073709551616.0L +
                            static_cast<long double>(static_cast<uint64_t>(v[2]));
  const long double mean = sum / n, var = sumsq / n - mean * mean;
  return var > 0 ? static_cast<int64_t>(std::sqrt(var)) : 0;
}

void Session::chew(const uint8_t* data, uint32_t len) {
  uint32_t off = 0;
  while (off + sizeof(RecordHeader) <= len) {
    RecordHeader h;
    std::memcpy(&h, data + off, sizeof h);
    if (h.epid == 0 || h.epid > epids_.size() || h.size == 0) break;
    const EcbInfo& info = epids_[h.epid - 1];
    const uint8_t* rec = data + off;
    cstats_.records++;
    epid_records_[h.epid]++;
    const Ecb* e = info.ecb;
    if (record_hook_) record_hook_(*e, rec);
    if (!out_) {
      // Nobody reads the output: only exit() needs looking at.
      for (uint32_t k = 0; k < e->nactions; k++) {
        if (e->actions[k].kind == kActExit) {
          int64_t v;
          std::memcpy(&v, rec + e->actions[k].offset, 8);
          exited_ = true;
          exit_status_ = static_cast<int>(v);
        }
      }
      off += h.size;
      continue;
    }
    std::string line;
    for (uint32_t k = 0; k < e->nactions; k++) {
      const Action& a = e->actions[k];
      const ActionDesc& d = info.clause->actions[k];
      switch (a.kind) {
        case kActPrintf: {
          // Consecutive printf actions with one format id form one call.
          std::vector<const uint8_t*> args;
          const PrintfDesc& f = prog_->formats[a.format_id];
          uint32_t k2 = k;
          while (k2 < e->nactions && e->actions[k2].kind == kActPrintf &&
                 e->actions[k2].format_id == a.format_id &&
                 (k2 == k || e->actions[k2].arg_index > 0)) {
            if (e->actions[k2].value) args.push_back(rec + e->actions[k2].offset);
            k2++;
          }
          line += format_printf(f.format, args, f.arg_types);
          k = k2 - 1;
          break;
        }
        case kActTrace: {
          char buf[64];
          if (d.value && d.value->returns_string) {
            line += std::string(" ") + reinterpret_cast<const char*>(rec + a.offset);
          } else {
            int64_t v;
            std::memcpy(&v, rec + a.offset, 8);
            std::snprintf(buf, sizeof buf, " %lld", static_cast<long long>(v));
            line += buf;
          }
          break;
        }
        case kActTracemem: {
          char buf[8];
          line += "\n            ";
          for (uint32_t i = 0; i < a.size; i++) {
            std::snprintf(buf, sizeof buf, "%02x ", rec[a.offset + i]);
            line += buf;
            if (i % 16 == 15 && i + 1 < a.size) line += "\n            ";
          }
          break;
        }
        case kActStack: {
          char buf[64];
          for (uint32_t i = 0; i < a.size / 8; i++) {
            uint64_t pc;
            std::memcpy(&pc, rec + a.offset + i * 8, 8);
            if (!pc) break;
            std::snprintf(buf, sizeof buf, "\n              0x%llx", static_cast<unsigned long long>(pc));
            line += buf;
          }
          line += "\n";
          break;
        }
        case kActExit: {
          int64_t v;
          std::memcpy(&v, rec + a.offset, 8);
          exited_ = true;
          exit_status_ = static_cast<int>(v);
          break;
        }
        default: break;
      }
    }
    if (out_ && !line.empty()) {
      bool has_printf = false;
      for (uint32_t k = 0; k < e->nactions; k++) has_printf |= e->actions[k].kind == kActPrintf;
      if (!has_printf) {
        std::fprintf(out_, "%3u %6u %32s:%-12s%s\n", 0u, info.binding->probe.id,
                     info.binding->probe.function, info.binding->probe.name, line.c_str());
      } else {
        std::fputs(line.c_str(), out_);
      }
    }
    off += h.size;
  }
}

std::vector<AggResult> Session::aggregations() {
  std::vector<AggResult> out(prog_ ? prog_->aggs.size() : 0);
  for (size_t i = 0; i < out.size(); i++) out[i].desc = &prog_->aggs[i];
  std::lock_guard<std::mutex> g(consume_mu_);
  for (auto& [k, vals] : agg_merged_) {
    if (k.first >= out.size()) continue;
    AggRow row;
    const std::string& key = k.second;
    for (size_t off = 0; off + 8 <= key.size();) {
      uint32_t hdr;
      std::memcpy(&hdr, key.data() + off, 4);
      uint32_t n = hdr & 0x7fffffffu;
      if (hdr & 0x80000000u) {
        row.key_strings.emplace_back(key.data() + off + 8, n ? n - 1 : 0);
        row.key_ints.push_back(0);
      } else {
        int64_t v = 0;
        std::memcpy(&v, key.data() + off + 8, 8);
        row.key_ints.push_back(v);
        row.key_strings.push_back(std::to_string(v));
      }
      off += 8 + ((n + 7) & ~7u);
    }
    row.values = vals;
    out[k.first].rows.push_back(std::move(row));
  }
  for (auto& r : out) {
    AggKind kind = r.desc->kind;
    auto scalar = [kind](const AggRow& x) -> double {
      if (kind == kAggAvg) return x.values[0] ? static_cast<double>(x.values[1]) / x.values[0] : 0;
      if (kind == kAggStddev) return static_cast<double>(agg_stddev(x.values));
      if (kind == kAggQuantize || kind == kAggLquantize) {
        double s = 0;
        for (auto v : x.values) s += v;
        return s;
      }
      return static_cast<double>(x.values[0]);
    };
    std::stable_sort(r.rows.begin(), r.rows.end(), [&](const AggRow& a, const AggRow& b) {
      double x = scalar(a), y = scalar(b);
      if (x != y) return x < y;
      return a.key_strings < b.key_strings;
    });
  }
  return out;
}

void Session::print_aggregations(std::FILE* out) {
  auto aggs = aggregations();
  for (auto& r : aggs) {
    if (r.rows.empty()) continue;
    std::fputc('\n', out);
    if (!r.desc->name.empty() && aggs.size() > 1) std::fprintf(out, "  @%s\n", r.desc->name.c_str());
    for (auto& row : r.rows) {
      std::string keys;
      char buf[128];
      for (size_t i = 0; i < row.key_strings.size(); i++) {
        if (r.desc->key_types.size() > i && r.desc->key_types[i] == ValueType::kString)
          std::snprintf(buf, sizeof buf, "  %-40s", row.key_strings[i].c_str());
        else
          std::snprintf(buf, sizeof buf, "  %16lld", static_cast<long long>(row.key_ints[i]));
        keys += buf;
      }
      AggKind kind = r.desc->kind;
      if (kind == kAggQuantize || kind == kAggLquantize) {
        if (!keys.empty()) std::fprintf(out, "%s\n", keys.c_str());
        std::fprintf(out, "           value  ------------- Distribution ------------- count\n");
        int64_t total = 0;
        for (auto v : row.values) total += v;
        size_t first = 0, last = row.values.size() - 1;
        while (first < row.values.size() && row.values[first] == 0) first++;
        while (last > 0 && row.values[last] == 0) last--;
        if (first > 0) first--;
        if (last + 1 < row.values.size()) last++;
        for (size_t b = first; b <= last && b < row.values.size(); b++) {
          int bars = total ? static_cast<int>(row.values[b] * 40 / total) : 0;
          std::string label;
          if (kind == kAggQuantize) {
            label = std::to_string(quantize_bucket_min(static_cast<uint32_t>(b)));
          } else if (b == 0) {
            label = "< " + std::to_string(r.desc->lq_base);
          } else if (b == row.values.size() - 1) {
            label = ">= " + std::to_string(r.desc->lq_limit);
          } else {
            label = std::to_string(r.desc->lq_base + static_cast<int64_t>(b - 1) * r.desc->lq_step);
          }
          std::fprintf(out, "%16s |%-40s %lld\n", label.c_str(), std::string(bars, '@').c_str(),
                       static_cast<long long>(row.values[b]));
        }
        std::fputc('\n', out);
      } else {
        long long v = kind == kAggAvg      ? (row.values[0] ? row.values[1] / row.values[0] : 0)
                      : kind == kAggStddev ? agg_stddev(row.values)
                                           : static_cast<long long>(row.values[0]);
        std::fprintf(out, "%s  %16lld\n", keys.c_str(), v);
      }
    }
  }
}

}  // namespace tbdvm
