#include "gpuclean/limits.h"

#include <gtest/gtest.h>

#include "gpuclean/error.h"

namespace gpuclean {
namespace {

TEST(Limits, ParsesSizesWithDecimalAndBinaryUnits) {
  EXPECT_EQ(ParseByteSize("1500000"), 1500000u);
  EXPECT_EQ(ParseByteSize("512M"), 512000000u);
  EXPECT_EQ(ParseByteSize("8G"), 8000000000u);
  EXPECT_EQ(ParseByteSize("8gb"), 8000000000u);
  EXPECT_EQ(ParseByteSize("2GiB"), uint64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("64Ki"), uint64_t{64} << 10);
  EXPECT_EQ(ParseByteSize("1.5T"), 1500000000000u);
  EXPECT_EQ(ParseByteSize("100B"), 100u);
}

TEST(Limits, RefusesWhatIsNotASize) {
  for (const char* text : {"", "lots", "-1G", "0", "3X", "1Bi", "G", "1e30", "nan", "inf", "5 G"}) {
    try {
      ParseByteSize(text);
      ADD_FAILURE() << "'" << text << "' parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << text;
      EXPECT_NE(std::string(e.what()).find("not a memory size"), std::string::npos) << e.what();
    }
  }
}

TEST(Limits, FormatsBytesInDecimalUnits) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(9999), "9999 B");
  EXPECT_EQ(FormatBytes(12345), "12.3 kB");
  EXPECT_EQ(FormatBytes(3100000), "3.1 MB");
  EXPECT_EQ(FormatBytes(4000000000000), "4.0 TB");
}

TEST(Limits, CheckMemoryRefusesAboveTheLimitWithOneLine) {
  SetMemoryLimit(1000);
  EXPECT_EQ(MemoryLimit(), 1000u);
  EXPECT_NO_THROW(CheckMemory(1000, "x"));
  try {
    CheckMemory(1001, "op 3 (TILE): output 0");
    ADD_FAILURE() << "1001 bytes passed a 1000-byte limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(std::string(e.what()),
              "op 3 (TILE): output 0 needs 1001 B, more than the memory limit of 1000 B (--max-memory)");
  }
  SetMemoryLimit(0);
  EXPECT_EQ(MemoryLimit(), DefaultMemoryLimit());
  EXPECT_GT(DefaultMemoryLimit(), uint64_t{1} << 20);
}

TEST(Limits, LiveChargesCountAsInUseUntilReleased) {
  SetMemoryLimit(1000);
  const uint64_t before = MemoryInUse();
  {
    MemoryCharge arena;
    arena.Add(600);
    EXPECT_EQ(MemoryInUse(), before + 600);
    EXPECT_NO_THROW(CheckMemory(400, "x"));
    try {
      CheckMemory(401, "a generated value for input 0");
      ADD_FAILURE() << "401 bytes passed beside 600 in use under a 1000-byte limit";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      EXPECT_EQ(std::string(e.what()),
                "a generated value for input 0 needs 401 B, more than the memory limit of 1000 B leaves beside the "
                "600 B already in use (--max-memory)");
    }
  }
  EXPECT_EQ(MemoryInUse(), before);
  EXPECT_NO_THROW(CheckMemory(1000, "x"));
  SetMemoryLimit(0);
}

}  // namespace
}  // namespace gpuclean
