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
// One conversion (spec = "%" and its flags, width, precision) of a value.
std::string format_one(const std::string& spec, char conv, const uint8_t* a, ValueType t) {
  char buf[512];
  std::string out;
  if (conv == 's') {
    if (t == ValueType::kString) {
      std::snprintf(buf, sizeof buf, (spec + "s").c_str(), reinterpret_cast<const char*>(a));
    } else {
      int64_t v;
      std::memcpy(&v, a, 8);
      std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), static_cast<long long>(v));
    }
    return buf;
  }
  int64_t v = 0;
  if (t == ValueType::kInt) std::memcpy(&v, a, 8);
  if (conv == 'c') {
    std::snprintf(buf, sizeof buf, (spec + "c").c_str(), static_cast<int>(v));
  } else if (conv == 'p') {
    out = "0x";
    std::snprintf(buf, sizeof buf, (spec + "llx").c_str(), static_cast<unsigned long long>(v));
  } else if (conv == 'x' || conv == 'X' || conv == 'o' || conv == 'u') {
    std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(), static_cast<unsigned long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), static_cast<long long>(v));
  }
  return out + buf;
}

// Renders a format the compiler split: its text, and each conversion from
// `conv(piece)`.
template <typename F>
std::string render(const std::vector<FormatPiece>& pieces, F&& conv) {
  std::string out;
  for (const FormatPiece& p : pieces) {
    out += p.text;
    if (p.conv) out += conv(p);
  }
  return out;
}

std::string format_printf(const PrintfDesc& f, const std::vector<const uint8_t*>& args) {
  size_t ai = 0;
  return render(f.pieces, [&](const FormatPiece& p) -> std::string {
    if (ai >= args.size() || ai >= f.arg_types.size()) return "";
    const size_t i = ai++;
    return format_one(p.spec, p.conv, args[i], f.arg_types[i]);
  });
}

// How printing orders rows: the value dtrace sorts by.
double row_scalar(AggKind kind, const std::vector<int64_t>& v) {
  if (kind == kAggAvg) return v[0] ? static_cast<double>(v[1]) / v[0] : 0;
  if (kind == kAggStddev) return static_cast<double>(agg_stddev(v));
  if (kind == kAggQuantize || kind == kAggLquantize || kind == kAggLlquantize) {
    double s = 0;
    for (auto x : v) s += x;
    return s;
  }
  return static_cast<double>(v[0]);
}

// The label of a distribution's bucket.
std::string bucket_label(const AggDesc& d, size_t b, size_t n) {
  if (d.kind == kAggQuantize) return std::to_string(quantize_bucket_min(static_cast<uint32_t>(b)));
  const int64_t lo = d.kind == kAggLquantize ? d.lq_base : llquantize_bucket_min(d.lq_base, d.lq_limit, d.lq_step, 1);
  if (b == 0) return "< " + std::to_string(lo);
  if (d.kind == kAggLquantize) {
    if (b == n - 1) return ">= " + std::to_string(d.lq_limit);
    return std::to_string(d.lq_base + static_cast<int64_t>(b - 1) * d.lq_step);
  }
  const int64_t m = llquantize_bucket_min(d.lq_base, d.lq_limit, d.lq_step, static_cast<uint32_t>(b));
  return (b == n - 1 ? ">= " : "") + std::to_string(m);
}

// A distribution's rows (quantize, lquantize, llquantize), as dtrace draws them.
std::string distribution(const AggDesc& d, const std::vector<int64_t>& values, int64_t normal) {
  std::string out = "           value  ------------- Distribution ------------- count\n";
  int64_t total = 0;
  for (auto v : values) total += v;
  size_t first = 0, last = values.size() - 1;
  while (first < values.size() && values[first] == 0) first++;
  while (last > 0 && values[last] == 0) last--;
  if (first > 0) first--;
  if (last + 1 < values.size()) last++;
  char line[256];
  for (size_t b = first; b <= last && b < values.size(); b++) {
    int bars = total ? static_cast<int>(values[b] * 40 / total) : 0;
    std::snprintf(line, sizeof line, "%16s |%-40s %lld\n", bucket_label(d, b, values.size()).c_str(),
                  std::string(bars, '@').c_str(), static_cast<long long>(values[b] / normal));
    out += line;
  }
  return out;
}

// A scalar aggregation's printed value.
long long scalar_value(AggKind kind, const std::vector<int64_t>& v, int64_t normal) {
  long long x = kind == kAggAvg      ? (v[0] ? v[1] / v[0] : 0)
                : kind == kAggStddev ? agg_stddev(v)
                                     : static_cast<long long>(v[0]);
  return x / normal;
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

// One loop over a buffer's records (~125 lines) with a switch over the
// actions of each record's ECB: each case prints one kind of action's data,
// in one place.
void Session::chew(const uint8_t* data, uint32_t len) {
  uint32_t off = 0;
  while (off + sizeof(RecordHeader) <= len) {
    RecordHeader h;
    std::memcpy(&h, data + off, sizeof h);
    if (h.epid == kEpidError) {
      if (h.size != sizeof(ErrorRecord) || len - off < sizeof(ErrorRecord)) break;
      cstats_.error_records++;
      report_error(data + off);
      off += h.size;
      continue;
    }
    if (h.epid == 0 || h.epid > epids_.size() || h.size == 0) break;
    const EcbInfo& info = epids_[h.epid - 1];
    const uint8_t* rec = data + off;
    cstats_.records++;
    epid_records_[h.epid]++;
    const Ecb* e = info.ecb;
    if (record_hook_) record_hook_(*e, rec);
    if (!out_) {
      // Nobody reads the output: only exit() and the aggregation actions
      // (clear, trunc, normalize; printa prints nothing) need carrying out.
      for (uint32_t k = 0; k < e->nactions; k++) {
        const bool exit = e->actions[k].kind == kActExit;
        const bool agg = info.clause->actions[k].agg_op != AggOp::kNone;
        if (!exit && !agg) continue;
        int64_t v;
        std::memcpy(&v, rec + e->actions[k].offset, 8);
        if (agg) {
          agg_op(info.clause->actions[k], v);
        } else {
          exited_ = true;
          exit_status_ = static_cast<int>(v);
        }
      }
      off += h.size;
      continue;
    }
    std::string line;
    bool agg_ops = false;
    for (uint32_t k = 0; k < e->nactions; k++) {
      const Action& a = e->actions[k];
      const ActionDesc& d = info.clause->actions[k];
      if (d.agg_op != AggOp::kNone) {
        // In order with the clause's other output.
        if (!line.empty()) std::fputs(line.c_str(), out_);
        line.clear();
        int64_t v;
        std::memcpy(&v, rec + a.offset, 8);
        agg_op(d, v);
        agg_ops = true;
        continue;
      }
      switch (a.kind) {
        case kActPrintf: {
          // Consecutive printf actions with one format id form one call.
          std::vector<const uint8_t*> args;
          const PrintfDesc& f = prog_->formats[a.format_id];
          uint32_t k2 = k;
          while (k2 < e->nactions && e->actions[k2].kind == kActPrintf && e->actions[k2].format_id == a.format_id &&
                 (k2 == k || e->actions[k2].arg_index > 0)) {
            if (e->actions[k2].value) args.push_back(rec + e->actions[k2].offset);
            k2++;
          }
          line += format_printf(f, args);
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
      bool has_printf = agg_ops;
      for (uint32_t k = 0; k < e->nactions; k++) has_printf |= e->actions[k].kind == kActPrintf;
      if (!has_printf) {
        std::fprintf(out_, "%3u %6u %32s:%-12s%s\n", 0u, info.binding->probe.id, info.binding->probe.function,
                     info.binding->probe.name, line.c_str());
      } else {
        std::fputs(line.c_str(), out_);
      }
    }
    off += h.size;
  }
}

std::vector<AggResult> Session::aggregations() {
  std::lock_guard<std::mutex> g(consume_mu_);
  return aggregations_locked();
}

std::vector<AggResult> Session::aggregations_locked() {
  std::vector<AggResult> out(prog_ ? prog_->aggs.size() : 0);
  for (size_t i = 0; i < out.size(); i++) {
    out[i].desc = &prog_->aggs[i];
    auto n = normal_.find(static_cast<uint32_t>(i));
    if (n != normal_.end()) out[i].normal = n->second;
  }
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
    std::stable_sort(r.rows.begin(), r.rows.end(), [&](const AggRow& a, const AggRow& b) {
      double x = row_scalar(kind, a.values), y = row_scalar(kind, b.values);
      if (x != y) return x < y;
      return a.key_strings < b.key_strings;
    });
  }
  return out;
}

void Session::print_aggregation(std::FILE* out, const AggResult& r, bool named, const PrintfDesc* format) {
  const AggKind kind = r.desc->kind;
  const bool dist = kind == kAggQuantize || kind == kAggLquantize || kind == kAggLlquantize;
  if (format) {
    // printa(format, @a): one printf per row, keys in order, %@ the value.
    for (auto& row : r.rows) {
      size_t key = 0;
      std::string text = render(format->pieces, [&](const FormatPiece& p) {
        if (p.value) {
          if (dist) return "\n" + distribution(*r.desc, row.values, r.normal);
          const int64_t v = scalar_value(kind, row.values, r.normal);
          return format_one(p.spec, p.conv, reinterpret_cast<const uint8_t*>(&v), ValueType::kInt);
        }
        if (key >= row.key_strings.size()) return std::string();
        const size_t i = key++;
        if (r.desc->key_types[i] == ValueType::kString)
          return format_one(p.spec, p.conv, reinterpret_cast<const uint8_t*>(row.key_strings[i].c_str()),
                            ValueType::kString);
        return format_one(p.spec, p.conv, reinterpret_cast<const uint8_t*>(&row.key_ints[i]), ValueType::kInt);
      });
      std::fputs(text.c_str(), out);
    }
    return;
  }
  if (r.rows.empty()) return;
  std::fputc('\n', out);
  if (named && !r.desc->name.empty()) std::fprintf(out, "  @%s\n", r.desc->name.c_str());
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
    if (dist) {
      if (!keys.empty()) std::fprintf(out, "%s\n", keys.c_str());
      std::fputs(distribution(*r.desc, row.values, r.normal).c_str(), out);
      std::fputc('\n', out);
    } else {
      std::fprintf(out, "%s  %16lld\n", keys.c_str(), scalar_value(kind, row.values, r.normal));
    }
  }
}

void Session::print_aggregations(std::FILE* out) {
  auto aggs = aggregations();
  for (size_t i = 0; i < aggs.size(); i++) {
    if (i < printed_.size() && printed_[i]) continue;
    print_aggregation(out, aggs[i], aggs.size() > 1, nullptr);
  }
}

void Session::report_error(const uint8_t* record) {
  ErrorRecord r;
  std::memcpy(&r, record, sizeof r);
  if (!out_ || !err_) return;
  std::string probe = "?";
  uint32_t pid = 0;
  if (r.epid >= 1 && r.epid <= epids_.size()) {
    const Probe& p = epids_[r.epid - 1].binding->probe;
    pid = p.id;
    probe = std::string(p.provider) + ":" + p.module + ":" + p.function + ":" + p.name;
  }
  std::string where = r.where == 0 ? "predicate" : "action #" + std::to_string(r.where);
  char addr[64] = "";
  if (r.fault == kFaultBadAddr || r.fault == kFaultBadAlign || r.fault == kFaultBadCopy)
    std::snprintf(addr, sizeof addr, " (0x%llx)", static_cast<unsigned long long>(r.addr));
  std::string pc = r.pc == kFaultNoPc ? "" : " at DIF offset " + std::to_string(r.pc);
  std::fprintf(err_, "dtrace: error on enabled probe ID %u (ID %u: %s): %s%s in %s%s\n", r.epid, pid, probe.c_str(),
               fault_name(r.fault), addr, where.c_str(), pc.c_str());
}

void Session::agg_op(const ActionDesc& d, int64_t arg) {
  const uint32_t id = d.agg_id;
  if (!prog_ || id >= prog_->aggs.size()) return;
  switch (d.agg_op) {
    case AggOp::kPrinta: {
      snapshot_aggs();  // the aggregation as it is now
      auto aggs = aggregations_locked();
      if (printed_.size() < aggs.size()) printed_.resize(aggs.size());
      printed_[id] = true;
      if (!out_) return;
      print_aggregation(out_, aggs[id], false,
                        d.agg_format >= 0 ? &prog_->formats[static_cast<size_t>(d.agg_format)] : nullptr);
      return;
    }
    case AggOp::kNormalize:
      if (arg > 0)
        normal_[id] = arg;
      else if (out_ && err_)
        std::fprintf(err_, "dtrace: normalize() of @%s by %lld ignored: the factor must be positive\n",
                     prog_->aggs[id].name.c_str(), static_cast<long long>(arg));
      return;
    case AggOp::kDenormalize: normal_.erase(id); return;
    case AggOp::kClear: reset_agg(id, nullptr, false); return;
    case AggOp::kTrunc: {
      if (!d.agg_has_count) {
        reset_agg(id, nullptr, true);
        return;
      }
      // trunc(@a, n): keep the n largest (n < 0: the -n smallest) keys.
      snapshot_aggs();
      const AggKind kind = prog_->aggs[id].kind;
      std::vector<std::pair<double, const std::string*>> rows;
      for (auto& [k, vals] : agg_merged_)
        if (k.first == id) rows.push_back({row_scalar(kind, vals), &k.second});
      std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.first < b.first; });
      const uint64_t keep = arg < 0 ? 0 - static_cast<uint64_t>(arg) : static_cast<uint64_t>(arg);
      if (keep >= rows.size()) return;
      const size_t drop = rows.size() - static_cast<size_t>(keep);
      for (size_t i = 0; i < drop; i++) {
        const std::string key = *rows[arg < 0 ? rows.size() - 1 - i : i].second;
        reset_agg(id, &key, true);
      }
      return;
    }
    case AggOp::kNone: return;
  }
}

}  // namespace tbdvm
