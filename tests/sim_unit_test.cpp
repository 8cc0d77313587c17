// The simulator's own semantics on small hand-written kernels: cvt.rn to f16/bf16 (ties to even,
// subnormals, overflow), mbarrier phases and parities (PTX ISA 9.1 §9.7.13.15.4-6), a deadlock
// reported with the blocked threads and where, a read of a register never written, and the
// element formats of §5.2.3.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "sim/internal.hpp"
#include "sim/num.hpp"
#include "ptxgen/math_fn.hpp"
#include "ptxgen/sim.hpp"

namespace {

const char* kHeader = R"(.version 8.6
.target sm_100a
.address_size 64
.extern .shared .align 16 .b8 ptxgen_smem[];
)";

struct Run {
  ksim::Global g;
  uint64_t in = 0, out = 0;
  std::string error;
};

// Runs `body` in a kernel of `threads` threads with parameters (in, out): two 4 KiB buffers;
// `directives` (e.g. .maxnreg) follow the parameter list.
Run run(const std::string& body, uint32_t threads, const std::vector<uint32_t>& input = {}, const std::string& directives = "") {
  Run r;
  r.in = r.g.alloc(4096, 0);
  r.out = r.g.alloc(4096, 0);
  if (!input.empty()) std::memcpy(r.g.at(r.in).data(), input.data(), input.size() * 4);
  const std::string ptx = std::string(kHeader) + ".visible .entry k(\n\t.param .u64 in,\n\t.param .u64 out\n)\n" + directives + "{\n" +
                          "\t.reg .pred %p<16>;\n\t.reg .b16 %rs<16>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n" + body + "}\n";
  ksim::Launch l;
  l.threads = threads;
  l.dynamic_smem = 4096;
  l.params = {{"in", r.in, false, {}}, {"out", r.out, false, {}}};
  try {
    ksim::run(*ksim::parse(ptx), l, r.g);
  } catch (const ksim::Error& e) {
    r.error = e.what();
  }
  return r;
}

uint32_t word(Run& r, int i) {
  uint32_t v;
  std::memcpy(&v, r.g.at(r.out).data() + 4 * i, 4);
  return v;
}
uint32_t f32(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

}  // namespace

TEST_SUITE("sim") {
TEST_CASE("sim: cvt.rn to bf16 and f16 rounds to nearest even, with subnormals and overflow") {
  // (f32 input, bf16 bits, f16 bits)
  const std::vector<std::array<uint32_t, 3>> cases = {
      {f32(1.0f), 0x3F80, 0x3C00},
      {f32(1.0f + 0x1p-8f), 0x3F80, 0x3C04},          // bf16: tie -> even (down)
      {f32(1.0f + 3 * 0x1p-8f), 0x3F82, 0x3C0C},      // bf16: tie -> even (up)
      {f32(1.0f + 0x1p-11f), 0x3F80, 0x3C00},         // f16: tie -> even (down)
      {f32(1.0f + 3 * 0x1p-11f), 0x3F80, 0x3C02},     // f16: tie -> even (up)
      {f32(0x1p-25f), 0x3300, 0x0000},                 // f16: half the smallest subnormal -> 0 (even)
      {f32(3 * 0x1p-26f), 0x3340, 0x0001},             // f16: 0.75 of the smallest subnormal -> it
      {f32(65520.0f), 0x4780, 0x7C00},                 // f16: the midpoint above 65504 -> infinity
      {f32(-2.5f), 0xC020, 0xC100},
      {0x7FC00001u, 0x7FC0, 0x7E00},                   // NaN stays NaN
      {f32(3.0e38f), 0x7F62, 0x7C00},
  };
  std::vector<uint32_t> in;
  for (const auto& c : cases) in.push_back(c[0]);
  const std::string body = R"(
	ld.param.u64 %rd0, [in];
	ld.param.u64 %rd1, [out];
	mov.u32 %r0, %tid.x;
	mul.wide.u32 %rd2, %r0, 4;
	add.s64 %rd3, %rd0, %rd2;
	ld.global.b32 %r1, [%rd3];
	cvt.rn.bf16.f32 %rs0, %r1;
	cvt.rn.f16.f32 %rs1, %r1;
	mul.wide.u32 %rd4, %r0, 8;
	add.s64 %rd5, %rd1, %rd4;
	st.global.b16 [%rd5], %rs0;
	st.global.b16 [%rd5+2], %rs1;
	cvt.rn.bf16x2.f32 %r2, %r1, %r1;
	st.global.b32 [%rd5+4], %r2;
	ret;
)";
  Run r = run(body, 32, in);
  REQUIRE_MESSAGE(r.error.empty(), r.error);
  for (size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    const uint32_t w = word(r, static_cast<int>(2 * i)), x2 = word(r, static_cast<int>(2 * i + 1));
    CHECK((w & 0xFFFF) == cases[i][1]);
    CHECK((w >> 16) == cases[i][2]);
    CHECK(x2 == (cases[i][1] | cases[i][1] << 16));  // .bf16x2: a in the upper half, b in the lower
  }
}

TEST_CASE("sim: mbarrier phases complete on the expected arrivals and tx bytes; parity waits test the phase") {
  // Thread 0: init(2); phase 0 stays open after one arrival and completes at the second, the
  // parity-0 test then true and parity 1 (the new current phase) false; two more arrivals with 16
  // tx bytes expected leave phase 1 open (§9.7.13.15.6: arrivals and tx-count must both reach 0).
  const std::string body = R"(
	ld.param.u64 %rd1, [out];
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, ptxgen_smem;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra $L_skip;
	mbarrier.init.shared::cta.b64 [%r1], 2;
	mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], 0;
	selp.b32 %r2, 1, 0, %p1;
	st.global.b32 [%rd1], %r2;
	mbarrier.arrive.shared::cta.b64 _, [%r1];
	mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r1], 0;
	selp.b32 %r3, 1, 0, %p2;
	st.global.b32 [%rd1+4], %r3;
	mbarrier.arrive.shared::cta.b64 _, [%r1];
	mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r1], 0;
	selp.b32 %r4, 1, 0, %p3;
	st.global.b32 [%rd1+8], %r4;
	mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r1], 1;
	selp.b32 %r5, 1, 0, %p4;
	st.global.b32 [%rd1+12], %r5;
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16;
	mbarrier.arrive.shared::cta.b64 _, [%r1];
	mbarrier.test_wait.parity.shared::cta.b64 %p5, [%r1], 1;
	selp.b32 %r6, 1, 0, %p5;
	st.global.b32 [%rd1+16], %r6;
$L_skip:
	ret;
)";
  Run r = run(body, 32);
  REQUIRE_MESSAGE(r.error.empty(), r.error);
  CHECK(word(r, 0) == 0);  // phase 0 open
  CHECK(word(r, 1) == 0);  // 1 of 2 arrivals
  CHECK(word(r, 2) == 1);  // 2 of 2: phase 0 complete
  CHECK(word(r, 3) == 0);  // phase 1 is the current, open phase
  CHECK(word(r, 4) == 0);  // two arrivals but 16 tx bytes outstanding: phase 1 stays open
}

TEST_CASE("sim: a deadlock names the blocked threads, the instruction and the barrier's state") {
  const std::string body = R"(
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, ptxgen_smem;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra $L_init_done;
	mbarrier.init.shared::cta.b64 [%r1], 2;
$L_init_done:
	bar.sync 0;
	@%p0 bra $L_wait;
	mbarrier.arrive.shared::cta.b64 _, [%r1];
$L_wait:
	mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;
	@!%p1 bra $L_wait;
	ret;
)";
  Run r = run(body, 64);
  CHECK(r.error.find("deadlock") != std::string::npos);
  CHECK(r.error.find("thread 0 (warp 0, lane 0)") != std::string::npos);
  CHECK(r.error.find("and the next 31 lane(s)") != std::string::npos);
  CHECK(r.error.find("mbarrier.try_wait.parity") != std::string::npos);
  CHECK(r.error.find("1 of 2 arrivals pending") != std::string::npos);
  CHECK(r.error.find("thread 32 (warp 1, lane 0)") != std::string::npos);
}

TEST_CASE("sim: waits written as other loops (a branch out and back, a poll) wait for the arrival") {
  for (const char* wait : {"@%p1 bra $L_done;\n\tbra $L_wait;", "add.u32 %r5, %r5, 1;\n\t@!%p1 bra $L_wait;"}) {
    CAPTURE(std::string(wait));
    const std::string body = std::string(R"(
	ld.param.u64 %rd1, [out];
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, ptxgen_smem;
	mov.u32 %r5, 0;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra $L_init_done;
	mbarrier.init.shared::cta.b64 [%r1], 1;
$L_init_done:
	bar.sync 0;
	setp.eq.u32 %p2, %r0, 32;
	@%p2 bra $L_arrive;
	@%p0 bra $L_done;
$L_wait:
	mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;
	)") + wait + R"(
	bra $L_done;
$L_arrive:
	mbarrier.arrive.shared::cta.b64 _, [%r1];
$L_done:
	st.global.b32 [%rd1], 1;
	ret;
)";
    Run r = run(body, 64);
    CHECK_MESSAGE(r.error.empty(), r.error);
    CHECK(word(r, 0) == 1);
  }
}

TEST_CASE("sim: reading a register no instruction on the thread's path wrote is an error") {
  const std::string body = R"(
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra $L_other;
	setp.eq.u32 %p1, %r0, 0;
$L_other:
	@%p1 bra $L_end;
$L_end:
	ret;
)";
  Run r = run(body, 32);
  CHECK(r.error.find("reads register %p1") != std::string::npos);
  CHECK(r.error.find("thread 1 ") != std::string::npos);
}

TEST_CASE("sim: elect.sync elects the lowest lane of the member mask in each warp") {
  const std::string body = R"(
	ld.param.u64 %rd1, [out];
	mov.u32 %r0, %tid.x;
	elect.sync %r1|%p1, 0xFFFFFFF0;
	selp.b32 %r2, 1, 0, %p1;
	mad.lo.u32 %r3, %r1, 2, %r2;
	mul.wide.u32 %rd2, %r0, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.b32 [%rd3], %r3;
	ret;
)";
  Run r = run(body, 64);
  REQUIRE_MESSAGE(r.error.empty(), r.error);
  for (int t = 0; t < 64; ++t) {
    CAPTURE(t);
    CHECK(word(r, t) == 4 * 2 + (t % 32 == 4 ? 1u : 0u));
  }
}

// stmatrix.x4 (PTX ISA 9.1 §9.7.14.5.16): lane 8i + j gives the address of row j of matrix i, and
// lane 4j + c's register i holds elements 2c (low half) and 2c + 1 (high half) of that row
// (Figure 107). Lane l's register i holds (i << 8 | 2l) low and (i << 8 | 2l + 1) high, so element
// (j, e) of matrix i must read i << 8 | (8j + e); the rows go to scattered addresses (lane L's is
// 16 ((5L) mod 32)), then every thread copies 16 bytes of shared memory out.
TEST_CASE("sim: stmatrix.x4 stores each lane's fragments to the rows the row addresses name") {
  const std::string body = R"(
	ld.param.u64 %rd1, [out];
	mov.u32 %r0, %tid.x;
	mov.u32 %r1, ptxgen_smem;
	mul.lo.u32 %r2, %r0, 5;
	and.b32 %r2, %r2, 31;
	mad.lo.u32 %r2, %r2, 16, %r1;
	mad.lo.u32 %r3, %r0, 131074, 65536;
	add.u32 %r4, %r3, 16777472;
	add.u32 %r5, %r4, 16777472;
	add.u32 %r6, %r5, 16777472;
	stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r2], {%r3, %r4, %r5, %r6};
	bar.sync 0;
	mad.lo.u32 %r7, %r0, 16, %r1;
	ld.shared.v4.b32 {%r8, %r9, %r10, %r11}, [%r7];
	mul.wide.u32 %rd2, %r0, 16;
	add.s64 %rd3, %rd1, %rd2;
	st.global.v4.b32 [%rd3], {%r8, %r9, %r10, %r11};
	ret;
)";
  Run r = run(body, 32);
  REQUIRE_MESSAGE(r.error.empty(), r.error);
  std::vector<uint16_t> mem(256);
  std::memcpy(mem.data(), r.g.at(r.out).data(), 512);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j)
      for (int e = 0; e < 8; ++e) {
        CAPTURE(i);
        CAPTURE(j);
        CAPTURE(e);
        const int row = (5 * (8 * i + j)) % 32;  // where lane 8i + j pointed
        CHECK(mem[static_cast<size_t>(8 * row + e)] == ((i << 8) | (8 * j + e)));
      }
  // A row address not 16-byte aligned is an error naming the lane's address; forms ptxgen does not
  // write are refused at parse time.
  const std::string misaligned = std::string(body).replace(body.find("\tmad.lo.u32 %r3"), 0, "\tadd.u32 %r2, %r2, 8;\n");
  Run bad = run(misaligned, 32);
  CHECK(bad.error.find("stmatrix row address") != std::string::npos);
  CHECK(bad.error.find("not 16-byte aligned") != std::string::npos);
  auto kernel = [](const std::string& ins) {
    return std::string(kHeader) + ".visible .entry k(\n\t.param .u64 in\n)\n{\n\t.reg .b32 %r<8>;\n\t" + ins + ";\n\tret;\n}\n";
  };
  CHECK_NOTHROW(ksim::parse(kernel("stmatrix.sync.aligned.m8n8.x2.shared::cta.b16 [%r0], {%r1, %r2}")));
  for (const char* no : {"stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r0], {%r1, %r2, %r3, %r4}",
                         "stmatrix.sync.aligned.m8n8.x4.b16 [%r0], {%r1, %r2, %r3, %r4}",
                         "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [%r0], {%r1}",
                         "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r0], {%r1, %r2}"}) {
    CAPTURE(no);
    CHECK_THROWS(ksim::parse(kernel(no)));
  }
}

// prefetch.tensormap (§9.7.9.15), which every tcgen05 kernel with tensor maps issues at its
// start: a cache hint that changes nothing the kernel computes; any other prefetch is refused as
// not simulated.
TEST_CASE("sim: prefetch.tensormap is a no-op; other prefetches are not simulated") {
  const std::string body = R"(
	ld.param.u64 %rd1, [out];
	mov.b64 %rd2, in;
	cvta.param.u64 %rd2, %rd2;
	prefetch.tensormap [%rd2];
	mov.u32 %r0, %tid.x;
	mul.wide.u32 %rd3, %r0, 4;
	add.s64 %rd3, %rd1, %rd3;
	mov.u32 %r1, 7;
	st.global.b32 [%rd3], %r1;
	ret;
)";
  Run r = run(body, 32);
  REQUIRE_MESSAGE(r.error.empty(), r.error);
  for (int t = 0; t < 32; ++t) CHECK(word(r, t) == 7u);
  std::string other = body;
  other.replace(other.find("prefetch.tensormap"), 18, "prefetch.global.L2");
  CHECK(run(other, 32).error.find("prefetch other than .tensormap is not simulated") != std::string::npos);
}

TEST_CASE("sim: element formats (PTX ISA 5.2.3)") {
  using namespace ksim::num;
  CHECK(decode(kE4M3, 0x7E) == 448);              // the largest e4m3
  CHECK(std::isnan(decode(kE4M3, 0x7F)));         // e4m3 NaN: S.1111.111 only
  CHECK(decode(kE4M3, 0x01) == std::ldexp(1.0, -9));  // smallest subnormal: 2^-6 * 2^-3
  CHECK(decode(kE5M2, 0x7B) == 57344);
  CHECK(std::isinf(decode(kE5M2, 0x7C)));
  CHECK(decode(kE2M3, 0x1F) == 7.5);
  CHECK(decode(kE2M3, 0x01) == 0.125);
  CHECK(decode(kE3M2, 0x1F) == 28);
  CHECK(decode(kE3M2, 0x01) == 0.0625);
  CHECK(decode(kE2M1, 0x7) == 6);
  CHECK(decode(kE2M1, 0x1) == 0.5);
  CHECK(decode(kE2M1, 0xF) == -6);
  CHECK(decode(kUE4M3, 0x7E) == 448);
  CHECK(ue8m0(127) == 1);
  CHECK(ue8m0(0) == std::ldexp(1.0, -127));
  CHECK(std::isnan(ue8m0(0xFF)));
  CHECK(tf32(0x3F800FFFu) == 1.0);  // the 13 low mantissa bits are not read
  CHECK(encode_rn(kE4M3, 448) == 0x7E);
  CHECK(encode_rn(kE4M3, 480) == 0x7F);  // beyond the largest finite (no .satfinite): NaN
}

// ---- wgmma (sm_90a) ------------------------------------------------------------------------------------
// A warpgroup's m64n8k16 bf16 wgmma from shared memory: A (64 x 16) and B (8 x 16), K-major without
// swizzle, copied from `in` as the test lays them out: core matrices of 8 rows x 16 bytes, the two
// halves of K 128 bytes apart (LBO), the groups of 8 rows 256 bytes apart (SBO),
// ((8,m),(T,2k)):((1T,SBO),(1,LBO)) of §9.7.15.5.1.2.1.3. Each thread stores its four f32 registers.
// The copy's st.shared writes go through the generic proxy and wgmma reads through the async one:
// each thread fences its writes (fence.proxy.async, §9.7.13.4) before the barrier.
namespace {
const char* kWgmmaCopy = R"(
	ld.param.u64 %rd0, [in];
	ld.param.u64 %rd1, [out];
	mov.u32 %r0, %tid.x;
	shr.u32 %r11, %r0, 5;
	mov.u32 %r1, ptxgen_smem;
	mul.wide.u32 %rd2, %r0, 16;
	add.s64 %rd3, %rd0, %rd2;
	ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd3];
	mad.lo.u32 %r2, %r0, 16, %r1;
	st.shared.v4.b32 [%r2], {%r4, %r5, %r6, %r7};
	setp.lt.u32 %p0, %r0, 16;
	@%p0 ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd3+2048];
	@%p0 st.shared.v4.b32 [%r2+2048], {%r4, %r5, %r6, %r7};
	fence.proxy.async.shared::cta;
	bar.sync 0;
	shr.u32 %r3, %r1, 4;
	and.b32 %r3, %r3, 16383;
	or.b32 %r8, %r3, 0x00080000;
	mov.u32 %r9, 16;
	mov.b64 %rd4, {%r8, %r9};
	add.u32 %r10, %r8, 128;
	mov.b64 %rd5, {%r10, %r9};
	mul.wide.u32 %rd6, %r0, 16;
	add.s64 %rd7, %rd1, %rd6;
)";

// The byte of element (i, k) of a K-major bf16 operand in that layout.
size_t kmajor_byte(int i, int k) { return static_cast<size_t>((i % 8) * 16 + (k / 8) * 128 + (i / 8) * 256 + (k % 8) * 2); }

// A and B of small integers (exact in bf16 and in every f32 sum), laid out for kWgmmaCopy.
std::vector<uint32_t> wgmma_operands(std::vector<double>& A, std::vector<double>& B) {
  std::vector<uint8_t> bytes(2304, 0);
  A.assign(64 * 16, 0);
  B.assign(8 * 16, 0);
  auto put = [&](size_t at, double v) {
    const uint32_t b = ksim::num::encode_rn(ksim::num::kBF16, v);
    bytes[at] = static_cast<uint8_t>(b), bytes[at + 1] = static_cast<uint8_t>(b >> 8);
  };
  for (int i = 0; i < 64; ++i)
    for (int k = 0; k < 16; ++k) put(kmajor_byte(i, k), A[static_cast<size_t>(i * 16 + k)] = (i * 7 + k * 3) % 5 - 2);
  for (int n = 0; n < 8; ++n)
    for (int k = 0; k < 16; ++k) put(2048 + kmajor_byte(n, k), B[static_cast<size_t>(n * 16 + k)] = (n * 5 + k) % 7 - 3);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}
}  // namespace

TEST_CASE("sim: a wgmma.mma_async m64n8k16 from shared memory leaves D in each warp's m16n8 fragments") {
  std::vector<double> A, B;
  const std::vector<uint32_t> in = wgmma_operands(A, B);
  const std::string body = std::string(kWgmmaCopy) + R"(
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r12, %r13, %r14, %r15}, %rd4, %rd5, 0, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	st.global.v4.b32 [%rd7], {%r12, %r13, %r14, %r15};
	ret;
)";
  Run r = run(body, 128, in);
  REQUIRE_MESSAGE(r.error.empty(), r.error);
  // §9.7.15.5.1.1 (the warp-level formulas of §9.7.14.5.8): warp w's register j of lane l holds
  // D(16 w + l / 4 + 8 (j / 2), 2 (l % 4) + j % 2).
  for (int t = 0; t < 128; ++t)
    for (int j = 0; j < 4; ++j) {
      const int row = 16 * (t / 32) + (t % 32) / 4 + 8 * (j / 2), col = 2 * (t % 4) + j % 2;
      double want = 0;
      for (int k = 0; k < 16; ++k) want += A[static_cast<size_t>(row * 16 + k)] * B[static_cast<size_t>(col * 16 + k)];
      CAPTURE(t);
      CAPTURE(j);
      CHECK(word(r, 4 * t + j) == f32(static_cast<float>(want)));
    }
}

TEST_CASE("sim: wgmma.wait_group N completes all but the N newest groups; their registers stay in flight") {
  std::vector<double> A, B;
  const std::vector<uint32_t> in = wgmma_operands(A, B);
  // Two groups into two accumulators: after wait_group 1 the first is complete (stored), the second
  // is in flight, and reading it is the race.
  const std::string body = std::string(kWgmmaCopy) + R"(
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r12, %r13, %r14, %r15}, %rd4, %rd5, 0, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r16, %r17, %r18, %r19}, %rd4, %rd5, 0, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 1;
	st.global.v4.b32 [%rd7], {%r12, %r13, %r14, %r15};
	st.global.v4.b32 [%rd7], {%r16, %r17, %r18, %r19};
	ret;
)";
  Run r = run(body, 128, in);
  CHECK(r.error.find("race: reads register %r16 while the wgmma.mma_async issued at ptx line") != std::string::npos);
  CHECK(r.error.find("st.global.v4.b32 [%rd7], {%r16") != std::string::npos);
}

TEST_CASE("sim: a completed wgmma's registers are the warp's only after a wgmma.wait_group covers it") {
  std::vector<double> A, B;
  const std::vector<uint32_t> in = wgmma_operands(A, B);
  // Warpgroup 0 issues and commits, then waits on an mbarrier that warpgroup 1 arrives on after its
  // own wgmma.wait_group 0: by then warpgroup 0's operation has completed (the simulator completes
  // operations when no thread can run), but warpgroup 0 never waited for it (§9.7.15.7.3).
  const std::string body = std::string(kWgmmaCopy) + R"(
	add.u32 %r24, %r1, 2304;
	setp.ne.u32 %p2, %r0, 0;
	@%p2 bra $L_init_done;
	mbarrier.init.shared::cta.b64 [%r24], 128;
$L_init_done:
	bar.sync 0;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r12, %r13, %r14, %r15}, %rd4, %rd5, 0, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	setp.ge.u32 %p3, %r11, 4;
	@%p3 bra $L_second;
$L_wait:
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r24], 0;
	@!%p4 bra $L_wait;
	st.global.v4.b32 [%rd7], {%r12, %r13, %r14, %r15};
	ret;
$L_second:
	wgmma.wait_group.sync.aligned 0;
	mbarrier.arrive.shared::cta.b64 _, [%r24];
	ret;
)";
  Run r = run(body, 256, in);
  CHECK(r.error.find("race: reads register %r12 while the wgmma.mma_async issued at ptx line") != std::string::npos);
  CHECK(r.error.find("thread 0 (warp 0, lane 0)") != std::string::npos);
}

TEST_CASE("sim: wgmma registers: A rewritten before the wait, a write after the fence, a warp that skips the wgmma") {
  std::vector<double> A, B;
  const std::vector<uint32_t> in = wgmma_operands(A, B);
  // A from registers (each thread's four bf16x2 of its fragment; the values do not matter here).
  const std::string a_regs = std::string(kWgmmaCopy) + R"(
	mov.b32 %r20, 0;
	mov.b32 %r21, 0;
	mov.b32 %r22, 0;
	mov.b32 %r23, 0;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r12, %r13, %r14, %r15}, {%r20, %r21, %r22, %r23}, %rd5, 0, 1, 1, 0;
	wgmma.commit_group.sync.aligned;
)";
  {  // the next fragment loaded into A's registers before the group completed
    Run r = run(a_regs + "\tmov.b32 %r21, 1;\n\twgmma.wait_group.sync.aligned 0;\n\tret;\n", 128, in);
    CHECK(r.error.find("race: writes register %r21 while the wgmma.mma_async issued at ptx line") != std::string::npos);
    CHECK(r.error.find("reads it") != std::string::npos);
  }
  {  // after the wait, an accumulator written and a second wgmma without a fence between (§9.7.15.7.1)
    Run r = run(a_regs + R"(
	wgmma.wait_group.sync.aligned 0;
	mov.b32 %r13, 0;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r12, %r13, %r14, %r15}, %rd4, %rd5, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	ret;
)", 128, in);
    CHECK(r.error.find("register %r13 was written by the thread after its warp's last wgmma.fence") != std::string::npos);
  }
  // Warp 3 skips the warpgroup's wgmma: its commit then closes a group of other operations than the
  // other warps' (a), or, if it leaves, the operation never starts and the others wait forever (b).
  for (const char* skip : {"$L_skip", "$L_exit"}) {
    CAPTURE(std::string(skip));
    Run r = run(std::string(kWgmmaCopy) + R"(
	wgmma.fence.sync.aligned;
	setp.eq.u32 %p1, %r11, 3;
	@%p1 bra )" + skip + R"(;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r12, %r13, %r14, %r15}, %rd4, %rd5, 0, 1, 1, 0, 0;
$L_skip:
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
$L_exit:
	ret;
)", 128, in);
    if (std::string(skip) == "$L_skip") {
      CHECK(r.error.find("the warps of the warpgroup commit different wgmma groups") != std::string::npos);
    } else {
      CHECK(r.error.find("deadlock") != std::string::npos);
      CHECK(r.error.find("waits at wgmma.wait_group for the warpgroup's wgmma.mma_async issued at ptx line") != std::string::npos);
      CHECK(r.error.find("which warp(s) 3 of the warpgroup have not issued") != std::string::npos);
    }
  }
}

TEST_CASE("sim: setmaxnreg moves registers through the CTA's pool; every warp of a warpgroup executes it") {
  // .maxnreg 64, two warpgroups: the second returns (64 - dec) x 32 registers per warp, the first
  // takes (96 - 64) x 32 = 1024 per warp (§9.7.19.5: .inc blocks until the pool holds them).
  auto body = [](int inc, int dec, int dec_warps) {
    return R"(
	ld.param.u64 %rd1, [out];
	mov.u32 %r0, %tid.x;
	shr.u32 %r1, %r0, 5;
	setp.ge.u32 %p0, %r1, 4;
	@%p0 bra $L_second;
	)" + (inc ? "setmaxnreg.inc.sync.aligned.u32 " + std::to_string(inc) + ";" : std::string()) + R"(
	bra $L_end;
$L_second:
	setp.ge.u32 %p1, %r1, )" + std::to_string(4 + dec_warps) + R"(;
	@%p1 bra $L_end;
	setmaxnreg.dec.sync.aligned.u32 )" + std::to_string(dec) + R"(;
$L_end:
	st.global.b32 [%rd1], 1;
	ret;
)";
  };
  Run ok = run(body(96, 32, 4), 256, {}, ".maxnreg 64\n");
  CHECK_MESSAGE(ok.error.empty(), ok.error);
  CHECK(word(ok, 0) == 1);
  Run short_pool = run(body(96, 40, 4), 256, {}, ".maxnreg 64\n");  // 4 x 24 x 32 = 3072 returned: the fourth warp waits
  CHECK(short_pool.error.find("deadlock") != std::string::npos);
  CHECK(short_pool.error.find("waits at setmaxnreg.inc for 1024 registers; the CTA's pool holds 0") != std::string::npos);
  Run partial = run(body(0, 32, 3), 256, {}, ".maxnreg 64\n");  // warp 7 never executes the warpgroup's setmaxnreg.dec
  CHECK(partial.error.find("is not executed by every warp of warpgroup 1 (warps 4-7)") != std::string::npos);
  Run no_maxnreg = run(body(96, 32, 4), 256);
  CHECK(no_maxnreg.error.find("setmaxnreg in a kernel without .maxnreg") != std::string::npos);
}

// The f32 instructions of §9.7.3 (ksim::fmath) on edge inputs, against float64 std:: functions:
// .rn add/sub/mul/fma/rcp/sqrt exactly (one rounding), min/max/neg/abs exactly, the approximate
// instructions within the ISA's documented bounds, and the ISA's results at ±0, ±Inf and NaN.
TEST_CASE("f32 instructions: IEEE .rn, min/max NaN rules, sign-bit neg/abs, approximations within their bounds") {
  using ksim::FFn;
  using ksim::num::bits_of;
  using ksim::num::f32_of;
  const float inf = INFINITY, nan = NAN, den = std::ldexp(1.0f, -140), tiny = std::numeric_limits<float>::denorm_min();
  auto F = [](FFn f, float a, float b = 0, float c = 0) { return f32_of(ksim::fmath(f, bits_of(a), bits_of(b), bits_of(c))); };
  auto same = [](float x, float y) { return (std::isnan(x) && std::isnan(y)) || bits_of(x) == bits_of(y); };
  const float xs[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 3.0f, 1e-30f, -1e30f, 3e38f, den, -den, tiny, inf, -inf, nan, 1.5f, 0.1f, 100.0f, -7.25f};
  for (float a : xs)
    for (float b : xs) {
      CAPTURE(a);
      CAPTURE(b);
      CHECK(same(F(FFn::add, a, b), static_cast<float>(static_cast<double>(a) + b)));  // exact in double, one rounding
      CHECK(same(F(FFn::sub, a, b), static_cast<float>(static_cast<double>(a) - b)));
      CHECK(same(F(FFn::mul, a, b), static_cast<float>(static_cast<double>(a) * b)));
      CHECK(same(F(FFn::fma, a, b, 1.0f), std::fma(a, b, 1.0f)));
      // min/max (§9.7.3.11-12): a NaN operand gives the other; -0.0 < +0.0.
      const float mn = F(FFn::min, a, b), mx = F(FFn::max, a, b);
      if (std::isnan(a) && std::isnan(b)) CHECK((std::isnan(mn) && std::isnan(mx)));
      else if (std::isnan(a)) CHECK((same(mn, b) && same(mx, b)));
      else if (std::isnan(b)) CHECK((same(mn, a) && same(mx, a)));
      else if (a == 0 && b == 0) CHECK((std::signbit(mn) == (std::signbit(a) || std::signbit(b)) && std::signbit(mx) == (std::signbit(a) && std::signbit(b))));
      else CHECK((mn == std::fmin(a, b) && mx == std::fmax(a, b)));
    }
  // fma rounds once: (1 + 2^-12)^2 - 1 - 2^-11 = 2^-24, which a rounded product loses.
  const float e = 1.0f + std::ldexp(1.0f, -12);
  CHECK(F(FFn::fma, e, e, -(1.0f + std::ldexp(1.0f, -11))) == std::ldexp(1.0f, -24));
  for (float a : xs) {
    CAPTURE(a);
    CHECK(bits_of(F(FFn::neg, a)) == (bits_of(a) ^ 0x80000000u));
    CHECK(bits_of(F(FFn::abs, a)) == (bits_of(a) & 0x7FFFFFFFu));
    CHECK(same(F(FFn::rcp_rn, a), static_cast<float>(1.0 / a)));
    CHECK(same(F(FFn::sqrt_rn, a), static_cast<float>(std::sqrt(static_cast<double>(a)))));
  }
  // The approximate instructions within their documented bounds of float64 (ulp: of the result).
  auto ulp = [](double y) { return std::ldexp(1.0, std::max(std::ilogb(y), -126) - 23); };
  for (double a : {-150.0, -126.5, -20.3, -1.0, -0.1, 0.0, 1e-6, 0.7, 1.0, 1.3, 2.0, 17.9, 100.0, 127.9}) {
    CAPTURE(a);
    const float x = static_cast<float>(a);
    const double want = std::exp2(static_cast<double>(x));
    CHECK(std::fabs(F(FFn::ex2, x) - want) <= 2.5 * ulp(want));  // 2 ulp from the correctly rounded result
    CHECK(std::fabs(F(FFn::tanh, x) - std::tanh(static_cast<double>(x))) <= std::ldexp(1.0, -11) * std::fabs(std::tanh(static_cast<double>(x))));
  }
  for (double a : {1e-40, 1e-30, 0.3, 0.5, 0.75, 1.0, 1.9, 2.0, 3.0, 1e10, 3e38}) {
    CAPTURE(a);
    const float x = static_cast<float>(a);
    const double xd = x, lg = std::log2(xd), rs = 1 / std::sqrt(xd), rc = 1 / xd, sq = std::sqrt(xd);
    CHECK(std::fabs(F(FFn::lg2, x) - lg) <= std::ldexp(1.0, -22) * ((xd > 0.5 && xd < 2) ? 1 : std::fabs(lg)));
    CHECK(std::fabs(F(FFn::rsqrt, x) - rs) <= std::pow(2.0, -22.9) * rs);
    if (rc < 3.4e38) CHECK(std::fabs(F(FFn::rcp_approx, x) - rc) <= 1.5 * ulp(rc));
    CHECK(std::fabs(F(FFn::sqrt_approx, x) - sq) <= std::ldexp(1.0, -23) * sq);
  }
  // Corner cases the ISA tabulates (§9.7.3.13-22).
  CHECK(F(FFn::ex2, -inf) == 0.0f);
  CHECK(F(FFn::ex2, -0.0f) == 1.0f);
  CHECK(F(FFn::ex2, inf) == inf);
  CHECK(F(FFn::lg2, 0.0f) == -inf);
  CHECK(F(FFn::lg2, -0.0f) == -inf);
  CHECK(std::isnan(F(FFn::lg2, -1.0f)));
  CHECK(F(FFn::lg2, inf) == inf);
  CHECK(F(FFn::rsqrt, 0.0f) == inf);
  CHECK(F(FFn::rsqrt, -0.0f) == -inf);
  CHECK(F(FFn::rsqrt, inf) == 0.0f);
  CHECK(std::isnan(F(FFn::rsqrt, -2.0f)));
  CHECK(F(FFn::rcp_approx, -0.0f) == -inf);
  CHECK(F(FFn::rcp_approx, inf) == 0.0f);
  CHECK(bits_of(F(FFn::sqrt_approx, -0.0f)) == bits_of(-0.0f));
  CHECK(std::isnan(F(FFn::sqrt_rn, -1.0f)));
  CHECK(F(FFn::tanh, inf) == 1.0f);
  CHECK(F(FFn::tanh, -inf) == -1.0f);
  CHECK(bits_of(F(FFn::tanh, -0.0f)) == bits_of(-0.0f));
  CHECK(F(FFn::tanh, den) == den);  // subnormal inputs pass through (§9.7.3.22)
  for (FFn f : {FFn::add, FFn::ex2, FFn::lg2, FFn::tanh, FFn::rsqrt, FFn::rcp_approx, FFn::sqrt_approx}) CHECK(std::isnan(F(f, nan, 1.0f)));
}

TEST_CASE("f32 instructions: the forms simulated parse, others stay refused") {
  auto kernel = [](const std::string& ins) {
    return std::string(kHeader) + ".visible .entry k(\n\t.param .u64 in\n)\n{\n\t.reg .b32 %r<4>;\n\t" + ins + ";\n\tret;\n}\n";
  };
  for (const char* ok : {"add.rn.f32 %r0, %r1, %r2", "fma.rn.f32 %r0, %r1, %r2, %r3", "min.f32 %r0, %r1, %r2", "neg.f32 %r0, %r1",
                         "ex2.approx.f32 %r0, %r1", "tanh.approx.f32 %r0, %r1", "rcp.rn.f32 %r0, %r1", "sqrt.approx.f32 %r0, %r1"}) {
    CAPTURE(ok);
    CHECK_NOTHROW(ksim::parse(kernel(ok)));
  }
  for (const char* no : {"add.f32 %r0, %r1, %r2", "add.rz.f32 %r0, %r1, %r2", "ex2.approx.ftz.f32 %r0, %r1", "min.NaN.f32 %r0, %r1, %r2",
                         "mul.f32 %r0, %r1, %r2", "lg2.f32 %r0, %r1"}) {
    CAPTURE(no);
    CHECK_THROWS(ksim::parse(kernel(no)));
  }
}

// The packed half-precision instructions of §9.7.4 (ksim::hmath) on pairs: each half from its own
// halves; .rn add/sub/mul/fma against the exact result (a double where it is exact, then rounded
// to nearest even by hand at a tie), min/max NaN rules, neg/abs sign bits, and the approximate
// ex2 and tanh within the documented bounds (§9.7.4.9-10), ex2.approx.ftz.bf16x2 flushing.
TEST_CASE("packed f16x2 / bf16x2 instructions: .rn per half, min/max NaN rules, sign bits, approximations within their bounds") {
  using ksim::FFn;
  namespace num = ksim::num;
  for (const bool bf : {false, true}) {
    CAPTURE(bf);
    const num::Format& fmt = bf ? num::kBF16 : num::kF16;
    auto enc = [&](double v) { return num::encode_rn(fmt, v); };
    auto dec = [&](uint32_t b) { return num::decode(fmt, b & 0xFFFFu); };
    // One instruction with x in the low halves and y in the high ones: both results, by half.
    auto H = [&](FFn f, double a, double b = 0, double c = 0, double a2 = 1, double b2 = 1, double c2 = 0) {
      const uint32_t r = ksim::hmath(f, bf, enc(a) | enc(a2) << 16, enc(b) | enc(b2) << 16, enc(c) | enc(c2) << 16);
      return std::pair<uint32_t, uint32_t>{r & 0xFFFFu, r >> 16};
    };
    const double sub = bf ? std::ldexp(1.0, -130) : std::ldexp(1.0, -20);  // a subnormal
    const double xs[] = {0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 0.1, -7.25, 100.0, 1.5, 1000.0, sub, -sub, INFINITY, -INFINITY, NAN};
    for (double a0 : xs)
      for (double b0 : xs) {
        const double a = dec(enc(a0)), b = dec(enc(b0));  // the 16-bit values
        CAPTURE(a);
        CAPTURE(b);
        auto same = [&](uint32_t x, double want) { return std::isnan(want) ? std::isnan(dec(x)) : x == enc(want); };
        // Sums and products of these are exact in double; the high halves compute 1 * 1 + 0 apart.
        CHECK(same(H(FFn::add, a, b).first, a + b));
        CHECK(same(H(FFn::sub, a, b).first, a - b));
        CHECK(same(H(FFn::mul, a, b).first, a * b));
        CHECK(same(H(FFn::fma, a, b, 1.0).first, a * b + 1.0));
        CHECK(H(FFn::fma, a, b, 1.0, 3.0, -2.0, 0.5).second == enc(-5.5));  // the high half: 3 * -2 + 0.5
        const auto [mn, hi] = H(FFn::min, a, b, 0, 2.0, -3.0);
        const uint32_t mx = H(FFn::max, a, b).first;
        CHECK(hi == enc(-3.0));
        if (std::isnan(a) && std::isnan(b)) CHECK((std::isnan(dec(mn)) && std::isnan(dec(mx))));
        else if (std::isnan(a)) CHECK((mn == enc(b) && mx == enc(b)));
        else if (std::isnan(b)) CHECK((mn == enc(a) && mx == enc(a)));
        else CHECK((mn == enc(a < b ? a : b) && mx == enc(a > b ? a : b)));  // -0 and +0: b (§9.7.4.7-8)
      }
    for (double a0 : xs) {
      const uint32_t x = enc(a0);
      CHECK(H(FFn::neg, a0).first == (x ^ 0x8000u));
      CHECK(H(FFn::abs, a0).first == (x & 0x7FFFu));
    }
    // A tie of the 16-bit format one way or the other by an addend far below double's precision:
    // bf16 (1 + 2^-4)^2 = 1.125 + 2^-8, half an ulp above 1.125; f16 (1 + 2^-6)(1 + 2^-5) = 1 +
    // 3 2^-6 + 2^-11, half an ulp above 1 + 3 2^-6. Plus or minus a tiny c decides (the product is
    // exact): bf16's 2^-80 lies below double's precision at 1, f16's smallest subnormal 2^-24 not.
    const double p = bf ? 1.0625 : 1 + std::ldexp(1.0, -6), q = bf ? 1.0625 : 1 + std::ldexp(1.0, -5);
    const double lo = bf ? 1.125 : 1 + 3 * std::ldexp(1.0, -6), ulp = std::ldexp(1.0, bf ? -7 : -10), tiny_c = std::ldexp(1.0, bf ? -80 : -24);
    CHECK(dec(H(FFn::fma, p, q, tiny_c).first) == lo + ulp);
    CHECK(dec(H(FFn::fma, p, q, -tiny_c).first) == lo);
    CHECK(dec(H(FFn::fma, p, q, 0.0).first) == lo);  // the tie itself: to even (lo's last bit is 0)
    // ex2 and tanh within the documented error (§9.7.4.10: relative 2^-9.9 for f16, 2^-7 for bf16;
    // §9.7.4.9: absolute 2^-10.987 and 2^-8).
    for (double a0 : {-20.3, -14.0, -1.0, -0.1, 0.0, 0.7, 1.0, 1.3, 2.0, 10.5, 15.9}) {
      CAPTURE(a0);
      const double a = dec(enc(a0)), want = std::exp2(a);
      CHECK(std::fabs(dec(H(FFn::ex2, a).first) - want) <= (bf ? std::ldexp(1.0, -7) : std::pow(2.0, -9.9)) * want + (bf ? 0 : std::ldexp(1.0, -25)));
      CHECK(std::fabs(dec(H(FFn::tanh, a).first) - std::tanh(a)) <= (bf ? std::ldexp(1.0, -8) : std::pow(2.0, -10.987)));
    }
    CHECK(dec(H(FFn::ex2, -INFINITY).first) == 0.0);
    CHECK(dec(H(FFn::ex2, INFINITY).first) == INFINITY);
    CHECK(dec(H(FFn::tanh, -INFINITY).first) == -1.0);
    CHECK(H(FFn::tanh, -0.0).first == 0x8000u);
    // bf16's ex2 is .ftz: a subnormal input is 0 (2^0 = 1), a subnormal result +0; f16 keeps them.
    CHECK(dec(H(FFn::ex2, -sub).first) == (bf ? 1.0 : dec(enc(std::exp2(dec(enc(-sub)))))));
    CHECK(dec(H(FFn::ex2, bf ? -130.0 : -20.0).first) == (bf ? 0.0 : std::ldexp(1.0, -20)));
  }
}

TEST_CASE("packed f16x2 / bf16x2 instructions: the forms simulated parse, others stay refused") {
  auto kernel = [](const std::string& ins) {
    return std::string(kHeader) + ".visible .entry k(\n\t.param .u64 in\n)\n{\n\t.reg .b32 %r<4>;\n\t" + ins + ";\n\tret;\n}\n";
  };
  for (const char* ok : {"add.rn.bf16x2 %r0, %r1, %r2", "fma.rn.f16x2 %r0, %r1, %r2, %r3", "max.bf16x2 %r0, %r1, %r2", "abs.f16x2 %r0, %r1",
                         "ex2.approx.f16x2 %r0, %r1", "ex2.approx.ftz.bf16x2 %r0, %r1", "tanh.approx.bf16x2 %r0, %r1"}) {
    CAPTURE(ok);
    CHECK_NOTHROW(ksim::parse(kernel(ok)));
  }
  for (const char* no : {"add.bf16x2 %r0, %r1, %r2", "ex2.approx.bf16x2 %r0, %r1", "ex2.approx.ftz.f16x2 %r0, %r1", "min.NaN.bf16x2 %r0, %r1, %r2",
                         "lg2.approx.f16x2 %r0, %r1", "fma.rn.relu.bf16x2 %r0, %r1, %r2, %r3"}) {
    CAPTURE(no);
    CHECK_THROWS(ksim::parse(kernel(no)));
  }
}

// gelu's erf form (docs/spec.md, "Activations"): ptxgen's composition (activations(), Abramowitz &
// Stegun 7.1.26's erf) run step by step through the simulator's f32 instructions, each constant the
// f32 the kernel's immediate holds, against 0.5 x (1 + erf(x / sqrt 2)) in float64 (1 + erf as
// erfc(-x / sqrt 2)), within the documented bound 18 2^-24 |x| + 2^-149: x over +-0, subnormals,
// 1, 1.25 ... 1.75 times every power of two to 2^127, and a step of 2^-10 over [-20, 20]; where the
// erf term rounds away (|x| > 5.55), y is x itself or +0; +inf gives +inf, -inf and NaN NaN.
TEST_CASE("gelu (erf form): its composition through the simulator's instructions is within the documented bound") {
  using ksim::FFn;
  using ksim::num::bits_of;
  using ksim::num::f32_of;
  const ptxgen::ActivationInfo& g = ptxgen::info(ptxgen::Activation::gelu);
  REQUIRE(g.name == "gelu");
  auto ffn = [](const ptxgen::ComposeStep& st) {
    using M = ptxgen::MathFn;
    switch (st.fn) {
      case M::add: return FFn::add;
      case M::sub: return FFn::sub;
      case M::mul: return FFn::mul;
      case M::fma: return FFn::fma;
      case M::min: return FFn::min;
      case M::max: return FFn::max;
      case M::neg: return FFn::neg;
      case M::abs: return FFn::abs;
      case M::exp2: return FFn::ex2;
      case M::log2: return FFn::lg2;
      case M::tanh: return FFn::tanh;
      case M::rsqrt: return FFn::rsqrt;
      case M::rcp: return st.approx ? FFn::rcp_approx : FFn::rcp_rn;
      case M::sqrt: return st.approx ? FFn::sqrt_approx : FFn::sqrt_rn;
      default: break;
    }
    FAIL("a step the test does not run: " << ptxgen::info(st.fn).name);
    return FFn::add;
  };
  auto gelu = [&](float x) {
    std::array<uint32_t, 8> t{};
    uint32_t y = 0;
    for (size_t i = 0; i < g.steps.size(); ++i) {
      const ptxgen::ComposeStep& st = g.steps[i];
      std::array<uint32_t, 3> in{};
      for (int k = 0; k < ptxgen::info(st.fn).operands; ++k) {
        const int from = st.in[static_cast<size_t>(k)];
        in[static_cast<size_t>(k)] = from == ptxgen::ComposeStep::kInput      ? bits_of(x)
                                     : from == ptxgen::ComposeStep::kConstant ? bits_of(static_cast<float>(st.value[static_cast<size_t>(k)]))
                                                                              : t.at(static_cast<size_t>(from));
      }
      const uint32_t r = ksim::fmath(ffn(st), in[0], in[1], in[2]);
      if (i + 1 == g.steps.size()) y = r;
      else t.at(static_cast<size_t>(st.out)) = r;
    }
    return f32_of(y);
  };
  std::vector<float> xs = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(), std::ldexp(1.0f, -140),
                           -std::ldexp(1.0f, -140), 1e-3f, -1e-3f, 10.0f, -10.0f, 20.0f, -20.0f, 1e4f, -1e4f, 3e38f, -3e38f,
                           std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
  for (int e = -126; e <= 127; ++e)
    for (float m : {1.0f, 1.25f, 1.5f, 1.75f})
      for (float sg : {1.0f, -1.0f}) xs.push_back(sg * std::ldexp(m, e));
  for (int i = -20 * 1024; i <= 20 * 1024; ++i) xs.push_back(static_cast<float>(i) / 1024);
  const double u = std::ldexp(1.0, -24);
  double worst = 0, worst_at = 0;
  for (float x : xs) {
    const double xd = x, want = 0.5 * xd * std::erfc(-xd / std::sqrt(2.0));
    const float y = gelu(x);
    const double bound = 18 * u * std::fabs(xd) + std::ldexp(1.0, -149);
    CAPTURE(x);
    CAPTURE(y);
    CHECK(std::fabs(y - want) <= bound);
    if (std::fabs(xd) >= 1e-3 && std::fabs(y - want) / bound > worst) worst = std::fabs(y - want) / bound, worst_at = xd;
    if (xd >= 5.55) CHECK(bits_of(y) == bits_of(x));  // 0.5 x + 0.5 |x|, exact
    if (xd <= -5.55) CHECK(bits_of(y) == 0u);         // +0
  }
  // Where |x| >= 1e-3 the bound is the erf part's (2^-149 is nothing there): the sweep reaches
  // about 4 of its 18 2^-24 |x|, so a bound much looser than the composition's error would show.
  MESSAGE("gelu: " << xs.size() << " inputs, worst " << worst << " of the bound for |x| >= 1e-3, at x = " << worst_at);
  CHECK(worst > 0.15);
  CHECK(bits_of(gelu(0.0f)) == 0u);
  CHECK(bits_of(gelu(-0.0f)) == 0u);
  CHECK(gelu(INFINITY) == INFINITY);
  CHECK(std::isnan(gelu(-INFINITY)));
  CHECK(std::isnan(gelu(NAN)));
}
}
