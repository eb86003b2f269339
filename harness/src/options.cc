#include "tracebench/options.h"
#include "tracebench/tracer.h"
#include "tracebench/suggest.h"

#include <cctype>
#include <stdexcept>

namespace tracebench {
namespace {

std::string join_words(const std::vector<std::string>& w, const char* last) {
  std::string s;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (i) s += i + 1 == w.size() ? std::string(" ") + last + " " : ", ";
    s += w[i];
  }
  return s;
}

// Decimal digits with an optional binary suffix (k, M, G), or 0x and hex
// digits; false on overflow.
bool parse_number(const std::string& s, bool suffix, std::uint64_t* out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    std::uint64_t v = 0;
    for (std::size_t i = 2; i < s.size(); ++i) {
      if (!std::isxdigit(static_cast<unsigned char>(s[i])) || v >> 60) return false;
      char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
      v = v * 16 + static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    *out = v;
    return true;
  }
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  std::uint64_t v = 0;
  std::size_t i = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    std::uint64_t d = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (i < s.size()) {
    if (!suffix || i + 1 != s.size()) return false;
    int shift = 0;
    switch (s[i]) {
      case 'k':
      case 'K': shift = 10; break;
      case 'm':
      case 'M': shift = 20; break;
      case 'g':
      case 'G': shift = 30; break;
      default: return false;
    }
    if (v > (UINT64_MAX >> shift)) return false;
    v <<= shift;
  }
  *out = v;
  return true;
}

bool parse_on_off(const std::string& s, bool* out) {
  if (s == "on" || s == "1" || s == "true" || s == "yes") return *out = true, true;
  if (s == "off" || s == "0" || s == "false" || s == "no") return *out = false, true;
  return false;
}

std::string human(std::uint64_t v, bool suffix) {
  if (suffix && v >= 1024) {
    for (auto [shift, unit] : {std::pair{30, "G"}, {20, "M"}, {10, "k"}})
      if (v % (1ull << shift) == 0) return std::to_string(v >> shift) + unit;
  }
  return std::to_string(v);
}

// Parses one value; an empty return is success.
std::string parse_value(const OptionSpec& spec, const std::string& value, std::string* text,
                        std::optional<std::uint64_t>* number) {
  *text = value;
  number->reset();
  if (!spec.refused.empty()) return spec.refused;
  switch (spec.type) {
    case OptionSpec::Type::kUint: {
      for (const auto& w : spec.words)
        if (value == w) return {};
      std::uint64_t v = 0;
      if (!parse_number(value, spec.size_suffix, &v) || v < spec.min || v > spec.max ||
          (spec.power_of_two && (v & (v - 1)) != 0))
        return "expected " + describe_values(spec);
      *number = v;
      break;
    }
    case OptionSpec::Type::kBool: {
      bool b = false;
      if (!parse_on_off(value, &b)) return "expected on or off";
      *text = b ? "on" : "off";
      break;
    }
    case OptionSpec::Type::kChoice: {
      bool found = false;
      for (const auto& w : spec.words) found |= value == w;
      if (!found) return "expected " + describe_values(spec);
      break;
    }
    case OptionSpec::Type::kText:
      if (value.empty()) return "expected " + describe_values(spec);
      break;
  }
  if (spec.check) return spec.check(value);
  return {};
}

}  // namespace

std::string check_system_event(const std::string& v) {
  auto colon = v.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == v.size() ||
      v.find_first_of(" /.\n") != std::string::npos)
    return "expected system:event, e.g. raw_syscalls:sys_enter";
  return "";
}

std::string describe_values(const OptionSpec& spec) {
  if (!spec.refused.empty()) return "refused";
  switch (spec.type) {
    case OptionSpec::Type::kUint: {
      std::string s = spec.max == UINT64_MAX
                          ? ">= " + human(spec.min, spec.size_suffix)
                          : human(spec.min, spec.size_suffix) + ".." + human(spec.max, spec.size_suffix);
      if (spec.power_of_two) s += ", a power of two";
      if (spec.size_suffix) s += " (suffix k, M or G)";
      if (!spec.words.empty()) s += ", or " + join_words(spec.words, "or");
      return s;
    }
    case OptionSpec::Type::kBool: return "on or off";
    case OptionSpec::Type::kChoice: return join_words(spec.words, "or");
    case OptionSpec::Type::kText: return spec.format.empty() ? "text" : spec.format;
  }
  return {};
}

Status parse_options(std::string_view tracer, const OptionSchema& schema,
                     const std::map<std::string, std::string>& given, OptionValues* out) {
  OptionValues v;
  const std::string t(tracer);
  for (const auto& [key, value] : given) {
    const OptionSpec* spec = nullptr;
    for (const auto& s : schema)
      if (s.name == key) spec = &s;
    if (!spec) {
      if (schema.empty()) return Status::error("the " + t + " tracer takes no options (given " + key + ")");
      std::vector<std::string> names;
      for (const auto& s : schema) names.push_back(s.name);
      const std::string near = did_you_mean(key, names);
      return Status::error(t + ": unknown option '" + key + "'" + near + (near.empty() ? "; options: " : " Options: ") +
                           join_words(names, "and") + " (tracebench list --options " + t + ")");
    }
    OptionValues::Value val;
    std::string err = parse_value(*spec, value, &val.text, &val.number);
    if (!err.empty()) return Status::error(t + ": option " + key + "=" + value + ": " + err);
    val.given = true;
    v.values_[key] = std::move(val);
  }
  for (const auto& s : schema) {
    if (v.values_.count(s.name) || !s.default_value) continue;
    OptionValues::Value val;
    std::string err = parse_value(s, *s.default_value, &val.text, &val.number);
    if (!err.empty()) throw std::logic_error(t + ": the default of option " + s.name + " is invalid: " + err);
    v.values_[s.name] = std::move(val);
  }
  *out = std::move(v);
  return Status::ok();
}

const OptionValues::Value& OptionValues::at(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error("option " + std::string(name) + " has no value");
  return it->second;
}
bool OptionValues::given(std::string_view name) const {
  auto it = values_.find(name);
  return it != values_.end() && it->second.given;
}
bool OptionValues::has(std::string_view name) const { return values_.find(name) != values_.end(); }
const std::string& OptionValues::text(std::string_view name) const { return at(name).text; }
bool OptionValues::is_number(std::string_view name) const { return has(name) && at(name).number.has_value(); }
std::uint64_t OptionValues::number(std::string_view name) const {
  const Value& v = at(name);
  if (!v.number) throw std::logic_error("option " + std::string(name) + " is '" + v.text + "', not a number");
  return *v.number;
}
bool OptionValues::on(std::string_view name) const { return at(name).text == "on"; }

std::string options_markdown(const OptionSchema& schema) {
  auto cell = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
    return o;
  };
  std::string md = "| key | values | default | meaning |\n|---|---|---|---|\n";
  for (const auto& s : schema) {
    std::string def = s.default_value ? "`" + *s.default_value + "`" : "";
    if (!s.default_help.empty()) def += (def.empty() ? "" : ": ") + s.default_help;
    md += "| `" + s.name + "` | " + cell(describe_values(s)) + " | " + cell(def) + " | " + cell(s.help) + " |\n";
  }
  return md;
}

std::string options_text(std::string_view tracer, const OptionSchema& schema) {
  std::string out = std::string(tracer) + (schema.empty() ? ": no options\n" : ":\n");
  for (const auto& s : schema) {
    out += "  " + std::string(tracer) + "." + s.name + "=<" + describe_values(s) + ">\n";
    std::string def = s.default_value ? *s.default_value : "";
    if (!s.default_help.empty()) def += (def.empty() ? "" : ": ") + s.default_help;
    if (!def.empty()) out += "      default: " + def + "\n";
    out += "      " + s.help + "\n";
  }
  return out;
}

Status option_values(std::string_view tracer, const OptionSchema& schema, const AttachSpec& spec, OptionValues* out) {
  if (spec.parsed_options) {
    *out = *spec.parsed_options;
    return Status::ok();
  }
  return parse_options(tracer, schema, spec.options, out);
}

std::string buffer_options_hint(const std::string& tracer, const OptionSchema& schema) {
  std::vector<std::string> keys;
  for (const auto& s : schema)
    if (s.sizes_buffer) keys.push_back("-o " + tracer + "." + s.name + "=...");
  return join_words(keys, "and");
}

}  // namespace tracebench
