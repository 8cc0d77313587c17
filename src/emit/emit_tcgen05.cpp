// PTX for tcgen05 targets (sm_100a, sm_100f, sm_103a, sm_110a): a warp-specialized GEMM.
//
//   warp 4      one thread issues the TMA loads of every stage (cp.async.bulk.tensor)
//   warp 5      allocates tensor memory; one thread issues tcgen05.cp (A in TMEM) and tcgen05.mma,
//               commits each stage to its empty barrier and the last K block to the accumulator
//               barrier (PTX ISA 9.1 §9.7.16.12.1)
//   warps 0-3   wait for the accumulator, read it with tcgen05.ld (warp w reaches lanes
//               32w..32w+31, §9.7.16.8.1), convert and store D
// With cta_group::2 the even CTA of each pair issues the MMAs for both (§9.7.16.5); the odd CTA's
// loads complete on the even CTA's full barrier and the commits arrive in both CTAs.
#include <stdexcept>

#include "kernel.hpp"

namespace ptxgen::emit::detail {

namespace {

std::string u(int64_t v) { return std::to_string(v); }

// The commit that arrives on `bar` once every tcgen05 operation this thread issued completed;
// for a pair, on the barrier at the same offset in both CTAs (mask bits rank&~1 and rank|1).
void commit(PtxWriter& w, const plan::Plan& p, const Common& c, const std::string& bar) {
  if (p.shapes.cta_group == 1) {
    w.ins("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [" + bar + "]");
    return;
  }
  const std::string even = w.r32(), mask = w.r32(), mask16 = w.r16();
  w.ins("and.b32 " + even + ", " + c.rank + ", -2");
  w.ins("shl.b32 " + mask + ", 3, " + even);
  w.ins("cvt.u16.u32 " + mask16 + ", " + mask);
  w.ins("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [" + bar + "], " +
        mask16);
}

void mma_loop(PtxWriter& w, const plan::Plan& p, const Common& c, const std::string& tmem) {
  const plan::Shapes& sh = p.shapes;
  const int stages = sh.smem.stages();
  const std::string cg = ".cta_group::" + u(sh.cta_group);
  const std::string kb = w.r32(), st = w.r32(), ph = w.r32(), aph = w.r32();
  w.ins("mov.u32 " + kb + ", 0");
  w.ins("mov.u32 " + st + ", 0");
  w.ins("mov.u32 " + ph + ", 0");
  w.ins("mov.u32 " + aph + ", 0");
  const std::string top = w.fresh_label("mma"), end = w.fresh_label("mma_end");
  const std::string done = w.pred();
  w.label(top);
  w.ins("setp.ge.u32 " + done + ", " + kb + ", " + c.num_kb);
  w.ins("@" + done + " bra " + end);
  const std::string full = w.r32(), empty = w.r32();
  w.ins("mad.lo.u32 " + full + ", " + st + ", 8, " + c.bars);
  wait_barrier(w, full, ph, false);
  w.ins("tcgen05.fence::after_thread_sync", "order the MMAs after the wait (PTX ISA 9.7.16.6.4)");
  const std::string sbase = w.r32(), acc_on = w.pred(), always = w.pred();
  w.ins("mad.lo.u32 " + sbase + ", " + st + ", " + u(sh.smem.stage_bytes >> 4) + ", " + c.desc_base,
        "descriptor start of this stage");
  w.ins("setp.ne.u32 " + acc_on + ", " + kb + ", 0", "D = A*B on the first K block");
  w.ins("setp.eq.u32 " + always + ", " + kb + ", " + kb, "enable-input-d is a predicate operand");
  auto tmem_addr = [&](uint32_t rel) {
    if (rel == 0) return tmem;
    const std::string r = w.r32();
    const isa::TmemAddr t = isa::decode_tmem(rel);
    w.ins("add.u32 " + r + ", " + tmem + ", " + imm(rel), "lane " + u(t.lane) + ", column " + u(t.column));
    return r;
  };
  if (!p.copies.empty()) {
    // tcgen05.cp and a later tcgen05.mma are ordered, but an MMA and a later copy are not
    // (§9.7.16.6.2): before refilling A in tensor memory, wait for the previous block's MMAs.
    const std::string first = w.pred(), skip = w.fresh_label("a_free");
    w.ins("setp.eq.u32 " + first + ", " + kb + ", 0");
    w.ins("@" + first + " bra " + skip);
    const std::string afree = w.r32();
    w.ins("add.u32 " + afree + ", " + c.bars + ", " + u(sh.smem.a_free_bar() - sh.smem.barriers_offset));
    wait_barrier(w, afree, aph, false);
    w.ins("xor.b32 " + aph + ", " + aph + ", 1");
    w.ins("tcgen05.fence::after_thread_sync");
    w.label(skip);
    for (const auto& cp : p.copies) {
      w.comment("tcgen05.cp A (M group " + u(cp.mi) + ", K chunk " + u(cp.ki) + ")");
      const std::string src = desc_reg(w, sbase, cp.src, "A src");
      w.ins("tcgen05.cp" + cg + "." + cp.shape + " [" + tmem_addr(cp.dst_tmem) + "], " + src);
    }
  }
  const std::string kind = ".kind::" + std::string(isa::name(sh.kind));
  for (const auto& m : p.mmas) {
    w.comment("mma (mi=" + u(m.mi) + ", ni=" + u(m.ni) + ", ki=" + u(m.ki) + "): " + u(m.m) + "x" + u(m.n) + "x" + u(m.k));
    const std::string a = m.a_tmem ? "[" + tmem_addr(m.a_tmem_addr) + "]" : desc_reg(w, sbase, m.a_desc, "A");
    const std::string b = desc_reg(w, sbase, m.b_desc, "B");
    const std::string d = tmem_addr(m.d_tmem);
    const uint32_t idesc = plan::encoded(p.idescs.at(static_cast<size_t>(m.idesc)));
    w.ins("tcgen05.mma" + cg + kind + " [" + d + "], " + a + ", " + b + ", " + hex(idesc) + ", " +
          (m.first ? acc_on : always));
  }
  w.ins("add.u32 " + empty + ", " + full + ", " + u(8 * stages));
  commit(w, p, c, empty);
  if (!p.copies.empty()) {
    const std::string afree = w.r32();
    w.ins("add.u32 " + afree + ", " + c.bars + ", " + u(sh.smem.a_free_bar() - sh.smem.barriers_offset));
    commit(w, p, c, afree);
  }
  advance_stage(w, kb, st, ph, stages);
  w.ins("bra " + top);
  w.label(end);
  const std::string acc = w.r32();
  w.ins("add.u32 " + acc + ", " + c.bars + ", " + u(sh.smem.acc_bar() - sh.smem.barriers_offset));
  w.comment("The accumulator is complete when every MMA issued so far is.");
  commit(w, p, c, acc);
}

void epilogue(PtxWriter& w, const plan::Plan& p, const Common& c, const std::string& tmem) {
  const plan::Kernel& k = p.kernel;
  const std::string acc = w.r32();
  w.ins("add.u32 " + acc + ", " + c.bars + ", " + u(p.shapes.smem.acc_bar() - p.shapes.smem.barriers_offset));
  wait_barrier(w, acc, "0", true);
  w.ins("tcgen05.fence::after_thread_sync");
  // Lane bits of the warp's quarter, always in the address (§9.7.16.8.1).
  const std::string lane_bits = w.r32(), taddr0 = w.r32();
  w.ins("shl.b32 " + lane_bits + ", " + c.warp + ", 21", "(32 * warp) << 16");
  w.ins("add.u32 " + taddr0 + ", " + tmem + ", " + lane_bits);
  // Row and column of this thread's lane, per data-path layout.
  const std::string row = w.r32(), colb = w.r32(), t16 = w.r32();
  const std::string half = w.pred();  // layout F: lanes 16-31 of the quarter
  w.ins("and.b32 " + t16 + ", " + c.lane + ", 15");
  w.ins("setp.ge.u32 " + half + ", " + c.lane + ", 16");
  for (const auto& e : k.epilogue) {
    const std::string taddr = w.r32();
    w.ins("add.u32 " + taddr + ", " + taddr0 + ", " + u(e.column));
    std::vector<std::string> regs;
    for (int j = 0; j < e.num; ++j) regs.push_back(w.r32());
    std::string list = "{";
    for (int j = 0; j < e.num; ++j) list += (j ? ", " : "") + regs[static_cast<size_t>(j)];
    list += "}";
    w.ins("tcgen05.ld.sync.aligned.32x32b.x" + u(e.num) + ".b32 " + list + ", [" + taddr + "]");
    w.ins("tcgen05.wait::ld.sync.aligned", "the registers are valid only after the wait (PTX ISA 9.7.16.8.5)");
    switch (k.layout) {
      case plan::Layout::D:
      case plan::Layout::A:
        // Lane 32w + t holds row row_base + 32w + t.
        w.ins("mad.lo.u32 " + row + ", " + c.warp + ", 32, " + c.lane);
        w.ins("add.u32 " + row + ", " + row + ", " + u(e.row_base));
        w.ins("mov.u32 " + colb + ", " + u(e.col_base));
        break;
      case plan::Layout::F: {
        // Lanes 16w..: rows row_base + 16w + t; lanes 16-31 of the quarter hold the partner group.
        w.ins("mad.lo.u32 " + row + ", " + c.warp + ", 16, " + t16);
        const std::string r2 = w.r32();
        w.ins("add.u32 " + r2 + ", " + row + ", " + u(e.row_base2 < 0 ? 0 : e.row_base2));
        w.ins("add.u32 " + row + ", " + row + ", " + u(e.row_base));
        if (e.row_base2 >= 0) w.ins("selp.b32 " + row + ", " + r2 + ", " + row + ", " + half);
        w.ins("mov.u32 " + colb + ", " + u(e.col_base));
        break;
      }
      case plan::Layout::B: {
        // Warps 0-1 hold columns [0, N/2) of rows 32w + t; warps 2-3 columns [N/2, N).
        const std::string hi = w.pred(), w2 = w.r32();
        w.ins("and.b32 " + w2 + ", " + c.warp + ", 1");
        w.ins("mad.lo.u32 " + row + ", " + w2 + ", 32, " + c.lane);
        w.ins("add.u32 " + row + ", " + row + ", " + u(e.row_base));
        w.ins("setp.ge.u32 " + hi + ", " + c.warp + ", 2");
        w.ins("selp.b32 " + colb + ", " + u(e.col_base2) + ", " + u(e.col_base) + ", " + hi);
        break;
      }
    }
    const std::string grow = w.r32(), gcol = w.r32();
    w.ins("add.u32 " + grow + ", " + row + ", " + c.m_cta0);
    w.ins("add.u32 " + gcol + ", " + colb + ", " + c.n_tile0);
    if (k.layout == plan::Layout::F && e.row_base2 < 0)  // no partner group: lanes 16-31 store nothing
      w.ins("selp.b32 " + grow + ", -1, " + grow + ", " + half);
    for (int j = 0; j < e.num; j += 2) {  // .num is a power of two >= 8
      const std::string col = w.r32();
      w.ins("add.u32 " + col + ", " + gcol + ", " + u(j));
      store_pair(w, p, c, {regs[static_cast<size_t>(j)], regs[static_cast<size_t>(j + 1)], "", grow, col});
    }
  }
}

}  // namespace

std::string ptx_tcgen05(const plan::Plan& p) {
  const plan::Shapes& sh = p.shapes;
  const plan::Kernel& kern = p.kernel;
  const bool pair = sh.cta_group == 2;
  const std::string cg = ".cta_group::" + u(sh.cta_group);
  const uint32_t ncols = sh.tmem.alloc_columns;
  PtxWriter w;
  Common c = prologue(w, p);
  w.blank();

  w.comment("Warp " + u(kern.mma_warp) + " allocates tensor memory" +
            (pair ? " together with its peer in the other CTA (PTX ISA 9.7.16.7.1)." : " (PTX ISA 9.7.16.7.1)."));
  const std::string not_mma = w.pred(), alloc_done = w.fresh_label("alloc_done");
  const std::string slot = w.r32();
  w.ins("add.u32 " + slot + ", " + c.base + ", " + imm(sh.smem.tmem_slot_offset));
  w.ins("setp.ne.u32 " + not_mma + ", " + c.warp + ", " + u(kern.mma_warp));
  w.ins("@" + not_mma + " bra " + alloc_done);
  w.ins("tcgen05.alloc" + cg + ".sync.aligned.shared::cta.b32 [" + slot + "], " + u(ncols));
  w.ins("tcgen05.relinquish_alloc_permit" + cg + ".sync.aligned");
  w.label(alloc_done);
  w.comment("Thread 0 initialises the mbarriers (each completes on one arrival plus its bytes).");
  const std::string not0 = w.pred(), init_done = w.fresh_label("init_done");
  w.ins("setp.ne.u32 " + not0 + ", " + c.tid + ", 0");
  w.ins("@" + not0 + " bra " + init_done);
  for (int b = 0; b < sh.smem.barriers; ++b) w.ins("mbarrier.init.shared::cta.b64 [" + c.bars + "+" + u(8 * b) + "], 1");
  w.ins("fence.mbarrier_init.release.cluster");
  w.label(init_done);
  w.comment("Make the allocation and the barriers visible (PTX ISA 9.7.16.6.4 canonical pattern).");
  w.ins("tcgen05.fence::before_thread_sync");
  if (pair) {
    w.ins("barrier.cluster.arrive.release.aligned");
    w.ins("barrier.cluster.wait.acquire.aligned");
  } else {
    w.ins("barrier.sync 0");
  }
  w.ins("tcgen05.fence::after_thread_sync");
  const std::string tmem = w.r32();
  w.ins("ld.shared.b32 " + tmem + ", [" + slot + "]", "TMEM base: lane 0, first allocated column");
  w.blank();

  const std::string teardown = w.fresh_label("teardown");
  const std::string not_prod = w.pred(), to_mma = w.fresh_label("mma_role"), to_epi = w.fresh_label("epilogue");
  w.ins("setp.ne.u32 " + not_prod + ", " + c.warp + ", " + u(kern.producer_warp));
  w.ins("@" + not_prod + " bra " + to_mma);
  w.comment("Producer: lane 0 of warp " + u(kern.producer_warp) + " issues every TMA load.");
  const std::string not_lane0 = w.pred();
  w.ins("setp.ne.u32 " + not_lane0 + ", " + c.lane + ", 0");
  w.ins("@" + not_lane0 + " bra " + teardown);
  producer_loop(w, p, c);
  w.ins("bra " + teardown);
  w.blank();

  w.label(to_mma);
  w.ins("@" + not_mma + " bra " + to_epi);
  w.comment(pair ? "MMA issuer: lane 0 of warp 5 in the even CTA of the pair." : "MMA issuer: lane 0 of warp 5.");
  const std::string skip_mma = w.pred();
  // The lane test is made here: the producer's predicate is written only on the producer's path.
  if (pair) w.ins("setp.ne.or.u32 " + skip_mma + ", " + c.lane + ", 0, " + c.odd);
  else w.ins("setp.ne.u32 " + skip_mma + ", " + c.lane + ", 0");
  w.ins("@" + skip_mma + " bra " + teardown);
  mma_loop(w, p, c, tmem);
  w.ins("bra " + teardown);
  w.blank();

  w.label(to_epi);
  w.comment("Epilogue: warps 0-3 read the accumulator back and store D.");
  epilogue(w, p, c, tmem);
  w.blank();

  w.label(teardown);
  w.comment(pair ? "Both CTAs are done with tensor memory before the pair deallocates (PTX ISA 9.7.16.5, Table 47)."
                 : "Every thread is done with tensor memory before warp 5 deallocates.");
  w.ins("tcgen05.fence::before_thread_sync");
  if (pair) {
    w.ins("barrier.cluster.arrive.release");
    w.ins("barrier.cluster.wait.acquire");
  } else {
    w.ins("barrier.sync 0");
  }
  w.ins("tcgen05.fence::after_thread_sync");
  const std::string exit_now = w.fresh_label("exit");
  w.ins("@" + not_mma + " bra " + exit_now);
  w.ins("bar.warp.sync -1");
  w.ins("tcgen05.dealloc" + cg + ".sync.aligned.b32 " + tmem + ", " + u(ncols));
  w.label(exit_now);
  w.ins("ret");

  const PtxVersion v = ptx_version(p);
  std::string out = header_comment(p, v);
  out += ".extern .shared .align 1024 .b8 ptxgen_smem[];\n\n";
  out += params_block(p);
  out += "{\n" + w.body() + "}\n";
  return out;
}

}  // namespace ptxgen::emit::detail

namespace ptxgen::emit {

PtxVersion ptx_version(const plan::Plan& p) {
  // A program declares the version its instructions need (the planner's maximum over its steps).
  if (p.program) return {p.program->ptx_version / 10, p.program->ptx_version % 10};
  const auto& t = isa::target_info(p.spec.target);
  return {t.ptx_major, t.ptx_minor};
}

std::string ptx(const plan::Plan& p) {
  if (p.program) return ptx_program(p);
  return p.shapes.engine == plan::Engine::tcgen05 ? detail::ptx_tcgen05(p) : detail::ptx_wgmma(p);
}

}  // namespace ptxgen::emit
