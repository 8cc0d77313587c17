// PTX for sm_90a: a TMA + mbarrier pipeline feeding wgmma.mma_async.
//
// Warpgroups 0..W-1 consume (warpgroup w owns rows 64w..64w+63 of the CTA tile and all of its N,
// accumulators in registers); warp 4W produces (one thread issues the TMA loads). Per K block a
// consumer waits for the stage, issues the planned wgmmas between wgmma.fence and
// wgmma.commit_group, and waits until at most one group is pending before releasing the stage
// the previous group read (PTX ISA 9.1 §9.7.15.7). The epilogue converts the register fragments
// (§9.7.15.5.1.1) and stores them to D with bounds checks.
#include <stdexcept>

#include "kernel.hpp"

namespace ptxgen::emit::detail {

namespace {

std::string u(int64_t v) { return std::to_string(v); }

std::string wgmma_opcode(const plan::Plan& p, int n) {
  const spec::Gemm& g = *p.spec.gemm;
  const std::string shape = ".m64n" + u(n) + "k" + u(p.shapes.k_instr);
  const std::string a(isa::name(g.a.dtype)), b(isa::name(g.b.dtype)), acc(isa::name(g.accumulator));
  return "wgmma.mma_async.sync.aligned" + shape + "." + acc + "." + a + "." + b;
}

// The operands after the descriptors: scale-d, then imm-scale-a/b for floats, then imm-trans-a/b
// for f16/bf16 (§9.7.15.5.2 syntax per type).
std::string wgmma_tail(const plan::Plan& p, const std::string& scale_d) {
  const spec::Gemm& g = *p.spec.gemm;
  if (p.shapes.kind == isa::Kind::i8) return scale_d;
  std::string t = scale_d + ", 1, 1";
  if (p.shapes.kind == isa::Kind::f16) {
    if (!p.shapes.a_in_registers) t += std::string(", ") + (g.a.major == isa::Major::mn ? "1" : "0");
    t += std::string(", ") + (g.b.major == isa::Major::mn ? "1" : "0");
  }
  return t;
}

// Loads the A fragments of every K step of one stage into registers (wgmma's A from registers).
// Thread (warp q of warpgroup wg, lane l), register r of K step ki holds 32 bits of row
// 64wg + 16q + l/4 + 8(r%2) at K bytes 32ki + 16(r/2) + 4(l%4): the m64nNk16/k8/k32 A fragments
// of PTX ISA 9.1 §9.7.15.5.1.1 (the mma.sync m16n8k* A fragments stacked per warp). The address
// is the tile layout's (src/isa/layout.cpp) with the swizzle XOR applied to address bits 4-6 by
// bits 7-9 (Swizzle<B,4,3>, §9.7.16.3.3; the tile starts on a 1024-byte boundary).
void load_a_fragments(PtxWriter& w, const plan::Plan& p, const std::string& stage_base, const std::string& row0,
                      const std::string& lane, std::vector<std::string>& regs) {
  const plan::Shapes& sh = p.shapes;
  const isa::TileLayout& l = sh.a.layout;
  const uint32_t s = static_cast<uint32_t>(isa::bytes(l.swizzle));
  const uint32_t mask = l.swizzle == isa::Swizzle::b128 ? 0x70u : l.swizzle == isa::Swizzle::b64 ? 0x30u
                        : l.swizzle == isa::Swizzle::b32 ? 0x10u : 0u;
  const uint32_t a0 = sh.smem.a_offset.at(0);
  const std::string l4 = w.r32(), lq = w.r32();
  w.ins("and.b32 " + lq + ", " + lane + ", 3");
  w.ins("shl.b32 " + l4 + ", " + lq + ", 2", "4 * (l % 4): this thread's bytes within 16");
  auto swizzled_load = [&](const std::string& off, const std::string& dst, const char* width) {
    const std::string addr = w.r32();
    w.ins("add.u32 " + addr + ", " + stage_base + ", " + off);
    if (mask) {
      const std::string x = w.r32();
      w.ins("shr.u32 " + x + ", " + addr + ", 3");
      w.ins("and.b32 " + x + ", " + x + ", " + u(mask));
      w.ins("xor.b32 " + addr + ", " + addr + ", " + x);
    }
    w.ins(std::string("ld.shared.") + width + " " + dst + ", [" + addr + "]");
  };
  if (l.major == isa::Major::k) {
    // Row part: row * S (swizzled) or row * 16 (core matrices of 8 rows x 16 B).
    const uint32_t row_bytes = l.swizzle == isa::Swizzle::none ? 16u : s;
    const std::string t0 = w.r32();
    w.ins("mad.lo.u32 " + t0 + ", " + row0 + ", " + u(row_bytes) + ", " + l4);
    for (int ki = 0; ki < sh.k_steps; ++ki)
      for (int r = 0; r < 4; ++r) {
        const uint32_t kbyte = 32u * static_cast<uint32_t>(ki) + 16u * static_cast<uint32_t>(r / 2);
        uint32_t c;
        if (l.swizzle == isa::Swizzle::none) c = (kbyte / 16) * l.lbo + 8u * 16u * static_cast<uint32_t>(r % 2);
        else c = (kbyte / s) * static_cast<uint32_t>(l.mn) * s + kbyte % s + 8u * s * static_cast<uint32_t>(r % 2);
        const std::string off = w.r32();
        w.ins("add.u32 " + off + ", " + t0 + ", " + u(a0 + c));
        swizzled_load(off, regs[static_cast<size_t>(4 * ki + r)], "b32");
      }
    return;
  }
  // M-major (16-bit only): the two K elements of a register sit in consecutive K rows.
  const uint32_t atom = static_cast<uint32_t>(l.atom_mn);
  const std::string rr = w.r32(), ra = w.r32(), rm = w.r32(), kk = w.r32();
  w.ins("shl.b32 " + kk + ", " + lq + ", 1", "2 * (l % 4)");
  for (int r = 0; r < 4; ++r) {
    // Row of this register: row0 + 8 (r % 2); its atom and place in the atom.
    w.ins("add.u32 " + rr + ", " + row0 + ", " + u(8 * (r % 2)));
    w.ins("div.u32 " + ra + ", " + rr + ", " + u(atom));
    w.ins("rem.u32 " + rm + ", " + rr + ", " + u(atom));
    const std::string rowpart = w.r32();
    const uint32_t atom_stride = l.swizzle == isa::Swizzle::none ? l.sbo : l.lbo;
    const uint32_t krow = l.swizzle == isa::Swizzle::none ? 16u : s;
    w.ins("mul.lo.u32 " + rowpart + ", " + ra + ", " + u(atom_stride));
    w.ins("mad.lo.u32 " + rowpart + ", " + rm + ", 2, " + rowpart);
    w.ins("mad.lo.u32 " + rowpart + ", " + kk + ", " + u(krow) + ", " + rowpart);
    for (int ki = 0; ki < sh.k_steps; ++ki) {
      const uint32_t k0 = 16u * static_cast<uint32_t>(ki) + 8u * static_cast<uint32_t>(r / 2);
      const std::string off0 = w.r32(), off1 = w.r32(), h0 = w.r16(), h1 = w.r16();
      w.ins("add.u32 " + off0 + ", " + rowpart + ", " + u(a0 + k0 * krow));
      w.ins("add.u32 " + off1 + ", " + off0 + ", " + u(krow));
      swizzled_load(off0, h0, "b16");
      swizzled_load(off1, h1, "b16");
      w.ins("mov.b32 " + regs[static_cast<size_t>(4 * ki + r)] + ", {" + h0 + ", " + h1 + "}");
    }
  }
}

}  // namespace

std::string ptx_wgmma(const plan::Plan& p) {
  const spec::Gemm& g = *p.spec.gemm;
  const plan::Shapes& sh = p.shapes;
  const plan::Kernel& kern = p.kernel;
  const int stages = sh.smem.stages();
  const int consumers = 128 * kern.consumer_warpgroups;
  PtxWriter w;
  Common c = prologue(w, p);
  w.blank();

  w.comment("Thread 0 initialises the mbarriers: full[s] completes when the stage's bytes arrived,");
  w.comment("empty[s] when every consumer thread released it.");
  const std::string not0 = w.pred();
  const std::string init_done = w.fresh_label("init_done");
  w.ins("setp.ne.u32 " + not0 + ", " + c.tid + ", 0");
  w.ins("@" + not0 + " bra " + init_done);
  for (int s = 0; s < stages; ++s) {
    w.ins("mbarrier.init.shared::cta.b64 [" + c.bars + "+" + u(8 * s) + "], 1");
    w.ins("mbarrier.init.shared::cta.b64 [" + c.bars + "+" + u(8 * (stages + s)) + "], " + u(consumers));
  }
  w.ins("fence.mbarrier_init.release.cluster");
  w.label(init_done);
  w.ins("barrier.sync 0");
  w.blank();

  const std::string is_producer = w.pred(), consume = w.fresh_label("consume");
  w.ins("setp.ne.u32 " + is_producer + ", " + c.warp + ", " + u(kern.producer_warp));
  w.ins("@" + is_producer + " bra " + consume);
  w.comment("Producer: one thread issues every TMA load.");
  const std::string not_lane0 = w.pred();
  w.ins("setp.ne.u32 " + not_lane0 + ", " + c.lane + ", 0");
  w.ins("@" + not_lane0 + " ret");
  producer_loop(w, p, c);
  w.ins("ret");
  w.blank();

  w.label(consume);
  w.comment("Consumers: warpgroup wg issues the wgmmas of rows 64wg..64wg+63.");
  const std::string wg = w.r32(), a_wg = w.r32();
  // Every planned MMA of warpgroup mi differs from warpgroup 0's by the same A offset.
  const auto& m0 = p.mmas.front();
  uint32_t a_stride = 0;
  for (const auto& m : p.mmas)
    if (m.mi == 1 && m.ni == m0.ni && m.ki == m0.ki) a_stride = m.a_desc.start_address - m0.a_desc.start_address;
  for (const auto& m : p.mmas)
    for (const auto& m1 : p.mmas)
      if (m1.mi == 0 && m1.ni == m.ni && m1.ki == m.ki &&
          m.a_desc.start_address != m1.a_desc.start_address + static_cast<uint32_t>(m.mi) * a_stride)
        throw std::logic_error("warpgroups' A descriptors are not evenly spaced");
  w.ins("shr.u32 " + wg + ", " + c.warp + ", 2");
  w.ins("mul.lo.u32 " + a_wg + ", " + wg + ", " + u(a_stride >> 4), "A rows of this warpgroup, in 16-byte units");

  std::vector<std::string> acc;
  for (int i = 0; i < sh.acc_registers; ++i) acc.push_back(w.r32());
  std::vector<std::string> afrag;
  std::string row0_a;
  if (sh.a_in_registers) {
    for (int i = 0; i < 4 * sh.k_steps; ++i) afrag.push_back(w.r32());
    // This thread's first A row in the tile: 64wg + 16q + l/4.
    const std::string q4 = w.r32(), l4 = w.r32();
    row0_a = w.r32();
    w.ins("and.b32 " + q4 + ", " + c.warp + ", 3");
    w.ins("shr.u32 " + l4 + ", " + c.lane + ", 2");
    w.ins("mad.lo.u32 " + row0_a + ", " + q4 + ", 16, " + l4);
    w.ins("mad.lo.u32 " + row0_a + ", " + wg + ", 64, " + row0_a);
  }

  const std::string kb = w.r32(), st = w.r32(), ph = w.r32();
  w.ins("mov.u32 " + kb + ", 0");
  w.ins("mov.u32 " + st + ", 0");
  w.ins("mov.u32 " + ph + ", 0");
  const std::string top = w.fresh_label("mainloop"), end = w.fresh_label("mainloop_end");
  const std::string done = w.pred();
  w.label(top);
  w.ins("setp.ge.u32 " + done + ", " + kb + ", " + c.num_kb);
  w.ins("@" + done + " bra " + end);
  const std::string full = w.r32();
  w.ins("mad.lo.u32 " + full + ", " + st + ", 8, " + c.bars);
  wait_barrier(w, full, ph, true);
  const std::string sbase = w.r32(), abase = w.r32(), acc_on = w.pred(), always = w.pred();
  w.ins("mad.lo.u32 " + sbase + ", " + st + ", " + u(sh.smem.stage_bytes >> 4) + ", " + c.desc_base,
        "descriptor start of this stage");
  w.ins("add.u32 " + abase + ", " + sbase + ", " + a_wg);
  w.ins("setp.ne.u32 " + acc_on + ", " + kb + ", 0", "D = A*B on the first K block");
  w.ins("setp.eq.u32 " + always + ", " + kb + ", " + kb, "scale-d is a predicate operand");
  if (sh.a_in_registers) {
    w.comment("A fragments of this stage, from shared memory into registers.");
    const std::string sbytes = w.r32();
    w.ins("mad.lo.u32 " + sbytes + ", " + st + ", " + u(sh.smem.stage_bytes) + ", " + c.base);
    load_a_fragments(w, p, sbytes, row0_a, c.lane, afrag);
  }
  w.ins("wgmma.fence.sync.aligned", "orders the register writes before the wgmmas read them");
  for (const auto& m : p.mmas) {
    if (m.mi != 0) continue;
    w.comment("wgmma (ni=" + u(m.ni) + ", ki=" + u(m.ki) + "): 64x" + u(m.n) + "x" + u(m.k));
    std::string a;
    if (sh.a_in_registers) {
      a = "{";
      for (int r = 0; r < 4; ++r) a += (r ? ", " : "") + afrag[static_cast<size_t>(4 * m.ki + r)];
      a += "}";
    } else {
      a = desc_reg(w, abase, m.a_desc, "A");
    }
    const std::string b = desc_reg(w, sbase, m.b_desc, "B");
    const int regs = g.accumulator == isa::DType::f16 ? m.n / 4 : m.n / 2;
    std::string d = "{";
    for (int i = 0; i < regs; ++i) d += (i ? ", " : "") + acc[static_cast<size_t>(m.acc_reg + i)];
    d += "}";
    w.ins(wgmma_opcode(p, m.n) + " " + d + ", " + a + ", " + b + ", " + wgmma_tail(p, m.first ? acc_on : always));
  }
  w.ins("wgmma.commit_group.sync.aligned");
  const std::string rel = w.r32();
  if (stages == 1 || sh.a_in_registers) {
    // One stage, or A in registers (rewritten next block): the group must finish first.
    w.ins("wgmma.wait_group.sync.aligned 0");
    w.ins("add.u32 " + rel + ", " + full + ", " + u(8 * stages));
    w.ins("mbarrier.arrive.shared::cta.b64 _, [" + rel + "]", "release this stage");
  } else {
    // At most one group in flight: the previous K block's stage is no longer read.
    const std::string prev = w.r32(), first = w.pred();
    w.ins("wgmma.wait_group.sync.aligned 1");
    w.ins("setp.eq.u32 " + first + ", " + kb + ", 0");
    w.ins("add.u32 " + prev + ", " + st + ", " + u(stages - 1));
    w.ins("rem.u32 " + prev + ", " + prev + ", " + u(stages));
    w.ins("mad.lo.u32 " + rel + ", " + prev + ", 8, " + c.bars);
    w.ins("add.u32 " + rel + ", " + rel + ", " + u(8 * stages));
    w.ins("@!" + first + " mbarrier.arrive.shared::cta.b64 _, [" + rel + "]", "release the previous stage");
  }
  advance_stage(w, kb, st, ph, stages);
  w.ins("bra " + top);
  w.label(end);
  w.ins("wgmma.wait_group.sync.aligned 0");
  w.blank();

  w.comment("Epilogue: thread (warp q of the warpgroup, lane l) holds, for value pair i of an N group,");
  w.comment("rows 16q + l/4 + 8*(i%2) and columns 8*(i/2) + 2*(l%4) + {0,1} (PTX ISA 9.1 9.7.15.5.1.1).");
  const std::string q = w.r32(), row0 = w.r32(), row8 = w.r32(), col0 = w.r32(), t = w.r32();
  w.ins("and.b32 " + q + ", " + c.warp + ", 3");
  w.ins("shr.u32 " + t + ", " + c.lane + ", 2");
  w.ins("mad.lo.u32 " + row0 + ", " + q + ", 16, " + t);
  w.ins("mad.lo.u32 " + row0 + ", " + wg + ", 64, " + row0);
  w.ins("add.u32 " + row0 + ", " + row0 + ", " + c.m_cta0);
  w.ins("add.u32 " + row8 + ", " + row0 + ", 8");
  w.ins("and.b32 " + t + ", " + c.lane + ", 3");
  w.ins("mad.lo.u32 " + col0 + ", " + t + ", 2, " + c.n_tile0);
  const bool packed = g.accumulator == isa::DType::f16;
  int n0 = 0;
  for (size_t ni = 0, reg = 0; ni < sh.n_groups.size(); ++ni) {
    const int ng = sh.n_groups[ni];
    for (int i = 0; i < ng / 4; ++i) {
      const std::string col = w.r32();
      w.ins("add.u32 " + col + ", " + col0 + ", " + u(n0 + 8 * (i / 2)));
      Pair pr;
      pr.row = i % 2 ? row8 : row0;
      pr.col = col;
      if (packed) {
        pr.packed = acc[reg + static_cast<size_t>(i)];
      } else {
        pr.x = acc[reg + 2 * static_cast<size_t>(i)];
        pr.y = acc[reg + 2 * static_cast<size_t>(i) + 1];
      }
      store_pair(w, p, c, pr);
    }
    reg += static_cast<size_t>(packed ? ng / 4 : ng / 2);
    n0 += ng;
  }
  w.ins("ret");

  const PtxVersion v = ptx_version(p);
  std::string out = header_comment(p, v);
  out += ".extern .shared .align 1024 .b8 ptxgen_smem[];\n\n";
  out += params_block(p);
  out += "{\n" + w.body() + "}\n";
  return out;
}

}  // namespace ptxgen::emit::detail
