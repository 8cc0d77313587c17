// The spelling tables: how each instruction family is written in PTX, for which targets, from
// which PTX ISA version. Every mnemonic the emitter and the `ptxgen plan` printer write comes from
// here; a variant's spelling is computed from its parameters, never assembled by hand elsewhere.
// Every spelling reaches ptxas through the goldens (golden/, each assembled for its target by the
// golden suite). The scalar table (alu_rows(), below) also has its own test: for each target,
// tests/spelling_test.cpp assembles one module holding every variant a row claims for it, so a
// claim no golden happens to exercise is still checked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ptxgen/isa.hpp"
#include "ptxgen/math_fn.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::emit::spell {

// One family: where the ISA defines it and the lowest PTX ISA version (major * 10 + minor) and
// target kind that accept it.
struct Family {
  std::string_view name;     // "tcgen05.mma"
  std::string_view isa;      // "§9.7.16.10.9"
  int min_ptx;               // lowest PTX ISA version of the basic form
  bool tcgen05_targets;      // sm_100a family
  bool sm90;                 // sm_90a
};
const std::vector<Family>& families();

// tcgen05 (§9.7.16)
// tcgen05.mma[.sp].cta_group::N.kind::K[.block_scale.scale_vec][.collector::a::OP]
std::string mma(const plan::MmaStep& m, int cta_group, const isa::TargetInfo& t,
                plan::Collector c = plan::Collector::discard);
int mma_min_ptx(const plan::MmaStep& m, const isa::TargetInfo& t);
std::string cp(isa::CpShape s, isa::CpDecompress d, int cta_group);
std::string ld(isa::LdShape s, int num, bool pack);      // tcgen05.ld.sync.aligned.SHAPE.xN[.pack::16b].b32
std::string st(isa::LdShape s, int num, bool unpack);    // tcgen05.st.sync.aligned.SHAPE.xN[.unpack::16b].b32
std::string wait_ld();
std::string wait_st();
std::string alloc(int cta_group);
std::string relinquish(int cta_group);
std::string dealloc(int cta_group);
std::string commit(int cta_group, bool multicast);
std::string fence_before();
std::string fence_after();

// wgmma (§9.7.15)
std::string wgmma(const plan::MmaStep& m, int n);        // wgmma.mma_async.sync.aligned.m64nNkK.D.A.B
std::string wgmma_fence();
std::string wgmma_commit();
std::string wgmma_wait();

// cp.async.bulk.tensor (§9.7.9.27.1.2) and the proxy fence (§9.7.13.4.x)
std::string tma_load(bool cta_group2, int rank = 2);
std::string tma_load_multicast(int rank, bool cta_group2 = false);
std::string tma_store(int rank = 2);  // cp.async.bulk.tensor.<rank>d.global.shared::cta.bulk_group
std::string bulk_commit();      // cp.async.bulk.commit_group
std::string bulk_wait_read();   // cp.async.bulk.wait_group.read N: the groups' shared-memory reads are done
std::string proxy_fence();

// stmatrix (§9.7.14.5.16): a warp stores `num` (1, 2, 4) 8x8 matrices of 16-bit elements
std::string stmatrix(int num);                // stmatrix.sync.aligned.m8n8.xN.shared.b16

// mbarrier (§9.7.13.15) and thread / cluster barriers (§9.7.13.1, §9.7.13.2)
std::string mbarrier_init();
std::string mbarrier_arrive();
std::string mbarrier_arrive_remote();
std::string mbarrier_arrive_cluster();  // a release arrival on a barrier of another CTA of the cluster
std::string mbarrier_expect_tx();
std::string mbarrier_try_wait();
std::string mbarrier_init_fence();
std::string bar_sync();
std::string cluster_arrive(bool aligned);
std::string cluster_wait(bool aligned);

// ---- scalar instructions (§9.7.1-9.7.9, §9.7.12-13, §9.7.19) ------------------------------------
// Addresses, predicates, moves and conversions, loads and stores, branches and register
// reallocation around the tensor-core work. A variant is a `Scalar`: an operation and the
// parameters its spelling takes; alu() spells any variant, and the helpers below build the common
// shapes for call sites. alu_rows() is the table: one row per operation (and per form where the
// parameters do not combine freely, as cvt's), with its section, its targets, and the axes whose
// cross product is every variant the row claims. A new operation (add.f32, fma.rn.f32,
// ex2.approx.f32, cvt.rn.satfinite.e4m3x2.f32) is one more enumerator and one more row.
enum class Op : uint8_t {
  add, sub, mul_lo, mul_wide, mad_lo, div, rem, min, max, bfe,  // integer arithmetic (§9.7.1)
  and_, or_, xor_, shl, shr,                                    // logic and shift (§9.7.8)
  setp, set, selp,                                              // comparison and selection (§9.7.6)
  mov, cvt, cvta, mapa, ld, st,                                 // data movement and conversion (§9.7.9)
  bra, ret, bar_warp_sync, barrier_sync, setmaxnreg, shfl_bfly, elect_sync,  // control, synchronization, registers
  prefetch_tensormap,                                           // prefetch.tensormap [a] (§9.7.9.15)
  red_max,                                                      // red.SPACE.max.TYPE (§9.7.13.6)
  // f32 arithmetic (§9.7.3; add, sub, min, max above take .f32 too): mul is the floating-point mul
  // (mul.rn.f32; the integer forms are mul_lo, mul_wide)
  mul, fma, neg, abs, ex2, lg2, tanh, rsqrt, rcp, sqrt,
};
// Instruction types (§5.2.2) plus .pred; the packed pairs are cvt's destinations.
enum class Ty : uint8_t { none, pred, b8, b16, b32, b64, u16, u32, u64, s32, s64, f16, bf16, f32, f16x2, bf16x2, e4m3x2, e5m2x2, e2m1x2 };
enum class Space : uint8_t { none, param, global, shared, shared_cluster };  // state spaces (§5.1)
enum class Cmp : uint8_t { none, eq, ne, lt, le, gt, ge };                  // setp's CmpOp (§9.7.6.2)
enum class BoolOp : uint8_t { none, and_, or_ };  // setp's BoolOp: combine the result with a predicate
// Rounding (cvt, §9.7.9.21; f32 arithmetic, §9.7.3): none where the ISA allows none; .approx names
// the approximate instructions (ex2.approx.f32, rcp.approx.f32, ...).
// approx_ftz: .approx.ftz, the one spelling ex2 of bf16x2 has (§9.7.4.10).
enum class Round : uint8_t { none, rn, approx, rn_satfinite, approx_ftz };  // rn_satfinite: .rn.satfinite (8-bit floats)

struct Scalar {
  Op op;
  Ty type = Ty::none;          // the instruction type; cvt: the destination type
  Ty from = Ty::none;          // cvt: the source type
  Space space = Space::none;   // ld, st, cvta, mapa
  int vec = 1;                 // ld, st: .v2 / .v4
  Cmp cmp = Cmp::none;         // setp, set
  BoolOp combine = BoolOp::none;
  Round round = Round::none;   // cvt, f32 arithmetic
  bool to = false;             // cvta.to.SPACE (generic to SPACE) rather than cvta.SPACE (SPACE to generic)
  bool inc = false;            // setmaxnreg.inc rather than .dec
};
std::string alu(const Scalar& v);
std::string_view name(Op op);  // the operation's base mnemonic: "mul.lo", "setmaxnreg"
std::string_view name(Ty t);   // "u32", "pred", "bf16x2"
Ty ty(isa::DType t);           // the scalar type of an element type (f16, bf16, f32, s32)

std::string alu(Op op, Ty t);                                    // add.u32, and.pred, mul.wide.u32, mov.b64
std::string setp(Cmp c, Ty t, BoolOp combine = BoolOp::none);    // setp.ne.or.u32
std::string cvt(Ty to, Ty from, Round r = Round::none);          // cvt.rn.f32.s32, cvt.u64.u32
std::string cvta(Space s, Ty t);                                 // cvta.param.u64: SPACE address to generic
std::string cvta_to(Space s, Ty t);                              // cvta.to.global.u64: generic to SPACE
std::string ld(Space s, Ty t, int vec = 1);                      // ld.global.v4.b32, ld.param.u64
std::string st(Space s, Ty t, int vec = 1);                      // st.shared.v2.b32, st.global.b16
std::string mapa();                                              // mapa.shared::cluster.u32
std::string bra();
std::string ret();
std::string bar_warp_sync();
std::string shfl_bfly();                                          // shfl.sync.bfly.b32 d, a, lane mask, 31, membermask
std::string elect_sync();                                         // elect.sync d|p, membermask
std::string prefetch_tensormap();                                 // prefetch.tensormap [a]: a tensor map's generic address
std::string red_max_global_u32();                                 // red.global.max.u32 [a], b
std::string barrier_sync();
std::string setmaxnreg(bool inc);                                // setmaxnreg.inc.sync.aligned.u32
// The f32 instruction of an elementwise function (ir::Math): add.rn.f32, fma.rn.f32, min.f32,
// ex2.approx.f32, rcp.rn.f32, set.lt.f32.f32, ... (no .ftz: subnormal inputs and results are
// kept, §9.7.3, §9.7.6.1); select: selp.f32, after the setp.ne.f32 of its condition. With `t`
// f16 or bf16 the packed form (§9.7.4, packed_info): add.rn.bf16x2, ex2.approx.ftz.bf16x2, ...;
// convert: cvt.rn.bf16x2.f32 (§9.7.9.21), its type the result's.
Scalar math(MathFn f, bool approx, isa::DType t = isa::DType::f32);

// The parameters a row claims; its variants are their cross product (a list left at its default
// keeps that parameter's default).
struct Axes {
  std::vector<Ty> types{Ty::none};
  std::vector<Ty> from{Ty::none};
  std::vector<Space> spaces{Space::none};
  std::vector<int> vecs{1};
  std::vector<Cmp> cmps{Cmp::none};
  std::vector<BoolOp> combines{BoolOp::none};
  std::vector<bool> to{false};
  std::vector<bool> inc{false};
  Round round = Round::none;
};
struct AluRow {
  Op op;
  std::string_view isa;   // "§9.7.1.1"
  int min_ptx;            // lowest PTX ISA version (major * 10 + minor) of every variant claimed
  bool tcgen05_targets;   // sm_100a, sm_100f, sm_103a, sm_110a
  bool sm90;              // sm_90a
  Axes axes;
};
const std::vector<AluRow>& alu_rows();
std::vector<Scalar> variants(const AluRow& row);
bool accepts(const AluRow& row, const isa::TargetInfo& t);

}  // namespace ptxgen::emit::spell
