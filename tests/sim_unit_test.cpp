// The simulator's own semantics on small hand-written kernels: cvt.rn to f16/bf16 (ties to even,
// subnormals, overflow), mbarrier phases and parities (PTX ISA 9.1 §9.7.13.15.4-6), a deadlock
// reported with the blocked threads and where, a read of a register never written, and the
// element formats of §5.2.3.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "sim/num.hpp"
#include "sim/sim.hpp"

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

// Runs `body` in a kernel of `threads` threads with parameters (in, out): two 4 KiB buffers.
Run run(const std::string& body, uint32_t threads, const std::vector<uint32_t>& input = {}) {
  Run r;
  r.in = r.g.alloc(4096, 0);
  r.out = r.g.alloc(4096, 0);
  if (!input.empty()) std::memcpy(r.g.at(r.in).data(), input.data(), input.size() * 4);
  const std::string ptx = std::string(kHeader) + ".visible .entry k(\n\t.param .u64 in,\n\t.param .u64 out\n)\n{\n" +
                          "\t.reg .pred %p<16>;\n\t.reg .b16 %rs<16>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n" + body + "}\n";
  ksim::Launch l;
  l.threads = threads;
  l.dynamic_smem = 1024;
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
}
