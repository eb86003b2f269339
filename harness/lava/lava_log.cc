// Reading a LAVA job log and rebuilding the run's files from it (lava_log.h).
#include "lava_log.h"

#include <openssl/evp.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tracebench/util.h"

namespace tracebench::lava {
namespace {

namespace fs = std::filesystem;

void append_utf16_escape(std::string* out, unsigned cp) {
  auto one = [&](unsigned u) { *out += fmt::format("\\u{:04x}", u); };
  if (cp > 0xFFFF) {
    cp -= 0x10000;
    one(0xD800 + (cp >> 10));
    one(0xDC00 + (cp & 0x3FF));
  } else {
    one(cp);
  }
}

// A LAVA log line (a YAML flow mapping, every scalar double-quoted, some
// tagged like !!float "1.5" or ! "5297") as JSON: tags dropped (values stay strings),
// YAML's escapes that JSON lacks (\x.., \e, \N, \U........, ...) rewritten.
bool yaml_line_to_json(const std::string& line, std::string* json) {
  std::string& out = *json;
  out.clear();
  std::size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == '!') {  // a tag (!!float, or the non-specific !): skip it and its space
      while (i < line.size() && line[i] != ' ') ++i;
      ++i;
      continue;
    }
    if (c != '"') {
      out += c;
      ++i;
      continue;
    }
    out += '"';
    ++i;
    for (;;) {
      if (i >= line.size()) return false;
      c = line[i];
      if (c == '"') {
        out += '"';
        ++i;
        break;
      }
      if (c != '\\') {
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
          out += c;
        ++i;
        continue;
      }
      if (i + 1 >= line.size()) return false;
      char e = line[i + 1];
      i += 2;
      auto hex = [&](std::size_t n) -> long {
        if (i + n > line.size()) return -1;
        unsigned long v = 0;
        for (std::size_t k = 0; k < n; ++k) {
          char h = line[i + k];
          int d = (h >= '0' && h <= '9')   ? h - '0'
                  : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                  : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                           : -1;
          if (d < 0) return -1;
          v = v * 16 + static_cast<unsigned>(d);
        }
        i += n;
        return static_cast<long>(v);
      };
      switch (e) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          out += '\\';
          out += e;
          break;
        case ' ': out += ' '; break;
        case '0': append_utf16_escape(&out, 0); break;
        case 'a': append_utf16_escape(&out, 7); break;
        case 'v': append_utf16_escape(&out, 11); break;
        case 'e': append_utf16_escape(&out, 27); break;
        case 'N': append_utf16_escape(&out, 0x85); break;
        case '_': append_utf16_escape(&out, 0xA0); break;
        case 'L': append_utf16_escape(&out, 0x2028); break;
        case 'P': append_utf16_escape(&out, 0x2029); break;
        case 'x':
        case 'u':
        case 'U': {
          long v = hex(e == 'x' ? 2 : e == 'u' ? 4 : 8);
          if (v < 0 || v > 0x10FFFF) return false;
          append_utf16_escape(&out, static_cast<unsigned>(v));
          break;
        }
        default: return false;
      }
    }
  }
  return true;
}

std::string as_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// One revision of a file as the guest framed it.
struct Revision {
  std::string name, sha256;
  std::uint64_t size = 0;
  bool final = false, ended = false;
  long lines = -1;
  std::map<long, std::string> data;
  std::string conflict;  // why its lines cannot be trusted
};

bool decode_base64(const std::string& text, std::string* bytes) {
  if (text.size() % 4 != 0) return false;
  bytes->assign(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes->data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return false;
  std::size_t pad = 0;
  for (std::size_t k = text.size(); k > 0 && text[k - 1] == '=' && pad < 2; --k) ++pad;
  bytes->resize(static_cast<std::size_t>(n) - pad);
  return true;
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned k = 0; k < len; ++k) hex += fmt::format("{:02x}", md[k]);
  return hex;
}

bool safe_name(const std::string& n) {
  if (n.empty() || n[0] == '/') return false;
  for (const auto& part : fs::path(n))
    if (part == ".." || part == ".") return false;
  return true;
}

// A revision's bytes when complete and checked, else why not.
std::string assemble(const Revision& r, std::string* bytes) {
  if (!safe_name(r.name)) return "unsafe file name '" + r.name + "'";
  if (!r.ended) return "no END line (the job stopped while it was sent)";
  if (!r.conflict.empty()) return r.conflict;
  std::string b64;
  for (long k = 1; k <= r.lines; ++k) {
    auto it = r.data.find(k);
    if (it == r.data.end()) return fmt::format("line {} of {} missing", k, r.lines);
    b64 += it->second;
  }
  if (!decode_base64(b64, bytes)) return "not valid base64 (a line was cut or mixed with other output)";
  if (bytes->size() != r.size) return fmt::format("{} bytes, the guest sent {}", bytes->size(), r.size);
  if (sha256_hex(*bytes) != r.sha256) return "sha256 differs from the one the guest printed";
  return {};
}

// The TBLAVA frames as the guest sends them (scripts/lava/guest-test.sh), and
// what a log that was not sent so is refused for: revisions numbered upwards
// (a number sent twice is a second file under one name), one FINAL mark,
// one final revision of each file after it, nothing after DONE.  A forged
// or replayed frame cannot then replace a file that checked: the log is
// refused whole.  Lines cut or mixed with other output are not violations:
// they leave their revision incomplete, which assemble() reports.
class FrameReader {
 public:
  FrameReader(std::map<int, Revision>* revs, FetchOutcome* out) : revs_(revs), out_(out) {}
  Status frame(const std::string& kind, std::istringstream& in) {
    if (done_) return violation("a TBLAVA " + kind + " after TBLAVA DONE, the guest's last line");
    if (kind == "FINAL") {
      if (final_) return violation("a second TBLAVA FINAL");
      final_ = true;
    } else if (kind == "DONE") {
      int status = 0;
      if (in >> status) out_->guest_status = status;
      done_ = true;
    } else if (kind == "FILE") {
      return file(in);
    } else if (kind == "DATA" || kind == "END") {
      data_or_end(kind, in);
    }
    return Status::ok();
  }

 private:
  Status violation(const std::string& what) const {
    return Status::error(
        fmt::format("the log's TBLAVA frames are not as the guest sends them ({}): refused whole, nothing written (a "
                    "replayed or forged frame could replace a file that checked)",
                    what));
  }
  Status file(std::istringstream& in) {
    int rev = 0;
    Revision r;
    if (!(in >> rev >> r.name >> r.size >> r.sha256)) return Status::ok();  // a cut line
    if (rev <= last_rev_)
      return violation(
          fmt::format("revision {} of {} after revision {}: revisions are numbered upwards", rev, r.name, last_rev_));
    if (final_ && !final_names_.insert(r.name).second)
      return violation(fmt::format("a second final revision of {} (revision {})", r.name, rev));
    last_rev_ = open_rev_ = rev;
    r.final = final_;
    (*revs_)[rev] = std::move(r);
    return Status::ok();
  }
  // A line of the revision being sent; one of another revision is a line
  // mixed up with other output and goes nowhere.
  void data_or_end(const std::string& kind, std::istringstream& in) {
    int rev = 0;
    if (!(in >> rev) || rev != open_rev_) return;
    Revision& r = revs_->at(rev);
    if (kind == "DATA") {
      long line = 0;
      std::string chunk;
      if (!(in >> line >> chunk) || r.ended) return;
      if (!r.data.emplace(line, chunk).second) r.conflict = fmt::format("line {} sent twice", line);
    } else {
      std::string name;
      long lines = 0;
      if (!(in >> name >> lines) || name != r.name || r.ended) return;
      r.ended = true;
      r.lines = lines;
    }
  }

  std::map<int, Revision>* revs_;
  FetchOutcome* out_;
  int last_rev_ = 0, open_rev_ = 0;
  bool final_ = false, done_ = false;
  std::set<std::string> final_names_;
};

// The TBLAVA lines of the console: revisions, the final mark, DONE.
Status read_frames(const std::vector<LogRecord>& records, std::map<int, Revision>* revs, FetchOutcome* out) {
  FrameReader reader(revs, out);
  for (const auto& rec : records) {
    if (rec.level != "target") continue;
    auto at = rec.msg.find("TBLAVA ");
    if (at == std::string::npos) continue;
    std::istringstream in(rec.msg.substr(at + 7));
    std::string kind;
    in >> kind;
    TB_TRY(reader.frame(kind, in));
  }
  return Status::ok();
}

void read_results(const std::vector<LogRecord>& records, FetchOutcome* out) {
  for (const auto& rec : records) {
    if (rec.level != "results") continue;
    if (rec.field("definition") == "lava" && rec.field("case") == "job") {
      out->job_result = rec.field("result");
      out->error_type = rec.field("error_type");
      out->error_msg = rec.field("error_msg");
    } else if (rec.field("definition") == "lava") {
      if (rec.field("result") == "fail" && out->failed_action.empty()) out->failed_action = rec.field("case");
    } else {
      out->cases.push_back({rec.field("definition"), rec.field("case"), rec.field("result"), rec.field("measurement"),
                            rec.field("units")});
    }
  }
}

}  // namespace

std::string LogRecord::field(const std::string& key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  return {};
}

Status read_log(const std::string& text, std::vector<LogRecord>* records, std::size_t* skipped) {
  std::istringstream in(text);
  std::string line, json;
  std::size_t bad = 0;
  while (std::getline(in, line)) {
    std::size_t start = line.find('{');
    if (start == std::string::npos) {
      if (!line.empty()) ++bad;
      continue;
    }
    nlohmann::json rec;
    if (!yaml_line_to_json(line.substr(start), &json) ||
        (rec = nlohmann::json::parse(json, nullptr, false)).is_discarded() || !rec.is_object() ||
        !rec.contains("lvl") || !rec.contains("msg")) {
      ++bad;
      continue;
    }
    LogRecord r;
    r.level = as_text(rec["lvl"]);
    if (rec["msg"].is_object()) {
      for (const auto& [k, v] : rec["msg"].items()) r.fields.emplace_back(k, as_text(v));
    } else {
      r.msg = as_text(rec["msg"]);
    }
    records->push_back(std::move(r));
  }
  if (skipped) *skipped = bad;
  if (records->empty())
    return Status::error(
        "no LAVA log records in it (expected lines like - {\"dt\": ..., \"lvl\": ..., \"msg\": ...}: "
        "lava-run's output, or a server's job log: lavacli jobs logs --raw ID)");
  return Status::ok();
}

bool FetchOutcome::complete() const {
  if (job_result != "pass" || !guest_status || *guest_status != 0 || files.empty() || !broken.empty()) return false;
  for (const auto& f : files)
    if (!f.final) return false;
  return true;
}

std::string FetchOutcome::verdict() const {
  if (complete())
    return fmt::format("complete: the job passed, the guest's run exited 0, {} files back and checked", files.size());
  std::string v;
  if (job_result.empty())
    v = "the log has no job result (the job is still running, or the log was cut)";
  else if (job_result != "pass")
    v = "the job failed" + (failed_action.empty() ? std::string() : " in " + failed_action) + ": " +
        (error_type.empty() ? std::string("?") : error_type) + (error_msg.empty() ? "" : ": " + error_msg);
  else
    v = "the job passed";
  if (!guest_status)
    v += "; the guest's run did not finish (no TBLAVA DONE)";
  else if (*guest_status != 0)
    v += fmt::format("; the guest's run exited {}", *guest_status);
  std::size_t journal = 0;
  for (const auto& f : files) journal += f.final ? 0 : 1;
  v += fmt::format("; {} files back", files.size());
  if (journal) v += fmt::format(" ({} from the journal: the benchmarks finished before the end)", journal);
  if (!broken.empty()) v += fmt::format("; {} revisions did not check", broken.size());
  return v;
}

Status fetch_from_log(const std::string& log_text, const std::string& dir, FetchOutcome* out) {
  std::vector<LogRecord> records;
  TB_TRY(read_log(log_text, &records, nullptr));
  std::map<int, Revision> revs;
  TB_TRY(read_frames(records, &revs, out));
  read_results(records, out);
  // Per file, the best revision: a final one beats the journal's, a later one an earlier.
  std::map<std::string, std::pair<const Revision*, std::string>> best;
  std::map<std::string, int> best_rev;
  for (const auto& [rev, r] : revs) {
    std::string bytes;
    if (std::string why = assemble(r, &bytes); !why.empty()) {
      out->broken.push_back(fmt::format("{} revision {}: {}", r.name, rev, why));
      continue;
    }
    auto it = best.find(r.name);
    if (it == best.end() || r.final || !it->second.first->final) {
      best[r.name] = {&r, std::move(bytes)};
      best_rev[r.name] = rev;
    }
  }
  // A broken revision older than a file's kept one changes nothing: keep
  // only what is worse than what came back.
  std::vector<std::string> still_broken;
  for (const auto& b : out->broken) {
    std::string name = b.substr(0, b.find(" revision "));
    int rev = std::stoi(b.substr(b.find(" revision ") + 10));
    auto it = best.find(name);
    if (it == best.end() || rev > best_rev[name]) still_broken.push_back(b);
  }
  out->broken = still_broken;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::error("cannot create " + dir + ": " + ec.message());
  for (const auto& [name, kept] : best) {
    const fs::path path = fs::path(dir) / name;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return Status::error("cannot create " + path.parent_path().string() + ": " + ec.message());
    TB_TRY(write_file_atomic(path.string(), kept.second));
    out->files.push_back({name, best_rev[name], kept.first->final, kept.first->size, kept.first->sha256});
  }
  return Status::ok();
}

}  // namespace tracebench::lava
