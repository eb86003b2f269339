// The JUnit reporter: `tracebench compare --junit FILE` as CI systems read
// test results.  One testsuite, one testcase per benchmark; what
// --fail-on-regression fails on (a regression, a benchmark of A missing or
// failed in B) is a <failure>, a benchmark only B has is <skipped>; an
// inconclusive one passes (compare fails on it only with
// --fail-on-inconclusive), its MDE among its properties.  Every
// figure comes from the CompareResult: nothing is recomputed here.
#include <cmath>

#include <fmt/format.h>

#include "tracebench/report.h"
#include "tracebench/reporter.h"

namespace tracebench {
namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab, newline and return.
        if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
          out += '?';
        else
          out += static_cast<char>(ch);
    }
  }
  return out;
}

// A minimum detectable effect as a number, "inf" when it could not be had.
std::string mde(const std::optional<double>& m) {
  return m && std::isfinite(*m) ? fmt::format("{:.4f}", *m) : std::string("inf");
}

std::string figures(const CompareRow& r) {
  return fmt::format(
      "{} A {:.2f} ns, B {:.2f} ns, B/A {}, p {:.4f}, MDE {} (80% power) {} (90%) ({} and {} repetitions, {} and {} "
      "runs)",
      r.what, r.a_median, r.b_median, r.ratio ? fmt::format("{:.4f}", *r.ratio) : std::string("-"), r.p_value,
      mde(r.mde80), mde(r.mde90), r.a_n, r.b_n, r.a_runs, r.b_runs);
}

}  // namespace

std::string compare_junit(const CompareResult& c, const std::vector<const RunResult*>& a,
                          const std::vector<const RunResult*>& b, double threshold, double alpha) {
  std::size_t failures = 0, skipped = 0;
  std::string cases;
  for (const auto& r : c.rows) {
    const bool missing = r.verdict == "missing" || r.verdict == "failed";
    std::string body;
    if (r.verdict == "regression") {
      ++failures;
      body = fmt::format(
          "      <failure type=\"regression\" message=\"{}\"/>\n",
          xml_escape(fmt::format("regression: {} (threshold {:.3g}, alpha {:.3g})", figures(r), threshold, alpha)));
    } else if (missing && r.side == "B") {
      ++failures;
      body = fmt::format("      <failure type=\"{}\" message=\"{}\"/>\n", r.verdict, xml_escape(r.detail));
    } else if (missing) {
      ++skipped;
      body = fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(r.detail));
    } else {
      body = fmt::format("      <system-out>{}</system-out>\n", xml_escape(r.verdict + ": " + figures(r)));
    }
    std::string props;
    if (!missing) {
      props = fmt::format(
          "      <properties>\n        <property name=\"a_median_ns\" value=\"{}\"/>\n        <property "
          "name=\"b_median_ns\" value=\"{}\"/>\n{}        <property name=\"p_value\" value=\"{}\"/>\n        <property "
          "name=\"test\" value=\"{}\"/>\n        <property name=\"mde_80\" value=\"{}\"/>\n        <property "
          "name=\"mde_90\" value=\"{}\"/>\n        <property name=\"verdict\" value=\"{}\"/>\n      </properties>\n",
          r.a_median, r.b_median,
          r.ratio ? fmt::format("        <property name=\"ratio\" value=\"{}\"/>\n", *r.ratio) : std::string(),
          r.p_value, xml_escape(r.method), mde(r.mde80), mde(r.mde90), r.verdict);
    }
    cases +=
        fmt::format("    <testcase classname=\"tracebench.compare\" name=\"{}\" time=\"0\">\n{}{}    </testcase>\n",
                    xml_escape(r.benchmark), props, body);
  }
  auto ids = [](const std::vector<const RunResult*>& v) {
    std::string s;
    for (const auto* r : v) s += (s.empty() ? "" : " ") + r->context.run_id;
    return s;
  };
  std::string warnings;
  for (const auto& w : c.warnings) warnings += "warning: " + w + "\n";
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"tracebench compare\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{2}\">\n"
      "  <testsuite name=\"tracebench.compare\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{2}\" "
      "time=\"0\">\n"
      "    <properties>\n      <property name=\"a_runs\" value=\"{3}\"/>\n      <property name=\"b_runs\" "
      "value=\"{4}\"/>\n      <property name=\"threshold\" value=\"{5}\"/>\n      <property name=\"alpha\" "
      "value=\"{6}\"/>\n    </properties>\n"
      "{7}"
      "{8}"
      "  </testsuite>\n</testsuites>\n",
      c.rows.size(), failures, skipped, xml_escape(ids(a)), xml_escape(ids(b)), threshold, alpha, cases,
      warnings.empty() ? std::string() : "    <system-err>" + xml_escape(warnings) + "</system-err>\n");
}

namespace {
class JunitCompareReporter final : public Reporter<CompareReport> {
 public:
  Status write(const CompareReport& in, Report* out) const override {
    out->text = compare_junit(in.result, in.a, in.b, in.threshold, in.alpha);
    return Status::ok();
  }
};
}  // namespace

const Reporter<CompareReport>& junit_compare_reporter() {
  static const JunitCompareReporter r;
  return r;
}

}  // namespace tracebench
