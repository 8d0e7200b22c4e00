#include "core/units.h"

#include <gtest/gtest.h>

namespace infereng::units {
namespace {

TEST(UnitsTest, ParsesBytesDecimalAndBinary) {
  EXPECT_EQ(*ParseBytes("80GB"), 80'000'000'000);
  EXPECT_EQ(*ParseBytes("80GiB"), 80LL << 30);
  EXPECT_EQ(*ParseBytes("1.5KB"), 1500);
  EXPECT_EQ(*ParseBytes("512 MiB"), 512LL << 20);
  EXPECT_EQ(*ParseBytes("1TB"), 1'000'000'000'000);
  EXPECT_EQ(*ParseBytes("2TiB"), 2LL << 40);
  EXPECT_EQ(*ParseBytes("1024B"), 1024);
  EXPECT_EQ(*ParseBytes("3mb"), 3'000'000);
}

TEST(UnitsTest, RejectsBadBytes) {
  for (const char* bad : {"80", "GB", "80XB", "-1GB", "", "abc", "80 GB extra", "nanGB", "infGB"}) {
    auto r = ParseBytes(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("GiB"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(std::string("\"") + bad + "\""), std::string::npos);
  }
}

TEST(UnitsTest, ParsesBandwidthAndFlops) {
  EXPECT_DOUBLE_EQ(*ParseBandwidth("3.35TB/s"), 3.35e12);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("900GB/s"), 900e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("64GiB/s"), 64.0 * (1LL << 30));
  EXPECT_DOUBLE_EQ(*ParseFlops("989TFLOPS"), 989e12);
  EXPECT_DOUBLE_EQ(*ParseFlops("67 GFLOPS"), 67e9);
  EXPECT_DOUBLE_EQ(*ParseFlops("1.98PFLOPS"), 1.98e15);
  EXPECT_DOUBLE_EQ(*ParseFlops("1TFLOP/s"), 1e12);
  EXPECT_DOUBLE_EQ(*ParseFlops("1979TOPS"), 1979e12);
  EXPECT_FALSE(ParseFlops("1979 TOP").ok());
  EXPECT_FALSE(ParseBandwidth("3.35TB").ok());
  EXPECT_FALSE(ParseBandwidth("fast").ok());
  EXPECT_FALSE(ParseFlops("989T").ok());
  EXPECT_FALSE(ParseFlops("989").ok());
}

TEST(UnitsTest, ParsesDurations) {
  EXPECT_EQ(*ParseDuration("250ms"), 250 * kNanosPerMilli);
  EXPECT_EQ(*ParseDuration("2s"), 2 * kNanosPerSecond);
  EXPECT_EQ(*ParseDuration("1h"), 3600 * kNanosPerSecond);
  EXPECT_EQ(*ParseDuration("30m"), 1800 * kNanosPerSecond);
  EXPECT_EQ(*ParseDuration("30min"), 1800 * kNanosPerSecond);
  EXPECT_EQ(*ParseDuration("500us"), 500 * kNanosPerMicro);
  EXPECT_EQ(*ParseDuration("7ns"), 7);
  EXPECT_EQ(*ParseDuration("1.5s"), 1'500'000'000);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("24h"), 86400);
}

TEST(UnitsTest, PlainNumberDurationNeedsDefaultUnit) {
  auto r = ParseDuration("300");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unit is required"), std::string::npos);
  EXPECT_EQ(*ParseDuration("300", "ms"), 300 * kNanosPerMilli);
  // An explicit unit wins over the default.
  EXPECT_EQ(*ParseDuration("2s", "ms"), 2 * kNanosPerSecond);
  EXPECT_FALSE(ParseDuration("fast").ok());
  EXPECT_FALSE(ParseDuration("-1s").ok());
  EXPECT_FALSE(ParseDuration("5M").ok());
  EXPECT_FALSE(ParseDuration("5 parsecs").ok());
}

TEST(UnitsTest, FormatSignificantNeverUsesAnExponent) {
  EXPECT_EQ(FormatSignificant(1234.6), "1235");
  EXPECT_EQ(FormatSignificant(12.346), "12.35");
  EXPECT_EQ(FormatSignificant(0.012346), "0.01235");
  EXPECT_EQ(FormatSignificant(2500000, 3), "2500000");
  EXPECT_EQ(FormatSignificant(13.5, 3), "13.5");
  EXPECT_EQ(FormatSignificant(4.0), "4");
  EXPECT_EQ(FormatSignificant(0), "0");
  EXPECT_EQ(FormatSignificant(-1234.6), "-1235");
}

// "0s" is a well-written duration: where zero is not allowed the error says so.
TEST(UnitsTest, PositiveDurationSaysZeroIsTheProblem) {
  EXPECT_DOUBLE_EQ(*ParsePositiveDurationSeconds("2m"), 120);
  EXPECT_DOUBLE_EQ(*ParsePositiveDurationSeconds("5", "s"), 5);
  auto zero = ParsePositiveDurationSeconds("0s");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "expected a duration greater than zero, got \"0s\"");
  auto bad = ParsePositiveDurationSeconds("soon");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("a duration like"), std::string::npos);
}

TEST(UnitsTest, ParsesRates) {
  EXPECT_DOUBLE_EQ(*ParseRate("20rps"), 20);
  EXPECT_DOUBLE_EQ(*ParseRate("20/s"), 20);
  EXPECT_DOUBLE_EQ(*ParseRate("20 req/s"), 20);
  EXPECT_DOUBLE_EQ(*ParseRate("1200/min"), 20);
  EXPECT_DOUBLE_EQ(*ParseRate("72000/h"), 20);
  EXPECT_DOUBLE_EQ(*ParseRate("600rpm"), 10);
  EXPECT_DOUBLE_EQ(*ParseRate("5", "rps"), 5);
  EXPECT_FALSE(ParseRate("5").ok());
  EXPECT_FALSE(ParseRate("20/fortnight").ok());
  EXPECT_FALSE(ParseRate("20 tok/s").ok());
  EXPECT_FALSE(ParseRate("lots").ok());
}

TEST(UnitsTest, ParsesMoney) {
  auto h = ParseMoney("$2.50/h");
  ASSERT_TRUE(h.ok());
  EXPECT_DOUBLE_EQ(h->usd, 2.5);
  EXPECT_EQ(h->per, Money::Per::kHour);
  EXPECT_EQ(ParseMoney("$2.50/hour")->per, Money::Per::kHour);
  auto t = ParseMoney("$0.50/1M");
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->usd, 0.5);
  EXPECT_EQ(t->per, Money::Per::kMillionTokens);
  EXPECT_EQ(ParseMoney("$0.50/1M tokens")->per, Money::Per::kMillionTokens);
  EXPECT_EQ(ParseMoney("$40")->per, Money::Per::kNone);
  EXPECT_FALSE(ParseMoney("2.50/h").ok());
  EXPECT_FALSE(ParseMoney("$2.50/week").ok());
  EXPECT_FALSE(ParseMoney("$-1/h").ok());
  EXPECT_FALSE(ParseMoney("$").ok());
}

TEST(UnitsTest, FormatsAndRoundTrips) {
  EXPECT_EQ(FormatBytes(80'000'000'000), "80GB");
  EXPECT_EQ(FormatBytes(80LL << 30, /*binary=*/true), "80GiB");
  EXPECT_EQ(FormatBytes(512), "512B");
  EXPECT_EQ(FormatBandwidth(3.35e12), "3.35TB/s");
  EXPECT_EQ(FormatFlops(989e12), "989TFLOPS");
  EXPECT_EQ(FormatDuration(250 * kNanosPerMilli), "250ms");
  EXPECT_EQ(FormatDuration(2 * kNanosPerSecond), "2s");
  EXPECT_EQ(FormatDuration(500 * kNanosPerMicro), "500us");
  EXPECT_EQ(FormatDuration(5400 * kNanosPerSecond), "1.5h");
  EXPECT_EQ(FormatRate(20), "20rps");
  EXPECT_EQ(FormatMoney({2.5, Money::Per::kHour}), "$2.50/h");
  EXPECT_EQ(FormatMoney({0.5, Money::Per::kMillionTokens}), "$0.50/1M");
  EXPECT_EQ(FormatMoney({40, Money::Per::kNone}), "$40.00");
  for (const char* s : {"250ms", "2s", "1.5h", "500us", "30m"}) {
    EXPECT_EQ(FormatDuration(*ParseDuration(s)), s);
  }
  for (const char* s : {"80GB", "1.5KB", "3.35TB"}) EXPECT_EQ(FormatBytes(*ParseBytes(s)), s);
  EXPECT_EQ(FormatNumber(2.5), "2.5");
  EXPECT_EQ(FormatNumber(1200), "1200");
}

}  // namespace
}  // namespace infereng::units
