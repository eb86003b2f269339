// The ftrace adapter's automatic buffer size: records per sub-buffer, the
// margin, the floor and the bound (no tracefs needed).
#include "tracers/ftrace/buffer_size.h"

#include <gtest/gtest.h>

using tracebench::ftrace::buffer_kb_for;
using tracebench::ftrace::ring_record_bytes;

TEST(FtraceBufferSize, RecordBytesCarryHeaderLengthWordAndAlignment) {
  EXPECT_EQ(ring_record_bytes(16), 20u);    // a uprobe entry: common fields + ip
  EXPECT_EQ(ring_record_bytes(18), 24u);    // an empty marker: + "\n" and NUL, rounded up
  EXPECT_EQ(ring_record_bytes(112), 116u);  // the largest entry without a length word
  EXPECT_EQ(ring_record_bytes(113), 124u);  // + 4-byte length word, rounded up
}

TEST(FtraceBufferSize, OneBlockFitsWholeSubBuffers) {
  // 1052-byte records: three per 4 KiB sub-buffer (4080 data bytes), so
  // 2000 events need 667 sub-buffers, + an eighth + one = 751.
  EXPECT_EQ(buffer_kb_for(2000, 1052, 4096, 1, UINT64_MAX), (751u * 4080 + 1023) / 1024);
  // Never below the instance's default, never above the bound.
  EXPECT_EQ(buffer_kb_for(10, 20, 4096, 1410, UINT64_MAX), 1410u);
  EXPECT_EQ(buffer_kb_for(100000000, 1052, 4096, 1410, 65536), 65536u);
  // Larger sub-buffers hold more records each.
  EXPECT_LT(buffer_kb_for(20000, 1052, 16384, 1, UINT64_MAX), buffer_kb_for(20000, 1052, 4096, 1, UINT64_MAX));
}

TEST(FtraceBufferSize, BoundIsPositiveAndAtMost256MiB) {
  const auto b = tracebench::ftrace::auto_buffer_bound_kb(2, 1);
  EXPECT_GT(b, 0u);
  EXPECT_LE(b, 256u * 1024);
  EXPECT_LE(tracebench::ftrace::auto_buffer_bound_kb(2, 32), b);
}
