// Data movement: global -> shared loads (plain 16-byte loads or TMA boxes), tcgen05.cp,
// tcgen05.ld/st, and stores of register sets to global memory (per element at static positions,
// or clipped to run-time extents with pairs of elements per store).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "emitter.hpp"

namespace ptxgen::emit::detail {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
}  // namespace

// Plain loads of 16-byte chunks into the box arrangement of the canonical layout, swizzled on
// the address (Swizzle<B,4,3>: bits 7.. XOR into bits 4..; 32-byte atomicity: bits 7-8 into 5-6).
void Emitter::load(const plan::LoadStep& l, const std::string& L) {
  auto fixed = [](const ir::Affine& a) { return !a.m_tile && !a.n_tile && !a.k_block; };  // a pair's rank: cta_bytes
  if (!fixed(l.row0) || !fixed(l.col0) || tiles.at(l.tile)->stages > 1) throw std::logic_error("plain loads at run-time positions");
  const std::string i = w.r32(), row = w.r32(), chunk = w.r32(), q = w.r32(), m = w.r32(), off = w.r32(), x = w.r32();
  const std::string g = w.r64(), go = w.r64(), gc = w.r64(), done = w.pred();
  std::vector<std::string> v;
  for (int k = 0; k < 4; ++k) v.push_back(w.r32());
  const std::string vec = "{" + v[0] + ", " + v[1] + ", " + v[2] + ", " + v[3] + "}";
  const int cpr = l.row_bytes / 16, cpb = l.box_bytes / 16;
  w.ins(spell::alu(Op::add, Ty::s64) + " " + g + ", " + gbase.at(l.global) + ", " + hex(static_cast<uint64_t>(l.row0.base * l.global_row_bytes + l.col0_bytes)),
        "first byte of the tile in \"" + l.global + "\"");
  if (pair() && l.cta_bytes) w.ins(spell::alu(Op::mad_lo, Ty::s64) + " " + g + ", " + rank64 + ", " + s(l.cta_bytes) + ", " + g, "CTA 1: per_cta further on");
  w.ins(spell::alu(Op::mov, Ty::u32) + " " + i + ", " + tid);
  w.label(L + "_loop");
  w.ins(spell::setp(Cmp::ge, Ty::u32) + " " + done + ", " + i + ", " + s(l.chunks));
  w.ins("@" + done + " " + spell::bra() + " " + L + "_done");
  w.ins(spell::alu(Op::div, Ty::u32) + " " + row + ", " + i + ", " + s(cpr));
  w.ins(spell::alu(Op::rem, Ty::u32) + " " + chunk + ", " + i + ", " + s(cpr));
  w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + go + ", " + row);
  w.ins(spell::alu(Op::mul_lo, Ty::u64) + " " + go + ", " + go + ", " + s(l.global_row_bytes));
  w.ins(spell::alu(Op::mul_wide, Ty::u32) + " " + gc + ", " + chunk + ", 16");
  w.ins(spell::alu(Op::add, Ty::s64) + " " + go + ", " + go + ", " + gc);
  w.ins(spell::alu(Op::add, Ty::s64) + " " + go + ", " + go + ", " + g);
  w.ins(spell::ld(Space::global, Ty::b32, 4) + " " + vec + ", [" + go + "]");
  w.ins(spell::alu(Op::div, Ty::u32) + " " + q + ", " + chunk + ", " + s(cpb), "box");
  w.ins(spell::alu(Op::rem, Ty::u32) + " " + m + ", " + chunk + ", " + s(cpb), "16-byte piece of the box row");
  w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + off + ", " + q + ", " + s(l.column_bytes));
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + off + ", " + row + ", " + s(l.box_bytes) + ", " + off);
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + off + ", " + m + ", 16, " + off);
  w.ins(spell::alu(Op::add, Ty::u32) + " " + off + ", " + off + ", " + s(l.tile_offset));
  int mask = 0, shift = 4;
  switch (l.swizzle) {
    case isa::Swizzle::b128: mask = 7; break;
    case isa::Swizzle::b64: mask = 3; break;
    case isa::Swizzle::b32: mask = 1; break;
    case isa::Swizzle::b128_base32b: mask = 3, shift = 5; break;
    case isa::Swizzle::none: break;
  }
  if (mask) {
    w.ins(spell::alu(Op::shr, Ty::u32) + " " + x + ", " + off + ", 7");
    w.ins(spell::alu(Op::and_, Ty::b32) + " " + x + ", " + x + ", " + s(mask));
    w.ins(spell::alu(Op::shl, Ty::b32) + " " + x + ", " + x + ", " + s(shift));
    w.ins(spell::alu(Op::xor_, Ty::b32) + " " + off + ", " + off + ", " + x, std::string(isa::name(l.swizzle)) + " swizzle");
  }
  w.ins(spell::alu(Op::add, Ty::u32) + " " + off + ", " + off + ", " + base);
  w.ins(spell::st(Space::shared, Ty::b32, 4) + " [" + off + "], " + vec);
  w.ins(spell::alu(Op::add, Ty::u32) + " " + i + ", " + i + ", " + s(p.ir().threads));
  w.ins(spell::bra() + " " + L + "_loop");
  w.label(L + "_done");
}

// TMA (PTX ISA 9.7.9.27.1.2): one thread (of each CTA) issues the boxes; the hardware writes them
// swizzled on the shared address (PTX ISA 5.5.7), the arrangement the plain loads write by hand.
// A load that arms its own barrier also waits for it (every thread, phase 0); a pipeline's load
// completes on its stage's barrier, armed by the expect_tx before it and waited on by the consumer.
void Emitter::tma_load(const plan::LoadStep& l, const std::string& L) {
  const std::string dst = w.r32(), c0 = w.r32(), c1 = w.r32(), pr = w.pred();
  const plan::SmemPlacement& t = *tiles.at(l.tile);
  std::string b = barrier_addr(l.barrier, l.phase);
  const bool guard = issue_guard(not_t0, false, L + "_issued");
  if (l.arm)
    w.ins(spell::mbarrier_expect_tx() + " _, [" + b + "], " + s(int64_t{l.chunks} * 16), "the tile's bytes complete the phase");
  if (l.to_leader && pair()) {
    // Both CTAs' boxes complete on CTA 0's barrier (.cta_group::2 lets it be the peer's).
    const std::string remote = w.r32();
    w.ins(spell::mapa() + " " + remote + ", " + b + ", " + (cta_even.empty() ? "0" : cta_even), "CTA 0's barrier");
    b = remote;
  }
  const bool runtime = !l.c0_rt.constant() || !l.c1_rt.constant();
  std::string stage_off;
  if (t.stages > 1 && loop.active) {
    stage_off = w.r32();
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + stage_off + ", " + loop.ring.at(t.stages).first + ", " + s(t.stage_bytes) + ", " + base,
          "\"" + l.tile + "\"'s stage");
  }
  std::string r0, r1, r2;
  if (runtime) {
    r0 = affine(l.c0_rt);
    r1 = affine(l.c1_rt);
  }
  const bool rank3 = l.map.rank == 3;
  if (rank3 && !l.c2_rt.constant()) r2 = affine(l.c2_rt);
  // A coordinate: the box's, the run-time origin's, and in a pair CTA r's r * per_cta further on.
  auto coord = [&](const std::string& r, int64_t v, int64_t per_cta, const std::string& rt) {
    if (!rt.empty()) {
      w.ins(spell::alu(Op::add, Ty::u32) + " " + r + ", " + rt + ", " + s(v));
      if (pair() && per_cta) w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + r + ", " + rank + ", " + s(per_cta) + ", " + r, "CTA 1: further on");
    } else if (pair() && per_cta) {
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + r + ", " + rank + ", " + s(per_cta) + ", " + s(v), "CTA 1: per_cta further on");
    } else {
      w.ins(spell::alu(Op::mov, Ty::b32) + " " + r + ", " + s(v));
    }
  };
  const std::string c2 = rank3 ? w.r32() : "";
  // Multicast: each box goes to every CTA of ctaMask (bit i for %cluster_ctarank i, §9.7.9.27.1.2),
  // its bytes completing on the barrier at the same offset in each (in a pair, CTA 0's).
  std::vector<std::string> mine;
  std::string mask;
  if (l.multicast > 1) {
    // The CTAs of the block's tile row (A) or column (B) of this CTA's rank in its pair share the
    // tile (the whole cluster for a block one tile wide or high); the one at place j issues part j.
    // The masks and places are the prologue's.
    mask = share_mask[l.multicast_along_m];
    if (mask.empty()) throw std::logic_error("a multicast load outside its cluster's groups");
    for (int r = 0; r < l.multicast; ++r) {
      mine.push_back(w.pred());
      w.ins(spell::setp(Cmp::eq, Ty::u32) + " " + mine.back() + ", " + share_place[l.multicast_along_m] + ", " + s(r), "part " + s(r) + " of the boxes is this CTA's");
    }
  }
  for (const auto& bx : l.boxes) {
    w.ins(spell::alu(Op::add, Ty::u32) + " " + dst + ", " + (stage_off.empty() ? base : stage_off) + ", " + s(bx.smem));
    coord(c0, bx.c0, l.cta_c0, r0);
    coord(c1, bx.c1, l.cta_c1, r1);
    if (rank3) coord(c2, l.c2, l.cta_c2, r2);
    const std::string operands = " [" + dst + "], [" + tmap.at(l.map.param) + ", {" + c0 + ", " + c1 + (rank3 ? ", " + c2 : "") + "}], [" + b + "]";
    if (l.multicast > 1)
      w.ins("@" + mine.at(static_cast<size_t>(bx.part)) + " " + spell::tma_load_multicast(l.map.rank, l.to_leader && pair()) + operands + ", " + mask);
    else
      w.ins(spell::tma_load(l.to_leader && pair(), l.map.rank) + operands);
  }
  if (guard) w.label(L + "_issued");
  if (!l.arm) return;
  w.label(L + "_wait");
  w.ins(spell::mbarrier_try_wait() + " " + pr + ", [" + b + "], 0");
  w.ins("@!" + pr + " " + spell::bra() + " " + L + "_wait");
  if (!elected.empty()) w.ins(spell::bar_warp_sync() + " -1", "the warp's lanes leave the wait together");
}

void Emitter::cp(const plan::Step& st, const std::string& L) {
  const bool guard = issue_guard(not_issuer, false, L + "_done");
  for (const auto& c : st.cps) {
    const std::string d = desc(c.src, c.tile);
    w.ins(spell::cp(c.shape, c.decompress, p.ir().cta_group) + " " + tmem(c.alloc, c.taddr, c.ring) + ", " + d);
  }
  if (guard) w.label(L + "_done");
}

// tcgen05.ld: each warp its own instructions, the lane bits of taddr in its own quarter.
void Emitter::ld(const plan::RegDef& d, const std::vector<std::string>& rs, const std::string& L) {
  std::map<int, std::vector<const plan::LdInstr*>> by_warp;
  for (const auto& f : d.frags) by_warp[f.warp].push_back(&f);
  for (const auto& [wi, fs] : by_warp) {
    const std::string skip = L + "_w" + s(wi);
    w.ins("@" + warp_pred(wi) + " " + spell::bra() + " " + skip);
    for (const plan::LdInstr* f : fs) {
      std::string v = "{";
      for (int j = 0; j < f->regs; ++j) v += (j ? ", " : "") + rs.at(static_cast<size_t>(f->first_reg + j));
      v += "}";
      const std::string split = f->shape == isa::LdShape::s16x32bx2 ? ", " + s(f->split) : "";
      w.ins(spell::ld(f->shape, f->num, f->pack) + " " + v + ", " + ring_tmem(f->alloc, f->taddr) + split);
    }
    w.label(skip);
  }
}

namespace {
using Cell = std::pair<int64_t, int64_t>;
// (register, the thread base its cell is relative to: a tcgen05.ld shape's, the cell)
using At = std::tuple<int, int, Cell>;
// Register j's element relative to its thread's first row and column, along a broadcast dimension 0.
// A row_vector read's element follows the register's row alone (its column of the tensor is the
// row's), an element read's neither.
Cell read_cell(const plan::ReadStep& r, int64_t dr, int64_t dc) {
  if (r.at == ir::ReadAt::row_vector) return {dr, 0};
  if (r.at == ir::ReadAt::element) return {0, 0};
  return {r.rows_broadcast ? 0 : dr, r.cols_broadcast ? 0 : dc};
}
// Each register's first register of the same element (its slot): where a code copy loads it.
std::vector<int> read_slots(int regs, const std::vector<At>& cells) {
  std::map<std::pair<int, Cell>, int> first;
  std::vector<int> out(static_cast<size_t>(regs), -1);
  for (const auto& [j, b, c] : cells) out[static_cast<size_t>(j)] = first.emplace(std::make_pair(b, c), j).first->second;
  return out;
}
// A wgmma accumulator's cells in register order: register pair i of an N group holds rows
// 8 (i % 2) and columns 8 (i / 2) + {0, 1} from the thread's first (§9.7.15.5.1.1).
std::vector<At> wgmma_cells(const plan::ReadStep& r) {
  std::vector<At> cells;
  size_t reg = 0;
  for (int row = 0; row < r.def.rows; row += 64) {
    int n0 = 0;
    for (int ng : r.def.groups) {
      for (int i = 0; i < ng / 4; ++i)
        for (int e = 0; e < 2; ++e) cells.push_back({static_cast<int>(reg) + 2 * i + e, 0, read_cell(r, row + 8 * (i % 2), n0 + 8 * (i / 2) + e)});
      reg += static_cast<size_t>(ng / 2);
      n0 += ng;
    }
  }
  return cells;
}
}  // namespace

// One copy of code for warps lo..hi, which hold the registers: a branch to L_w for the warps of the
// role (or the kernel) outside them, where there are any; whether it wrote one (L_w then follows
// the code).
bool Emitter::skip_other_warps(int lo, int hi, const std::string& L) {
  const int first = role ? role->ir().first_warp : 0;
  const int count = role ? role->ir().warps : p.ir().threads / 32;
  if (lo == first && hi == first + count - 1) return false;
  const std::string out = w.pred(), below = w.pred();
  w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + below + ", " + warp + ", " + s(lo));
  w.ins(spell::setp(Cmp::gt, Ty::u32, BoolOp::or_) + " " + out + ", " + warp + ", " + s(hi) + ", " + below);
  w.ins("@" + out + " " + spell::bra() + " " + L + "_w", "warps " + s(lo) + "-" + s(hi) + " hold the registers");
  return true;
}

// Elementwise functions (§9.7.3), register j of each result from register j of its operands, in
// every thread that holds the registers: all threads of the role for wgmma accumulators; for
// tcgen05.ld fragments the warps that hold them, one copy of the code where every such warp holds
// the same registers (the rows differ, which the functions do not see), else one per warp. Since
// register j depends only on register j, the run is written register by register, each register's
// chain of functions in the plan's order.
void Emitter::math_run(const std::vector<const plan::Step*>& run) {
  std::string L;
  for (const plan::Step* st : run) {
    const std::string l = label();
    if (L.empty()) L = l;
    w.comment(ascii("[" + s(label_ - 1) + "] " + (st->kind == plan::StepKind::read ? "read" : "math") + " (" + st->ptr + "): " + st->why));
  }
  const plan::RegDef& d = run.front()->kind == plan::StepKind::read ? run.front()->read.def : run.front()->math.def;
  // Each step writes its set's own registers and reads its operands' registers as the steps
  // before it in the run left them (a read's shared registers, or the set's own once rewritten).
  // A read (wgmma registers only: steps()) loads each distinct element at the first register
  // that holds it, from its thread's first row and column, computed here once per read.
  struct Ins {
    const plan::MathStep* m = nullptr;
    const std::vector<std::string>* out = nullptr;
    std::array<const std::vector<std::string>*, 3> in{};
    const plan::ReadStep* r = nullptr;
    std::vector<int> slot;
    std::vector<Cell> cell;
    std::pair<std::string, std::string> base;
  };
  std::vector<Ins> ins;
  std::deque<std::vector<std::string>> shared;  // the registers a read's set names
  std::map<std::string, const std::vector<std::string>*> now;
  for (const plan::Step* st : run) {
    Ins x;
    if (st->kind == plan::StepKind::read) {
      const plan::ReadStep& r = st->read;
      const std::vector<At> cells = wgmma_cells(r);
      x.r = &r;
      x.slot = read_slots(r.def.regs, cells);
      x.cell.resize(static_cast<size_t>(r.def.regs));
      for (const auto& [j, b, c] : cells) x.cell[static_cast<size_t>(j)] = c;
      x.base = read_base(r);
      const auto& pool = canon.at(r.pool);
      std::vector<std::string> names(static_cast<size_t>(r.def.regs));
      for (size_t j = 0; j < names.size(); ++j) names[j] = pool.at(static_cast<size_t>(x.slot[j]));
      shared.push_back(std::move(names));
      x.out = &shared.back();
      now[r.def.name] = x.out;
      ins.push_back(std::move(x));
      continue;
    }
    const plan::MathStep& m = st->math;
    x.m = &m;
    x.out = &canon.at(m.def.name);
    // A packed function takes no immediate (§9.7.4: .b32 register operands): each constant, the
    // 16-bit float in both halves, is moved into a register once, before the chain.
    if (m.dtype != isa::DType::f32 && m.fn != MathFn::convert)
      for (size_t k = 0; k < 3; ++k)
        if (m.value[k]) {
          const uint32_t h = isa::half_bits_rn(m.dtype, static_cast<double>(*m.value[k]));
          const std::string r = w.r32();
          w.ins(spell::alu(Op::mov, Ty::b32) + " " + r + ", " + hex(h << 16 | h), "the " + std::string(isa::name(m.dtype)) + "x2 pair " +
                plan::operand_text(m, k) + ", " + plan::operand_text(m, k));
          shared.push_back(std::vector<std::string>(static_cast<size_t>(m.def.regs), r));
          x.in[k] = &shared.back();
        }
    const std::array<const std::string*, 3> names = {&m.a, &m.b, &m.c};
    for (size_t k = 0; k < 3; ++k)
      if (!m.value[k] && !names[k]->empty() && !(k == 2 && m.c_from_iteration_1)) {  // that c: the set's own registers
        auto it = now.find(*names[k]);
        // A set defined before the run is read from a copy of its registers: the loop below
        // renames every set the run writes to its own registers before the code is written, and a
        // step may write the set it reads (m = max(m, x)) where they were a reduction's or a read's
        // shared registers.
        if (it == now.end()) shared.push_back(regs.at(*names[k]));
        x.in[k] = it != now.end() ? it->second : &shared.back();
      }
    now[m.def.name] = x.out;
    ins.push_back(std::move(x));
  }
  for (const Ins& x : ins) regs[x.r ? x.r->def.name : x.m->def.name] = *x.out;
  auto chain = [&](const std::vector<int>& js) {
    for (int j : js)
      for (const Ins& x : ins) {
        const size_t u = static_cast<size_t>(j);
        if (x.r) {
          if (x.slot[u] == j) read_element(*x.r, x.out->at(u), x.base.first, x.base.second, x.cell[u]);
          continue;
        }
        const plan::MathStep& m = *x.m;
        auto in = [&](size_t k) { return x.in[k] ? x.in[k]->at(u) : f32_imm(*m.value[k]); };
        if (m.fn == MathFn::convert) {
          // cvt.rn.bf16x2.f32 d, a, b puts a in the upper half and b in the lower (§9.7.9.21): register
          // j of the pairs holds registers 2j (its lower half, the row's column first) and 2j + 1.
          w.ins(spell::alu(spell::math(m.fn, false, m.dtype)) + " " + x.out->at(u) + ", " + x.in[0]->at(2 * u + 1) + ", " +
                x.in[0]->at(2 * u));
          continue;
        }
        if (m.c_from_iteration_1) {
          // fma with c the set itself, which the loop carries from 0 (zeroed before the loop,
          // loop_step): a * b + c in every iteration.
          w.ins(spell::alu(spell::math(MathFn::fma, false)) + " " + x.out->at(u) + ", " + in(0) + ", " + in(1) + ", " + x.out->at(u));
          continue;
        }
        if (m.fill) {  // a fill: the constant's bits (§9.7.9.3)
          w.ins(spell::alu({.op = spell::Op::mov, .type = spell::Ty::b32}) + " " + x.out->at(u) + ", " + in(0));
          continue;
        }
        if (m.fn == MathFn::select) {
          // selp takes a predicate (§9.7.6.3): a != 0 first (the verifier keeps a a register set).
          const std::string p = w.pred();
          w.ins(spell::setp(Cmp::ne, Ty::f32) + " " + p + ", " + in(0) + ", " + f32_imm(0.0));
          w.ins(spell::alu(spell::math(m.fn, m.approx)) + " " + x.out->at(u) + ", " + in(1) + ", " + in(2) + ", " + p);
          continue;
        }
        std::string line = spell::alu(spell::math(m.fn, m.approx, m.dtype)) + " " + x.out->at(u);
        for (size_t k = 0; k < static_cast<size_t>(info(m.fn).operands); ++k) line += ", " + in(k);
        w.ins(line);
      }
  };
  if (d.wgmma) {
    std::vector<int> js(static_cast<size_t>(d.regs));
    for (int j = 0; j < d.regs; ++j) js[static_cast<size_t>(j)] = j;
    chain(js);
    w.blank();
    return;
  }
  std::map<int, std::vector<int>> by_warp;
  for (const auto& f : d.frags)
    for (int j = f.first_reg; j < f.first_reg + f.regs; ++j) by_warp[f.warp].push_back(j);
  for (auto& [wi, js] : by_warp) std::sort(js.begin(), js.end());
  const int lo = by_warp.begin()->first, hi = by_warp.rbegin()->first;
  if (plan::warps_hold_same_registers(d)) {  // one copy for all (OUTPUT-SIZE counts one)
    const bool all = !skip_other_warps(lo, hi, L);
    chain(by_warp.begin()->second);
    if (!all) w.label(L + "_w");
  } else {
    for (const auto& [wi, js] : by_warp) {
      const std::string skip = L + "_w" + s(wi);
      w.ins("@" + warp_pred(wi) + " " + spell::bra() + " " + skip);
      chain(js);
      w.label(skip);
    }
  }
  w.blank();
}

// tcgen05.ld fragments (§9.7.16.8.3): the thread's first row and column of a fragment of `shape`
// whose first cell is (row0, col0) (.32x32b: lane t, column 0; .16x256b: lane t/4, column 2 (t % 4)),
// plus `wrow` rows where the warp's own rows lie further ("" none).
std::pair<std::string, std::string> Emitter::ld_base(isa::LdShape shape, const std::string& row0, const std::string& col0,
                                                     const std::string& wrow) {
  const std::string tr = w.r32(), tc = w.r32();
  if (shape == isa::LdShape::s32x32b) {
    w.ins(spell::alu(Op::add, Ty::u32) + " " + tr + ", " + row0 + ", " + lane);
    w.ins(spell::alu(Op::mov, Ty::u32) + " " + tc + ", " + col0);
  } else {  // .16x256b (read_miss refused the rest)
    const std::string x = w.r32();
    w.ins(spell::alu(Op::shr, Ty::u32) + " " + x + ", " + lane + ", 2");
    w.ins(spell::alu(Op::add, Ty::u32) + " " + tr + ", " + row0 + ", " + x);
    w.ins(spell::alu(Op::and_, Ty::b32) + " " + x + ", " + lane + ", 3");
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tc + ", " + x + ", 2, " + col0);
  }
  if (!wrow.empty()) w.ins(spell::alu(Op::add, Ty::u32) + " " + tr + ", " + tr + ", " + wrow, "the rows of this warp");
  return {tr, tc};
}

// A read (ld.global, §9.7.9.8): each thread loads the distinct elements its registers hold, once
// each, as f32 (cvt.f32.f16 / cvt.f32.bf16 are exact, §9.7.9.21); registers of a repeated element
// (a broadcast tensor's, or the two rows of a wgmma pair sharing a column) name the same loaded
// register. Elements at or past the tensor's extents read as 0.
// The element of a read at (tr + c.first, tc + c.second) into register v (0 past the extents),
// as f32. Along a broadcast dimension the cell's offset is 0 and the index too.
void Emitter::read_element(const plan::ReadStep& r, const std::string& v, const std::string& tr, const std::string& tc,
                           const std::pair<int64_t, int64_t>& c) {
  const int eb = isa::value_bits(r.dtype) / 8;
  const std::string rows = r.rows_param.empty() ? s(r.global_rows) : size.at(r.rows_param);
  const std::string cols = r.cols_param.empty() ? s(r.global_width) : size.at(r.cols_param);
  const std::string ld = r.ld_param.empty() ? s(r.global_cols) : size.at(r.ld_param);
  auto load = [&](const std::string& p, const std::string& at) {
    const std::string g = p.empty() ? "" : "@" + p + " ";
    if (eb == 4) {
      w.ins(spell::alu(Op::mov, Ty::b32) + " " + v + ", 0");
      w.ins(g + spell::ld(Space::global, Ty::b32) + " " + v + ", " + at);
      return;
    }
    const std::string h = w.r16();
    w.ins(spell::alu(Op::mov, Ty::b16) + " " + h + ", 0");
    w.ins(g + spell::ld(Space::global, Ty::b16) + " " + h + ", " + at);
    w.ins(spell::cvt(Ty::f32, r.dtype == isa::DType::bf16 ? Ty::bf16 : Ty::f16) + " " + v + ", " + h);
  };
  if (r.at != ir::ReadAt::cells) {
    // The block-wise scale factors' reads (read_base): `tr` the tensor's row, `tc` its column
    // (row_vector: the thread's first row of the set, plus the cell's row); the tensor's row
    // stride ld. Both indices are checked against the extents.
    std::string col = tc;
    if (r.at == ir::ReadAt::row_vector) {
      col = w.r32();
      w.ins(spell::alu(Op::add, Ty::u32) + " " + col + ", " + tc + ", " + s(c.first));
    }
    const std::string pr = w.pred(), p = w.pred(), idx = w.r64(), c64 = w.r64(), a = w.r64();
    w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + pr + ", " + tr + ", " + rows);
    w.ins(spell::setp(Cmp::lt, Ty::u32, BoolOp::and_) + " " + p + ", " + col + ", " + cols + ", " + pr);
    w.ins(spell::alu(Op::mul_wide, Ty::u32) + " " + idx + ", " + tr + ", " + ld);
    w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + c64 + ", " + col);
    w.ins(spell::alu(Op::add, Ty::u64) + " " + idx + ", " + idx + ", " + c64);
    w.ins(spell::alu(Op::mad_lo, Ty::u64) + " " + a + ", " + idx + ", " + s(eb) + ", " + gbase.at(r.global));
    load(p, "[" + a + "]");
    return;
  }
  if (r.rows_broadcast && (r.cols_broadcast || r.def.wgmma)) {
    // A tensor of one row (a bias along N) read into wgmma registers: each element's address
    // where it is loaded. A row address kept over a run made ptxas spill 48 bytes of a ping-pong
    // 128 x 128 bias + gelu_tanh kernel that spills none so.
    std::string p, idx = w.r64();
    w.ins(spell::alu(Op::mov, Ty::b64) + " " + idx + ", 0");
    if (!r.cols_broadcast) {
      const std::string col = w.r32(), c64 = w.r64();
      p = w.pred();
      w.ins(spell::alu(Op::add, Ty::u32) + " " + col + ", " + tc + ", " + s(c.second));
      w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + p + ", " + col + ", " + cols);
      w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + c64 + ", " + col);
      w.ins(spell::alu(Op::add, Ty::u64) + " " + idx + ", " + idx + ", " + c64);
    }
    const std::string a = w.r64();
    w.ins(spell::alu(Op::mad_lo, Ty::u64) + " " + a + ", " + idx + ", " + s(eb) + ", " + gbase.at(r.global));
    load(p, "[" + a + "]");
    return;
  }
  // The row's address at the thread's first column, and its predicate, once per row: each element
  // then costs its column's bound check and a load at an immediate offset (§6.4.1: [reg+imm]).
  // A tensor of one row read into tcgen05.ld registers (a bias along N): the thread's first
  // column's address once per read (a piece of a box), each element at an immediate offset from
  // it: 4 instructions an element, not 8. (A persistent 128 x 256 bias + gelu_tanh epilogue in
  // pieces, its reads still branched: 192 bytes of spill stores with each element's own address,
  // 64 with this; unbranched reads (for_warps) took both to none.)
  auto [it, fresh] = read_rows.try_emplace({r.global, tr, tc, r.rows_broadcast ? 0 : c.first});
  if (fresh && r.rows_broadcast) {
    const std::string c64 = w.r64(), a = w.r64();
    w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + c64 + ", " + tc);
    w.ins(spell::alu(Op::mad_lo, Ty::u64) + " " + a + ", " + c64 + ", " + s(eb) + ", " + gbase.at(r.global));
    it->second = {a, ""};
  } else if (fresh) {
    const std::string row = w.r32(), p = w.pred(), idx = w.r64();
    w.ins(spell::alu(Op::add, Ty::u32) + " " + row + ", " + tr + ", " + s(c.first));
    w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + p + ", " + row + ", " + rows);
    w.ins(spell::alu(Op::mul_wide, Ty::u32) + " " + idx + ", " + row + ", " + ld);
    if (!r.cols_broadcast) {
      const std::string c64 = w.r64();
      w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + c64 + ", " + tc);
      w.ins(spell::alu(Op::add, Ty::u64) + " " + idx + ", " + idx + ", " + c64);
    }
    const std::string a = w.r64();
    w.ins(spell::alu(Op::mad_lo, Ty::u64) + " " + a + ", " + idx + ", " + s(eb) + ", " + gbase.at(r.global));
    it->second = {a, p};
  }
  const auto& [a, prow] = it->second;
  std::string p = prow;
  if (!r.cols_broadcast) {
    const std::string col = w.r32(), pc = w.pred();
    w.ins(spell::alu(Op::add, Ty::u32) + " " + col + ", " + tc + ", " + s(c.second));
    if (p.empty()) w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + pc + ", " + col + ", " + cols);
    else w.ins(spell::setp(Cmp::lt, Ty::u32, BoolOp::and_) + " " + pc + ", " + col + ", " + cols + ", " + p);
    p = pc;
  }
  load(p, "[" + a + (!r.cols_broadcast && c.second ? "+" + s(c.second * eb) : "") + "]");
}

// §9.7.15.5.1.1: warp q of the warpgroup, lane l holds rows 16q + l/4 (+ 8) and columns 2 (l % 4)
// (+ 1, + 8 i) of its warpgroup's rows: this thread's first row and column, from row0 and col0.
std::pair<std::string, std::string> Emitter::wgmma_base(const plan::RegDef& d, const std::string& row0, const std::string& col0) {
  const std::string q = w.r32(), wg = w.r32(), tr = w.r32(), tc = w.r32(), t = w.r32();
  w.ins(spell::alu(Op::sub, Ty::u32) + " " + wg + ", " + warp + ", " + s(role ? role->ir().first_warp : 0));
  w.ins(spell::alu(Op::and_, Ty::b32) + " " + q + ", " + wg + ", 3");
  w.ins(spell::alu(Op::shr, Ty::u32) + " " + wg + ", " + wg + ", 2");
  w.ins(spell::alu(Op::shr, Ty::u32) + " " + t + ", " + lane + ", 2");
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tr + ", " + q + ", 16, " + t);
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tr + ", " + wg + ", " + s(d.rows) + ", " + tr);
  w.ins(spell::alu(Op::add, Ty::u32) + " " + tr + ", " + tr + ", " + row0);
  w.ins(spell::alu(Op::and_, Ty::b32) + " " + t + ", " + lane + ", 3");
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tc + ", " + t + ", 2, " + col0);
  return {tr, tc};
}


// The registers read_element takes for a read of wgmma registers: the thread's first row and
// column (cells); for a row_vector read the tensor's row (row0) and, as its column, the thread's
// first row of the set from col0 (§9.7.15.5.1.1: the thread's rows are the tensor's columns); for
// an element read the one element's row and column.
std::pair<std::string, std::string> Emitter::read_base(const plan::ReadStep& r) {
  if (r.at == ir::ReadAt::row_vector) {
    const std::string kb = affine(r.row0);
    return {kb, wgmma_base(r.def, affine(r.col0), "0").first};
  }
  if (r.at == ir::ReadAt::element) return {affine(r.row0), affine(r.col0)};
  return wgmma_base(r.def, affine(r.row0), affine(r.col0));
}

// A read (ld.global, §9.7.9.8): each thread loads the distinct elements its registers hold, once
// each, as f32 (cvt.f32.f16 / cvt.f32.bf16 are exact, §9.7.9.21); registers of a repeated element
// (a broadcast tensor's, or the two rows of a wgmma pair sharing a column) name the same loaded
// register. Elements at or past the tensor's extents read as 0. (A read of wgmma registers inside
// a run of functions loads each element where the run first needs it: math_run.)
void Emitter::read(const plan::ReadStep& r, const std::string& L) {
  const plan::RegDef& d = r.def;
  const auto& pool = canon.at(r.pool);
  const std::string row0 = affine(r.row0), col0 = affine(r.col0);
  std::vector<int> slot(static_cast<size_t>(d.regs));
  for (int j = 0; j < d.regs; ++j) slot[static_cast<size_t>(j)] = j;
  std::vector<std::string> out(static_cast<size_t>(d.regs));
  if (d.wgmma) {
    const std::vector<At> cells = wgmma_cells(r);
    slot = read_slots(d.regs, cells);
    const auto [tr, tc] = read_base(r);
    for (const auto& [j, b, c] : cells)
      if (slot[static_cast<size_t>(j)] == j) read_element(r, pool.at(static_cast<size_t>(j)), tr, tc, c);
  } else {
    // tcgen05.ld fragments: thread t's register j holds the cell isa::ld_cell(shape, 0, j) of its
    // fragment, from the thread's first row and column (.32x32b: lane t, column 0; .16x256b: lane
    // t/4, column 2 (t % 4)). Every warp must share one slot per register, else none is shared.
    auto cells_of = [&](const std::vector<const plan::LdInstr*>& fs) {
      std::vector<At> cells;
      for (const plan::LdInstr* f : fs)
        for (int j = 0; j < f->regs; ++j) {
          const isa::LdCell c = isa::ld_cell(f->shape, 0, j);
          cells.push_back({f->first_reg + j, static_cast<int>(f->shape), read_cell(r, f->row0 + c.lane, f->elem0 + c.column)});
        }
      return cells;
    };
    std::map<int, std::vector<const plan::LdInstr*>> by_warp;
    for (const auto& f : d.frags) by_warp[f.warp].push_back(&f);
    bool agree = true;
    std::optional<std::vector<int>> common;
    for (const auto& [wi, fs] : by_warp) {
      const auto sl = read_slots(d.regs, cells_of(fs));
      if (!common) common = sl;
      agree = agree && sl == *common;
    }
    if (agree && common) slot = *common;
    for_warps(d, L, [&](const std::vector<const plan::LdInstr*>& fs, const std::string& wrow) {
      std::map<isa::LdShape, std::pair<std::string, std::string>> base;  // the thread's first row and column per shape
      for (const plan::LdInstr* f : fs) {
        if (!base.count(f->shape)) base[f->shape] = ld_base(f->shape, row0, col0, wrow);
        const auto& [tr, tc] = base.at(f->shape);
        for (int j = 0; j < f->regs; ++j) {
          const int k = f->first_reg + j;
          if (slot[static_cast<size_t>(k)] != k) continue;
          const isa::LdCell c = isa::ld_cell(f->shape, 0, j);
          read_element(r, pool.at(static_cast<size_t>(k)), tr, tc, read_cell(r, f->row0 + c.lane, f->elem0 + c.column));
        }
      }
    }, true);
  }
  for (int j = 0; j < d.regs; ++j) out[static_cast<size_t>(j)] = pool.at(static_cast<size_t>(slot[static_cast<size_t>(j)]));
  regs[d.name] = out;
}

std::string Emitter::element_inside(const plan::ReadStep& r, const std::string& tr, const std::string& tc,
                                    const std::pair<int64_t, int64_t>& c) {
  const std::string rows = r.rows_param.empty() ? s(r.global_rows) : size.at(r.rows_param);
  const std::string cols = r.cols_param.empty() ? s(r.global_width) : size.at(r.cols_param);
  auto [it, fresh] = inside_rows.try_emplace({r.global, tr, tc, c.first});
  if (fresh && !r.rows_broadcast) {  // once per row, as read_element's
    const std::string row = w.r32();
    it->second = w.pred();
    w.ins(spell::alu(Op::add, Ty::u32) + " " + row + ", " + tr + ", " + s(c.first));
    w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + it->second + ", " + row + ", " + rows);
  }
  if (r.cols_broadcast) return it->second;
  const std::string col = w.r32(), p = w.pred();
  w.ins(spell::alu(Op::add, Ty::u32) + " " + col + ", " + tc + ", " + s(c.second));
  if (it->second.empty()) w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + p + ", " + col + ", " + cols);
  else w.ins(spell::setp(Cmp::lt, Ty::u32, BoolOp::and_) + " " + p + ", " + col + ", " + cols + ", " + it->second);
  return p;
}

// An amax: each thread folds |x| of its registers inside the extents into one register (abs.f32,
// max.f32 under the element's predicate, §9.7.3), each warp folds its 32 lanes' by shfl.sync.bfly
// over lanes xor 16, 8, 4, 2, 1 (§9.7.9.6), and lane 0 raises dst[0] with red.global.max.u32
// (§9.7.13.6): the bits of f32 values >= 0 order as the values, and max.f32 keeps the other
// operand of a NaN (§9.7.3.12), so the warp's value is a finite number or +inf, never NaN.
void Emitter::amax(const plan::AmaxStep& x, const std::string& L) {
  const plan::ReadStep& r = x.bounds;
  const plan::RegDef& d = r.def;
  const auto& a = regs.at(x.a);
  const std::string row0 = affine(r.row0), col0 = affine(r.col0);
  const std::string mx = spell::alu(spell::math(MathFn::max, false)), abs = spell::alu(spell::math(MathFn::abs, false));
  auto fold = [&](const std::string& m, int j, const std::string& tr, const std::string& tc, const std::pair<int64_t, int64_t>& cell) {
    const std::string p = element_inside(r, tr, tc, cell), t = w.r32();
    w.ins(abs + " " + t + ", " + a.at(static_cast<size_t>(j)));
    w.ins((p.empty() ? "" : "@" + p + " ") + mx + " " + m + ", " + m + ", " + t);
  };
  auto begin = [&] {
    const std::string m = w.r32();
    w.ins(spell::alu(Op::mov, Ty::b32) + " " + m + ", 0f00000000", "the largest |element| of this thread inside " + r.global);
    return m;
  };
  auto finish = [&](const std::string& m) {
    for (int lanes : {16, 8, 4, 2, 1}) {
      const std::string t = w.r32();
      w.ins(spell::shfl_bfly() + " " + t + ", " + m + ", " + s(lanes) + ", 31, -1", "the warp's largest: lane ^ " + s(lanes));
      w.ins(mx + " " + m + ", " + m + ", " + t);
    }
    const std::string p = w.pred();
    w.ins(spell::setp(Cmp::eq, Ty::u32) + " " + p + ", " + lane + ", 0");
    w.ins("@" + p + " " + spell::red_max_global_u32() + " [" + gbase.at(x.dst) + "], " + m,
          "lane 0: " + x.dst + " = max(" + x.dst + ", the warp's largest), as u32 bits");
  };
  if (d.wgmma) {
    const std::string m = begin();
    const auto [tr, tc] = wgmma_base(d, row0, col0);
    for (const auto& [j, b, c] : wgmma_cells(r)) fold(m, j, tr, tc, c);
    finish(m);
    w.blank();
    return;
  }
  for_warps(d, L, [&](const std::vector<const plan::LdInstr*>& fs, const std::string& wrow) {
    const std::string m = begin();
    std::map<isa::LdShape, std::pair<std::string, std::string>> base;  // the thread's first row and column per shape (as read's)
    for (const plan::LdInstr* f : fs) {
      if (!base.count(f->shape)) base[f->shape] = ld_base(f->shape, row0, col0, wrow);
      const auto& [tr, tc] = base.at(f->shape);
      for (int j = 0; j < f->regs; ++j) {
        const isa::LdCell c = isa::ld_cell(f->shape, 0, j);
        fold(m, f->first_reg + j, tr, tc, read_cell(r, f->row0 + c.lane, f->elem0 + c.column));
      }
    }
    finish(m);
  });
  w.blank();
}

// A block quantization (ir::Quantize). Per block of vec columns of a row: its amax (abs.f32,
// max.f32 in the thread; where 4 lanes share the row, shfl.sync.bfly over lanes xor 1 and xor 2,
// §9.7.9.6), the ue8m0 factor x = clamp(e + [M > Mf] - ef, 0, 254) from the f32 bits of amax
// (exponent field e, mantissa M) and of Fmax (ef its unbiased exponent, Mf its mantissa): adding
// 0x7FFFFF - Mf to the bits carries into the exponent exactly when M > Mf, so x is the biased
// exponent of 2^ceil(log2(amax / Fmax)) with no rounding (what cvt.rp.satfinite.ue8m0x2.f32 of the
// exact quotient gives, §9.7.9.21, on every target). The registers are multiplied by 2^(127 - x),
// the f32 of bits (254 - x) << 23 (mul.rn.f32, exact for normal results), and lane 0 of the block
// writes x to byte ((r / 128) ceil(n / 4vec) + c / 4) 512 + (r % 32) 16 + ((r % 128) / 32) 4 + c % 4
// of dst (row r, block c: the 128x4 layout), for blocks whose row and first column lie inside.
void Emitter::quantize(const plan::QuantizeStep& q, const std::string& L) {
  const plan::ReadStep& r = q.bounds;
  const plan::RegDef& d = r.def;
  const auto& a = regs.at(q.a);
  const auto& out = canon.at(q.def.name);
  const std::string row0 = affine(r.row0), col0 = affine(r.col0);
  const uint32_t fmax = plan::largest_finite_bits(q.elem);
  const int64_t ef = static_cast<int64_t>(fmax >> 23) - 127;
  const int64_t carry = 0x7FFFFF - static_cast<int64_t>(fmax & 0x7FFFFFu);
  int lv = 0;
  while ((1 << lv) < q.vec) ++lv;
  if ((1 << lv) != q.vec) throw std::logic_error("a block quantization of " + s(q.vec) + " columns");
  const std::string rows = r.rows_param.empty() ? s(r.global_rows) : size.at(r.rows_param);
  const std::string cols = r.cols_param.empty() ? s(r.global_width) : size.at(r.cols_param);
  const std::string u32 = spell::alu(Op::add, Ty::u32);
  // Bytes from one 128-row stripe of factors to the next: 512 per 4 blocks of n.
  std::string stripe;
  if (r.cols_param.empty()) {
    stripe = s((r.global_width + 4 * q.vec - 1) / (4 * q.vec) * 512);
  } else {
    stripe = w.r32();
    w.ins(u32 + " " + stripe + ", " + cols + ", " + s(4 * q.vec - 1));
    w.ins(spell::alu(Op::shr, Ty::u32) + " " + stripe + ", " + stripe + ", " + s(lv + 2));
    w.ins(spell::alu(Op::shl, Ty::b32) + " " + stripe + ", " + stripe + ", 9", "bytes per 128 rows of " + q.dst);
  }
  std::string first_lane;  // lanes 4i: where 4 lanes share a row, the one that writes its factors
  if (q.shuffle) {
    const std::string t = w.r32();
    first_lane = w.pred();
    w.ins(spell::alu(Op::and_, Ty::b32) + " " + t + ", " + lane + ", 3");
    w.ins(spell::setp(Cmp::eq, Ty::u32) + " " + first_lane + ", " + t + ", 0");
  }
  const std::string mx = spell::alu(spell::math(MathFn::max, false)), abs = spell::alu(spell::math(MathFn::abs, false));
  const std::string mul = spell::alu(spell::math(MathFn::mul, false));
  // NVFP4 (a ue4m3 factor): the f32 zero a conversion pairs the factor with, and 1 / Fmax rounded
  // to f32 (mul.rn by it stands for the division: the factor is then RN(RN(amax rn(1/Fmax))), as
  // CUTLASS's epilogue computes it with the reciprocal).
  const bool e4m3_factor = q.scale == isa::DType::ue4m3;
  std::string zero;
  if (e4m3_factor) {
    zero = w.r32();
    w.ins(spell::alu(Op::mov, Ty::b32) + " " + zero + ", 0f00000000");
  }
  const std::string inv_fmax = f32_imm(static_cast<float>(1.0 / static_cast<double>(std::bit_cast<float>(fmax))));
  // The blocks of one code copy: (row, block) -> registers, from the cells relative to the thread's first.
  auto blocks = [&](const std::vector<std::pair<int, Cell>>& cells, const std::string& tr, const std::string& tc) {
    std::map<int64_t, std::map<int64_t, std::vector<std::pair<int, int64_t>>>> by_row;
    for (const auto& [j, c] : cells) by_row[c.first][c.second >> lv].push_back({j, c.second});
    for (const auto& [row, bs] : by_row) {
      // The row's predicate and its offset in dst: (r / 128) stripe + (r % 32) 16 + ((r % 128) / 32) 4.
      const std::string rr = w.r32(), prow = w.pred(), ro = w.r32(), t = w.r32();
      w.ins(u32 + " " + rr + ", " + tr + ", " + s(row));
      w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + prow + ", " + rr + ", " + rows);
      w.ins(spell::alu(Op::shr, Ty::u32) + " " + t + ", " + rr + ", 7");
      w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + ro + ", " + t + ", " + stripe);
      w.ins(spell::alu(Op::and_, Ty::b32) + " " + t + ", " + rr + ", 31");
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + ro + ", " + t + ", 16, " + ro);
      w.ins(spell::alu(Op::shr, Ty::u32) + " " + t + ", " + rr + ", 5");
      w.ins(spell::alu(Op::and_, Ty::b32) + " " + t + ", " + t + ", 3");
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + ro + ", " + t + ", 4, " + ro, "row " + s(row) + "'s factors in " + q.dst);
      for (const auto& [b, js] : bs) {
        const std::string m = w.r32(), x = w.r32(), k = w.r32();
        w.ins(abs + " " + m + ", " + a.at(static_cast<size_t>(js.front().first)), "the block of columns " + s(b * q.vec) + ".. of row " + s(row));
        for (size_t i = 1; i < js.size(); ++i) {
          const std::string v = w.r32();
          w.ins(abs + " " + v + ", " + a.at(static_cast<size_t>(js[i].first)));
          w.ins(mx + " " + m + ", " + m + ", " + v);
        }
        if (q.shuffle)
          for (int x1 : {1, 2}) {
            const std::string v = w.r32();
            w.ins(spell::shfl_bfly() + " " + v + ", " + m + ", " + s(x1) + ", 31, -1", "lane ^ " + s(x1) + " holds the block's other columns");
            w.ins(mx + " " + m + ", " + m + ", " + v);
          }
        if (e4m3_factor) {
          // The factor e4m3(amax / Fmax) (cvt.rn.satfinite.e4m3x2.f32 with 0 in the upper byte: its
          // byte, sign 0, is the ue4m3), its value back as f32 (exact: e4m3 -> f16 -> f32), and the
          // multiplier min(rcp.rn(X), FLT_MAX): an all-zero block's X = 0 gives 0 x FLT_MAX = 0.
          const std::string t = w.r32(), h = w.r16(), hh = w.r32(), lo = w.r16(), hi = w.r16(), xf = w.r32();
          w.ins(mul + " " + t + ", " + m + ", " + inv_fmax, "amax / " + std::string(isa::name(q.elem)) + "'s largest");
          w.ins(spell::cvt(Ty::e4m3x2, Ty::f32, Round::rn_satfinite) + " " + h + ", " + zero + ", " + t);
          w.ins(spell::cvt(Ty::u32, Ty::u16) + " " + x + ", " + h, "the ue4m3 factor");
          w.ins(spell::cvt(Ty::f16x2, Ty::e4m3x2, Round::rn) + " " + hh + ", " + h);
          w.ins(spell::alu(Op::mov, Ty::b32) + " {" + lo + ", " + hi + "}, " + hh);
          w.ins(spell::cvt(Ty::f32, Ty::f16) + " " + xf + ", " + lo);
          w.ins(spell::alu(spell::math(MathFn::rcp, false)) + " " + k + ", " + xf);
          w.ins(spell::alu(spell::math(MathFn::min, false)) + " " + k + ", " + k + ", 0f7F7FFFFF", "1 / X, at most FLT_MAX");
        } else {
          w.ins(u32 + " " + x + ", " + m + ", " + s(carry), "carries into the exponent when amax's mantissa exceeds the largest " +
                                                            std::string(isa::name(q.elem)) + "'s");
          w.ins(spell::alu(Op::shr, Ty::u32) + " " + x + ", " + x + ", 23");
          w.ins(spell::alu(Op::max, Ty::u32) + " " + x + ", " + x + ", " + s(ef));
          w.ins(spell::alu(Op::sub, Ty::u32) + " " + x + ", " + x + ", " + s(ef));
          w.ins(spell::alu(Op::min, Ty::u32) + " " + x + ", " + x + ", 254", "the ue8m0 factor 2^(x - 127)");
          w.ins(spell::alu(Op::sub, Ty::u32) + " " + k + ", 254, " + x);
          w.ins(spell::alu(Op::shl, Ty::b32) + " " + k + ", " + k + ", 23", "2^(127 - x) as f32");
        }
        for (const auto& [j, c] : js) w.ins(mul + " " + out.at(static_cast<size_t>(j)) + ", " + a.at(static_cast<size_t>(j)) + ", " + k);
        // The block's factor byte, where its row and first column lie inside (n is a multiple of vec).
        const std::string col = w.r32(), p = w.pred(), o = w.r32(), cb = w.r32(), o64 = w.r64(), at = w.r64();
        w.ins(u32 + " " + col + ", " + tc + ", " + s(js.front().second));
        w.ins(spell::setp(Cmp::lt, Ty::u32, BoolOp::and_) + " " + p + ", " + col + ", " + cols + ", " + prow);
        if (q.shuffle) w.ins(spell::alu(Op::and_, Ty::pred) + " " + p + ", " + p + ", " + first_lane);
        w.ins(spell::alu(Op::shr, Ty::u32) + " " + cb + ", " + col + ", " + s(lv));
        w.ins(spell::alu(Op::shr, Ty::u32) + " " + o + ", " + cb + ", 2");
        w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + o + ", " + o + ", 512, " + ro);
        w.ins(spell::alu(Op::and_, Ty::b32) + " " + cb + ", " + cb + ", 3");
        w.ins(u32 + " " + o + ", " + o + ", " + cb);
        w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + o64 + ", " + o);
        w.ins(spell::alu(Op::add, Ty::u64) + " " + at + ", " + gbase.at(q.dst) + ", " + o64);
        w.ins("@" + p + " " + spell::st(Space::global, Ty::b8) + " [" + at + "], " + x);
      }
    }
  };
  if (d.wgmma) {
    const auto [tr, tc] = wgmma_base(d, row0, col0);
    std::vector<std::pair<int, Cell>> cells;
    for (const auto& [j, b, c] : wgmma_cells(r)) cells.push_back({j, c});
    blocks(cells, tr, tc);
  } else {
    for_warps(d, L, [&](const std::vector<const plan::LdInstr*>& fs, const std::string& wrow) {
      // One shape per set (plan::quantize_miss): the thread's first row and column once.
      const auto [tr, tc] = ld_base(fs.front()->shape, row0, col0, wrow);
      std::vector<std::pair<int, Cell>> cells;
      for (const plan::LdInstr* f : fs)
        for (int j = 0; j < f->regs; ++j) {
          const isa::LdCell c = isa::ld_cell(f->shape, 0, j);
          cells.push_back({f->first_reg + j, Cell{f->row0 + c.lane, f->elem0 + c.column}});
        }
      blocks(cells, tr, tc);
    });
  }
  regs[q.def.name] = out;
  w.blank();
}

// A row reduction: each thread folds the registers of each row it holds (max.f32, add.rn.f32,
// abs.f32: §9.7.3), in register order; where 4 lanes share a row (.16x256b, wgmma) it then folds
// in lane ^ 1's and lane ^ 2's partial results (shfl.sync.bfly.b32, §9.7.9.6), so that all 4
// hold the row's. Register j of the result names its row's register; a code copy serves every
// warp whose registers group into rows alike (else each warp its own).
void Emitter::reduce(const plan::ReduceStep& r, const std::string& L) {
  const plan::RegDef& d = r.def;
  const auto& a = regs.at(r.a);
  const auto& pool = canon.at(r.pool);
  const std::string op = spell::alu(r.fn == ReduceFn::sum ? spell::math(MathFn::add, false) : spell::math(MathFn::max, false));
  const std::string abs = spell::alu(spell::math(MathFn::abs, false));
  // Each register's row, relative to its thread's first (the row pattern of a code copy).
  using RowOf = std::vector<std::pair<int, int64_t>>;  // (register, row)
  auto slots = [&](const RowOf& rows) {
    std::map<int64_t, int> first;
    std::vector<int> out(static_cast<size_t>(d.regs), -1);
    for (const auto& [j, row] : rows) out[static_cast<size_t>(j)] = first.emplace(row, j).first->second;
    return out;
  };
  auto fold = [&](const RowOf& rows, const std::vector<int>& slot) {
    for (const auto& [j, row] : rows) {
      const size_t u = static_cast<size_t>(j), k = static_cast<size_t>(slot[u]);
      const std::string& x = a.at(u);
      std::string v = x;
      if (r.fn == ReduceFn::absmax) {
        v = w.r32();
        w.ins(abs + " " + v + ", " + x);
      }
      if (slot[u] == j) w.ins(spell::alu(Op::mov, Ty::b32) + " " + pool.at(k) + ", " + v);
      else w.ins(op + " " + pool.at(k) + ", " + pool.at(k) + ", " + v);
    }
    if (!r.shuffle) return;
    for (const auto& [j, row] : rows) {
      if (slot[static_cast<size_t>(j)] != j) continue;
      const std::string& acc = pool.at(static_cast<size_t>(j));
      for (int x : {1, 2}) {
        const std::string t = w.r32();
        w.ins(spell::shfl_bfly() + " " + t + ", " + acc + ", " + s(x) + ", 31, -1", "lane ^ " + s(x) + " holds the same row");
        w.ins(op + " " + acc + ", " + acc + ", " + t);
      }
    }
  };
  std::vector<int> slot;
  if (d.wgmma) {
    // §9.7.15.5.1.1: register pair i of an N group of M group g is in row 64 g + 8 (i % 2).
    RowOf rows;
    size_t reg = 0;
    for (int row = 0; row < d.rows; row += 64)
      for (int ng : d.groups) {
        for (int i = 0; i < ng / 4; ++i)
          for (int e = 0; e < 2; ++e) rows.push_back({static_cast<int>(reg) + 2 * i + e, row + 8 * (i % 2)});
        reg += static_cast<size_t>(ng / 2);
      }
    slot = slots(rows);
    fold(rows, slot);
  } else {
    auto rows_of = [&](const std::vector<const plan::LdInstr*>& fs) {
      RowOf rows;
      for (const plan::LdInstr* f : fs)
        for (int j = 0; j < f->regs; ++j) rows.push_back({f->first_reg + j, f->row0 + isa::ld_cell(f->shape, 0, j).lane});
      return rows;
    };
    std::map<int, std::vector<const plan::LdInstr*>> by_warp;
    for (const auto& f : d.frags) by_warp[f.warp].push_back(&f);
    // Rows relative to the warp's first: warps alike share the code.
    std::map<int, std::pair<RowOf, std::vector<int>>> pattern;
    bool alike = true;
    for (const auto& [wi, fs] : by_warp) {
      RowOf rows = rows_of(fs);
      int64_t lo = INT64_MAX;
      for (const auto& [j, row] : rows) lo = std::min(lo, row);
      for (auto& [j, row] : rows) row -= lo;
      std::vector<int> sl = slots(rows);
      alike = alike && (pattern.empty() || (pattern.begin()->second.first == rows && pattern.begin()->second.second == sl));
      pattern[wi] = {std::move(rows), std::move(sl)};
    }
    const int lo = by_warp.begin()->first, hi = by_warp.rbegin()->first;
    if (alike && hi - lo + 1 == static_cast<int>(by_warp.size())) {
      const bool all = !skip_other_warps(lo, hi, L);
      slot = pattern.begin()->second.second;
      fold(pattern.begin()->second.first, slot);
      if (!all) w.label(L + "_w");
    } else {
      // Warps that group their registers differently: each its own code, and the result's
      // registers its own per register (no shared row registers across the copies).
      slot.resize(static_cast<size_t>(d.regs));
      for (int j = 0; j < d.regs; ++j) slot[static_cast<size_t>(j)] = j;
      for (const auto& [wi, pr] : pattern) {
        const std::string skip = L + "_w" + s(wi);
        w.ins("@" + warp_pred(wi) + " " + spell::bra() + " " + skip);
        fold(pr.first, pr.second);
        // Every register of a row gets the row's value (the copies name registers differently).
        for (const auto& [j, row] : pr.first) {
          const int k = pr.second[static_cast<size_t>(j)];
          if (k != j) w.ins(spell::alu(Op::mov, Ty::b32) + " " + pool.at(static_cast<size_t>(j)) + ", " + pool.at(static_cast<size_t>(k)));
        }
        w.label(skip);
      }
    }
  }
  std::vector<std::string> out(static_cast<size_t>(d.regs));
  for (int j = 0; j < d.regs; ++j) out[static_cast<size_t>(j)] = pool.at(static_cast<size_t>(slot[static_cast<size_t>(j)]));
  regs[d.name] = out;
}

// The 16-bit value of element `elem` of a register holding `epr` elements of `bits` each.
std::string Emitter::half(const std::string& r, int elem, int epr) {
  const std::string lo = w.r16(), hi = w.r16();
  w.ins(spell::alu(Op::mov, Ty::b32) + " {" + lo + ", " + hi + "}, " + r);
  return (epr == 2 && elem == 1) ? hi : lo;
}

void Emitter::tmem_st(const plan::Step& step, const std::string& L) {
  const plan::TmemStStep& t = step.st;
  const auto& src = regs.at(t.src.name);
  static const std::vector<std::string> none;
  const std::string tmp = plan::planner_name("st", step.op);
  const auto& dst = t.direct ? none : regs.at(tmp);
  // Per warp: build the registers tcgen05.st moves from the ones tcgen05.ld filled (the planner
  // checked that every thread of the warp finds its elements in the same registers), then store.
  std::map<int, std::vector<size_t>> by_warp;
  for (size_t k = 0; k < t.dst.frags.size(); ++k) by_warp[t.dst.frags[k].warp].push_back(k);
  for (const auto& [wi, ks] : by_warp) {
    const std::string skip = L + "_w" + s(wi);
    w.ins("@" + warp_pred(wi) + " " + spell::bra() + " " + skip);
    for (size_t k : ks) {
      const plan::LdInstr& f = t.dst.frags[k];
      std::vector<std::string> operands;
      for (int j = 0; j < f.regs; ++j) {
        const auto& el = t.sources.at(k).at(static_cast<size_t>(j));
        if (t.direct) {  // the register already holds exactly what this one moves
          operands.push_back(src.at(static_cast<size_t>(el[0].reg)));
          continue;
        }
        const std::string& out = dst.at(static_cast<size_t>(f.first_reg + j));
        operands.push_back(out);
        std::vector<std::string> parts;
        for (const auto& e : el) {
          const std::string& in = src.at(static_cast<size_t>(e.reg));
          if (t.convert) {
            const std::string h = w.r16();
            w.ins(spell::cvt(spell::ty(t.dst.dtype), Ty::f32, Round::rn) + " " + h + ", " + in);
            parts.push_back(h);
          } else if (t.src.elem_bits == 16 && t.dst.elem_bits == 16) {
            parts.push_back(half(in, e.elem, t.src.elems_per_reg));
          }
        }
        if (parts.empty()) w.ins(spell::alu(Op::mov, Ty::b32) + " " + out + ", " + src.at(static_cast<size_t>(el[0].reg)));
        else if (parts.size() == 2) w.ins(spell::alu(Op::mov, Ty::b32) + " " + out + ", {" + parts[0] + ", " + parts[1] + "}");
        else w.ins(spell::cvt(Ty::u32, Ty::u16) + " " + out + ", " + parts[0], "one 16-bit element in the low half (unpacked)");
      }
      std::string v = "{";
      for (size_t j = 0; j < operands.size(); ++j) v += (j ? ", " : "") + operands[j];
      v += "}";
      const std::string split = f.shape == isa::LdShape::s16x32bx2 ? ", " + s(f.split) : "";
      w.ins(spell::st(f.shape, f.num, f.pack) + " " + tmem(f.alloc, f.taddr) + split + ", " + v);
    }
    w.label(skip);
  }
}

// The thread part of a fragment's cells (isa::ld_cell with register 0) as a byte offset into
// a row-major global tensor: lane part * row stride + column part * bytes per column.
std::string Emitter::thread_offset(const plan::LdInstr& f, int64_t stride, int64_t col_bytes) {
  const std::string tr = w.r32(), tc = w.r32(), t64 = w.r64();
  switch (f.shape) {
    case isa::LdShape::s32x32b:  // lane t, column 0
      w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + tr + ", " + lane + ", " + s(stride));
      break;
    case isa::LdShape::s16x64b:  // lane t/4 + 8(t%2), column (t/2)%2
      w.ins(spell::alu(Op::shr, Ty::u32) + " " + tr + ", " + lane + ", 2");
      w.ins(spell::alu(Op::and_, Ty::b32) + " " + tc + ", " + lane + ", 1");
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tr + ", " + tc + ", 8, " + tr);
      w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + tr + ", " + tr + ", " + s(stride));
      w.ins(spell::alu(Op::bfe, Ty::u32) + " " + tc + ", " + lane + ", 1, 1");
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tr + ", " + tc + ", " + s(col_bytes) + ", " + tr);
      break;
    case isa::LdShape::s16x128b:  // lane t/4, column t%4
    case isa::LdShape::s16x256b:  // lane t/4, column 2(t%4)
      w.ins(spell::alu(Op::shr, Ty::u32) + " " + tr + ", " + lane + ", 2");
      w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + tr + ", " + tr + ", " + s(stride));
      w.ins(spell::alu(Op::and_, Ty::b32) + " " + tc + ", " + lane + ", 3");
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tr + ", " + tc + ", " + s(col_bytes * (f.shape == isa::LdShape::s16x256b ? 2 : 1)) + ", " + tr);
      break;
    case isa::LdShape::s16x32bx2:  // lane t%16; threads 16-31 at + immHalfSplitoff columns
      w.ins(spell::alu(Op::and_, Ty::b32) + " " + tr + ", " + lane + ", 15");
      w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + tr + ", " + tr + ", " + s(stride));
      w.ins(spell::alu(Op::shr, Ty::u32) + " " + tc + ", " + lane + ", 4");
      // split counts tensor-memory columns; col_bytes counts register columns (two with .pack)
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tr + ", " + tc + ", " + s(f.split * (f.pack ? col_bytes / 2 : col_bytes)) + ", " + tr);
      break;
  }
  w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + t64 + ", " + tr);
  return t64;
}

// Stores: thread t's register j holds (row, element) = fragment origin + cell(t, 0) + cell(0, j);
// the thread part is computed once per warp and shape, the register part is an offset.
void Emitter::store(const plan::StoreStep& st, const std::string& L) {
  const plan::RegDef& d = st.src;
  const auto& rs = regs.at(d.name);
  const int eb = isa::value_bits(st.to) / 8;
  const int64_t stride = st.global_cols * eb;
  const bool convert = d.dtype != st.to;
  const int per_col = d.view_packing;  // elements per tensor-memory column (1 with .pack::16b)
  std::map<int, std::vector<const plan::LdInstr*>> by_warp;
  for (const auto& f : d.frags) by_warp[f.warp].push_back(&f);
  for (const auto& [wi, fs] : by_warp) {
    const std::string skip = L + "_w" + s(wi);
    w.ins("@" + warp_pred(wi) + " " + spell::bra() + " " + skip);
    std::map<std::tuple<int, int, bool>, std::string> thread_part;
    for (const plan::LdInstr* f : fs) {
      // Bytes per register column: .pack registers span two columns of one element each.
      const int64_t col_bytes = (f->pack ? 2 : per_col) * eb;
      auto key = std::make_tuple(static_cast<int>(f->shape), f->split, f->pack);
      if (!thread_part.count(key)) thread_part[key] = thread_offset(*f, stride, col_bytes);
      const std::string a = w.r64();
      const int64_t origin = (st.row0.base + f->row0) * stride + (st.col0.base + f->elem0) * eb;
      w.ins(spell::alu(Op::add, Ty::s64) + " " + a + ", " + gbase.at(st.global) + ", " + hex(static_cast<uint64_t>(origin)));
      if (pair() && (st.cta_row || st.cta_col))
        w.ins(spell::alu(Op::mad_lo, Ty::s64) + " " + a + ", " + rank64 + ", " + s(st.cta_row * stride + st.cta_col * eb) + ", " + a, "CTA 1: per_cta further on");
      w.ins(spell::alu(Op::add, Ty::s64) + " " + a + ", " + a + ", " + thread_part[key]);
      // A register's elements are adjacent in the row: one 32-bit store when they fill it and sit aligned.
      const bool whole = !convert && d.elem_bits * d.elems_per_reg == 32 && d.elems_per_reg > 1 && stride % 4 == 0 &&
                         ((st.col0.base + f->elem0) * eb) % 4 == 0;
      for (int j = 0; j < f->regs; ++j) {
        const isa::LdCell c = isa::ld_cell(f->shape, 0, j);
        const int64_t col = f->pack ? 2 * c.column : c.column;
        const std::string& r = rs.at(static_cast<size_t>(f->first_reg + j));
        const int64_t reg_off = c.lane * stride + col * (f->pack ? 1 : per_col) * eb;
        auto addr = [&](int e) {
          const int64_t off = reg_off + int64_t{e} * eb;
          return "[" + a + (off ? "+" + s(off) : "") + "]";
        };
        if (whole || (d.elem_bits == 32 && !convert)) {
          w.ins(spell::st(Space::global, Ty::b32) + " " + addr(0) + ", " + r);
          continue;
        }
        std::vector<std::string> halves;
        if (d.elem_bits == 16) {
          const std::string lo = w.r16(), hi = w.r16();
          w.ins(spell::alu(Op::mov, Ty::b32) + " {" + lo + ", " + hi + "}, " + r);
          halves = {lo, hi};
        }
        for (int e = 0; e < d.elems_per_reg; ++e) {
          if (convert) {
            const std::string h = w.r16();
            w.ins(spell::cvt(spell::ty(st.to), Ty::f32, Round::rn) + " " + h + ", " + r);
            w.ins(spell::st(Space::global, Ty::b16) + " " + addr(e) + ", " + h);
          } else if (d.elem_bits == 16) {
            w.ins(spell::st(Space::global, Ty::b16) + " " + addr(e) + ", " + halves[static_cast<size_t>(e)]);
          } else {
            const std::string b = w.r32(), h = w.r16();
            w.ins(spell::alu(Op::bfe, Ty::u32) + " " + b + ", " + r + ", " + s(e * d.elem_bits) + ", " + s(d.elem_bits));
            w.ins(spell::cvt(Ty::u16, Ty::u32) + " " + h + ", " + b);
            w.ins(spell::st(Space::global, Ty::b8) + " " + addr(e) + ", " + h);
          }
        }
      }
    }
    w.label(skip);
  }
}

namespace {
// The value as an f32 register, from the register's 32-bit form (f32 or s32 bits, or an f16 in
// the low half: tcgen05 D is unpacked, PTX ISA 9.1 §9.7.16.10.4.1).
// The register pairs of a wgmma accumulator (§9.7.15.5.1.1), in register order: fn(row, col,
// lower, x, y, packed) for the pair at column col + 2 (l % 4) of the warpgroup's rows row + 16q +
// l/4 (lower) or row + 16q + l/4 + 8, row the first of its M group (64 each, registers of one after
// the other's); x and y its two registers, or `packed` the one holding two f16 accumulators.
template <class F>
void each_acc_pair(const plan::RegDef& d, const std::vector<std::string>& rs, F fn) {
  const bool packed = d.dtype == isa::DType::f16;
  size_t reg = 0;
  for (int row = 0; row < d.rows; row += 64) {
    int n0 = 0;
    for (int ng : d.groups) {
      for (int i = 0; i < ng / 4; ++i) {
        const size_t at = reg + static_cast<size_t>(packed ? i : 2 * i);
        if (packed) fn(row, n0 + 8 * (i / 2), i % 2 == 0, std::string(), std::string(), rs.at(at));
        else fn(row, n0 + 8 * (i / 2), i % 2 == 0, rs.at(at), rs.at(at + 1), std::string());
      }
      reg += static_cast<size_t>(packed ? ng / 4 : ng / 2);
      n0 += ng;
    }
  }
}

std::string to_f32(PtxWriter& w, isa::DType from, const std::string& x) {
  if (from == isa::DType::f32) return x;
  const std::string f = w.r32();
  if (from == isa::DType::s32) {
    w.ins(spell::cvt(Ty::f32, Ty::s32, Round::rn) + " " + f + ", " + x);
  } else {
    const std::string h = w.r16();
    w.ins(spell::cvt(Ty::u16, Ty::u32) + " " + h + ", " + x);
    w.ins(spell::cvt(Ty::f32, Ty::f16) + " " + f + ", " + h);
  }
  return f;
}
}  // namespace

// Stores elements (row, col) and (row, col + 1) of the register set: both at once when aligned
// and in bounds, else each that is in bounds (row < rows, col < cols at run time). `x`/`y` are
// 32-bit registers, or `packed` an .f16x2 register holding both (wgmma f16 accumulators).
void Emitter::store_pair(const plan::StoreStep& st, const std::string& x, const std::string& y, const std::string& packed,
                         const std::string& row, const std::string& col) {
  const isa::DType from = st.src.dtype, out = st.to;
  if (out == isa::DType::e2m1) return store_e2m1_pair(st, x, y, row, col);
  const int es = isa::value_bits(out) / 8;
  // A program's tensor may have one extent at run time and the other fixed.
  const std::string rows = st.rows_param.empty() ? s(st.global_rows) : size.at(st.rows_param);
  const std::string cols = st.cols_param.empty() ? s(st.global_width) : size.at(st.cols_param);
  const std::string ld = st.ld_param.empty() ? s(st.global_cols) : size.at(st.ld_param);
  const std::string c1 = w.r32(), p0 = w.pred(), p1 = w.pred(), pv = w.pred(), ps0 = w.pred(), ps1 = w.pred();
  const std::string rowok = w.pred(), t = w.r32();
  w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + rowok + ", " + row + ", " + rows);
  w.ins(spell::setp(Cmp::lt, Ty::u32, BoolOp::and_) + " " + p0 + ", " + col + ", " + cols + ", " + rowok);
  w.ins(spell::alu(Op::add, Ty::u32) + " " + c1 + ", " + col + ", 1");
  w.ins(spell::setp(Cmp::lt, Ty::u32, BoolOp::and_) + " " + p1 + ", " + c1 + ", " + cols + ", " + rowok);
  // A two-element store is aligned when the row stride is even (the column is even, D row-major).
  if (st.ld_param.empty()) {
    w.ins(spell::setp(Cmp::eq, Ty::u32, BoolOp::and_) + " " + pv + ", " + s(st.global_cols % 2) + ", 0, " + p1);
  } else {
    w.ins(spell::alu(Op::and_, Ty::b32) + " " + t + ", " + ld + ", 1");
    w.ins(spell::setp(Cmp::eq, Ty::u32, BoolOp::and_) + " " + pv + ", " + t + ", 0, " + p1);
  }
  w.ins(spell::alu(Op::and_, Ty::pred) + " " + ps0 + ", " + p0 + ", !" + pv);
  w.ins(spell::alu(Op::and_, Ty::pred) + " " + ps1 + ", " + p1 + ", !" + pv);
  const std::string addr = w.r64(), idx = w.r64();
  w.ins(spell::alu(Op::mul_wide, Ty::u32) + " " + idx + ", " + row + ", " + ld);
  w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + addr + ", " + col);
  w.ins(spell::alu(Op::add, Ty::u64) + " " + idx + ", " + idx + ", " + addr);
  w.ins(spell::alu(Op::mad_lo, Ty::u64) + " " + addr + ", " + idx + ", " + s(es) + ", " + gbase.at(st.global));
  std::string fx, fy;
  if (!packed.empty()) {
    const std::string lo = w.r16(), hi = w.r16();
    w.ins(spell::alu(Op::mov, Ty::b32) + " {" + lo + ", " + hi + "}, " + packed);
    if (out == isa::DType::f16) {
      w.ins("@" + pv + " " + spell::st(Space::global, Ty::b32) + " [" + addr + "], " + packed);
      w.ins("@" + ps0 + " " + spell::st(Space::global, Ty::b16) + " [" + addr + "], " + lo);
      w.ins("@" + ps1 + " " + spell::st(Space::global, Ty::b16) + " [" + addr + "+2], " + hi);
      return;
    }
    fx = w.r32();
    fy = w.r32();
    w.ins(spell::cvt(Ty::f32, Ty::f16) + " " + fx + ", " + lo);
    w.ins(spell::cvt(Ty::f32, Ty::f16) + " " + fy + ", " + hi);
  } else if (out == isa::DType::s32) {  // s32 accumulators only (rule-checked)
    w.ins("@" + pv + " " + spell::st(Space::global, Ty::s32, 2) + " [" + addr + "], {" + x + ", " + y + "}");
    w.ins("@" + ps0 + " " + spell::st(Space::global, Ty::s32) + " [" + addr + "], " + x);
    w.ins("@" + ps1 + " " + spell::st(Space::global, Ty::s32) + " [" + addr + "+4], " + y);
    return;
  } else if (out == isa::DType::f16 && from == isa::DType::f16) {
    const std::string hx = w.r16(), hy = w.r16(), pk = w.r32();
    w.ins(spell::cvt(Ty::u16, Ty::u32) + " " + hx + ", " + x);
    w.ins(spell::cvt(Ty::u16, Ty::u32) + " " + hy + ", " + y);
    w.ins(spell::alu(Op::mov, Ty::b32) + " " + pk + ", {" + hx + ", " + hy + "}");
    w.ins("@" + pv + " " + spell::st(Space::global, Ty::b32) + " [" + addr + "], " + pk);
    w.ins("@" + ps0 + " " + spell::st(Space::global, Ty::b16) + " [" + addr + "], " + hx);
    w.ins("@" + ps1 + " " + spell::st(Space::global, Ty::b16) + " [" + addr + "+2], " + hy);
    return;
  } else {
    fx = to_f32(w, from, x);
    fy = to_f32(w, from, y);
  }
  if (out == isa::DType::f32) {
    w.ins("@" + pv + " " + spell::st(Space::global, Ty::f32, 2) + " [" + addr + "], {" + fx + ", " + fy + "}");
    w.ins("@" + ps0 + " " + spell::st(Space::global, Ty::f32) + " [" + addr + "], " + fx);
    w.ins("@" + ps1 + " " + spell::st(Space::global, Ty::f32) + " [" + addr + "+4], " + fy);
    return;
  }
  if (es == 1) {
    // e4m3 / e5m2 (from f32 accumulators): both in one .b16, the column's in the low byte, which
    // is first in memory; a value beyond the type's range is its largest finite one (.satfinite).
    const std::string pk = w.r16(), hi = w.r16(), t = w.r32();
    w.ins(spell::cvt(out == isa::DType::e4m3 ? Ty::e4m3x2 : Ty::e5m2x2, Ty::f32, Round::rn_satfinite) + " " + pk + ", " + fy + ", " + fx);
    w.ins("@" + pv + " " + spell::st(Space::global, Ty::b16) + " [" + addr + "], " + pk);
    w.ins(spell::cvt(Ty::u32, Ty::u16) + " " + t + ", " + pk);
    w.ins(spell::alu(Op::shr, Ty::b32) + " " + t + ", " + t + ", 8");
    w.ins(spell::cvt(Ty::u16, Ty::u32) + " " + hi + ", " + t);
    w.ins("@" + ps0 + " " + spell::st(Space::global, Ty::b8) + " [" + addr + "], " + pk);
    w.ins("@" + ps1 + " " + spell::st(Space::global, Ty::b8) + " [" + addr + "+1], " + hi);
    return;
  }
  const std::string pk = w.r32(), h0 = w.r16(), h1 = w.r16();
  w.ins(spell::cvt(out == isa::DType::bf16 ? Ty::bf16x2 : Ty::f16x2, Ty::f32, Round::rn) + " " + pk + ", " + fy + ", " + fx);
  w.ins("@" + pv + " " + spell::st(Space::global, Ty::b32) + " [" + addr + "], " + pk);
  w.ins(spell::alu(Op::mov, Ty::b32) + " {" + h0 + ", " + h1 + "}, " + pk);
  w.ins("@" + ps0 + " " + spell::st(Space::global, Ty::b16) + " [" + addr + "], " + h0);
  w.ins("@" + ps1 + " " + spell::st(Space::global, Ty::b16) + " [" + addr + "+2], " + h1);
}

// An e2m1 D (an MXFP4 D: its columns and row stride a multiple of 32, rule QUANT-N): elements
// (row, col) and (row, col + 1), col even, in one byte, the column's in the low nibble, which
// memory holds first (cvt.rn.satfinite.e2m1x2.f32 puts its first source in the upper nibble,
// §9.7.9.21), at byte (row ld + col) / 2; stored where the pair lies inside D.
void Emitter::store_e2m1_pair(const plan::StoreStep& st, const std::string& x, const std::string& y, const std::string& row,
                              const std::string& col) {
  if (st.src.dtype != isa::DType::f32) throw std::logic_error("an e2m1 store of other than f32 registers");
  const std::string rows = st.rows_param.empty() ? s(st.global_rows) : size.at(st.rows_param);
  const std::string cols = st.cols_param.empty() ? s(st.global_width) : size.at(st.cols_param);
  const std::string ld = st.ld_param.empty() ? s(st.global_cols) : size.at(st.ld_param);
  const std::string p = w.pred(), rowok = w.pred(), c1 = w.r32(), idx = w.r64(), c64 = w.r64(), addr = w.r64(), pk = w.r8();
  w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + rowok + ", " + row + ", " + rows);
  w.ins(spell::alu(Op::add, Ty::u32) + " " + c1 + ", " + col + ", 1");
  w.ins(spell::setp(Cmp::lt, Ty::u32, BoolOp::and_) + " " + p + ", " + c1 + ", " + cols + ", " + rowok);
  w.ins(spell::alu(Op::mul_wide, Ty::u32) + " " + idx + ", " + row + ", " + ld);
  w.ins(spell::cvt(Ty::u64, Ty::u32) + " " + c64 + ", " + col);
  w.ins(spell::alu(Op::add, Ty::u64) + " " + idx + ", " + idx + ", " + c64);
  w.ins(spell::alu(Op::shr, Ty::u64) + " " + idx + ", " + idx + ", 1", "two elements a byte");
  w.ins(spell::alu(Op::add, Ty::u64) + " " + addr + ", " + gbase.at(st.global) + ", " + idx);
  w.ins(spell::cvt(Ty::e2m1x2, Ty::f32, Round::rn_satfinite) + " " + pk + ", " + y + ", " + x);
  w.ins("@" + p + " " + spell::st(Space::global, Ty::b8) + " [" + addr + "], " + pk);
}

// Elements (row, col) and (row, col + 1) of a register set in D's type: one 16-bit register for
// 8-bit types (e4m3, e5m2: from f32 registers only, rule D-FP8), one 32-bit register for 16-bit
// types, two for 32-bit ones (their order in memory).
std::vector<std::string> Emitter::pair_out(const plan::StoreStep& st, const std::string& x, const std::string& y,
                                           const std::string& packed) {
  const isa::DType from = st.src.dtype, out = st.to;
  std::string fx, fy;
  if (!packed.empty()) {  // two f16 accumulators in one register
    if (out == isa::DType::f16) return {packed};
    const std::string lo = w.r16(), hi = w.r16();
    fx = w.r32();
    fy = w.r32();
    w.ins(spell::alu(Op::mov, Ty::b32) + " {" + lo + ", " + hi + "}, " + packed);
    w.ins(spell::cvt(Ty::f32, Ty::f16) + " " + fx + ", " + lo);
    w.ins(spell::cvt(Ty::f32, Ty::f16) + " " + fy + ", " + hi);
  } else if (out == isa::DType::s32) {
    return {x, y};
  } else {
    fx = to_f32(w, from, x);
    fy = to_f32(w, from, y);
  }
  if (out == isa::DType::f32) return {fx, fy};
  if (isa::value_bits(out) == 8) {
    // cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b puts a in the upper byte (§9.7.9.21): the
    // column's element in the low byte, which memory holds first (little-endian).
    const std::string pk = w.r16();
    w.ins(spell::cvt(out == isa::DType::e4m3 ? Ty::e4m3x2 : Ty::e5m2x2, Ty::f32, Round::rn_satfinite) + " " + pk + ", " + fy + ", " + fx);
    return {pk};
  }
  const std::string pk = w.r32();
  w.ins(spell::cvt(out == isa::DType::bf16 ? Ty::bf16x2 : Ty::f16x2, Ty::f32, Round::rn) + " " + pk + ", " + fy + ", " + fx);
  return {pk};
}

// The staging tile by stmatrix.x4 (§9.7.14.5.16): lane l gives the address of row l % 8 of matrix
// l / 8, i.e. row 16q + (l % 16) of the warpgroup's and the 8 columns 8 (l / 16) on from the x4's
// first; that 16-byte chunk c of row r lies at chunk c ^ (r % 8) of the 128-byte swizzled box
// (§5.5.7, Table 41), r % 8 = l % 8. The x4's first chunk is even (16 columns from a multiple of
// 16), so its lanes' chunks are c0 ^ y with y = (l / 16) ^ (l % 8), and its box and M group an
// immediate offset. The address is computed per x4, as st.shared's per pair, not kept in a
// register for the whole epilogue.
// With subtiles, only box `only_box`'s x4s, at its buffer (only_box % 2).
void Emitter::stmatrix_staging(const plan::StoreStep& st, const std::vector<std::string>& rs, const std::string& wgi,
                               const std::string& q, int row_bytes, int only_box) {
  const plan::RegDef& d = st.src;
  const std::string sr = w.r32(), y = w.r32(), sx = w.r32(), sbase = w.r32();
  w.ins(spell::alu(Op::and_, Ty::b32) + " " + sr + ", " + lane + ", 15");
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + sr + ", " + q + ", 16, " + sr, "the row lane l gives: 16q + l % 16");
  w.ins(spell::alu(Op::shr, Ty::u32) + " " + y + ", " + lane + ", 4");
  w.ins(spell::alu(Op::and_, Ty::b32) + " " + sx + ", " + lane + ", 7");
  w.ins(spell::alu(Op::xor_, Ty::b32) + " " + y + ", " + y + ", " + sx, "(l / 16) ^ (l % 8): its chunk's offset and swizzle");
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + sbase + ", " + wgi + ", " + s(st.warpgroup_bytes) + ", " + s(st.stage_offset), "the warpgroup's " + s(d.rows) + " rows of each box");
  w.ins(spell::alu(Op::add, Ty::u32) + " " + sbase + ", " + sbase + ", " + base);
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + sbase + ", " + sr + ", " + s(row_bytes) + ", " + sbase);
  std::vector<std::string> frag;
  int first_col = 0, first_row = 0;
  each_acc_pair(d, rs, [&](int row, int col, bool, const std::string& x, const std::string& yv, const std::string& packed) {
    if (only_box >= 0 && col / st.box_cols != only_box) return;  // an x4's 16 columns lie in one box
    if (frag.empty()) first_col = col, first_row = row;
    frag.push_back(pair_out(st, x, yv, packed).at(0));
    if (frag.size() < 4) return;
    const int box = first_col / st.box_cols, c0 = (first_col % st.box_cols) * 2 / 16;
    const std::string a = w.r32();
    w.ins(spell::alu(Op::xor_, Ty::b32) + " " + a + ", " + y + ", " + s(c0));
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + a + ", " + a + ", 16, " + sbase);
    const int64_t off = int64_t{st.subtiles ? box % 2 : box} * st.box_stride + int64_t{row_bytes} * first_row;
    w.ins(spell::stmatrix(4) + " [" + a + (off ? "+" + s(off) : "") + "], {" + frag[0] + ", " + frag[1] + ", " + frag[2] + ", " + frag[3] + "}");
    frag.clear();
  });
}

// D by TMA (§9.7.9.27.1.2): each warpgroup writes its 64 rows of the accumulator into its part of
// the staging tile, a 128-byte swizzled box per 128 bytes of a row (Table 41: 16-byte chunk c of
// row r lands at chunk c ^ (r % 8), so the eight rows of one st.shared hit eight different chunks,
// no bank conflicts), makes the writes visible to the async proxy, and one thread of the warpgroup
// stores the boxes; TMA writes only what lies inside the tensor (the edges).
void Emitter::tma_store(const plan::StoreStep& st, const std::string& L) {
  if (!st.src.wgmma) return box_store(st, L);
  if (st.map.optional) {
    // "epilogue": "auto": a tensor map strides rows only by 16-byte multiples. Where D's are not
    // (ld x element bytes at run time), the launcher passed zeros for the map, and the registers
    // go out by the clipped direct store. The condition is the launch's, so the warps agree.
    const int bytes = isa::value_bits(st.to) / 8;
    const std::string t = w.r32(), unaligned = w.pred();
    if (st.ld_param.empty()) w.ins(spell::alu(Op::mov, Ty::u32) + " " + t + ", " + s(st.global_cols * bytes));
    else w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + t + ", " + size.at(st.ld_param) + ", " + s(bytes), "bytes from one row of D to the next (low bits exact)");
    w.ins(spell::alu(Op::and_, Ty::b32) + " " + t + ", " + t + ", " + s(isa::kTmaStrideAlign - 1));
    w.ins(spell::setp(Cmp::ne, Ty::u32) + " " + unaligned + ", " + t + ", 0");
    w.ins("@" + unaligned + " " + spell::bra() + " " + L + "_direct", "rows no tensor map can stride: the direct store");
  }
  const plan::RegDef& d = st.src;
  const auto& rs = regs.at(d.name);
  const int es = isa::value_bits(st.to) / 8;
  const std::string wgi = w.r32(), q = w.r32(), r = w.r32(), rx = w.r32(), lc = w.r32(), wbase = w.r32();
  const std::string issuer = w.pred(), lane_pred = w.pred();
  w.ins(spell::alu(Op::sub, Ty::u32) + " " + wgi + ", " + warp + ", " + s(role ? role->ir().first_warp : 0));
  w.ins(spell::alu(Op::and_, Ty::b32) + " " + q + ", " + wgi + ", 3");
  w.ins(spell::setp(Cmp::ne, Ty::u32) + " " + lane_pred + ", " + lane + ", 0");
  w.ins(spell::setp(Cmp::ne, Ty::u32, BoolOp::or_) + " " + issuer + ", " + q + ", 0, " + lane_pred, "all but lane 0 of the warpgroup's first warp");
  w.ins(spell::alu(Op::shr, Ty::u32) + " " + wgi + ", " + wgi + ", 2", "warpgroup of the role");
  // The CTA's warpgroup w has named barrier 2 + w (0: the CTA's, 1: all consumers'; ping-pong
  // roles are warpgroups of their own), an immediate so that ptxas reserves only the barriers used.
  const int first_wg = (role ? role->ir().first_warp : 0) / 4;
  auto wg_sync = [&] {
    for (int g = 0; g < st.warpgroups; ++g) {
      const std::string pg = w.pred();
      w.ins(spell::setp(Cmp::eq, Ty::u32) + " " + pg + ", " + wgi + ", " + s(g));
      w.ins("@" + pg + " " + spell::bar_sync() + " " + s(2 + first_wg + g) + ", 128");
    }
  };
  if (st.reuse && !st.subtiles) {
    // A persistent role: the previous tile's boxes have left the tile before it is written again.
    w.ins("@!" + issuer + " " + spell::bulk_wait_read() + " 0");
    wg_sync();
  }
  if (st.shared_by) {
    // The tile overlays the ring: every consumer's last wgmma has read its stage (their
    // wait_group 0), and the async proxy's accesses are ordered before these generic writes.
    w.ins(spell::bar_sync() + " 1, " + s(st.shared_by), "every consumer is done with the ring the tile overlays");
    w.ins(spell::proxy_fence());
  }
  const int row_bytes = static_cast<int>(st.warpgroup_bytes / d.rows);
  // How D is written into the tile is the plan's (StoreStep::stmatrix, ir::d_staging): stmatrix.x4
  // (§9.7.14.5.16), the accumulator's fragment of a warp's 16 rows by 8 columns (lane 4j + c: row j
  // and j + 8, columns 2c, 2c + 1; §9.7.15.5.1.1) being two 8x8 matrices in stmatrix's own layout
  // (Figure 107), so one x4 writes 16 rows by 16 columns: four pairs of each_acc_pair in its order,
  // (rows 0-7, columns 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15). Else 32-bit st.shared per pair.
  if (st.subtiles) {
    tma_store_subtiles(st, rs, wgi, q, issuer, wg_sync, row_bytes);
  } else if (st.stmatrix) {
    stmatrix_staging(st, rs, wgi, q, row_bytes);
  } else {
    // Row 16q + l/4 (and + 8) of each 64 of the warpgroup's; byte 2 es (l % 4) of the 8-column group.
    w.ins(spell::alu(Op::shr, Ty::u32) + " " + r + ", " + lane + ", 2");
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + r + ", " + q + ", 16, " + r);
    w.ins(spell::alu(Op::and_, Ty::b32) + " " + rx + ", " + r + ", 7", "the row's swizzle (r % 8; the same for r + 8)");
    w.ins(spell::alu(Op::and_, Ty::b32) + " " + lc + ", " + lane + ", 3");
    w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + lc + ", " + lc + ", " + s(2 * es), "its byte in the 8 columns");
    const std::string within = w.r32(), lchunk = w.r32();
    w.ins(spell::alu(Op::and_, Ty::b32) + " " + within + ", " + lc + ", 15");
    w.ins(spell::alu(Op::shr, Ty::u32) + " " + lchunk + ", " + lc + ", 4");
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + wbase + ", " + wgi + ", " + s(st.warpgroup_bytes) + ", " + s(st.stage_offset), "the warpgroup's " + s(d.rows) + " rows of each box");
    w.ins(spell::alu(Op::add, Ty::u32) + " " + wbase + ", " + wbase + ", " + base);
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + wbase + ", " + r + ", " + s(row_bytes) + ", " + wbase);
    w.ins(spell::alu(Op::add, Ty::u32) + " " + wbase + ", " + wbase + ", " + within);
    each_acc_pair(d, rs, [&](int row, int col, bool lower, const std::string& x, const std::string& y, const std::string& packed) {
      // The 8 columns' bytes start on a 16-byte chunk for 16- and 32-bit D; for an 8-bit D every
      // second group of 8 starts 8 bytes into one (the byte in the chunk is not swizzled).
      const int box = col / st.box_cols, chunk = (col % st.box_cols) * es / 16, in_chunk = (col % st.box_cols) * es % 16;
      const std::vector<std::string> v = pair_out(st, x, y, packed);
      const std::string a = w.r32();
      w.ins(spell::alu(Op::add, Ty::u32) + " " + a + ", " + lchunk + ", " + s(chunk));
      w.ins(spell::alu(Op::xor_, Ty::b32) + " " + a + ", " + a + ", " + rx);
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + a + ", " + a + ", 16, " + wbase);
      // The M group's rows (a multiple of 8: the same swizzle), and 8 rows on for the upper pair.
      const int64_t off = int64_t{box} * st.box_stride + int64_t{row_bytes} * (row + (lower ? 0 : 8)) + in_chunk;
      const std::string at = "[" + a + (off ? "+" + s(off) : "") + "]";
      // An 8-bit D: the thread's two adjacent bytes (its neighbours in the row are other lanes').
      if (es == 1) w.ins(spell::st(Space::shared, Ty::b16) + " " + at + ", " + v[0]);
      else if (v.size() == 1) w.ins(spell::st(Space::shared, Ty::b32) + " " + at + ", " + v[0]);
      else w.ins(spell::st(Space::shared, Ty::b32, 2) + " " + at + ", {" + v[0] + ", " + v[1] + "}");
    });
  }
  if (!st.subtiles) {
    // The writes reach the async proxy before TMA reads them (§9.7.13.4), every thread's before the
    // one that issues: the warpgroup's named barrier.
    w.ins(spell::proxy_fence());
    wg_sync();
    w.ins("@" + issuer + " " + spell::bra() + " " + L + "_done");
    const TmaBoxes b = tma_boxes(st, wgi);
    for (int j = 0; j < st.boxes; ++j) tma_store_box(st, b, j, int64_t{j} * st.box_stride, "");
    w.ins(spell::bulk_commit());
    // A CTA's shared memory must outlive the boxes' reads: wait before it exits (a persistent role
    // waits at its next tile instead, and once more at the end).
    if (!st.reuse) w.ins(spell::bulk_wait_read() + " 0");
    w.label(L + "_done");
  }
  if (st.map.optional) {
    w.ins(spell::bra() + " " + L + "_stored");
    w.label(L + "_direct");
    clipped_store(st, L + "_d");
    w.label(L + "_stored");
  }
}

// The warpgroup's first row of D (row0 + its rows w) and its first box's shared address: what
// each box's TMA store adds box j's columns and place to.
Emitter::TmaBoxes Emitter::tma_boxes(const plan::StoreStep& st, const std::string& wgi) {
  TmaBoxes b;
  b.row0 = affine(st.row0);
  b.col0 = affine(st.col0);
  if (st.map.rank == 3) b.plane = affine(st.plane);  // a grouped D: the group's plane
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + b.row0 + ", " + wgi + ", " + s(st.src.rows) + ", " + b.row0);
  b.box0 = w.r32();
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + b.box0 + ", " + wgi + ", " + s(st.warpgroup_bytes) + ", " + s(st.stage_offset));
  w.ins(spell::alu(Op::add, Ty::u32) + " " + b.box0 + ", " + b.box0 + ", " + base);
  return b;
}

// Box j of the warpgroup's rows, `at` bytes past its first box in shared memory, to D by TMA
// (cp.async.bulk.tensor, PTX ISA 9.1 §9.7.9.27.1.2); `pred` ("@!%p1 ": all but the issuing thread skip it) in front.
void Emitter::tma_store_box(const plan::StoreStep& st, const TmaBoxes& b, int j, int64_t at, const std::string& pred) {
  const std::string cj = w.r32(), sj = w.r32();
  w.ins(spell::alu(Op::add, Ty::u32) + " " + cj + ", " + b.col0 + ", " + s(int64_t{j} * st.box_cols));
  w.ins(spell::alu(Op::add, Ty::u32) + " " + sj + ", " + b.box0 + ", " + s(at));
  w.ins(pred + spell::tma_store(st.map.rank) + " [" + tmap.at(st.map.param) + ", {" + cj + ", " + b.row0 + (b.plane.empty() ? "" : ", " + b.plane) +
        "}], [" + sj + "]");
}

// D by TMA through two subtile buffers (plan::StoreStep::subtiles): box j (128 bytes of each of
// the warpgroup's rows) goes through buffer j % 2, each box its own bulk group
// (cp.async.bulk.commit_group, PTX ISA 9.1 §9.7.9.27.2.1). Before a buffer is written again, the
// issuing thread waits until the box that read it before has (cp.async.bulk.wait_group.read N,
// §9.7.9.27.2.2: all but the N most recent groups have read shared memory, N the groups committed
// since that box), and the warpgroup's named barrier (bar.sync, §9.7.13.1) holds its other threads
// until then. Box j >= 2 follows box j - 2: N = 1. A persistent role's boxes 0 and 1 follow the
// previous tile's last box of their buffer: with an even number of boxes B, box 0 follows box B - 2
// (box B - 1 since: N = 1) and box 1 box B - 1 (box 0 since: N = 1); with an odd B, box 0 follows
// box B - 1 (N = 0) and box 1 box B - 2 (boxes B - 1 and 0 since: N = 2). The boxes' writes reach
// the async proxy before TMA reads them (fence.proxy.async.shared::cta, §9.7.13.4), every thread's
// before the issuer's: the barrier again.
void Emitter::tma_store_subtiles(const plan::StoreStep& st, const std::vector<std::string>& rs, const std::string& wgi,
                                 const std::string& q, const std::string& issuer, const std::function<void()>& wg_sync,
                                 int row_bytes) {
  const TmaBoxes b = tma_boxes(st, wgi);
  for (int j = 0; j < st.boxes; ++j) {
    if (j >= 2 || st.reuse) {
      const int before = j >= 2 ? j - 2 : (st.boxes - 1) % 2 == j ? st.boxes - 1 : st.boxes - 2;  // that box's index
      const int pending = j >= 2 ? 1 : j + st.boxes - 1 - before;                                  // groups since
      w.ins("@!" + issuer + " " + spell::bulk_wait_read() + " " + s(pending),
            "buffer " + s(j % 2) + " is free once the store that read it before has read it out");
      wg_sync();
    }
    stmatrix_staging(st, rs, wgi, q, row_bytes, j);
    w.ins(spell::proxy_fence());
    wg_sync();
    tma_store_box(st, b, j, int64_t{j % 2} * st.box_stride, "@!" + issuer + " ");
    w.ins("@!" + issuer + " " + spell::bulk_commit(), "one bulk group per box");
  }
  // A CTA's shared memory must outlive the boxes' reads: wait before it exits (a persistent role
  // waits at its next tile instead, and once more at the end).
  if (!st.reuse) w.ins("@!" + issuer + " " + spell::bulk_wait_read() + " 0");
}

// A store clipped to the run-time extents: each thread's elements in pairs of adjacent columns,
// at the tile's run-time origin plus the fragment's cell.
void Emitter::clipped_store(const plan::StoreStep& st, const std::string& L) {
  const plan::RegDef& d = st.src;
  const auto& rs = regs.at(d.name);
  const std::string row0 = affine(st.row0), col0 = affine(st.col0);
  if (d.wgmma) {
    // §9.7.15.5.1.1: warp q of the warpgroup, lane l: register pair i of an N group holds rows
    // 16q + l/4 + 8 (i % 2) and columns 8 (i / 2) + 2 (l % 4) + {0, 1} of its warpgroup's 64 rows.
    // (not a structured binding: the lambda below captures them, which clang before 16 refuses)
    const std::pair<std::string, std::string> base = wgmma_base(d, row0, col0);
    const std::string r0 = base.first, c0 = base.second, r8 = w.r32();
    w.ins(spell::alu(Op::add, Ty::u32) + " " + r8 + ", " + r0 + ", 8");
    // A warpgroup of several M groups: the rows of group i lie 64 i further.
    std::map<int, std::pair<std::string, std::string>> at_row{{0, {r0, r8}}};
    each_acc_pair(d, rs, [&](int row, int c, bool lower, const std::string& x, const std::string& y, const std::string& packed) {
      if (!at_row.count(row)) {
        const std::string g0 = w.r32(), g8 = w.r32();
        w.ins(spell::alu(Op::add, Ty::u32) + " " + g0 + ", " + r0 + ", " + s(row), "M group " + s(row / 64));
        w.ins(spell::alu(Op::add, Ty::u32) + " " + g8 + ", " + r8 + ", " + s(row));
        at_row[row] = {g0, g8};
      }
      const std::string col = w.r32();
      w.ins(spell::alu(Op::add, Ty::u32) + " " + col + ", " + c0 + ", " + s(c));
      store_pair(st, x, y, packed, lower ? at_row.at(row).first : at_row.at(row).second, col);
    });
    return;
  }
  // tcgen05.ld fragments: thread t of warp w, register j holds the cell (row, element) of
  // isa::ld_cell relative to the fragment's origin; adjacent registers of one row pair up.
  auto emit_frags = [&](const std::vector<const plan::LdInstr*>& fs, const std::string& wrow) {
    for (const plan::LdInstr* f : fs) {
      if (f->pack || d.elems_per_reg != 1) throw std::logic_error("a clipped store of packed registers");
      const std::string tr = w.r32(), tc = w.r32();
      switch (f->shape) {
        case isa::LdShape::s32x32b:  // lane t, column 0
          w.ins(spell::alu(Op::add, Ty::u32) + " " + tr + ", " + row0 + ", " + lane);
          w.ins(spell::alu(Op::mov, Ty::u32) + " " + tc + ", " + col0);
          break;
        case isa::LdShape::s16x256b: {  // lane t/4, column 2(t%4)
          const std::string x = w.r32();
          w.ins(spell::alu(Op::shr, Ty::u32) + " " + x + ", " + lane + ", 2");
          w.ins(spell::alu(Op::add, Ty::u32) + " " + tr + ", " + row0 + ", " + x);
          w.ins(spell::alu(Op::and_, Ty::b32) + " " + x + ", " + lane + ", 3");
          w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + tc + ", " + x + ", 2, " + col0);
          break;
        }
        default: throw std::logic_error("a clipped store of an unsupported tcgen05.ld shape");
      }
      if (!wrow.empty()) w.ins(spell::alu(Op::add, Ty::u32) + " " + tr + ", " + tr + ", " + wrow, "the rows of this warp");
      for (int j = 0; j + 1 < f->regs; j += 2) {
        const isa::LdCell c = isa::ld_cell(f->shape, 0, j), c1 = isa::ld_cell(f->shape, 0, j + 1);
        if (c1.lane != c.lane || c1.column != c.column + 1) throw std::logic_error("registers of a pair are not adjacent");
        const std::string row = w.r32(), col = w.r32();
        w.ins(spell::alu(Op::add, Ty::u32) + " " + row + ", " + tr + ", " + s(f->row0 + c.lane));
        w.ins(spell::alu(Op::add, Ty::u32) + " " + col + ", " + tc + ", " + s(f->elem0 + c.column));
        store_pair(st, rs.at(static_cast<size_t>(f->first_reg + j)), rs.at(static_cast<size_t>(f->first_reg + j + 1)), "", row, col);
      }
    }
  };
  for_warps(d, L, emit_frags);
}

void Emitter::for_warps(const plan::RegDef& d, const std::string& L,
                        const std::function<void(const std::vector<const plan::LdInstr*>&, const std::string&)>& fn, bool unbranched) {
  std::map<int, std::vector<const plan::LdInstr*>> by_warp;
  for (const auto& f : d.frags) by_warp[f.warp].push_back(&f);
  // Warps whose fragments differ only in the rows they hold (row0 = r0 + R (w - w0)) share one
  // copy of the code, the row offset computed from the warp index (plan::uniform_warp_rows, which
  // OUTPUT-SIZE counts by too).
  std::vector<int> ws;
  for (const auto& [wi, fs] : by_warp) ws.push_back(wi);
  const std::optional<int> rows = plan::uniform_warp_rows(d);
  const bool uniform = rows.has_value();
  const int step = rows.value_or(0);
  if (uniform) {
    // `unbranched` (a read) in a role of exactly these warps: every thread that runs the code
    // holds them, so no branch around it. A branch leaves the registers the code writes unwritten
    // on a path ptxas cannot rule out, so it keeps their old values live over that path: a fused
    // epilogue's reads, one register set per read op, were all live over a persistent tile loop
    // and spilled (836 bytes at 168 registers a thread, a 128 x 256 tile with a bias along n).
    const bool all = unbranched && role && role->ir().first_warp == ws.front() && role->ir().warps == static_cast<int>(ws.size());
    const std::string wrow = w.r32();
    if (!all) {
      const std::string out = w.pred(), below = w.pred();
      w.ins(spell::setp(Cmp::lt, Ty::u32) + " " + below + ", " + warp + ", " + s(ws.front()));
      w.ins(spell::setp(Cmp::gt, Ty::u32, BoolOp::or_) + " " + out + ", " + warp + ", " + s(ws.back()) + ", " + below);
      w.ins("@" + out + " " + spell::bra() + " " + L + "_w");
    }
    w.ins(spell::alu(Op::sub, Ty::u32) + " " + wrow + ", " + warp + ", " + s(ws.front()));
    w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + wrow + ", " + wrow + ", " + s(step), s(step) + " rows per warp");
    fn(by_warp.at(ws.front()), wrow);
    if (!all) w.label(L + "_w");
    return;
  }
  for (const auto& [wi, fs] : by_warp) {
    const std::string skip = L + "_w" + s(wi);
    w.ins("@" + warp_pred(wi) + " " + spell::bra() + " " + skip);
    fn(fs, "");
    w.label(skip);
  }
}

}  // namespace ptxgen::emit::detail
