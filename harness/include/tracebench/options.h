// Typed tracer options: each tracer declares its `--option <tracer>.<key>=<value>`
// keys once (name, type, range, default, meaning); parse_options() checks a
// run's options against that schema in one place, before anything is
// attached or written, and hands the adapter typed values.  `tracebench list
// --options` prints the schema and the tracers' README tables are generated
// from it (tests/integration/option_tables.py checks them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracebench/status.h"

namespace tracebench {

struct OptionSpec {
  enum class Type {
    kUint,    // a number in [min, max]; `words` are accepted beside numbers ("inf", "none")
    kBool,    // on/off (1/0, true/false, yes/no)
    kChoice,  // one of `words`
    kText,    // free text checked by `check`
  };
  std::string name;
  Type type = Type::kUint;
  std::string help;                          // what it does (the README's "meaning" column)
  std::optional<std::string> default_value;  // parsed like a user's value; none = computed or unset
  std::string default_help;                  // shown when the default is computed (or to explain it)
  std::uint64_t min = 0, max = UINT64_MAX;
  bool size_suffix = false;        // kUint: k, M, G (binary) accepted
  bool power_of_two = false;       // kUint
  std::vector<std::string> words;  // kChoice: the choices; kUint: words accepted besides numbers
  std::string format;              // kText: what a value looks like (shown, and in errors)
  // kText (or extra checks on any type): returns an error text, empty if the value is good.
  std::function<std::string(const std::string&)> check;
  // Non-empty: a key a sibling tracer takes that this one refuses, whatever
  // the value, for this reason (listed, so the user learns why).
  std::string refused;
  // Sizes the tracer's buffer: named to the user when a run lost events.
  bool sizes_buffer = false;
};

using OptionSchema = std::vector<OptionSpec>;

// "-o ftrace.buffer_kb=..." for each option of `tracer`'s schema that sizes
// its buffer, joined; "" when it has none.
std::string buffer_options_hint(const std::string& tracer, const OptionSchema& schema);

// The values of one tracer's options after parse_options(): the user's, or
// the schema's default.
class OptionValues {
 public:
  bool given(std::string_view name) const;  // set by the user
  bool has(std::string_view name) const;    // set by the user or by a default
  // The value as text (a word such as "inf" or "none" of a kUint, a choice, text).
  const std::string& text(std::string_view name) const;
  // A kUint's number; only when has() and the value is not a word.
  std::uint64_t number(std::string_view name) const;
  bool is_number(std::string_view name) const;
  bool on(std::string_view name) const;  // a kBool's value

 private:
  friend Status parse_options(std::string_view, const OptionSchema&, const std::map<std::string, std::string>&,
                              OptionValues*);
  struct Value {
    std::string text;
    std::optional<std::uint64_t> number;
    bool given = false;
  };
  std::map<std::string, Value, std::less<>> values_;
  const Value& at(std::string_view name) const;
};

// Checks `given` against `schema`: unknown keys, types, ranges, choices.  The
// error names the tracer, the key, the value and what is expected.
Status parse_options(std::string_view tracer, const OptionSchema& schema,
                     const std::map<std::string, std::string>& given, OptionValues* out);

// A check for kText options naming a tracepoint: "system:event".
std::string check_system_event(const std::string& value);

// "1..65536, a power of two", "overwrite or discard", ...
std::string describe_values(const OptionSpec& spec);
// The schema as a Markdown table (key | values | default | meaning).
std::string options_markdown(const OptionSchema& schema);
// The schema as plain text for `tracebench list --options`.
std::string options_text(std::string_view tracer, const OptionSchema& schema);

}  // namespace tracebench
