// The MMAs: tcgen05.mma issued by one thread (D in tensor memory), and wgmma.mma_async issued by
// every warpgroup of the role for its own 64 rows (D in registers).
#include <stdexcept>

#include "emitter.hpp"

namespace ptxgen::emit::detail {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
}  // namespace

void Emitter::mma(const plan::MmaStep& m, const std::string& L) {
  const bool guard = issue_guard(not_issuer, false, L + "_done");
  for (const auto& in : m.instrs) {
    const std::string op = spell::mma(m, p.ir().cta_group, target, in.collector);
    const std::string a = in.a_tmem ? tmem(in.a_alloc, in.a_taddr) : desc(in.a_desc, in.a_tile);
    const std::string b = desc(in.b_desc, in.b_tile);
    std::string args = ring_tmem(in.d_alloc, in.d_taddr) + ", " + a + ", " + b;
    if (m.sparse) args += ", " + tmem(in.meta_alloc, in.meta_taddr, in.meta_ring);
    args += ", " + hex(plan::encoded(in.idesc));
    if (m.scaled) args += ", " + tmem(in.sfa_alloc, in.sfa_taddr, in.sfa_ring) + ", " + tmem(in.sfb_alloc, in.sfb_taddr, in.sfb_ring);
    // enable-input-d: D = A x B for the first K step, unless it accumulates; in a loop the first
    // K step overwrites only in the first iteration (a predicate operand).
    const std::string enable = in.enable_input_d ? "1" : (m.first_iteration_overwrites && loop.active ? loop.acc_on : "0");
    args += ", " + enable;
    w.ins(op + " " + args, "m" + s(in.mi) + " n" + s(in.ni) + " k" + s(in.ki) + ": " + s(in.m) + "x" + s(in.n) + "x" + s(in.k));
  }
  if (guard) w.label(L + "_done");
}

// Loads the A fragments of every K step of one stage into registers (wgmma's A from registers).
// Thread (warp q of warpgroup wg, lane l), register r of K step ki holds 32 bits of row
// 64wg + 16q + l/4 + 8(r%2) at K bytes 32ki + 16(r/2) + 4(l%4): the m64nNk16/k8/k32 A fragments
// of PTX ISA 9.1 §9.7.15.5.1.1 (the mma.sync m16n8k* A fragments stacked per warp). The address
// is the tile layout's (src/isa/layout.cpp) with the swizzle XOR applied to address bits 4-6 by
// bits 7-9 (Swizzle<B,4,3>, §9.7.16.3.3; the tile starts on a 1024-byte boundary).
void Emitter::a_fragments(const plan::MmaStep& m, const std::vector<std::string>& regs_out) {
  const plan::SmemPlacement& t = *tiles.at(m.instrs.at(0).a_tile);
  const isa::TileLayout& l = t.layout;
  const int k_steps = static_cast<int>(regs_out.size()) / 4;
  const uint32_t sw = static_cast<uint32_t>(isa::bytes(l.swizzle));
  const uint32_t mask = l.swizzle == isa::Swizzle::b128 ? 0x70u : l.swizzle == isa::Swizzle::b64 ? 0x30u
                        : l.swizzle == isa::Swizzle::b32 ? 0x10u : 0u;
  const std::string stage_base = w.r32();
  if (t.stages > 1 && loop.active) w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + stage_base + ", " + loop.ring.at(t.stages).first + ", " + s(t.stage_bytes) + ", " + base);
  else w.ins(spell::alu(Op::mov, Ty::u32) + " " + stage_base + ", " + base);
  // This thread's first A row in the tile: 64wg + 16q + l/4.
  const std::string wq = w.r32(), q4 = w.r32(), l4r = w.r32(), row0 = w.r32();
  w.ins(spell::alu(Op::sub, Ty::u32) + " " + wq + ", " + warp + ", " + s(role ? role->ir().first_warp : 0));
  w.ins(spell::alu(Op::and_, Ty::b32) + " " + q4 + ", " + wq + ", 3");
  w.ins(spell::alu(Op::shr, Ty::u32) + " " + wq + ", " + wq + ", 2");
  w.ins(spell::alu(Op::shr, Ty::u32) + " " + l4r + ", " + lane + ", 2");
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + row0 + ", " + q4 + ", 16, " + l4r);
  w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + row0 + ", " + wq + ", 64, " + row0);
  const std::string l4 = w.r32(), lq = w.r32();
  w.ins(spell::alu(Op::and_, Ty::b32) + " " + lq + ", " + lane + ", 3");
  w.ins(spell::alu(Op::shl, Ty::b32) + " " + l4 + ", " + lq + ", 2", "4 * (l % 4): this thread's bytes within 16");
  auto swizzled_load = [&](const std::string& off, const std::string& dst, Ty width) {
    const std::string addr = w.r32();
    w.ins(spell::alu(Op::add, Ty::u32) + " " + addr + ", " + stage_base + ", " + off);
    if (mask) {
      const std::string x = w.r32();
      w.ins(spell::alu(Op::shr, Ty::u32) + " " + x + ", " + addr + ", 3");
      w.ins(spell::alu(Op::and_, Ty::b32) + " " + x + ", " + x + ", " + s(mask));
      w.ins(spell::alu(Op::xor_, Ty::b32) + " " + addr + ", " + addr + ", " + x);
    }
    w.ins(spell::ld(Space::shared, width) + " " + dst + ", [" + addr + "]");
  };
  const uint32_t a0 = t.offset;
  if (l.major == isa::Major::k) {
    // Row part: row * S (swizzled) or row * 16 (core matrices of 8 rows x 16 B).
    const uint32_t row_bytes = l.swizzle == isa::Swizzle::none ? 16u : sw;
    const std::string t0 = w.r32();
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + t0 + ", " + row0 + ", " + s(row_bytes) + ", " + l4);
    for (int ki = 0; ki < k_steps; ++ki)
      for (int r = 0; r < 4; ++r) {
        const uint32_t kbyte = 32u * static_cast<uint32_t>(ki) + 16u * static_cast<uint32_t>(r / 2);
        uint32_t c;
        if (l.swizzle == isa::Swizzle::none) c = (kbyte / 16) * l.lbo + 8u * 16u * static_cast<uint32_t>(r % 2);
        else c = (kbyte / sw) * static_cast<uint32_t>(l.mn) * sw + kbyte % sw + 8u * sw * static_cast<uint32_t>(r % 2);
        const std::string off = w.r32();
        w.ins(spell::alu(Op::add, Ty::u32) + " " + off + ", " + t0 + ", " + s(a0 + c));
        swizzled_load(off, regs_out[static_cast<size_t>(4 * ki + r)], Ty::b32);
      }
    return;
  }
  // M-major (16-bit only): the two K elements of a register sit in consecutive K rows.
  const uint32_t atom = static_cast<uint32_t>(l.atom_mn);
  const std::string rr = w.r32(), ra = w.r32(), rm = w.r32(), kk = w.r32();
  w.ins(spell::alu(Op::shl, Ty::b32) + " " + kk + ", " + lq + ", 1", "2 * (l % 4)");
  for (int r = 0; r < 4; ++r) {
    // Row of this register: row0 + 8 (r % 2); its atom and place in the atom.
    w.ins(spell::alu(Op::add, Ty::u32) + " " + rr + ", " + row0 + ", " + s(8 * (r % 2)));
    w.ins(spell::alu(Op::div, Ty::u32) + " " + ra + ", " + rr + ", " + s(atom));
    w.ins(spell::alu(Op::rem, Ty::u32) + " " + rm + ", " + rr + ", " + s(atom));
    const std::string rowpart = w.r32();
    const uint32_t atom_stride = l.swizzle == isa::Swizzle::none ? l.sbo : l.lbo;
    const uint32_t krow = l.swizzle == isa::Swizzle::none ? 16u : sw;
    w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + rowpart + ", " + ra + ", " + s(atom_stride));
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + rowpart + ", " + rm + ", 2, " + rowpart);
    w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + rowpart + ", " + kk + ", " + s(krow) + ", " + rowpart);
    for (int ki = 0; ki < k_steps; ++ki) {
      const uint32_t k0 = 16u * static_cast<uint32_t>(ki) + 8u * static_cast<uint32_t>(r / 2);
      const std::string off0 = w.r32(), off1 = w.r32(), h0 = w.r16(), h1 = w.r16();
      w.ins(spell::alu(Op::add, Ty::u32) + " " + off0 + ", " + rowpart + ", " + s(a0 + k0 * krow));
      w.ins(spell::alu(Op::add, Ty::u32) + " " + off1 + ", " + off0 + ", " + s(krow));
      swizzled_load(off0, h0, Ty::b16);
      swizzled_load(off1, h1, Ty::b16);
      w.ins(spell::alu(Op::mov, Ty::b32) + " " + regs_out[static_cast<size_t>(4 * ki + r)] + ", {" + h0 + ", " + h1 + "}");
    }
  }
}

// wgmma: every warpgroup of the role issues the plan's wgmmas (warpgroup 0's) for its own rows of
// A, between wgmma.fence and wgmma.commit_group (§9.7.15.6-7).
void Emitter::wgmma(const plan::MmaStep& m, const std::string& /*L*/) {
  const auto& acc = regs.at(m.acc_regs);
  std::vector<std::string> afrag;
  if (m.a_registers) {
    afrag = regs.at(plan::planner_name("afrag"));
    w.comment("A fragments of this stage, from shared memory into registers.");
    a_fragments(m, afrag);
  }
  // A's rows of this warpgroup, in 16-byte units of the descriptor's start address.
  std::string a_wg;
  if (!m.a_registers) {
    const std::string wg = w.r32();
    a_wg = w.r32();
    w.ins(spell::alu(Op::sub, Ty::u32) + " " + wg + ", " + warp + ", " + s(role ? role->ir().first_warp : 0));
    w.ins(spell::alu(Op::shr, Ty::u32) + " " + wg + ", " + wg + ", 2", "warpgroup of the role");
    w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + a_wg + ", " + wg + ", " + s(m.a_warpgroup_stride >> 4), "its A rows, in 16-byte units");
  }
  w.ins(spell::wgmma_fence(), "orders the register writes before the wgmmas read them");
  const bool f16acc = m.acc_dtype == isa::DType::f16;
  for (const auto& in : m.instrs) {
    w.comment("wgmma (" + (m.warpgroup_rows > 64 ? "mi=" + s(in.mi) + ", " : std::string()) + "ni=" + s(in.ni) + ", ki=" + s(in.ki) + "): 64x" +
              s(in.n) + "x" + s(in.k));
    std::string a;
    if (m.a_registers) {
      a = "{";
      for (int r = 0; r < 4; ++r) a += (r ? ", " : "") + afrag.at(static_cast<size_t>(4 * in.ki + r));
      a += "}";
    } else {
      const uint64_t v = plan::encoded(in.a_desc);
      std::string b0 = stage_units(in.a_tile);
      if (b0.empty()) b0 = desc_base32;
      const std::string lo = w.r32(), hi = w.r32(), r = w.r64();
      w.ins(spell::alu(Op::add, Ty::u32) + " " + lo + ", " + b0 + ", " + a_wg);
      w.ins(spell::alu(Op::add, Ty::u32) + " " + lo + ", " + lo + ", " + hex(v & 0xFFFFFFFFu),
            "A " + hex(v) + ": start=+" + s(in.a_desc.start_address) + " LBO=" + s(in.a_desc.lbo) + " SBO=" + s(in.a_desc.sbo));
      w.ins(spell::alu(Op::mov, Ty::b32) + " " + hi + ", " + hex(v >> 32));
      w.ins(spell::alu(Op::mov, Ty::b64) + " " + r + ", {" + lo + ", " + hi + "}");
      a = r;
    }
    const std::string b = desc(in.b_desc, in.b_tile);
    const int nregs = f16acc ? in.n / 4 : in.n / 2;
    std::string d = "{";
    for (int i = 0; i < nregs; ++i) d += (i ? ", " : "") + acc.at(static_cast<size_t>(in.acc_reg + i));
    d += "}";
    // scale-d, then imm-scale-a/b for floats, then imm-trans-a/b for f16/bf16 (§9.7.15.5.2 syntax per type).
    const std::string scale_d = in.enable_input_d ? loop.always : (m.first_iteration_overwrites ? loop.acc_on : "0");
    std::string tail = scale_d;
    if (m.kind != isa::Kind::i8) {
      tail += ", 1, 1";
      if (m.kind == isa::Kind::f16) {
        if (!m.a_registers) tail += std::string(", ") + (m.a_major_mn ? "1" : "0");
        tail += std::string(", ") + (m.b_major_mn ? "1" : "0");
      }
    }
    w.ins(spell::wgmma(m, in.n) + " " + d + ", " + a + ", " + b + ", " + tail);
  }
  w.ins(spell::wgmma_commit());
}

}  // namespace ptxgen::emit::detail
