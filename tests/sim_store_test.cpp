// The simulator's TMA stores, bulk async-groups and named barriers on small hand-written kernels:
// a box read from 128-byte swizzled shared memory lands in global memory clipped at the tensor's
// extents (PTX ISA 9.1 §5.5: the bounding box; §5.5.7: the swizzle on the shared address), a
// thread that writes the box before waiting for its group's reads is a race, one that exits
// without waiting is an error, and a wait leaves uncommitted stores and the N most recent groups
// alone (§9.7.9.25.4); bar.sync with a thread count is a barrier of that many threads (§9.7.13.1).
#include <doctest/doctest.h>

#include <cstring>

#include "ptxgen/sim.hpp"

namespace {

// D: 10 rows of 40 u16 elements, rows 80 bytes apart (a multiple of 16, as the map needs).
constexpr uint32_t kRows = 10, kCols = 40, kStride = 80;

// 64 threads write one 64 x 8 box of u16 (row r, element c holds 64 r + c) into shared memory
// with the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8)); thread 0 stores it
// at tensor coordinates (0, 4) through the map, then `tail` (the commit and wait, or a mutation).
std::string kernel(const std::string& tail) {
  return R"(.version 8.6
.target sm_100a
.address_size 64
.extern .shared .align 16 .b8 ptxgen_smem[];
.visible .entry k(
	.param .align 64 .b8 tmap[128]
)
{
	.reg .pred %p<8>;
	.reg .b32 %r<32>;
	.reg .b64 %rd<8>;
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, ptxgen_smem;
	add.u32 %r1, %r1, 1023;
	and.b32 %r1, %r1, -1024;
	shr.u32 %r2, %r0, 3;
	and.b32 %r3, %r0, 7;
	xor.b32 %r4, %r3, %r2;
	shl.b32 %r5, %r2, 7;
	shl.b32 %r6, %r4, 4;
	add.u32 %r5, %r5, %r6;
	add.u32 %r5, %r5, %r1;
	mul.lo.u32 %r7, %r2, 64;
	mad.lo.u32 %r7, %r3, 8, %r7;
	add.u32 %r8, %r7, 1;
	shl.b32 %r8, %r8, 16;
	or.b32 %r9, %r8, %r7;
	add.u32 %r10, %r9, 0x20002;
	add.u32 %r11, %r10, 0x20002;
	add.u32 %r12, %r11, 0x20002;
	st.shared.v4.b32 [%r5], {%r9, %r10, %r11, %r12};
	fence.proxy.async.shared::cta;
	bar.sync 0;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra $L_end;
	mov.b64 %rd0, tmap;
	cvta.param.u64 %rd0, %rd0;
	mov.u32 %r13, 0;
	mov.u32 %r14, 4;
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd0, {%r13, %r14}], [%r1];
)" + tail + R"(
$L_end:
	ret;
}
)";
}

struct Out {
  ksim::Global g;
  uint64_t d = 0;
  std::string error;
  ksim::Stats stats;
  uint16_t at(uint32_t r, uint32_t c) {
    uint16_t v;
    std::memcpy(&v, g.at(d).data() + r * kStride + c * 2, 2);
    return v;
  }
};

void run(Out& o, const std::string& ptx) {
  o.d = o.g.alloc(kRows * kStride, 0xEE);
  ksim::TensorMap m;
  m.global = o.d;
  m.elem_bits = m.smem_bits = 16;
  m.dims[0] = kCols;
  m.dims[1] = kRows;
  m.stride = kStride;
  m.box[0] = 64;
  m.box[1] = 8;
  m.swizzle = 128;
  ksim::Launch l;
  l.threads = 64;
  l.dynamic_smem = 2048;
  ksim::Param p;
  p.name = "tmap";
  p.is_tensor_map = true;
  p.map = m;
  l.params = {p};
  try {
    o.stats = ksim::run(*ksim::parse(ptx), l, o.g);
  } catch (const ksim::Error& e) {
    o.error = e.what();
  }
}

}  // namespace

TEST_SUITE("sim") {
TEST_CASE("sim: a TMA store writes its box unswizzled, clipped at the tensor's extents") {
  Out o;
  run(o, kernel("\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 0;"));
  REQUIRE_MESSAGE(o.error.empty(), o.error);
  CHECK(o.stats.tma_stores == 1);
  for (uint32_t r = 0; r < kRows; ++r)
    for (uint32_t c = 0; c < kCols; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      // Box rows 0-5 land in tensor rows 4-9; box rows 6-7 and columns 40-63 lie outside and are
      // not written (columns past 40 would otherwise wrap into the next row's bytes).
      CHECK(o.at(r, c) == (r < 4 ? 0xEEEE : 64 * (r - 4) + c));
    }
}

TEST_CASE("sim: writing a TMA store's box before its group's reads complete is a race") {
  Out o;
  run(o, kernel("\tcp.async.bulk.commit_group;\n\tst.shared.b32 [%r1+144], %r0;\n\tcp.async.bulk.wait_group.read 0;"));
  CHECK(o.error.find("race: st.shared writes shared memory") != std::string::npos);
  CHECK(o.error.find("reads it (no wait for its completion)") != std::string::npos);
}

TEST_CASE("sim: a thread must wait for its stores' reads before it exits; wait_group N spares the N newest groups") {
  for (const char* tail : {"\tcp.async.bulk.commit_group;",                                    // no wait
                           "\tcp.async.bulk.wait_group.read 0;",                               // not committed
                           "\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 1;"}) {  // the newest spared
    CAPTURE(std::string(tail));
    Out o;
    run(o, kernel(tail));
    CHECK(o.error.find("exits with cp.async.bulk.tensor stores still reading shared memory") != std::string::npos);
  }
  // Two groups: waiting until at most one is pending completes the older one, then the newer.
  Out o;
  run(o, kernel("\tcp.async.bulk.commit_group;\n\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd0, {%r13, %r13}], [%r1];\n"
                "\tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 1;\n\tcp.async.bulk.wait_group 0;"));
  REQUIRE_MESSAGE(o.error.empty(), o.error);
  CHECK(o.stats.tma_stores == 2);
  CHECK(o.at(0, 0) == 0);
  CHECK(o.at(9, 39) == 64 * 5 + 39);
}

TEST_CASE("sim: bar.sync with a thread count waits for that many threads of the CTA") {
  // Warps 0-1 meet at barrier 1, warps 2-3 at barrier 2: both complete.
  const std::string two = R"(
	mov.u32 %r0, %tid.x;
	setp.lt.u32 %p0, %r0, 64;
	@%p0 bra $L_low;
	bar.sync 2, 64;
	bra $L_end;
$L_low:
	bar.sync 1, 64;
$L_end:
	ret;
)";
  auto run_body = [](const std::string& body) {
    const std::string ptx = ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k(\n)\n{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<4>;\n" +
                            body + "}\n";
    ksim::Global g;
    ksim::Launch l;
    l.threads = 128;
    try {
      ksim::run(*ksim::parse(ptx), l, g);
    } catch (const ksim::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(run_body(two).empty());
  // Barrier 1 of 96 threads reached by 64: a deadlock naming it.
  std::string short_of = two;
  short_of.replace(short_of.find("bar.sync 1, 64"), 14, "bar.sync 1, 96");
  const std::string e = run_body(short_of);
  CHECK(e.find("deadlock") != std::string::npos);
  CHECK(e.find("waits at bar.sync 1 (64 of 96 threads arrived)") != std::string::npos);
  // Both halves at barrier 1 with different counts: warps 0-1 wait for 128, warps 2-3 come for 64.
  std::string mixed = two;
  mixed.replace(mixed.find("bar.sync 1, 64"), 14, "bar.sync 1, 128");
  mixed.replace(mixed.find("bar.sync 2, 64"), 14, "bar.sync 1, 64");
  CHECK(run_body(mixed).find("bar.sync 1 with 64 threads while 64 threads wait on it for 128") != std::string::npos);
}
}
