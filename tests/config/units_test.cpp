#include <gtest/gtest.h>

#include "platform/config/units.h"

namespace gpuvp::config {
namespace {

TEST(SplitQuantity, SplitsNumberAndUnitWithOrWithoutSpace) {
  auto a = split_quantity("1312 MHz");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->number, 1312);
  EXPECT_EQ(a->unit, "MHz");
  auto b = split_quantity("37.5GB/s");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->number, 37.5);
  EXPECT_EQ(b->unit, "GB/s");
  auto c = split_quantity("  1e3 ps ");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->number, 1000);
  EXPECT_EQ(c->unit, "ps");
  auto d = split_quantity("84");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->unit, "");
}

TEST(SplitQuantity, RejectsMalformedNumbers) {
  EXPECT_FALSE(split_quantity(""));
  EXPECT_FALSE(split_quantity("MHz"));
  EXPECT_FALSE(split_quantity("twelve"));
  EXPECT_FALSE(split_quantity("12 MHz extra"));
  EXPECT_FALSE(split_quantity("."));
  EXPECT_FALSE(split_quantity("1e999"));  // overflows to infinity
}

TEST(SplitQuantity, ExponentWithoutDigitsIsAUnitLetter) {
  // "1 e" is not an exponent; "e" becomes the unit and fails unit lookup later, not here.
  auto q = split_quantity("1e");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->number, 1);
  EXPECT_EQ(q->unit, "e");
}

TEST(Units, CanonicalFactors) {
  EXPECT_EQ(find_unit("MHz")->factor, 1e6);
  EXPECT_EQ(find_unit("KiB")->factor, 1024);
  EXPECT_EQ(find_unit("KB")->factor, 1000);
  EXPECT_EQ(find_unit("us")->factor, 1e6);
  EXPECT_EQ(find_unit("\xC2\xB5s")->factor, 1e6);  // µs
  EXPECT_EQ(find_unit("GB/s")->factor, 1e9);
  EXPECT_EQ(find_unit("GB/s")->dimension, Dimension::Bandwidth);
  EXPECT_FALSE(find_unit("mhz"));
}

TEST(Units, FormatPicksTheLargestTidyUnit) {
  EXPECT_EQ(format_quantity(1312e6, Dimension::Frequency), "1312 MHz");
  EXPECT_EQ(format_quantity(1.2e9, Dimension::Frequency), "1200 MHz");
  EXPECT_EQ(format_quantity(1.53e9, Dimension::Frequency), "1530 MHz");
  EXPECT_EQ(format_quantity(4800e9, Dimension::Bandwidth), "4800 GB/s");
  EXPECT_EQ(format_quantity(196608, Dimension::Size), "192 KiB");
  EXPECT_EQ(format_quantity(16384.0 * 1024 * 1024, Dimension::Size), "16 GiB");
  EXPECT_EQ(format_quantity(16e9, Dimension::Size), "16 GB");
  EXPECT_EQ(format_quantity(40, Dimension::Size), "40 B");
  EXPECT_EQ(format_quantity(23840, Dimension::Time), "23.84 ns");
  EXPECT_EQ(format_quantity(45e6, Dimension::Time), "45 us");
  EXPECT_EQ(format_quantity(37.5e9, Dimension::Bandwidth), "37.5 GB/s");
  EXPECT_EQ(format_quantity(0, Dimension::Time), "0 ps");
}

TEST(Units, FormatRoundTripsThroughTheParser) {
  for (double value : {1312e6, 877e6, 196608.0, 23840.0, 37.5e9, 4800e9, 750.0}) {
    for (Dimension dimension : {Dimension::Frequency, Dimension::Size, Dimension::Time, Dimension::Bandwidth}) {
      const std::string text = format_quantity(value, dimension);
      const auto split = split_quantity(text);
      ASSERT_TRUE(split) << text;
      const auto unit = find_unit(split->unit);
      ASSERT_TRUE(unit) << text;
      EXPECT_EQ(unit->dimension, dimension);
      EXPECT_DOUBLE_EQ(split->number * unit->factor, value) << text;
    }
  }
}

}  // namespace
}  // namespace gpuvp::config
