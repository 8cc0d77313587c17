// The simulator's decoded kernel (parse.cpp writes it, machine.cpp and tcgen05.cpp run it).
#pragma once

#include <string>
#include <vector>

#include "ptxgen/sim.hpp"

namespace ksim {

enum class Op : uint8_t {
  mov, mov_pack, mov_unpack, add, sub, neg, mul_lo, mul_hi, mul_wide, mad_lo, mad_wide, div, rem, min, max, and_, or_, xor_, not_,
  shl, shr, bfe, selp, setp, cvt, cvta, mapa, ld, st, bra, ret, bar_sync, bar_warp_sync, cluster_arrive, cluster_wait,
  nop, fence_proxy_async, fence_release, tc_fence_before, tc_fence_after, mbar_init, mbar_arrive, mbar_try_wait, tma_load, tc_alloc, tc_dealloc, tc_relinquish, tc_ld, tc_st,
  tc_wait_ld, tc_wait_st, tc_cp, tc_mma, tc_commit, elect,
  shfl,  // shfl.sync.bfly.b32 (a warp collective here: every lane's source read before any writes)
  stmatrix,  // stmatrix.sync.aligned.m8n8.{x1,x2,x4}.shared.b16 (a warp collective: §9.7.14.5.16)
  tma_store, bulk_commit, bulk_wait,  // cp.async.bulk.tensor (shared -> global), commit_group, wait_group[.read]
  wg_fence, wg_mma, wg_commit, wg_wait, setmaxnreg,  // sm_90a: wgmma.fence/mma_async/commit_group/wait_group, setmaxnreg
  fmath,  // an f32 instruction of §9.7.3 (Ins::fn says which)
  fset,   // set.CMP.f32.f32 (§9.7.6.1): 1.0f where a CMP b holds (ordered: never for a NaN), else 0
  red_max,  // red.global.max.u32 [a], b (§9.7.13.6): threads run one at a time here, so it is atomic
};

// The f32 instructions simulated (PTX ISA 9.1 §9.7.3), Ins::fn of Op::fmath: .rn add/sub/mul/fma,
// min/max/neg/abs, and the approximate (.approx) and correctly rounded (.rn) rcp and sqrt, the
// approximate ex2, lg2, tanh and rsqrt.
enum class FFn : uint8_t { add, sub, mul, fma, min, max, neg, abs, ex2, lg2, tanh, rsqrt, rcp_approx, rcp_rn, sqrt_approx, sqrt_rn };
// One f32 instruction on bit patterns (exec.cpp): what Op::fmath computes, for the unit tests.
uint32_t fmath(FFn f, uint32_t a, uint32_t b, uint32_t c);
// One packed half-precision instruction (§9.7.4) on the two halves of 32-bit registers: .f16x2, or
// .bf16x2 where `bf16`; add/sub/mul/fma .rn, min, max, neg, abs, tanh.approx, ex2.approx (.ftz for bf16).
uint32_t hmath(FFn f, bool bf16, uint32_t a, uint32_t b, uint32_t c);
bool f32_compare(uint8_t cmp, uint32_t a, uint32_t b);  // set/setp .f32, ordered (§9.7.6.1-2)

// Instruction types: bits and class.
enum class Cls : uint8_t { b, u, s, f, pred };
struct Ty {
  Cls cls = Cls::b;
  uint8_t bits = 32;
  uint8_t fmt = 0;  // floats: 0 f32/f64, 1 f16, 2 bf16; cvt .x2 packs: bit 4
};

enum Special : uint32_t {
  sp_tid_x, sp_tid_y, sp_tid_z, sp_ntid_x, sp_ntid_y, sp_ntid_z, sp_ctaid_x, sp_ctaid_y, sp_ctaid_z, sp_nctaid_x,
  sp_nctaid_y, sp_nctaid_z, sp_cluster_ctarank, sp_cluster_nctarank, sp_cluster_ctaid_x, sp_cluster_ctaid_y,
  sp_cluster_ctaid_z, sp_cluster_nctaid_x, sp_cluster_nctaid_y, sp_cluster_nctaid_z, sp_clusterid_x, sp_clusterid_y,
  sp_clusterid_z, sp_nclusterid_x, sp_nclusterid_y, sp_nclusterid_z, sp_laneid, sp_warpid, sp_smem_symbol, sp_param0  // sp_param0 + i: the address of parameter i
};

struct Opnd {
  enum Kind : uint8_t { none, reg, immediate, special, vec, mem, param, sink, label };
  Kind kind = none;
  bool neg = false;   // !%p
  uint8_t count = 0;  // vec: elements
  uint32_t r = 0;     // reg: slot; vec: first index into Kernel::pool; special: Special; mem: base slot or kNoReg; param/label: index
  int64_t imm = 0;    // immediate: value; mem: offset; mem with kind param base: see Ins
};
constexpr uint32_t kNoReg = 0xFFFFFFFFu;
constexpr uint32_t kSinkSlot = 0xFFFFFFFEu;  // "_" in a vector

// State spaces of ld/st and address operands.
enum Space : uint8_t { sp_none, sp_global, sp_shared_cta, sp_shared_cluster, sp_param };

struct Ins {
  Op op = Op::nop;
  Ty ty, ty2;           // result type; cvt: source type
  uint8_t cmp = 0;      // setp: 0 eq 1 ne 2 lt 3 le 4 gt 5 ge; ld/st/tma/mbar: Space
  uint8_t boolop = 0;   // setp: 0 none 1 and 2 or 3 xor
  uint8_t vec = 1;      // ld/st: elements
  uint8_t cta_group = 1;
  uint8_t nops = 0;
  bool guard_neg = false;
  int32_t guard = -1;   // predicate slot or -1
  // tcgen05: ld/st shape (0 32x32b, 1 16x64b, 2 16x128b, 3 16x256b, 4 16x32bx2), .num, pack;
  // cp shape (0 128x256b, 1 128x128b, 2 4x256b, 3 64x128b.warpx2::02_13, 4 ::01_23, 5 32x128b.warpx4) and
  // decompression (1 b4x16_p64, 2 b6x16_p32); mma: kind (0 f16, 1 tf32, 2 f8f6f4, 3 i8, 4 mxf8f6f4, 5 mxf4,
  // 6 mxf4nvf4), sparse, scale factors per instruction given by the spelling (0: by kind, .blockN).
  uint8_t shape = 0, num = 0, pack = 0, kind = 0, sparse = 0, scaled = 0, sf_vec = 0, decompress = 0, multicast = 0;
  FFn fn = FFn::add;       // fmath
  uint8_t collector = 0;  // tcgen05.mma .collector::a:: 0 discard, 1 fill, 2 use, 3 lastuse
  uint8_t collective = 0;  // a .sync.aligned warp collective
  uint8_t read = 0;        // cp.async.bulk.wait_group.read: only the groups' shared-memory reads
  uint8_t release = 0;     // barrier.cluster.arrive (not .relaxed), mbarrier.arrive.release.cluster: a release at cluster scope
  // wgmma.mma_async (PTX ISA 9.1 §9.7.15.5.2): m64 n`wg_n` k`wg_k`, the types (tc::Kind of the
  // inputs: k_f16 with type 0 f16 / 1 bf16, k_tf32, k_f8f6f4 with 0 e4m3 / 1 e5m2, k_i8 with 0 u8 /
  // 1 s8; D: 0 f16, 1 f32, 2 s32), .satfinite, A from registers, the immediates imm-scale-a/b (-1
  // negates) and imm-trans-a/b (1: M- / N-major). setmaxnreg: .inc (1) or .dec (0) in `pack`,
  // the count in wg_n.
  uint16_t wg_n = 0;
  uint8_t wg_k = 0, wg_kind = 0, wg_atype = 0, wg_btype = 0, wg_dtype = 0, wg_sat = 0, wg_areg = 0, wg_trans_a = 0, wg_trans_b = 0;
  int8_t wg_scale_a = 1, wg_scale_b = 1;
  Opnd o[8];
  uint32_t line = 0;
};

struct ParamDecl {
  std::string name;
  int bytes = 8;     // .u32: 4, .u64: 8, .b8 x[128]: 128
  bool tensor_map = false;
};

struct Kernel {
  std::string name;
  std::vector<Ins> code;
  std::vector<uint32_t> pool;  // vector operands' register slots
  std::vector<ParamDecl> params;
  std::vector<std::string> text;  // source line per instruction, for messages
  std::vector<std::string> slot_names;
  uint32_t slots = 0;
  uint32_t reqntid = 0;
  std::array<uint32_t, 3> reqnctapercluster{0, 0, 0};
  int cta_group = 0;  // of every tcgen05 instruction (0: none)
  uint32_t maxnreg = 0;  // .maxnreg (0: none), the registers a warp owns before any setmaxnreg
  // The registers any wgmma.mma_async reads or writes (its D and A fragments): wgmma.fence orders
  // the warp's earlier writes of these before the next wgmma (§9.7.15.7.1).
  std::vector<uint32_t> wgmma_slots;
  bool wgmma = false;
};

}  // namespace ksim
