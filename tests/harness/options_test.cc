// The typed option schema: types, ranges, words, defaults, and the messages
// a user sees; every registered tracer's schema is well-formed.
#include "tracebench/options.h"

#include <gtest/gtest.h>

#include <set>

#include "tracebench/tracer.h"

namespace tracebench {
namespace {

using T = OptionSpec::Type;

const OptionSchema& schema() {
  static const OptionSchema s = {
      {.name = "pages",
       .type = T::kUint,
       .help = "ring pages",
       .default_value = "64",
       .min = 1,
       .max = 65536,
       .power_of_two = true},
      {.name = "size", .type = T::kUint, .help = "bytes", .default_value = "2M", .min = 4096, .size_suffix = true},
      {.name = "timeout", .type = T::kUint, .help = "us", .max = 1000, .words = {"inf"}},
      {.name = "filter", .type = T::kBool, .help = "on/off", .default_value = "on"},
      {.name = "mode", .type = T::kChoice, .help = "m", .default_value = "a", .words = {"a", "b", "c"}},
      {.name = "event", .type = T::kText, .help = "tp", .format = "system:event", .check = check_system_event},
  };
  return s;
}

Status parse(std::map<std::string, std::string> given, OptionValues* v) {
  return parse_options("demo", schema(), given, v);
}

TEST(Options, DefaultsFillWhatIsNotGiven) {
  OptionValues v;
  ASSERT_TRUE(parse({}, &v));
  EXPECT_EQ(v.number("pages"), 64u);
  EXPECT_EQ(v.number("size"), 2u << 20);
  EXPECT_FALSE(v.has("timeout"));
  EXPECT_TRUE(v.on("filter"));
  EXPECT_EQ(v.text("mode"), "a");
  EXPECT_FALSE(v.given("pages"));
  EXPECT_THROW(v.number("timeout"), std::logic_error);
}

TEST(Options, GoodValuesAreTyped) {
  OptionValues v;
  ASSERT_TRUE(parse({{"pages", "128"},
                     {"size", "64k"},
                     {"timeout", "inf"},
                     {"filter", "0"},
                     {"mode", "c"},
                     {"event", "raw_syscalls:sys_enter"}},
                    &v));
  EXPECT_EQ(v.number("pages"), 128u);
  EXPECT_TRUE(v.given("pages"));
  EXPECT_EQ(v.number("size"), 64u << 10);
  EXPECT_FALSE(v.is_number("timeout"));
  EXPECT_EQ(v.text("timeout"), "inf");
  EXPECT_FALSE(v.on("filter"));
  EXPECT_EQ(v.text("filter"), "off");
  EXPECT_EQ(v.text("mode"), "c");
  EXPECT_EQ(v.text("event"), "raw_syscalls:sys_enter");
  ASSERT_TRUE(parse({{"timeout", "0x3e8"}}, &v));  // hex
  EXPECT_EQ(v.number("timeout"), 1000u);
}

TEST(Options, BadValuesNameTheKeyTheValueAndWhatIsExpected) {
  struct Case {
    const char* key;
    const char* value;
    const char* message;
  } cases[] = {
      {"pages", "3", "demo: option pages=3: expected 1..65536, a power of two"},
      {"pages", "0", "expected 1..65536"},
      {"pages", "131072", "expected 1..65536"},
      {"pages", "-1", "expected 1..65536"},
      {"pages", "", "expected 1..65536"},
      {"pages", "1e3", "expected 1..65536"},
      {"pages", "99999999999999999999999", "expected 1..65536"},  // overflow is not a wrap
      {"size", "1000", "demo: option size=1000: expected >= 4k (suffix k, M or G)"},
      {"size", "4x", "expected >= 4k"},
      {"size", "99999999999G", "expected >= 4k"},
      {"timeout", "1001", "expected 0..1000, or inf"},
      {"timeout", "forever", "expected 0..1000, or inf"},
      {"filter", "maybe", "demo: option filter=maybe: expected on or off"},
      {"mode", "d", "demo: option mode=d: expected a, b or c"},
      {"event", "nocolon", "demo: option event=nocolon: expected system:event"},
      {"event", "", "expected system:event"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.key) + "=" + c.value);
    OptionValues v;
    Status s = parse({{c.key, c.value}}, &v);
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

TEST(Options, UnknownKeyListsTheKnownOnes) {
  OptionValues v;
  Status s = parse({{"nosuch", "1"}}, &v);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "demo: unknown option 'nosuch'; options: pages, size, timeout, filter, mode and event "
            "(tracebench list --options demo)");
  s = parse_options("none", {}, {{"x", "1"}}, &v);
  EXPECT_EQ(s.message(), "the none tracer takes no options (given x)");
}

TEST(Options, MarkdownTableEscapesPipes) {
  OptionSchema s = {{.name = "k", .type = T::kChoice, .help = "a|b", .default_value = "x", .words = {"x", "y"}}};
  EXPECT_EQ(options_markdown(s),
            "| key | values | default | meaning |\n|---|---|---|---|\n| `k` | x or y | `x` | a\\|b |\n");
}

// Every tracer's schema: unique names, help text, defaults that parse.
TEST(Options, EveryTracerSchemaIsWellFormed) {
  ASSERT_GE(tracer_registry().size(), 5u);  // the adapters are linked in
  for (const auto& e : tracer_registry()) {
    SCOPED_TRACE(e.name);
    auto t = e.make();
    std::set<std::string> names;
    for (const auto& o : t->option_schema()) {
      EXPECT_TRUE(names.insert(o.name).second) << o.name << " twice";
      EXPECT_FALSE(o.help.empty()) << o.name;
      if (o.type == T::kChoice) { EXPECT_GE(o.words.size(), 2u) << o.name; }
    }
    OptionValues v;
    EXPECT_NO_THROW({ EXPECT_TRUE(parse_options(e.name, t->option_schema(), {}, &v)); });
  }
}

}  // namespace
}  // namespace tracebench
