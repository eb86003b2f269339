// The one table of each input kind's formats (reporter.h): a format is
// reachable by name only once it is written here.
#include "tracebench/reporter.h"

namespace tracebench {

const ReporterTable<RunReport>& run_reporters() {
  static const ReporterTable<RunReport> t("run report", {
                                                            {"console", &console_run_reporter()},
                                                            {"json", &json_run_reporter()},
                                                            {"csv", &csv_run_reporter()},
                                                            {"samples-csv", &samples_csv_run_reporter()},
                                                            {"bencher", &bencher_run_reporter()},
                                                            {"kcidb", &kcidb_run_reporter()},
                                                        });
  return t;
}

const ReporterTable<CompareReport>& compare_reporters() {
  static const ReporterTable<CompareReport> t("comparison", {
                                                                {"text", &text_compare_reporter()},
                                                                {"json", &json_compare_reporter()},
                                                                {"junit", &junit_compare_reporter()},
                                                            });
  return t;
}

}  // namespace tracebench
