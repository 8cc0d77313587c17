// The spelling tables (spelling.hpp). Each function spells one family from its parameters; the
// table of families says where the ISA defines each and which targets take it.
#include "spelling.hpp"

#include <stdexcept>

namespace ptxgen::emit::spell {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
std::string cg(int cta_group) { return ".cta_group::" + s(cta_group); }
}  // namespace

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"tcgen05.mma", "PTX ISA 9.1 §9.7.16.10.9 (tcgen05.mma, .sp, .block_scale)", 86, true, false},
      {"tcgen05.cp", "PTX ISA 9.1 §9.7.16.9.2", 86, true, false},
      {"tcgen05.ld / tcgen05.st / tcgen05.wait", "PTX ISA 9.1 §9.7.16.8.3-5", 86, true, false},
      {"tcgen05.alloc / dealloc / relinquish_alloc_permit", "PTX ISA 9.1 §9.7.16.7.1", 86, true, false},
      {"tcgen05.commit", "PTX ISA 9.1 §9.7.16.12.1", 86, true, false},
      {"tcgen05.fence", "PTX ISA 9.1 §9.7.16.11.1", 86, true, false},
      {"wgmma.mma_async / fence / commit_group / wait_group", "PTX ISA 9.1 §9.7.15.5.2, §9.7.15.6-7", 80, false, true},
      {"cp.async.bulk.tensor", "PTX ISA 9.1 §9.7.9.27.1.2", 80, true, true},
      {"cp.async.bulk.commit_group / wait_group", "PTX ISA 9.1 §9.7.9.27.3-4", 80, true, true},
      {"fence.proxy.async", "PTX ISA 9.1 §9.7.13.4", 80, true, true},
      {"mbarrier", "PTX ISA 9.1 §9.7.13.15", 80, true, true},
      {"bar.sync / barrier.cluster", "PTX ISA 9.1 §9.7.13.1, §9.7.13.3", 78, true, true},
      {"stmatrix", "PTX ISA 9.1 §9.7.14.5.16", 78, true, true},
      // The scalar instructions: one row each in alu_rows(), which says more (types, spaces, versions).
      {"integer arithmetic: add sub mul mad div rem min max bfe", "PTX ISA 9.1 §9.7.1", 10, true, true},
      {"logic and shift: and or xor shl shr", "PTX ISA 9.1 §9.7.8", 10, true, true},
      {"setp", "PTX ISA 9.1 §9.7.6.2", 10, true, true},
      {"mov / cvt / cvta / mapa / ld / st", "PTX ISA 9.1 §9.7.9", 10, true, true},
      {"bra / ret / bar.warp.sync / barrier.sync", "PTX ISA 9.1 §9.7.12.3, §9.7.12.6, §9.7.13.2, §9.7.13.1", 10, true, true},
      {"setmaxnreg", "PTX ISA 9.1 §9.7.19.5", 80, true, true},
  };
  return f;
}

// ---- tcgen05 ------------------------------------------------------------------------------------
std::string mma(const plan::MmaStep& m, int cta_group, const isa::TargetInfo& t, plan::Collector c) {
  // §9.7.16.10.9.1: tcgen05.mma{.sp}.cta_group.kind{.block_scale{.scale_vectorsize}}{.collector_usage};
  // the scale vector size as the target spells it (isa::scale_vec_qualifier); no collector
  // qualifier is .collector::a::discard.
  static const char* const kCollector[] = {"", ".collector::a::fill", ".collector::a::use", ".collector::a::lastuse"};
  return std::string("tcgen05.mma") + (m.sparse ? ".sp" : "") + cg(cta_group) + ".kind::" + std::string(isa::name(m.kind)) +
         (m.scaled ? ".block_scale" + isa::scale_vec_qualifier(m.scale.factors, m.scale.vec, t) : "") +
         kCollector[static_cast<int>(c)];
}

int mma_min_ptx(const plan::MmaStep& m, const isa::TargetInfo& t) {
  if (m.engine != ir::Engine::tcgen05) return 0;
  return isa::mma_min_ptx(m.kind, m.scaled ? isa::scale_vec_qualifier(m.scale.factors, m.scale.vec, t) : "");
}

std::string cp(isa::CpShape shape, isa::CpDecompress d, int cta_group) {
  const auto& in = isa::info(shape);
  return "tcgen05.cp" + cg(cta_group) + "." + std::string(in.name) + (in.multicast.empty() ? "" : "." + std::string(in.multicast)) +
         std::string(isa::qualifier(d));
}

std::string ld(isa::LdShape shape, int num, bool pack) {
  return "tcgen05.ld.sync.aligned." + std::string(isa::info(shape).name) + ".x" + s(num) + (pack ? ".pack::16b" : "") + ".b32";
}

std::string st(isa::LdShape shape, int num, bool unpack) {
  return "tcgen05.st.sync.aligned." + std::string(isa::info(shape).name) + ".x" + s(num) + (unpack ? ".unpack::16b" : "") + ".b32";
}

std::string wait_ld() { return "tcgen05.wait::ld.sync.aligned"; }
std::string wait_st() { return "tcgen05.wait::st.sync.aligned"; }
std::string alloc(int cta_group) { return "tcgen05.alloc" + cg(cta_group) + ".sync.aligned.shared::cta.b32"; }
std::string relinquish(int cta_group) { return "tcgen05.relinquish_alloc_permit" + cg(cta_group) + ".sync.aligned"; }
std::string dealloc(int cta_group) { return "tcgen05.dealloc" + cg(cta_group) + ".sync.aligned.b32"; }

std::string commit(int cta_group, bool multicast) {
  return "tcgen05.commit" + cg(cta_group) + ".mbarrier::arrive::one.shared::cluster" + (multicast ? ".multicast::cluster" : "") + ".b64";
}

std::string fence_before() { return "tcgen05.fence::before_thread_sync"; }
std::string fence_after() { return "tcgen05.fence::after_thread_sync"; }

// ---- wgmma --------------------------------------------------------------------------------------
std::string wgmma(const plan::MmaStep& m, int n) {
  const int k = 256 / isa::value_bits(m.a_dtype);
  return "wgmma.mma_async.sync.aligned.m64n" + s(n) + "k" + s(k) + "." + std::string(isa::name(m.acc_dtype)) + "." +
         std::string(isa::name(m.a_dtype)) + "." + std::string(isa::name(m.b_dtype));
}
std::string wgmma_fence() { return "wgmma.fence.sync.aligned"; }
std::string wgmma_commit() { return "wgmma.commit_group.sync.aligned"; }
std::string wgmma_wait() { return "wgmma.wait_group.sync.aligned"; }

// ---- TMA, proxies, barriers ---------------------------------------------------------------------
std::string tma_load(bool cta_group2, int rank) {
  // .dim: the tensor map's rank; .cta_group::2: the mbarrier may be the peer CTA's (§9.7.9.27.1.2).
  return "cp.async.bulk.tensor." + s(rank) + "d.shared::cluster.global.mbarrier::complete_tx::bytes" + (cta_group2 ? ".cta_group::2" : "");
}
std::string tma_load_multicast(int rank, bool cta_group2) {
  // .multicast::cluster: the box goes to every CTA of ctaMask, at the same shared-memory offset,
  // and so does the barrier's complete_tx (§9.7.9.27.1.2); with .cta_group::2 the complete_tx goes
  // to the barrier of each destination's pair CTA of the parity where the named barrier lies.
  return "cp.async.bulk.tensor." + s(rank) + "d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster" +
         (cta_group2 ? ".cta_group::2" : "");
}
// .dim: the tensor map's rank (a grouped D: 3, the group its plane; §9.7.9.27.1.2).
std::string tma_store(int rank) { return "cp.async.bulk.tensor." + s(rank) + "d.global.shared::cta.bulk_group"; }
std::string bulk_commit() { return "cp.async.bulk.commit_group"; }
std::string bulk_wait_read() { return "cp.async.bulk.wait_group.read"; }
std::string proxy_fence() { return "fence.proxy.async.shared::cta"; }
// §9.7.14.5.16: .m8n8 with .b16 elements from PTX ISA 7.8 on sm_90 and higher; the .m16n8 shape
// and .b8 elements (sm_100a family only) and .trans are not claimed.
std::string stmatrix(int num) {
  if (num != 1 && num != 2 && num != 4) throw std::logic_error("stmatrix stores 1, 2 or 4 matrices");
  return "stmatrix.sync.aligned.m8n8.x" + s(num) + ".shared.b16";
}
std::string mbarrier_init() { return "mbarrier.init.shared::cta.b64"; }
std::string mbarrier_arrive() { return "mbarrier.arrive.shared::cta.b64"; }
// §9.7.13.15.13: .shared::cluster takes the sink `_` as its state; .release.cluster orders this
// thread's prior accesses before the peer's wait.
std::string mbarrier_arrive_cluster() { return "mbarrier.arrive.release.cluster.shared::cluster.b64"; }
// A consumer's release of a stage in every CTA of an sm_90a cluster: the default .release.cta
// (§9.7.13.15.13; the ISA's own example of a remote arrival): its wgmma reads are complete
// (wgmma.wait_group) before it arrives, and only the peer's async-proxy writes follow.
std::string mbarrier_arrive_remote() { return "mbarrier.arrive.release.cta.shared::cluster.b64"; }
std::string mbarrier_expect_tx() { return "mbarrier.arrive.expect_tx.shared::cta.b64"; }
std::string mbarrier_try_wait() { return "mbarrier.try_wait.parity.shared::cta.b64"; }
std::string mbarrier_init_fence() { return "fence.mbarrier_init.release.cluster"; }
std::string bar_sync() { return "bar.sync"; }
std::string cluster_arrive(bool aligned) { return std::string("barrier.cluster.arrive.release") + (aligned ? ".aligned" : ""); }
std::string cluster_wait(bool aligned) { return std::string("barrier.cluster.wait.acquire") + (aligned ? ".aligned" : ""); }

// ---- scalar instructions ------------------------------------------------------------------------
std::string_view name(Op op) {
  switch (op) {
    case Op::add: return "add";
    case Op::sub: return "sub";
    case Op::mul_lo: return "mul.lo";
    case Op::mul_wide: return "mul.wide";
    case Op::mad_lo: return "mad.lo";
    case Op::div: return "div";
    case Op::rem: return "rem";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::bfe: return "bfe";
    case Op::and_: return "and";
    case Op::or_: return "or";
    case Op::xor_: return "xor";
    case Op::shl: return "shl";
    case Op::shr: return "shr";
    case Op::setp: return "setp";
    case Op::set: return "set";
    case Op::selp: return "selp";
    case Op::mov: return "mov";
    case Op::cvt: return "cvt";
    case Op::cvta: return "cvta";
    case Op::mapa: return "mapa";
    case Op::ld: return "ld";
    case Op::st: return "st";
    case Op::bra: return "bra";
    case Op::ret: return "ret";
    case Op::bar_warp_sync: return "bar.warp.sync";
    case Op::shfl_bfly: return "shfl.sync.bfly";
    case Op::elect_sync: return "elect.sync";
    case Op::prefetch_tensormap: return "prefetch.tensormap";
    case Op::red_max: return "red";
    case Op::barrier_sync: return "barrier.sync";
    case Op::setmaxnreg: return "setmaxnreg";
    case Op::mul: return "mul";
    case Op::fma: return "fma";
    case Op::neg: return "neg";
    case Op::abs: return "abs";
    case Op::ex2: return "ex2";
    case Op::lg2: return "lg2";
    case Op::tanh: return "tanh";
    case Op::rsqrt: return "rsqrt";
    case Op::rcp: return "rcp";
    case Op::sqrt: return "sqrt";
  }
  return "?";
}

std::string_view name(Ty t) {
  static constexpr std::string_view k[] = {"",    "pred", "b8",  "b16", "b32",  "b64", "u16",    "u32",    "u64",
                                           "s32", "s64",  "f16", "bf16", "f32", "f16x2", "bf16x2", "e4m3x2", "e5m2x2",
                                           "e2m1x2"};
  return k[static_cast<int>(t)];
}

Ty ty(isa::DType t) {
  switch (t) {
    case isa::DType::f16: return Ty::f16;
    case isa::DType::bf16: return Ty::bf16;
    case isa::DType::f32: return Ty::f32;
    case isa::DType::s32: return Ty::s32;
    default: throw std::logic_error("no scalar instruction type for element type " + std::string(isa::name(t)));
  }
}

namespace {
std::string_view name(Space sp) {
  static constexpr std::string_view k[] = {"", "param", "global", "shared", "shared::cluster"};
  return k[static_cast<int>(sp)];
}
std::string_view name(Cmp c) {
  static constexpr std::string_view k[] = {"", "eq", "ne", "lt", "le", "gt", "ge"};
  return k[static_cast<int>(c)];
}
std::string_view name(BoolOp b) {
  static constexpr std::string_view k[] = {"", "and", "or"};
  return k[static_cast<int>(b)];
}
void add_part(std::string& out, std::string_view part) {
  if (!part.empty()) out += "." + std::string(part);
}
}  // namespace

std::string alu(const Scalar& v) {
  // Modifiers in the order the ISA's syntax blocks give them; a parameter the operation does not
  // take is at its default and adds nothing: cvta.to.SPACE.size (§9.7.9.20), setmaxnreg.ACTION
  // .sync.aligned.u32 (§9.7.19.5), cvt.RND.DTYPE.ATYPE (§9.7.9.21), setp.CMP.BOOL.TYPE (§9.7.6.2),
  // ld/st.SPACE.VEC.TYPE (§9.7.9.8, §9.7.9.11), mapa.SPACE.TYPE (§9.7.9.23).
  std::string out(name(v.op));
  if (v.to) out += ".to";
  if (v.op == Op::setmaxnreg) out += v.inc ? ".inc.sync.aligned" : ".dec.sync.aligned";
  if (v.round == Round::rn) out += ".rn";
  if (v.round == Round::rn_satfinite) out += ".rn.satfinite";
  if (v.round == Round::approx) out += ".approx";
  if (v.round == Round::approx_ftz) out += ".approx.ftz";
  add_part(out, name(v.cmp));
  add_part(out, name(v.combine));
  add_part(out, name(v.space));
  if (v.op == Op::red_max) out += ".max";  // red{.sem}{.scope}{.space}.op.type (§9.7.13.6)
  if (v.vec > 1) out += ".v" + s(v.vec);
  add_part(out, name(v.type));
  add_part(out, name(v.from));
  return out;
}

std::string alu(Op op, Ty t) { return alu(Scalar{.op = op, .type = t}); }
std::string setp(Cmp c, Ty t, BoolOp combine) { return alu({.op = Op::setp, .type = t, .cmp = c, .combine = combine}); }
std::string cvt(Ty to, Ty from, Round r) { return alu({.op = Op::cvt, .type = to, .from = from, .round = r}); }
std::string cvta(Space sp, Ty t) { return alu({.op = Op::cvta, .type = t, .space = sp}); }
std::string cvta_to(Space sp, Ty t) { return alu({.op = Op::cvta, .type = t, .space = sp, .to = true}); }
std::string ld(Space sp, Ty t, int vec) { return alu({.op = Op::ld, .type = t, .space = sp, .vec = vec}); }
std::string st(Space sp, Ty t, int vec) { return alu({.op = Op::st, .type = t, .space = sp, .vec = vec}); }
// The emitter's shared-memory addresses are 32-bit offsets in the window (§5.1.4): .u32.
std::string mapa() { return alu({.op = Op::mapa, .type = Ty::u32, .space = Space::shared_cluster}); }
std::string bra() { return alu({.op = Op::bra}); }
std::string ret() { return alu({.op = Op::ret}); }
std::string bar_warp_sync() { return alu({.op = Op::bar_warp_sync}); }
std::string shfl_bfly() { return alu({.op = Op::shfl_bfly, .type = Ty::b32}); }
std::string elect_sync() { return alu({.op = Op::elect_sync}); }
std::string prefetch_tensormap() { return alu({.op = Op::prefetch_tensormap}); }
std::string red_max_global_u32() { return alu({.op = Op::red_max, .type = Ty::u32, .space = Space::global}); }
std::string barrier_sync() { return alu({.op = Op::barrier_sync}); }
std::string setmaxnreg(bool inc) { return alu({.op = Op::setmaxnreg, .type = Ty::u32, .inc = inc}); }

Scalar math(MathFn f, bool approx, isa::DType t) {
  // add, sub, mul and fma name their rounding: without .rn the assembler may contract a mul and an
  // add into an fma (§9.7.3.3-5), which the simulator and the float64 check would not see.
  static constexpr Op ops[] = {Op::add, Op::sub, Op::mul, Op::fma, Op::min, Op::max, Op::neg,
                               Op::abs, Op::ex2, Op::lg2, Op::tanh, Op::rsqrt, Op::rcp, Op::sqrt};
  // A comparison writes 1.0f or 0.0f (set's .f32 destination, §9.7.6.1), from f32 operands.
  static constexpr Cmp cmps[] = {Cmp::lt, Cmp::le, Cmp::gt, Cmp::ge, Cmp::eq, Cmp::ne};
  if (f >= MathFn::lt && f <= MathFn::ne)
    return {.op = Op::set, .type = Ty::f32, .from = Ty::f32, .cmp = cmps[static_cast<int>(f) - static_cast<int>(MathFn::lt)]};
  if (f == MathFn::select) return {.op = Op::selp, .type = Ty::f32};
  if (t != isa::DType::f32 || f == MathFn::convert) {
    if ((t != isa::DType::bf16 && t != isa::DType::f16) || (f != MathFn::convert && !packed_info(f).has))
      throw std::logic_error("no packed " + std::string(isa::name(t)) + "x2 form of " + std::string(info(f).name));
    const Ty x2 = t == isa::DType::bf16 ? Ty::bf16x2 : Ty::f16x2;
    if (f == MathFn::convert) return {.op = Op::cvt, .type = x2, .from = Ty::f32, .round = Round::rn};
    const bool rounds = f == MathFn::add || f == MathFn::sub || f == MathFn::mul || f == MathFn::fma;
    const Round r = !approx ? (rounds ? Round::rn : Round::none) : f == MathFn::exp2 && t == isa::DType::bf16 ? Round::approx_ftz : Round::approx;
    return {.op = ops[static_cast<int>(f)], .type = x2, .round = r};
  }
  const Op op = ops[static_cast<int>(f)];
  const bool rounds = f == MathFn::add || f == MathFn::sub || f == MathFn::mul || f == MathFn::fma || f == MathFn::rcp || f == MathFn::sqrt;
  return {.op = op, .type = Ty::f32, .round = approx ? Round::approx : rounds ? Round::rn : Round::none};
}

const std::vector<AluRow>& alu_rows() {
  // What each row claims is what ptxgen writes, closed under its axes' cross product (every
  // compare op of setp, every vector width of a load or store): all of it is assembled for every
  // target by tests/spelling_test.cpp. Every scalar row holds on every target ptxgen has (setmaxnreg
  // needs an `a` target or, from PTX 8.8, sm_100f; mapa needs sm_90).
  using T = Ty;
  static const std::vector<AluRow> rows = {
      {Op::add, "§9.7.1.1", 10, true, true, {.types = {T::u32, T::u64, T::s64}}},
      {Op::sub, "§9.7.1.2", 10, true, true, {.types = {T::u32}}},
      {Op::mul_lo, "§9.7.1.3", 10, true, true, {.types = {T::u32, T::u64}}},
      {Op::mul_wide, "§9.7.1.3", 10, true, true, {.types = {T::u32}}},
      {Op::mad_lo, "§9.7.1.4", 10, true, true, {.types = {T::u32, T::u64, T::s64}}},
      {Op::div, "§9.7.1.8", 10, true, true, {.types = {T::u32}}},
      {Op::rem, "§9.7.1.9", 10, true, true, {.types = {T::u32}}},
      {Op::min, "§9.7.1.12", 10, true, true, {.types = {T::u32}}},
      // max.s32: a grouped CTA's count of valid rows, a negative entry taken as 0.
      {Op::max, "§9.7.1.13", 10, true, true, {.types = {T::u32, T::s32}}},
      {Op::bfe, "§9.7.1.19", 20, true, true, {.types = {T::u32}}},
      {Op::and_, "§9.7.8.1", 10, true, true, {.types = {T::pred, T::b32}}},
      {Op::or_, "§9.7.8.2", 10, true, true, {.types = {T::pred, T::b32}}},
      {Op::xor_, "§9.7.8.3", 10, true, true, {.types = {T::b32}}},
      {Op::shl, "§9.7.8.8", 10, true, true, {.types = {T::b32}}},
      {Op::shr, "§9.7.8.9", 10, true, true, {.types = {T::b32, T::u32, T::u64}}},
      {Op::setp, "§9.7.6.2", 10, true, true,
       {.types = {T::u32},
        .cmps = {Cmp::eq, Cmp::ne, Cmp::lt, Cmp::le, Cmp::gt, Cmp::ge},
        .combines = {BoolOp::none, BoolOp::and_, BoolOp::or_}}},
      // A select's condition (ir::Math select): a != 0, ordered (a NaN is false).
      {Op::setp, "§9.7.6.2", 10, true, true, {.types = {T::f32}, .cmps = {Cmp::ne}}},
      // The comparisons of ir::Math: 1.0f where a CMP b holds, else 0.0f (ordered: false for a NaN).
      {Op::set, "§9.7.6.1", 10, true, true,
       {.types = {T::f32}, .from = {T::f32}, .cmps = {Cmp::eq, Cmp::ne, Cmp::lt, Cmp::le, Cmp::gt, Cmp::ge}}},
      {Op::selp, "§9.7.6.3", 10, true, true, {.types = {T::f32}}},
      // mov of a register, an immediate or an address (§9.7.9.3), and packing {lo, hi} (§9.7.9.4).
      {Op::mov, "§9.7.9.3, §9.7.9.4", 10, true, true, {.types = {T::u16, T::u32, T::b16, T::b32, T::b64}}},
      // cvt's forms: integers widened or narrowed (no rounding); s32 to f32 and f32 to 16-bit
      // floats round (.rn, the ISA requires a rounding modifier there); f16 to f32 is exact.
      {Op::cvt, "§9.7.9.21", 10, true, true, {.types = {T::u16, T::u32, T::u64}, .from = {T::u16, T::u32}}},
      {Op::cvt, "§9.7.9.21", 10, true, true, {.types = {T::f32}, .from = {T::s32}, .round = Round::rn}},
      {Op::cvt, "§9.7.9.21", 10, true, true, {.types = {T::f32}, .from = {T::f16}}},
      // bf16 to f32, exact like f16's (cvt.f32.bf16: PTX ISA 7.1, sm_80).
      {Op::cvt, "§9.7.9.21", 71, true, true, {.types = {T::f32}, .from = {T::bf16}}},
      {Op::cvt, "§9.7.9.21", 70, true, true,
       {.types = {T::f16, T::bf16, T::f16x2, T::bf16x2}, .from = {T::f32}, .round = Round::rn}},
      // Two f32 to two 8-bit floats in a .b16, a in the upper byte, beyond the largest finite
      // value the largest finite value (an 8-bit D; PTX ISA 7.8 for sm_90, 8.1 for sm_89).
      {Op::cvt, "§9.7.9.21", 78, true, true, {.types = {T::e4m3x2, T::e5m2x2}, .from = {T::f32}, .round = Round::rn_satfinite}},
      // Two e4m3 (a .b16) to two f16, exactly: an NVFP4 factor's value (PTX ISA 7.8 for sm_90).
      {Op::cvt, "§9.7.9.21", 78, true, true, {.types = {T::f16x2}, .from = {T::e4m3x2}, .round = Round::rn}},
      // Two f32 to two e2m1 in a .b8 (a in the upper nibble; an MXFP4 D), PTX ISA 8.6, the tcgen05
      // targets only; .satfinite clamps to +-6 and takes NaN to +6.
      {Op::cvt, "§9.7.9.21", 86, true, false, {.types = {T::e2m1x2}, .from = {T::f32}, .round = Round::rn_satfinite}},
      {Op::cvta, "§9.7.9.20", 77, true, true, {.types = {T::u64}, .spaces = {Space::global, Space::param}, .to = {false, true}}},
      {Op::mapa, "§9.7.9.23", 78, true, true, {.types = {T::u32}, .spaces = {Space::shared_cluster}}},
      {Op::ld, "§9.7.9.8", 10, true, true, {.types = {T::u32, T::u64}, .spaces = {Space::param}}},
      {Op::ld, "§9.7.9.8", 10, true, true, {.types = {T::b16, T::b32}, .spaces = {Space::global, Space::shared}, .vecs = {1, 2, 4}}},
      {Op::st, "§9.7.9.11", 10, true, true,
       {.types = {T::b8, T::b16, T::b32, T::s32, T::f32}, .spaces = {Space::global, Space::shared}, .vecs = {1, 2, 4}}},
      {Op::bra, "§9.7.12.3", 10, true, true, {}},
      {Op::ret, "§9.7.12.6", 10, true, true, {}},
      {Op::bar_warp_sync, "§9.7.13.2", 60, true, true, {}},
      // A row reduction's exchange between the 4 lanes of a row (lane ^ 1, lane ^ 2).
      {Op::shfl_bfly, "§9.7.9.6", 60, true, true, {.types = {T::b32}}},
      // A single-thread role's issuer: the whole warp runs the role, the one lane elect.sync
      // elects issues its TMA, tcgen05.mma/cp/commit and barrier arming (PTX ISA 8.0, sm_90).
      {Op::elect_sync, "§9.7.13.14", 80, true, true, {}},
      // A kernel's tensor maps fetched into the cache before the first TMA needs them, as CUTLASS's
      // prefetch_tma_descriptor: the generic address of the .param (PTX ISA 8.0, sm_90).
      {Op::prefetch_tensormap, "§9.7.9.15", 80, true, true, {}},
      // An amax's one update per warp: the f32 bits of a value >= 0 as a u32 (relaxed, .gpu scope).
      {Op::red_max, "§9.7.13.6", 10, true, true, {.types = {T::u32}, .spaces = {Space::global}}},
      {Op::barrier_sync, "§9.7.13.1", 60, true, true, {}},
      {Op::setmaxnreg, "§9.7.19.5", 80, true, true, {.types = {T::u32}, .inc = {true, false}}},
      // f32 arithmetic (§9.7.3), what math() spells: IEEE round to nearest even (.rn) where the
      // instruction rounds, exact min/max/neg/abs, and the approximate instructions, no .ftz.
      {Op::add, "§9.7.3.3", 20, true, true, {.types = {T::f32}, .round = Round::rn}},
      {Op::sub, "§9.7.3.4", 20, true, true, {.types = {T::f32}, .round = Round::rn}},
      {Op::mul, "§9.7.3.5", 20, true, true, {.types = {T::f32}, .round = Round::rn}},
      {Op::fma, "§9.7.3.6", 20, true, true, {.types = {T::f32}, .round = Round::rn}},
      {Op::min, "§9.7.3.11", 10, true, true, {.types = {T::f32}}},
      {Op::max, "§9.7.3.12", 10, true, true, {.types = {T::f32}}},
      {Op::neg, "§9.7.3.10", 10, true, true, {.types = {T::f32}}},
      {Op::abs, "§9.7.3.9", 10, true, true, {.types = {T::f32}}},
      {Op::ex2, "§9.7.3.21", 14, true, true, {.types = {T::f32}, .round = Round::approx}},
      {Op::lg2, "§9.7.3.20", 14, true, true, {.types = {T::f32}, .round = Round::approx}},
      {Op::tanh, "§9.7.3.22", 70, true, true, {.types = {T::f32}, .round = Round::approx}},
      {Op::rsqrt, "§9.7.3.16", 14, true, true, {.types = {T::f32}, .round = Round::approx}},
      {Op::rcp, "§9.7.3.13", 14, true, true, {.types = {T::f32}, .round = Round::approx}},
      {Op::rcp, "§9.7.3.13", 20, true, true, {.types = {T::f32}, .round = Round::rn}},
      {Op::sqrt, "§9.7.3.15", 14, true, true, {.types = {T::f32}, .round = Round::approx}},
      {Op::sqrt, "§9.7.3.15", 20, true, true, {.types = {T::f32}, .round = Round::rn}},
      // Packed half-precision arithmetic (§9.7.4), what math() spells for f16/bf16 sets: each half
      // on its own, .rn where the instruction rounds, no .ftz but where bf16x2's ex2 has only the
      // .ftz form. .bf16x2 add, sub, mul, tanh and ex2 are PTX ISA 7.8 and sm_90 (the rows claim
      // both types at 7.8); fma, min, max, neg, abs PTX 7.0 (bf16x2: sm_80).
      {Op::add, "§9.7.4.1", 78, true, true, {.types = {T::f16x2, T::bf16x2}, .round = Round::rn}},
      {Op::sub, "§9.7.4.2", 78, true, true, {.types = {T::f16x2, T::bf16x2}, .round = Round::rn}},
      {Op::mul, "§9.7.4.3", 78, true, true, {.types = {T::f16x2, T::bf16x2}, .round = Round::rn}},
      {Op::fma, "§9.7.4.4", 70, true, true, {.types = {T::f16x2, T::bf16x2}, .round = Round::rn}},
      {Op::neg, "§9.7.4.5", 70, true, true, {.types = {T::f16x2, T::bf16x2}}},
      {Op::abs, "§9.7.4.6", 70, true, true, {.types = {T::f16x2, T::bf16x2}}},
      {Op::min, "§9.7.4.7", 70, true, true, {.types = {T::f16x2, T::bf16x2}}},
      {Op::max, "§9.7.4.8", 70, true, true, {.types = {T::f16x2, T::bf16x2}}},
      {Op::tanh, "§9.7.4.9", 78, true, true, {.types = {T::f16x2, T::bf16x2}, .round = Round::approx}},
      {Op::ex2, "§9.7.4.10", 70, true, true, {.types = {T::f16x2}, .round = Round::approx}},
      {Op::ex2, "§9.7.4.10", 78, true, true, {.types = {T::bf16x2}, .round = Round::approx_ftz}},
  };
  return rows;
}

std::vector<Scalar> variants(const AluRow& row) {
  const Axes& a = row.axes;
  std::vector<Scalar> out;
  for (Ty t : a.types)
    for (Ty f : a.from)
      for (Space sp : a.spaces)
        for (int vec : a.vecs)
          for (Cmp c : a.cmps)
            for (BoolOp b : a.combines)
              for (bool to : a.to)
                for (bool inc : a.inc)
                  out.push_back({.op = row.op, .type = t, .from = f, .space = sp, .vec = vec, .cmp = c, .combine = b,
                                 .round = a.round, .to = to, .inc = inc});
  return out;
}

bool accepts(const AluRow& row, const isa::TargetInfo& t) {
  return (t.tcgen05 ? row.tcgen05_targets : row.sm90) && t.ptx_major * 10 + t.ptx_minor >= row.min_ptx;
}

}  // namespace ptxgen::emit::spell
