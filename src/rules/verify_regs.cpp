// The ops that define and use register sets, followed in program order: a tmem_load (tcgen05.ld)
// or a wgmma op defines one, a tmem_store (tcgen05.st) or a store reads the latest definition of
// its set. A tcgen05.ld/st needs warps that reach the view's lanes, a shape and .num that cover its
// rows and columns and, with .pack::16b/.unpack::16b, unpacked 16-bit elements (§9.7.16.8); a
// tmem_store moves what each thread holds from the tcgen05.ld in its own type (or f32 converted to
// f16/bf16); a store writes the registers' type (or a conversion a store makes) inside the global
// tensor, a pair's two CTAs apart. The planner decides the instructions (the narrow calls
// tmem_lanes, tmem_store, store_converts and wgmma_accumulators, plan.hpp); this verifier words
// why there are none. An op's first problem is its only one, as it stops there; the users of a set
// whose definition was refused are not judged on it (ORDER-UNWRITTEN says what a set lacks).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <tuple>

#include "verify.hpp"

#include "ptxgen/diag.hpp"

namespace ptxgen::rules::verify {

namespace {

std::string s(int64_t v) { return std::to_string(v); }
std::string dt(isa::DType t) { return std::string(isa::name(t)); }

// LD-PACK, LD-WARPS, LD-SHAPE, LD-NUM, LD-REGS: why no tcgen05.ld (tmem_load) or tcgen05.st
// (tmem_store) instructions move view `v` (plan::tmem_lanes).
void no_lanes(Ctx& c, const ir::Op& op, const ir::ResolvedView& v, const plan::TmemLanes& l) {
  using L = plan::TmemLanes;
  const ir::TmemLoad* ld = op.as<ir::TmemLoad>();
  const ir::TmemStore* st = op.as<ir::TmemStore>();
  const ir::Fill* fill = op.as<ir::Fill>();  // judged as the tcgen05.ld whose registers it gives
  const bool load = ld != nullptr || fill != nullptr;
  const ir::TmemAccess& o = ld ? ld->access : fill ? fill->access : st->access;
  const ir::Ref& regs = ld ? ld->regs : fill ? fill->regs : st->regs;
  const ir::Ref& view = ld ? ld->src : fill ? fill->like : st->dst;
  const std::string ins = load ? "tcgen05.ld" : "tcgen05.st";
  const isa::LdShapeInfo& si = isa::info(o.shape.value_or(isa::LdShape::s32x32b));
  const int nwarps = c.k.threads / 32;
  const std::string wp = o.warps.empty() ? op.ptr : ptr_join(o.warps_ptr, l.index);
  const uint32_t qi = static_cast<uint32_t>(l.warp % 4);
  switch (l.miss) {
    case L::fits:
    case L::threads: return;  // PROGRAM-THREADS is the root: no warp count to quote
    case L::pack:
      c.problem("LD-PACK", o.pack_ptr,
                std::string(load ? ".pack::16b" : ".unpack::16b") +
                    " moves two 16-bit elements of adjacent unpacked columns through one register (§9.7.16.8.2); the view is " +
                    dt(v.dtype) + " packed " + s(v.packing) + " per column",
                {"drop \"" + std::string(load ? "pack" : "unpack") + "\" (a packed view already holds two 16-bit elements per column)"});
      return;
    case L::warp_absent:
      c.problem("LD-WARPS", wp, "warp " + s(l.warp) + " does not exist: the kernel has " + s(c.k.threads) + " threads (" + s(nwarps) + " warps)",
                {"list warps below " + s(nwarps) + ", or raise \"threads\""});
      return;
    case L::warp_quarter:
      c.problem("LD-WARPS", wp,
                "warp " + s(l.warp) + " reaches lanes " + s(32 * qi) + "-" + s(32 * qi + 31) + " only (§9.7.16.8.1); \"" +
                    view.name + "\" has lanes " + s(v.lane) + "-" + s(v.lane + v.lanes - 1),
                {"list the warps w whose w % 4 selects the view's lanes"});
      return;
    case L::row_twice:
      c.problem("LD-WARPS", wp, "row " + s(l.row) + " of the view would be moved by two of the listed warps",
                {"list one warp per 32-lane quarter (and per replica of a replicated view)"});
      return;
    case L::rows_unreached: {
      std::string miss;
      for (const auto& [a, e] : l.unreached) miss += (miss.empty() ? "" : ", ") + s(a) + "-" + s(e - 1);
      c.problem("LD-WARPS", o.warps_ptr,
                "the listed warps cannot reach all rows of the view" +
                    (miss.empty() ? std::string() : ": lanes " + miss + " are reachable only by warps w with the matching w % 4"),
                {"add a warp for each 32-lane quarter the view uses (warp w reaches lanes 32*(w%4) to 32*(w%4)+31)"});
      return;
    }
    case L::shape_lanes:
      c.problem("LD-SHAPE", o.shape ? o.shape_ptr : op.ptr,
                ins + "." + std::string(si.name) + " accesses " + s(si.lanes) + " lanes at a time; warp " + s(l.warp) +
                    " holds lanes " + s(l.lane0) + "-" + s(l.lane1 - 1) + " of the view",
                {si.lanes == 32 ? "use a 16-lane shape (16x64b, 16x128b, 16x256b, 16x32bx2) for views of 16-lane pieces"
                                : "slice the view's lanes to multiples of 16"});
      return;
    case L::shape_halves:
      c.problem("LD-SHAPE", o.shape_ptr, "16x32bx2 moves two halves of the columns (taddr and taddr + immHalfSplitoff); " +
                                             s(l.columns) + " columns do not halve");
      return;
    case L::num_illegal:
      c.problem("LD-NUM", o.num_ptr,
                ".num=.x" + s(*o.num) + " is not legal for ." + std::string(si.name) +
                    ": .num is .x1, .x2, ... .x128 with at most 128 registers (Table 49; " + s(si.regs_per_num) +
                    " per unit for this shape)");
      return;
    case L::num_columns: {
      const bool x2 = o.shape == isa::LdShape::s16x32bx2;
      c.problem("LD-NUM", o.num_ptr,
                "." + std::string(si.name) + ".x" + s(*o.num) + " moves " + s(l.columns) + " columns per lane; the view's rows span " +
                    s(l.span) + (x2 ? " columns per half" : " columns"),
                {"use a .num that divides the columns, or omit it"});
      return;
    }
    case L::no_num:
      c.problem("LD-SHAPE", o.shape ? o.shape_ptr : op.ptr,
                "." + std::string(si.name) + " moves " + s(l.columns) + " columns per lane at least; the view's rows span " + s(l.span));
      return;
    case L::too_many_regs:
      c.problem("LD-REGS", regs.ptr,
                "the " + std::string(load ? "load" : "store") + " needs " + s(l.def.regs) +
                    " registers per thread; ptxgen keeps a register set at 256 or fewer",
                {"split the view into column slices and move them one at a time"});
      return;
  }
}

// ST-REGS, ST-DTYPE (and the LD-* rules of its tcgen05.st): why a tmem_store of `src` into `v` has
// no instructions (plan::tmem_store).
void no_store(Ctx& c, const ir::Op& op, const plan::RegDef& src, const ir::ResolvedView& v, const plan::TmemStore& t) {
  using T = plan::TmemStore;
  const ir::TmemStore& o = *op.as<ir::TmemStore>();
  switch (t.miss) {
    case T::fits: return;
    case T::shape_differs:
      c.problem("ST-REGS", o.dst.ptr,
                "the registers \"" + src.name + "\" hold " + s(src.rows) + " rows of " + s(src.row_elements) + " elements; \"" +
                    o.dst.name + "\" has " + s(v.rows) + " rows of " + s(v.row_elements()));
      return;
    case T::dtype:
      c.problem("ST-DTYPE", o.dst.ptr,
                "tmem_store converts f32 to f16 or bf16 (cvt.rn) and otherwise stores the registers' own type; the registers are " +
                    dt(src.dtype) + ", the view " + dt(v.dtype));
      return;
    case T::no_lanes: return no_lanes(c, op, v, t.lanes);
    case T::not_held:
    case T::held_apart:
      c.problem("ST-REGS", o.regs.ptr,
                "thread " + s(t.thread) + " of warp " + s(t.warp) + " would store row " + s(t.row) + ", element " + s(t.elem) +
                    ", which " + (t.miss == T::not_held ? "it does not hold" : "it holds in another register than threads before it") +
                    ": tcgen05.st must move the elements each thread holds from the tcgen05.ld",
                {"store with the shape, .num and warps of the tmem_load that filled the registers"});
      return;
    case T::narrow_moved:
      c.problem("ST-REGS", o.regs.ptr,
                std::to_string(t.lanes.def.elem_bits) + "-bit elements are stored from the registers and positions the "
                "tcgen05.ld put them in",
                {"store with the shape and .num of the tmem_load"});
      return;
  }
}

// STORE-DTYPE, STORE-BOUNDS, PAIR-STORE-OVERLAP and the operands' names; false if refused.
// A program's quantize (docs/spec.md, "Arithmetic": "Block quantization"): the tensor `of` its
// result is stored to holds the format's elements in whole blocks of a row (QUANT-OF), and `dst`
// is the factors' type in the 128x4 layout, lines of 16 bytes: ceil(rows / 128) ceil(cols / 4
// vec) 32 of them (QUANT-FACTORS), at the spec's sizes. The gemm template declares its own.
bool quantize_tensors(Ctx& c, const ir::Op& op, const ir::Global& of, const ir::Global& dst) {
  const ir::Quantize& o = *op.as<ir::Quantize>();
  const bool e2m1 = o.elem == isa::DType::e2m1;
  const std::string fmt = o.scale == isa::DType::ue4m3 ? "nvfp4" : e2m1 ? "mxfp4" : "mxfp8";
  const bool elem_ok = o.scale == isa::DType::ue4m3 || e2m1 ? of.dtype == isa::DType::e2m1 && of.format == isa::SubByte::packed
                                                           : of.dtype == isa::DType::e4m3 || of.dtype == isa::DType::e5m2;
  if (!elem_ok) {
    c.problem("QUANT-OF", o.of.ptr,
              "\"" + fmt + "\" stores " + (fmt == "mxfp8" ? std::string("e4m3 or e5m2") : std::string("e2m1 (\"format\": \"packed\", two a byte)")) +
                  " elements; \"" + of.name + "\" is " + dt(of.dtype) + (of.dtype == isa::DType::e2m1 ? " padded to a byte" : ""),
              {fmt == "mxfp8" ? "declare \"" + of.name + "\" with \"dtype\": \"e4m3\" (or e5m2)"
                              : "declare \"" + of.name + "\" with \"dtype\": \"e2m1\", \"format\": \"packed\""});
    return false;
  }
  if (of.cols % o.vec) {
    c.problem("QUANT-OF", of.ptr + "/shape",
              "\"" + of.name + "\" has " + s(of.cols) + " columns, not a multiple of " + s(o.vec) + ": \"" + fmt + "\" gives every " +
                  s(o.vec) + " consecutive columns of a row one factor, and the 128x4 layout holds whole blocks only",
              {"use a number of columns that is a multiple of " + s(o.vec)});
    return false;
  }
  const int64_t lines = (of.rows + 127) / 128 * ((of.cols + 4 * o.vec - 1) / (4 * o.vec)) * 32;
  if (dst.dtype != o.scale || dst.cols != 16 || dst.rows < lines) {
    c.problem("QUANT-FACTORS", o.dst.ptr,
              "\"" + fmt + "\" writes one " + dt(o.scale) + " factor per " + s(o.vec) + " columns of \"" + of.name + "\" (" + s(of.rows) + " x " +
                  s(of.cols) + ") in the 128x4 layout: " + s(lines) + " lines of 16 bytes; \"" + dst.name + "\" is " + s(dst.rows) + " x " +
                  s(dst.cols) + " " + dt(dst.dtype),
              {"declare \"" + dst.name + "\" as {\"dtype\": \"" + dt(o.scale) + "\", \"shape\": [" + s(lines) + ", 16]}"});
    return false;
  }
  return true;
}

bool store(Ctx& c, const ir::Op& op, const plan::RegDef& src) {
  const ir::Store& o = *op.as<ir::Store>();
  const ir::Global* g = c.global(o.dst, "store destination");
  if (!g) return false;
  if (!plan::store_converts(src.dtype, g->dtype, o.clip)) {
    c.problem("STORE-DTYPE", o.dst.ptr,
              "store writes the registers' " + dt(src.dtype) + " elements (or converts f32 to f16, bf16, e4m3, e5m2, packed e2m1); \"" + g->name +
                  "\" is " + dt(g->dtype) + (isa::value_bits(g->dtype) < 8 ? ", which has no per-element store" : ""));
    return false;
  }
  if (!o.tma && o.via) {
    c.problem("STORE-TMA", o.via.ptr, "\"stage\" names the staging tile of a store by TMA; this store is direct (each thread's st.global)",
              {"add \"via\": \"tma\", or drop \"stage\""});
    return false;
  }
  if (o.tma && !tma_store(c, op, src, *g)) return false;  // verify_store.cpp
  // e2m1 two a byte: a pair of columns is one byte, so the pairs start at even columns of rows an
  // even number of elements apart (cvt.rn.satfinite.e2m1x2.f32 converts the pair).
  if (g->dtype == isa::DType::e2m1) {
    const ir::Affine& c1 = o.pos.at[1];
    if (g->cols % 2 || c1.base % 2 || c1.m_tile % 2 || c1.n_tile % 2 || c1.k_block % 2 || c1.rank % 2 || c1.size_mul % 2) {
      c.problem("STORE-DTYPE", g->cols % 2 ? g->ptr + "/shape" : o.pos.at_ptr,
                "\"" + g->name + "\" holds e2m1 elements two a byte, which the store converts a pair of adjacent columns at a time: " +
                    (g->cols % 2 ? "its " + s(g->cols) + " columns are odd" : std::string("the store starts at an odd column")),
                {"store e2m1 at even columns of a tensor of an even number of columns"});
      return false;
    }
  }
  // A clipped store tests each element against the run-time extents, a pair of adjacent columns
  // at a time: the emitter does that for registers of one element each, moved by .32x32b or
  // .16x256b (every accumulator epilogue), and for wgmma's fragments.
  if (o.clip && !src.wgmma) {
    bool fits = src.elems_per_reg == 1;
    for (const auto& f : src.frags)
      fits = fits && !f.pack && (f.shape == isa::LdShape::s32x32b || f.shape == isa::LdShape::s16x256b);
    if (!fits) {
      c.problem("STORE-CLIP", o.regs.ptr,
                "\"" + g->name + "\" " +
                    (g->rows_param.empty() && g->cols_param.empty()
                         ? "is " + dt(g->dtype) + ", whose elements the store converts and writes in pairs of adjacent columns (cvt.rn.satfinite, §9.7.9.21); "
                         : "has extents the kernel takes at run time, so the store tests each element against them; ") +
                    "ptxgen does that for registers of one element each moved by .32x32b or .16x256b, and \"" + src.name + "\" " +
                    (src.elems_per_reg != 1 ? "packs " + s(src.elems_per_reg) + " elements into each register" : "was loaded with another shape"),
                {"load an unpacked view (f32, or 16-bit elements one per column) with shape 32x32b or 16x256b",
                 "or give \"" + g->name + "\" fixed extents"});
      return false;
    }
  }
  const int ctas = c.k.cta_group;
  // A clipped store lies where its CTA's tile does; elements at or past the run-time extents are
  // not written. Otherwise the registers must fit the (static) tensor.
  // An 8- or 4-bit float tensor is stored clipped (pairs of elements) whatever its extents: where
  // they are fixed, the registers must fit them as for any store.
  const bool runtime = o.clip && (!g->rows_param.empty() || !g->cols_param.empty());
  for (int r = 0; r < ctas && !runtime; ++r) {
    const int64_t r0 = o.pos.at[0].base + r * o.pos.at[0].rank, c0 = o.pos.at[1].base + r * o.pos.at[1].rank;
    if (r0 + src.rows > g->rows || c0 + src.row_elements > g->cols) {
      c.problem("STORE-BOUNDS", r ? o.pos.per_cta_ptr : o.pos.at_ptr,
                "the registers hold " + s(src.rows) + " x " + s(src.row_elements) + " elements; stored at (" + s(r0) + ", " +
                    s(c0) + ")" + (ctas > 1 ? " by CTA " + s(r) : "") + " they do not fit \"" + g->name + "\" (" +
                    s(g->rows) + " x " + s(g->cols) + ")");
      return false;
    }
  }
  // Both CTAs of a pair run the store: their elements must not overlap (the values differ).
  if (ctas > 1 && !runtime && o.pos.at[0].rank < src.rows && o.pos.at[1].rank < src.row_elements) {
    c.problem("PAIR-STORE-OVERLAP", o.pos.has_per_cta ? o.pos.per_cta_ptr : op.ptr,
              "both CTAs of the pair store " + s(src.rows) + " x " + s(src.row_elements) + " elements, CTA 1 at (" +
                  s(o.pos.at[0].rank) + ", " + s(o.pos.at[1].rank) + ") from CTA 0's start: the two regions overlap, and which "
                  "CTA's values land there is a race",
              {"set \"per_cta\": [" + s(src.rows) + ", 0] (CTA 1 below CTA 0) or [0, " + s(src.row_elements) +
               "] (beside it)"});
    return false;
  }
  // By TMA (the lowering's epilogue): through a staging tile.
  return !o.tma || c.tile(o.via, "store staging tile");
}

// A number as the spec may have written it (9 significant digits: any f32 exactly).
std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// An f32 instruction as the PTX ISA names it, with its section and, if approximate, its
// documented error: "ex2.approx.f32 (§9.7.3.21: 2 ulp from the correctly rounded result)".
std::string instruction(MathFn fn, bool approx) {
  const MathFnInfo& f = info(fn);
  const bool rn = fn == MathFn::add || fn == MathFn::sub || fn == MathFn::mul || fn == MathFn::fma || fn == MathFn::rcp ||
                  fn == MathFn::sqrt;
  return std::string(f.ptx) + (approx ? ".approx" : rn ? ".rn" : "") + ".f32 (" + std::string(f.isa) +
         (approx ? ": " + std::string(f.bound) : "") + ")";
}

// Registers of two 16-bit floats each that the packed functions take (§9.7.4): a convert's, or a
// tmem_load's with .pack::16b or of a packing-2 view; not f16 wgmma accumulators.
bool is_packed(const plan::RegDef& d) {
  return !d.wgmma && d.elems_per_reg == 2 && d.elem_bits == 16 && (d.dtype == isa::DType::bf16 || d.dtype == isa::DType::f16);
}
std::string kind(const plan::RegDef& d) {
  return is_packed(d) ? "packed " + dt(d.dtype) + "x2 pairs" : d.elems_per_reg == 1 ? dt(d.dtype) + " elements" : s(d.elems_per_reg) + " " + dt(d.dtype) + " elements a register";
}

// MATH-APPROX of an activation op (docs/spec.md, "Activations"): "approx" exactly where its
// composition has approximate instructions. Reported once, at the op's first step; every step of
// a refused op is refused. False if refused.
bool activation_approx(Ctx& c, const ir::Op& op, const ir::Math& o) {
  const ActivationInfo& a = info(o.of->act);
  if (o.of->approx == a.approx) return true;
  if (o.of->step != 0) return false;
  // A gated activation names itself and the gate's activation: "swiglu" (silu(gate) * up: ...).
  const std::string act = !o.of->gated ? "\"" + std::string(a.name) + "\" (" + std::string(a.formula) + ")"
                                       : "\"" + std::string(o.of->name()) + "\" (" + std::string(a.name) + "(gate) * up, " +
                                             std::string(a.name) + " = " + std::string(a.formula) + ")";
  std::vector<std::string> ins;  // its distinct instructions, in the composition's order
  for (const ComposeStep& st : a.steps) {
    if (st.approx != a.approx) continue;
    const std::string x = instruction(st.fn, st.approx);
    if (std::find(ins.begin(), ins.end(), x) == ins.end()) ins.push_back(x);
  }
  std::string list;
  for (size_t i = 0; i < ins.size(); ++i) list += (i ? i + 1 == ins.size() ? " and " : ", " : "") + ins[i];
  if (a.approx)
    c.problem("MATH-APPROX", op.ptr + "/op",
              act + " is computed with approximate instructions: " + list,
              {"add \"approx\": true to accept their documented error (docs/spec.md, \"Activations\", bounds the activation's)"});
  else
    c.problem("MATH-APPROX", o.approx_ptr, act + " has no approximate instruction: it is " + list + ", exact",
              {"drop \"approx\""});
  return false;
}

// MATH-APPROX, MATH-DTYPE, MATH-OPERANDS: the registers an elementwise op defines (its first
// operand's elements, in the same registers), or none where it is refused. `def` finds the latest
// accepted definition of a set (none: ORDER-UNWRITTEN, or its definition was refused). A step of
// an activation is judged under the activation's name.
template <class Find>
std::optional<plan::RegDef> math(Ctx& c, const ir::Op& op, Find def) {
  const ir::Math& o = *op.as<ir::Math>();
  const MathFnInfo& f = info(o.fn);
  const std::string fn(o.of ? o.of->name() : f.name);
  if (o.of) {
    if (!activation_approx(c, op, o)) return std::nullopt;
  } else if (!o.approx && !f.exact) {
    // Of packed pairs (a register operand a), the packed instruction (§9.7.4.9-10), else the f32 one.
    const plan::RegDef* pa = !o.value[0] && o.a ? def(o.a.name) : nullptr;
    const PackedInfo px = packed_info(o.fn);
    const bool bf = pa && pa->dtype == isa::DType::bf16;
    const std::string ins = pa && is_packed(*pa) && px.has
                                ? std::string(f.ptx) + ".approx" + (bf && o.fn == MathFn::exp2 ? ".ftz" : "") + "." + dt(pa->dtype) + "x2 (" +
                                      std::string(px.isa) + "), an approximate instruction (" + std::string(bf ? px.bound_bf16 : px.bound_f16) +
                                      "); the PTX ISA has no exact packed form of it"
                                : std::string(f.ptx) + ".approx.f32 (" + std::string(f.isa) + "), an approximate instruction (" +
                                      std::string(f.bound) + "); the PTX ISA has no exact f32 form of it";
    c.problem("MATH-APPROX", op.ptr + "/op", "\"" + fn + "\" is " + ins, {"add \"approx\": true to accept the instruction's documented error"});
    return std::nullopt;
  } else if (o.approx && !f.approx) {
    c.problem("MATH-APPROX", o.approx_ptr,
              "\"" + fn + "\" has no approximate instruction: " + std::string(f.ptx) + ".f32 (" + std::string(f.isa) + ") is exact (" +
                  (o.fn == MathFn::add || o.fn == MathFn::sub || o.fn == MathFn::mul || o.fn == MathFn::fma
                       ? "rounded to nearest even, .rn"
                       : "no rounding") +
                  ")",
              {"drop \"approx\""});
    return std::nullopt;
  }
  if (o.fn == MathFn::select && o.value[0]) {
    // A constant condition chooses one operand for every element: nothing to select.
    c.problem("MATH-OPERANDS", o.a.ptr,
              "\"select\" picks b where its condition a is nonzero and c elsewhere; a = " + num(*o.value[0]) +
                  " is a constant, so every element would be " + (*o.value[0] != 0 ? "b" : "c"),
              {"name a register set as a (a comparison's result, e.g. {\"op\": \"gt\", ...})",
               std::string("or use ") + (*o.value[0] != 0 ? "b" : "c") + " itself"});
    return std::nullopt;
  }
  // The type it computes in: the first register operand's, f32 or packed 16-bit pairs (§9.7.4;
  // convert: f32 in, packed out). Judged before the constants, whose range is that type's.
  const std::array<const ir::Ref*, 3> in = {&o.a, &o.b, &o.c};
  const plan::RegDef* typed = nullptr;
  for (size_t i = 0; i < in.size() && !typed; ++i)
    if (!o.value[i] && *in[i] && !(i == 2 && o.c_from_iteration_1)) {
      typed = def(in[i]->name);
      if (!typed) return std::nullopt;  // ORDER-UNWRITTEN, or its definition was refused
    }
  const bool packed = typed && o.fn != MathFn::convert && is_packed(*typed);
  if (packed && (o.of || !packed_info(o.fn).has)) {
    const std::string x2 = dt(typed->dtype) + "x2";
    c.problem("MATH-PACKED-FN", op.ptr + "/op",
              "\"" + fn + "\" has no packed " + x2 + " instruction (PTX ISA 9.1 §9.7.4 has add, sub, mul, fma, min, max, neg, abs, "
              "ex2 and tanh of pairs), and its operand \"" + typed->name + "\" holds packed " + x2 + " pairs",
              {"compute \"" + fn + "\" on the f32 set before its \"convert\" (" +
                   (o.of ? std::string("the activation's f32 instructions") : instruction(o.fn, f.approx && !f.exact)) + ")",
               o.fn == MathFn::log2 || o.fn == MathFn::rcp || o.fn == MathFn::rsqrt || o.fn == MathFn::sqrt || o.of
                   ? "then convert its result to " + x2
                   : "or build it from the packed functions (a mask: max, min and mul of pairs)"});
    return std::nullopt;
  }
  const plan::RegDef* first = nullptr;
  const ir::Ref* first_ref = nullptr;
  for (size_t i = 0; i < in.size(); ++i) {
    const ir::Ref* r = in[i];
    if (const auto& v = o.value[i]; v && packed) {
      // A packed constant is the 16-bit float nearest the number, in both halves.
      if (isa::half_bits_rn(typed->dtype, *v) % 0x8000 == isa::half_bits_rn(typed->dtype, INFINITY)) {
        c.problem("MATH-DTYPE", r->ptr,
                  "\"" + fn + "\" computes in packed " + dt(typed->dtype) + "x2 pairs; the constant " + num(*v) + " is beyond " +
                      dt(typed->dtype) + "'s largest finite value (" + (typed->dtype == isa::DType::f16 ? "65504" : "3.3895314e38") + ")",
                  {"use a constant within " + dt(typed->dtype) + "'s range, or compute in f32 before the convert"});
        return std::nullopt;
      }
      continue;
    }
    if (const auto& v = o.value[i]) {
      // A constant is written as the f32 nearest it (an immediate 0fXXXXXXXX, §4.5.1): one that
      // rounds to infinity is no f32.
      if (!std::isfinite(static_cast<float>(*v))) {
        c.problem("MATH-DTYPE", r->ptr,
                  "\"" + fn + "\" computes in f32; the constant " + num(*v) + " is beyond f32's largest finite value (3.4028235e38)",
                  {"use a constant of magnitude at most 3.4028235e38"});
        return std::nullopt;
      }
      continue;
    }
    if (!*r || (i == 2 && o.c_from_iteration_1)) continue;  // c_from_iteration_1: c is the result, carried by the loop
    const plan::RegDef* d = def(r->name);
    if (!d) return std::nullopt;  // ORDER-UNWRITTEN, or its definition was refused
    if (packed || (is_packed(*d) && o.fn != MathFn::convert)) {
      // Packed pairs and f32 do not mix, nor f16 pairs with bf16 pairs: one instruction type.
      if (!is_packed(*d) || !packed || d->dtype != typed->dtype) {
        c.problem("MATH-PACKED", r->ptr,
                  "\"" + fn + "\" computes in one type: \"" + typed->name + "\" holds " + kind(*typed) + ", \"" + r->name + "\" " + kind(*d),
                  {"convert the f32 operand with {\"op\": \"convert\", \"dtype\": \"" + dt(is_packed(*d) ? d->dtype : typed->dtype) +
                       "x2\"} first, or compute in f32 before converting"});
        return std::nullopt;
      }
    } else if (d->dtype != isa::DType::f32 || d->elems_per_reg != 1) {
      c.problem("MATH-DTYPE", r->ptr,
                "\"" + fn + "\" computes on f32 registers, one element each; \"" + r->name + "\" holds " +
                    (d->elems_per_reg != 1 ? s(d->elems_per_reg) + " packed " + dt(d->dtype) + " elements per register" +
                                                 (d->wgmma ? " (f16 wgmma accumulators)" : " (.pack::16b)")
                                           : dt(d->dtype) + " elements"),
                {d->wgmma ? "accumulate in f32" : "tmem_load an f32 view without \"pack\""});
      return std::nullopt;
    }
    if (!first) {
      first = d;
      first_ref = r;
      continue;
    }
    if (!plan::same_elements(*first, *d)) {
      c.problem("MATH-OPERANDS", r->ptr,
                "\"" + fn + "\" combines register j of each thread with register j of the other operands, which must hold the same "
                "element: \"" + first_ref->name + "\" holds " + s(first->rows) + " rows of " + s(first->row_elements) + " elements in " +
                    s(first->regs) + " registers per thread, \"" + r->name + "\" " + s(d->rows) + " rows of " + s(d->row_elements) +
                    " in " + s(d->regs) + (first->rows == d->rows && first->row_elements == d->row_elements && first->regs == d->regs
                                               ? ", from tcgen05.ld instructions of another shape, .num or warps"
                                               : ""),
                {"tmem_load the operands from views of one shape with the same shape, .num and warps"});
      return std::nullopt;
    }
  }
  if (!first) {
    c.problem("MATH-OPERANDS", o.a.ptr,
              "every operand of \"" + fn + "\" is a constant: the result takes its elements, and its registers, from a register set",
              {"name a register set as one operand"});
    return std::nullopt;
  }
  if (o.fn == MathFn::convert) {
    // Two neighbouring columns of a row into one register: .32x32b fragments (plan::packed_regs).
    const std::optional<plan::RegDef> p = plan::packed_regs(*first, o.convert_to);
    if (!p) {
      std::string shape = first->wgmma ? "wgmma accumulators" : "";
      for (const plan::LdInstr& l : first->frags)
        if (shape.empty() && (l.shape != isa::LdShape::s32x32b || l.num % 2 != 0))
          shape = "tcgen05.ld ." + std::string(isa::info(l.shape).name) + ".x" + s(l.num) + " fragments";
      c.problem("MATH-PACKED", o.a.ptr,
                "\"convert\" puts elements j and j + 1 of a thread's row (its registers 2i and 2i + 1) in one register; \"" +
                    first_ref->name + "\" holds " + shape + ", whose neighbouring registers are not both one row's neighbouring columns",
                {"tmem_load the f32 registers with \"shape\": \"32x32b\" and an even \"num\""});
      return std::nullopt;
    }
    plan::RegDef out = *p;
    out.name = o.regs.name;
    return out;
  }
  plan::RegDef out = *first;
  out.name = o.regs.name;
  return out;
}

// READ-DTYPE, READ-SHAPE, READ-BOUNDS: the registers a read defines (`like`'s elements, as f32),
// or none where it is refused.
std::optional<plan::RegDef> read(Ctx& c, const ir::Op& op, const plan::RegDef& like) {
  const ir::Read& o = *op.as<ir::Read>();
  const ir::Global* g = c.global(o.src, "read source");
  if (!g) return std::nullopt;
  switch (plan::read_miss(like, *g)) {
    case plan::ReadMiss::fits: break;
    case plan::ReadMiss::like_dtype:
      c.problem("READ-DTYPE", o.like.ptr,
                "a read gives its registers f32 values where \"" + like.name + "\" holds its elements; \"" + like.name + "\" holds " +
                    (like.elems_per_reg != 1 ? s(like.elems_per_reg) + " packed " + dt(like.dtype) + " elements per register"
                                             : dt(like.dtype) + " elements") +
                    ", which no elementwise function takes",
                {"shape the read like a set of f32 registers (a tmem_load of an f32 view without \"pack\")"});
      return std::nullopt;
    case plan::ReadMiss::global_dtype:
      c.problem("READ-DTYPE", o.src.ptr,
                "a read converts f32, bf16 or f16 elements to f32 (exactly); \"" + g->name + "\" is " + dt(g->dtype),
                {"give \"" + g->name + "\" the dtype f32, bf16 or f16"});
      return std::nullopt;
    case plan::ReadMiss::like_shape:
      c.problem("READ-SHAPE", o.like.ptr,
                "a read computes where each thread's elements lie for the fragments of tcgen05.ld .32x32b and .16x256b (and "
                "wgmma accumulators); \"" + like.name + "\" was loaded with another shape",
                {"tmem_load \"" + like.name + "\" with \"shape\": \"32x32b\" or \"16x256b\""});
      return std::nullopt;
  }
  // Along a dimension it does not broadcast, a tensor of static extents must hold every element
  // read at a constant position (at run time, elements past the extents read as 0).
  const bool row_bc = g->rows == 1 && g->rows_param.empty(), col_bc = g->cols == 1 && g->cols_param.empty();
  for (int r = 0; r < c.k.cta_group; ++r) {
    const int64_t r0 = o.pos.at[0].base + r * o.pos.at[0].rank, c0 = o.pos.at[1].base + r * o.pos.at[1].rank;
    const bool rows_out = !row_bc && g->rows_param.empty() && o.pos.at[0].constant() && r0 + like.rows > g->rows;
    const bool cols_out = !col_bc && g->cols_param.empty() && o.pos.at[1].constant() && c0 + like.row_elements > g->cols;
    if (rows_out || cols_out) {
      c.problem("READ-BOUNDS", r ? o.pos.per_cta_ptr : o.pos.at_ptr.empty() ? op.ptr : o.pos.at_ptr,
                "\"" + like.name + "\" holds " + s(like.rows) + " x " + s(like.row_elements) + " elements; read at (" + s(r0) + ", " +
                    s(c0) + ")" + (c.k.cta_group > 1 ? " by CTA " + s(r) : "") + " they reach past \"" + g->name + "\" (" +
                    s(g->rows) + " x " + s(g->cols) + ")",
                {"move \"at\"; a tensor of 1 row (or 1 column) gives every row (column) the same elements"});
      return std::nullopt;
    }
  }
  plan::RegDef out = like;
  out.name = o.regs.name;
  return out;
}

}  // namespace

void registers(Ctx& c) {
  struct Def {
    plan::RegDef regs;
    int id = 0;  // which definition: a tmem_store's verdict depends on it, not on the set's name
  };
  std::map<std::string, Def> defs;         // the latest accepted definition of each register set
  std::map<std::string, plan::Held> held;  // where its elements are, once a tmem_store asked
  // A tmem_store's verdict depends only on the definition it reads, its view and its shape, .num,
  // packing and warps: a long list of the same tmem_store (which the planner refuses at the op
  // crossing OUTPUT-SIZE) is planned here once, not once per op.
  using Key = std::tuple<int, std::string, std::optional<isa::LdShape>, std::optional<int>, bool, std::vector<int>>;
  std::map<Key, plan::TmemStore> judged;
  int next_id = 0;
  // An op that defines a register set (arithmetic): its accepted definition, or none (refused).
  auto define = [&](const ir::Op& op, std::optional<plan::RegDef> d) {
    if (!d) {
      c.refused.insert(&op);
      return;
    }
    const std::string n = d->name;
    defs[n] = {std::move(*d), ++next_id};
    held.erase(n);
  };
  // A tmem_load or a fill: the registers a tcgen05.ld of `v` defines, or none (LD-*, refused).
  auto define_lanes = [&](const ir::Op& op, const auto& access, const std::string& regs, const ir::ResolvedView& v) {
    plan::TmemLanes l = plan::tmem_lanes(access, regs, v, c.k.threads);
    if (l.miss != plan::TmemLanes::fits) {
      no_lanes(c, op, v, l);
      c.refused.insert(&op);
      return;
    }
    defs[regs] = {std::move(l.def), ++next_id};
    held.erase(regs);
  };
  for (const ir::Op* op : all_ops(c.k)) {
    switch (op->kind()) {
      case ir::OpKind::tmem_load: {
        const ir::TmemLoad& o = *op->as<ir::TmemLoad>();
        const ir::ResolvedView* v = c.view(o.src, "tmem_load source");
        if (!v) {
          c.refused.insert(op);
          break;
        }
        define_lanes(*op, o.access, o.regs.name, *v);
        break;
      }
      case ir::OpKind::fill: {
        // The registers a tmem_load of `like` would define (LD-* as for it), f32 one element each
        // (MATH-DTYPE), every one the constant: an f32 (MATH-DTYPE).
        const ir::Fill& o = *op->as<ir::Fill>();
        const ir::ResolvedView* v = c.view(o.like, "fill's view");
        if (!v) {
          c.refused.insert(op);
          break;
        }
        if (!std::isfinite(static_cast<float>(o.value))) {
          c.problem("MATH-DTYPE", o.value_ptr,
                    "fill writes f32 registers; the constant " + num(o.value) + " is beyond f32's largest finite value (3.4028235e38)",
                    {"use a value of magnitude at most 3.4028235e38 (-3.4028235e38 for a running max's start)"});
          c.refused.insert(op);
          break;
        }
        if (v->dtype != isa::DType::f32 || v->packing != 1) {
          c.problem("MATH-DTYPE", o.like.ptr,
                    "fill gives the registers of an f32 view, one element each; \"" + o.like.name + "\" holds " + dt(v->dtype) +
                        " elements packed " + s(v->packing) + " per column",
                    {"name an f32 view (an accumulator, or a slice of one) as \"like\""});
          c.refused.insert(op);
          break;
        }
        define_lanes(*op, o.access, o.regs.name, *v);
        break;
      }
      case ir::OpKind::tmem_store: {
        const ir::TmemStore& o = *op->as<ir::TmemStore>();
        const auto src = defs.find(o.regs.name);
        const ir::ResolvedView* v = c.view(o.dst, "tmem_store destination");
        if (!v || src == defs.end()) {
          c.refused.insert(op);
          break;
        }
        const Key key{src->second.id, o.dst.name, o.access.shape, o.access.num, o.access.pack, o.access.warps};
        auto t = judged.find(key);
        if (t == judged.end()) {
          plan::TmemStore verdict = plan::tmem_store(o, src->second.regs, *v, c.k.threads, held[o.regs.name]);
          verdict.step.reset();  // only the verdict is kept
          t = judged.emplace(key, std::move(verdict)).first;
        }
        if (t->second.miss != plan::TmemStore::fits) {
          no_store(c, *op, src->second.regs, *v, t->second);
          c.refused.insert(op);
        }
        break;
      }
      case ir::OpKind::store: {
        const auto src = defs.find(op->as<ir::Store>()->regs.name);
        if (src == defs.end() || !store(c, *op, src->second.regs)) c.refused.insert(op);
        else c.stored[op] = {src->second.regs.rows, src->second.regs.row_elements};  // what coverage() compares
        break;
      }
      case ir::OpKind::math:
        define(*op, math(c, *op, [&](const std::string& n) -> const plan::RegDef* {
                 auto it = defs.find(n);
                 return it == defs.end() ? nullptr : &it->second.regs;
               }));
        break;
      case ir::OpKind::reduce: {
        // MATH-DTYPE, REDUCE-SHAPE: the rows of registers of one f32 each, whose layout the
        // emitter knows (.32x32b: a row per thread; .16x256b and wgmma: 4 lanes a row).
        const ir::Reduce& o = *op->as<ir::Reduce>();
        const auto a = defs.find(o.a.name);
        if (a == defs.end()) {
          c.refused.insert(op);
          break;
        }
        const plan::RegDef& x = a->second.regs;
        const std::string fn(kReduceNames[static_cast<size_t>(o.fn)]);
        if (const plan::ReduceMiss m = plan::reduce_miss(x); m != plan::ReduceMiss::fits) {
          if (m == plan::ReduceMiss::dtype)
            c.problem("MATH-DTYPE", o.a.ptr,
                      "reduce " + fn + " computes on f32 registers, one element each; \"" + x.name + "\" holds " +
                          (x.elems_per_reg != 1 ? s(x.elems_per_reg) + " packed " + dt(x.dtype) + " elements per register" : dt(x.dtype) + " elements"),
                      {"reduce the registers of an f32 view (an accumulator) loaded without \"pack\""});
          else
            c.problem("REDUCE-SHAPE", o.a.ptr,
                      "reduce " + fn + " folds each row within a thread (.32x32b) or across the 4 lanes that share it (.16x256b, "
                      "wgmma accumulators); \"" + x.name + "\" was loaded with another shape",
                      {"tmem_load \"" + x.name + "\" with \"shape\": \"32x32b\" or \"16x256b\""});
          c.refused.insert(op);
          break;
        }
        plan::RegDef d = x;
        d.name = o.regs.name;
        define(*op, std::move(d));
        break;
      }
      case ir::OpKind::amax: {
        // MATH-DTYPE, READ-SHAPE: f32 registers whose elements' positions the emitter computes (a
        // read's fragments), each checked against the extents of `of`.
        const ir::Amax& o = *op->as<ir::Amax>();
        const auto a = defs.find(o.a.name);
        const ir::Global* g = c.global(o.of, "amax extents");
        if (a == defs.end() || !g) {
          c.refused.insert(op);
          break;
        }
        // AMAX-DST: red.global.max.u32 raises one 32-bit word, the f32 bits of the amax.
        const ir::Global* out = c.global(o.dst, "amax destination");
        if (!out) {
          c.refused.insert(op);
          break;
        }
        if (out->dtype != isa::DType::f32 || out->rows != 1 || out->cols != 1 || !out->rows_param.empty() || !out->cols_param.empty()) {
          c.problem("AMAX-DST", o.dst.ptr,
                    "amax raises one f32 (red.global.max.u32 of its bits, §9.7.13.6); \"" + out->name + "\" is " + s(out->rows) + " x " +
                        s(out->cols) + " " + dt(out->dtype),
                    {"declare \"" + out->name + "\" as {\"dtype\": \"f32\", \"shape\": [1, 1]}"});
          c.refused.insert(op);
          break;
        }
        const plan::RegDef& x = a->second.regs;
        ir::Global f32 = *g;
        f32.dtype = isa::DType::f32;  // only its extents count
        const plan::ReadMiss m = plan::read_miss(x, f32);
        if (m == plan::ReadMiss::like_dtype)
          c.problem("MATH-DTYPE", o.a.ptr,
                    "amax computes on f32 registers, one element each; \"" + x.name + "\" holds " +
                        (x.elems_per_reg != 1 ? s(x.elems_per_reg) + " packed " + dt(x.dtype) + " elements per register" : dt(x.dtype) + " elements"),
                    {x.wgmma ? "accumulate in f32" : "tmem_load an f32 view without \"pack\""});
        else if (m != plan::ReadMiss::fits)
          c.problem("READ-SHAPE", o.a.ptr,
                    "amax computes where each thread's elements lie for the fragments of tcgen05.ld .32x32b and .16x256b (and "
                    "wgmma accumulators); \"" + x.name + "\" was loaded with another shape",
                    {"tmem_load \"" + x.name + "\" with \"shape\": \"32x32b\" or \"16x256b\""});
        if (m != plan::ReadMiss::fits) c.refused.insert(op);
        break;
      }
      case ir::OpKind::quantize: {
        // MATH-DTYPE, READ-SHAPE as an amax's; QUANT-TILE: each block whole in a thread's (or
        // a row's 4 lanes') registers, at a column that is a multiple of vec in every CTA.
        const ir::Quantize& o = *op->as<ir::Quantize>();
        const auto a = defs.find(o.a.name);
        const ir::Global* g = c.global(o.of, "quantize extents");
        const ir::Global* dst = c.global(o.dst, "quantize factors");
        if (a == defs.end() || !g || !dst) {
          c.refused.insert(op);
          break;
        }
        if (c.k.source == "program" && !quantize_tensors(c, *op, *g, *dst)) {
          c.refused.insert(op);
          break;
        }
        const plan::RegDef& x = a->second.regs;
        const plan::QuantizeMiss m = plan::quantize_miss(x, o.pos, o.vec);
        if (m == plan::QuantizeMiss::dtype)
          c.problem("MATH-DTYPE", o.a.ptr,
                    "quantize computes on f32 registers, one element each; \"" + x.name + "\" holds " +
                        (x.elems_per_reg != 1 ? s(x.elems_per_reg) + " packed " + dt(x.dtype) + " elements per register" : dt(x.dtype) + " elements"),
                    {x.wgmma ? "accumulate in f32" : "tmem_load an f32 view without \"pack\""});
        else if (m == plan::QuantizeMiss::shape)
          c.problem("READ-SHAPE", o.a.ptr,
                    "quantize computes where each thread's elements lie for the fragments of tcgen05.ld .32x32b or .16x256b (one of "
                    "them per register set) and wgmma accumulators; \"" + x.name + "\" was loaded otherwise",
                    {"tmem_load \"" + x.name + "\" with \"shape\": \"32x32b\" or \"16x256b\""});
        else if (m == plan::QuantizeMiss::blocks)
          c.problem("QUANT-TILE", o.a.ptr,
                    "a block of " + s(o.vec) + " columns of a row must lie whole in one thread's registers of \"" + x.name +
                        "\" (or in the same registers of the 4 lanes that share the row), at a column of D that is a multiple of " +
                        s(o.vec) + " in every tile",
                    {c.k.source == "program" ? "store the registers at a column that is a multiple of " + s(o.vec) + " (\"at\", and its steps)"
                                             : "make D's tile.n and the epilogue's column chunks multiples of " + s(o.vec)});
        if (m != plan::QuantizeMiss::fits) {
          c.refused.insert(op);
          break;
        }
        plan::RegDef d = x;
        d.name = o.regs.name;
        define(*op, std::move(d));
        break;
      }
      case ir::OpKind::read: {
        const auto like = defs.find(op->as<ir::Read>()->like.name);
        define(*op, like == defs.end() ? std::nullopt : read(c, *op, like->second.regs));
        break;
      }
      case ir::OpKind::mma: {
        // A wgmma op defines its accumulator registers (a tcgen05 mma writes tensor memory: mmas()).
        if (c.k.engine != ir::Engine::wgmma) break;
        const ir::Mma& o = *op->as<ir::Mma>();
        const plan::SmemPlacement* a = c.tile(o.a, "wgmma A");
        const plan::SmemPlacement* b = c.tile(o.b, "wgmma B");
        if (!a || !b) {
          c.refused.insert(op);
          break;
        }
        if (auto d = plan::wgmma_accumulators(o, *a, *b)) defs[o.d.name] = {std::move(*d), ++next_id};
        break;
      }
      default: break;
    }
  }
}

}  // namespace ptxgen::rules::verify
