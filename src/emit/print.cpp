// `ptxgen plan`: resources (globals, tiles and their rings, allocations, every view with the chain
// it resolved through, barriers, registers), then each role's steps in order (loops with their
// bodies) with each instruction's spelling, shape, descriptor (field by field in JSON) and
// tensor-memory address. The JSON form is documented field by field in docs/plan-json.md.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "emitter.hpp"

namespace ptxgen::emit {

namespace {

using ojson = nlohmann::ordered_json;
using namespace plan;

std::string s(int64_t v) { return std::to_string(v); }
std::string dt(isa::DType t) { return std::string(isa::name(t)); }

// A global's extent: static, the size parameter it is ("m=4096"), or one that grows with a size
// parameter without being it (a scale-factor tensor's lines at k = 8192: "2048 (k=8192)").
std::string extent(const ir::Kernel& k, const std::string& param, int64_t value) {
  if (param.empty()) return s(value);
  for (const auto& z : k.size_params)
    if (z.name == param) return z.value == value ? param + "=" + s(value) : s(value) + " (" + param + "=" + s(z.value) + ")";
  return s(value) + " (" + param + ")";
}

std::string taddr(const std::string& alloc, uint32_t a) {
  const isa::TmemAddr t = isa::decode_tmem(a);
  return "[" + alloc + " + " + isa::hex32(a) + " (lane " + s(t.lane) + ", column " + s(t.column) + ")]";
}

// A ring of tensor-memory buffers: the stage's copy is further on at run time.
std::string ring_text(const TmemRing& r) {
  return r.stages > 1 ? " (+ stage x " + s(r.columns) + " columns, a ring of " + s(r.stages) + ")" : "";
}

ojson fields_json(const std::vector<isa::Field>& fs) {
  ojson j = ojson::object();
  for (const auto& f : fs)
    j[f.name] = {{"bits", f.lo == f.hi ? s(f.lo) : s(f.lo) + "-" + s(f.hi)}, {"raw", f.raw}, {"value", f.value}};
  return j;
}

ojson tmem_json(const std::string& alloc, uint32_t a, const TmemRing& ring = {}) {
  const isa::TmemAddr t = isa::decode_tmem(a);
  ojson j = {{"alloc", alloc}, {"hex", isa::hex32(a)}, {"lane", t.lane}, {"column", t.column}};
  if (ring.stages > 1) j["ring"] = {{"stages", ring.stages}, {"columns", ring.columns}};  // stage s: s x columns further on
  return j;
}

ojson desc_json(const isa::SmemDesc& d, const std::string& tile) {
  ojson j = {{"hex", isa::hex64(encoded(d))}, {"start_relative_to", "aligned shared-memory base"},
             {"fields", fields_json(isa::fields(d))}};
  if (!tile.empty()) j["tile"] = tile;
  return j;
}

// An Affine as text: "128 + 256 m_tile + 64 k_block".
std::string affine_text(const ir::Affine& a) {
  std::string o = s(a.base);
  auto term = [&](int64_t c, const char* n) {
    if (c) o += " + " + s(c) + " " + n;
  };
  term(a.m_tile, "m_tile");
  term(a.n_tile, "n_tile");
  term(a.k_block, "k_block");
  term(a.rank, "rank");
  if (a.size_mul) o += " + " + s(a.size_mul) + " " + a.size;
  term(a.group, "group");
  return o;
}

ojson affine_json(const ir::Affine& a) {
  ojson j = {{"base", a.base}, {"m_tile", a.m_tile}, {"n_tile", a.n_tile}, {"k_block", a.k_block}, {"rank", a.rank}};
  // A run-time size term (the gated epilogue's up half): only where there is one.
  if (a.size_mul) j["size"] = {{"name", a.size}, {"times", a.size_mul}};
  if (a.group) j["group"] = a.group;  // a grouped grid's plane: only where there is one
  return j;
}

std::string phase_text(const ir::Phase& ph) {
  if (ph.tile) return std::string("this CTA's tile, a ring over its tiles") + (ph.flip ? ", phase flipped" : "");
  return "iteration kb" + (ph.lag ? " - " + s(ph.lag) : std::string()) + (ph.flip ? ", phase flipped" : "");
}

ojson phase_json(const ir::Phase& ph) { return {{"lag", ph.lag}, {"flip", ph.flip}, {"tile", ph.tile}}; }

// A step's tensor-memory ring over the tiles (the double-buffered accumulator).
std::string ring_text(const ir::TmemRing& r) {
  return r.stages > 1 ? " (a ring of " + s(r.stages) + " over the CTA's tiles: stage s " + s(r.stride) + " x s columns further)" : "";
}
ojson ring_json(const ir::TmemRing& r) { return {{"stages", r.stages}, {"stride", r.stride}}; }

void ld_lines(std::string& o, const std::string& ind, const RegDef& d, bool st) {
  for (const auto& f : d.frags) {
    o += ind + "  warp " + s(f.warp) + ": " + (st ? spell::st(f.shape, f.num, f.pack) : spell::ld(f.shape, f.num, f.pack)) + " " +
         taddr(f.alloc, f.taddr) + (f.split ? ", split " + s(f.split) : "") + "\n";
    o += ind + "    regs " + s(f.first_reg) + "-" + s(f.first_reg + f.regs - 1) + ", rows from " + s(f.row0) +
         ", elements from " + s(f.elem0) + "\n";
  }
}

ojson ld_json(const RegDef& d) {
  ojson j = {{"regs", d.name}, {"dtype", dt(d.dtype)}, {"elements_per_register", d.elems_per_reg},
             {"registers_per_thread", d.regs}, {"rows", d.rows}, {"row_elements", d.row_elements}};
  ojson fr = ojson::array();
  for (const auto& f : d.frags)
    fr.push_back({{"warp", f.warp}, {"shape", std::string(isa::info(f.shape).name)}, {"num", f.num}, {"pack", f.pack},
                  {"split", f.split}, {"taddr", tmem_json(f.alloc, f.taddr)}, {"first_reg", f.first_reg},
                  {"regs", f.regs}, {"row0", f.row0}, {"elem0", f.elem0}});
  j["instructions"] = fr;
  if (d.wgmma) j["wgmma_groups"] = d.groups;
  return j;
}

struct Printer {
  const Plan& pl;
  const isa::TargetInfo& t;
  std::string o;
  int index = 0;

  std::string mma_name(const MmaStep& m, int n) const {
    return m.engine == ir::Engine::wgmma ? spell::wgmma(m, n) : spell::mma(m, pl.ir().cta_group, t);
  }

  void steps(const std::vector<Step>& ss, const std::string& ind) {
    for (const Step& st : ss) step(st, ind);
  }

  void step(const Step& st, const std::string& ind) {
    o += ind + "[" + s(index++) + "] " + std::string(name(st.kind)) + "  (" + st.ptr + ")\n";
    o += ind + "    " + st.why + "\n";
    const std::string in2 = ind + "    ";
    if (st.parity >= 0)  // a step of one parity of a loop unrolled by two (ir::Phase::parity)
      o += in2 + "only where iteration kb" + (st.lag ? " - " + s(st.lag) : std::string()) + " is " + (st.parity ? "odd" : "even") +
           " (after the loop: iteration trips" + (st.lag ? " - " + s(st.lag) : std::string()) + ")\n";
    switch (st.kind) {
      case StepKind::load: {
        const auto& l = st.load;
        o += in2 + s(l.chunks) + " chunks of 16 B: " + s(l.box_rows) + " rows of " + s(l.row_bytes) + " B from (" +
             affine_text(l.row0) + ", " + affine_text(l.col0) + "), boxes " + s(l.box_bytes) + " B wide, " +
             std::string(isa::name(l.swizzle)) + " swizzle" + (pl.ir().cta_group == 2 && !l.tma ? "; CTA 1 reads " + s(l.cta_bytes) + " B further on" : "") + "\n";
        if (l.tma) {
          if (l.multicast > 1) {  // the spelling is long: its multicast qualifier on a line of its own
            const std::string full = spell::tma_load_multicast(l.map.rank, l.to_leader && pl.ir().cta_group == 2), q = ".multicast::cluster";
            const size_t at = full.find(q);
            if (plan::multicast_whole_cluster(pl.ir().grid, pl.ir().cta_group, l))
              o += in2 + full.substr(0, at) + "\n" + in2 + "  " + full.substr(at) + ", ctaMask " + s((1 << l.multicast) - 1) +
                   "; each box by the cluster rank of its part\n";
            else
              o += in2 + full.substr(0, at) + "\n" + in2 + "  " + full.substr(at) + ", ctaMask: the block's tile " +
                   (l.multicast_along_m ? "column" : "row") + (pl.ir().cta_group == 2 ? " of this CTA's rank in its pair" : "") +
                   "; each box by the place of its part in it\n";
          } else {
            o += in2 + spell::tma_load(l.to_leader && pl.ir().cta_group == 2, l.map.rank) + "\n";
          }
          if (l.map.rank == 3) o += in2 + "plane " + affine_text([&] { ir::Affine a = l.c2_rt; a.base = l.c2; a.rank = l.cta_c2; return a; }()) + " of the map\n";
          o += in2 + "through " + l.map.param + " (" + l.map.data_type + ", box " + s(l.map.box_inner) + " x " + s(l.map.box_outer) +
               "), mbarrier " + l.barrier + (l.to_leader && pl.ir().cta_group == 2 ? " of CTA 0" : "") +
               (pl.ir().cta_group == 2 ? "; CTA 1 at +(" + s(l.cta_c0) + ", " + s(l.cta_c1) + ")" : "") + "\n";
          for (const auto& b : l.boxes)
            o += in2 + "  box -> shared +" + s(b.smem) + " from row " + s(b.c1) + ", element " + s(b.c0) + " of the map" +
                 (l.multicast > 1 ? (plan::multicast_whole_cluster(pl.ir().grid, pl.ir().cta_group, l) ? ", by cluster rank " : ", by place ") + s(b.part) : "") + "\n";
        }
        break;
      }
      case StepKind::cp:
        for (const auto& c : st.cps)
          o += in2 + spell::cp(c.shape, c.decompress, pl.ir().cta_group) + " " + taddr(c.alloc, c.taddr) + ring_text(c.ring) + " <- " +
               isa::hex64(encoded(c.src)) + " (\"" + c.tile + "\" rows from " + s(c.src_row) + ", column " + s(c.src_col) + ")\n";
        break;
      case StepKind::mma: {
        const auto& m = st.mma;
        if (m.engine == ir::Engine::tcgen05)
          o += in2 + mma_name(m, 0) + (m.scaled ? ", " + s(m.scale.factors) + " scale factor(s) per row per instruction" : "") + "\n";
        else
          o += in2 + "each warpgroup of the role: its " + s(m.warpgroup_rows) + " rows of A" + (m.a_registers ? " (from registers)" : "") + " into registers \"" +
               m.acc_regs + "\"\n";
        for (const auto& in : m.instrs) {
          o += in2 + "m" + s(in.mi) + " n" + s(in.ni) + " k" + s(in.ki) + " " + s(in.m) + "x" + s(in.n) + "x" + s(in.k);
          if (m.engine == ir::Engine::wgmma) {
            o += " " + mma_name(m, in.n) + "\n" + in2 + "  a=" + (m.a_registers ? std::string("registers") : isa::hex64(encoded(in.a_desc))) +
                 " b=" + isa::hex64(encoded(in.b_desc)) + " acc registers from " + s(in.acc_reg) + "\n";
            continue;
          }
          o += (in.enable_input_d ? " accumulate" : m.first_iteration_overwrites ? " overwrite in iteration 0" : " overwrite") +
               std::string(in.collector != Collector::discard ? ", " + spell::mma(m, pl.ir().cta_group, t, in.collector) : "") + "\n";
          o += in2 + "  d=" + taddr(in.d_alloc, in.d_taddr) + ring_text(st.tmem_ring) + " idesc=" + isa::hex32(encoded(in.idesc)) + "\n";
          o += in2 + "  a=" + (in.a_tmem ? taddr(in.a_alloc, in.a_taddr) : isa::hex64(encoded(in.a_desc))) + " b=" + isa::hex64(encoded(in.b_desc)) + "\n";
          if (m.scaled)
            o += in2 + "  sfa=" + taddr(in.sfa_alloc, in.sfa_taddr) + ring_text(in.sfa_ring) + " id " + s(in.idesc.a_sf_id) +
                 " sfb=" + taddr(in.sfb_alloc, in.sfb_taddr) + ring_text(in.sfb_ring) + " id " + s(in.idesc.b_sf_id) + "\n";
          if (m.sparse)
            o += in2 + "  meta=" + taddr(in.meta_alloc, in.meta_taddr) + ring_text(in.meta_ring) + " selector " + s(in.idesc.sparse_selector) + "\n";
        }
        break;
      }
      case StepKind::tmem_ld:
        if (st.tmem_ring.stages > 1) o += in2 + "addresses of stage 0" + ring_text(st.tmem_ring) + "\n";
        ld_lines(o, in2, st.ld, false);
        break;
      case StepKind::tmem_st: ld_lines(o, in2, st.st.dst, true); break;
      case StepKind::store:
        o += in2 + st.store.src.name + " (" + dt(st.store.src.dtype) + ") -> " + st.store.global + " (" + dt(st.store.to) + ") at (" +
             affine_text(st.store.row0) + ", " + affine_text(st.store.col0) + ")" +
             (st.store.clip ? ", clipped to " + st.store.rows_param + " x " + st.store.cols_param : "") + "\n";
        if (st.store.tma && !st.store.src.wgmma)
          o += in2 + "via shared \"" + st.store.stage + "\" at " + s(st.store.stage_offset) + (st.store.overlay ? " (over the ring)" : "") +
               ": one box of " + s(st.store.box_cols) + " x " + s(st.store.box_rows) + ", written by the warps that hold it once " +
               spell::bulk_wait_read() + " " + s(st.store.pending) + " says the stage's previous box has been read, then " +
               spell::tma_store(st.store.map.rank) + " through " + st.store.map.param + ", " + spell::bulk_commit() + "\n";
        else if (st.store.tma)
          o += in2 + "via shared \"" + st.store.stage + "\" at " + s(st.store.stage_offset) +
               (st.store.shared_by ? " (over the ring, once all " + s(st.store.shared_by) + " consumer threads are done with it)" : "") +
               ": each warpgroup's " + s(st.store.src.rows) + " rows as " + s(st.store.boxes) + " boxes of " + s(st.store.box_cols) + " x " +
                   s(st.store.src.rows) + ", written by " +
               (st.store.stmatrix ? spell::stmatrix(4) : spell::st(spell::Space::shared, spell::Ty::b32) + " per pair of columns") + " (" + st.store.staging +
               "), then " + spell::tma_store(st.store.map.rank) + " through " + st.store.map.param + ", " + spell::bulk_commit() +
               (st.store.subtiles ? "; two subtile buffers: box j goes through buffer j % 2 once " + spell::bulk_wait_read() +
                                        " says the buffer's previous box has been read, each box its own bulk group"
                                  : "") +
               (st.store.reuse && !st.store.subtiles ? "; the next tile waits for " + spell::bulk_wait_read() + " 0 before writing the tile" : "") +
               (st.store.map.optional ? "; where D's rows are not 16-byte multiples apart at run time, the clipped direct store instead" : "") +
               "\n";
        break;
      case StepKind::commit:
        o += in2 + spell::commit(pl.ir().cta_group, st.bar.pair_multicast || st.bar.release_row || st.bar.release_column) + " [" + st.bar.barrier + "]" +
             (st.bar.phase.lag || st.bar.phase.flip ? " (" + phase_text(st.bar.phase) + ")" : "") +
             (st.bar.release_row || st.bar.release_column
                  ? std::string(", ctaMask: the block's tile ") + (st.bar.release_row && st.bar.release_column ? "row and column" : st.bar.release_row ? "row" : "column")
                  : std::string()) +
             "\n";
        break;
      case StepKind::wait:
        o += in2 + spell::mbarrier_try_wait() + " [" + st.bar.barrier + "], " +
             (st.bar.phase.lag || st.bar.phase.flip || st.bar.parity == 0 ? "parity of " + phase_text(st.bar.phase) : "parity " + s(st.bar.parity)) + "\n";
        break;
      case StepKind::arrive:
      case StepKind::expect_tx:
        o += in2 + (st.kind == StepKind::arrive ? (st.bar.cluster_ctas > 1                    ? spell::mbarrier_arrive_remote()
                                                   : st.bar.to_leader && pl.ir().cta_group == 2 ? spell::mbarrier_arrive_cluster()
                                                                                           : spell::mbarrier_arrive())
                                                : spell::mbarrier_expect_tx()) +
             " [" + st.bar.barrier + "]" + (st.bar.to_leader && pl.ir().cta_group == 2 ? " of CTA 0" : "") +
             (st.bar.cluster_ctas <= 1                               ? ""
              : st.bar.release_row && st.bar.release_column ? " of each CTA of the block's tile row and column"
                                                            : " of each of the cluster's " + s(st.bar.cluster_ctas) + " CTAs") +
             (st.bar.per_warpgroup ? ", once per warpgroup" : "") +
             (st.kind == StepKind::expect_tx ? ", " + s(st.bar.tx_bytes) + " bytes" : "") + " (" + phase_text(st.bar.phase) + ")\n";
        break;
      case StepKind::mma_wait: o += in2 + spell::wgmma_wait() + " " + s(st.bar.pending) + "\n"; break;
      case StepKind::sync:
        o += in2 + (st.proxy_fence ? spell::proxy_fence() + "; " : "") + spell::fence_before() + "; " +
             (pl.ir().cta_group == 2 ? spell::cluster_arrive(true) + "; " + spell::cluster_wait(true) : spell::bar_sync() + " 0") + "; " +
             spell::fence_after() + "\n";
        break;
      case StepKind::loop: steps(st.body, ind + "    "); break;
      case StepKind::wait_ld: o += in2 + spell::wait_ld() + "\n"; break;
      case StepKind::wait_st: o += in2 + spell::wait_st() + "\n"; break;
      case StepKind::reduce: {
        const auto& r = st.reduce;
        o += in2 + std::string(kReduceNames[static_cast<size_t>(r.fn)]) + " of each row of " + r.a + " -> " + r.def.name +
             (r.shuffle ? ", across the 4 lanes of a row by shfl.sync.bfly" : ", within each thread") + "\n";
        break;
      }
      case StepKind::amax: {
        const auto& a = st.amax;
        o += in2 + "max |" + a.a + "| over the elements inside " + a.bounds.global + " at (" + affine_text(a.bounds.row0) + ", " +
             affine_text(a.bounds.col0) + "): abs.f32, max.f32 in each thread, shfl.sync.bfly over the warp, " +
             "red.global.max.u32 [" + a.dst + "] by lane 0\n";
        break;
      }
      case StepKind::quantize: {
        const auto& q = st.quantize;
        o += in2 + q.def.name + " = " + q.a + " / X per block of " + s(q.vec) + " columns of a row inside " + q.bounds.global + " at (" +
             affine_text(q.bounds.row0) + ", " + affine_text(q.bounds.col0) + "): amax by abs.f32, max.f32" +
             (q.shuffle ? " and shfl.sync.bfly over the 4 lanes of a row" : " in each thread") +
             (q.scale == isa::DType::ue4m3
                  ? ", X = e4m3(amax / " + std::string(isa::name(q.elem)) + " max) as ue4m3 (cvt.rn.satfinite.e4m3x2.f32), " + q.a +
                        " times min(rcp.rn.f32(X), FLT_MAX)"
                  : ", X = 2^ceil(log2(amax / " + std::string(isa::name(q.elem)) +
                        " max)) as ue8m0 from the f32 bits (add.u32, shr.u32, max.u32, min.u32), " + q.a + " times 2^(127 - x) (mul.rn.f32, exact)") +
             ", st.global.b8 x to " + q.dst + " (128x4)\n";
        break;
      }
      case StepKind::read: {
        const auto& r = st.read;
        o += in2 + "ld.global " + r.def.name + " <- " + r.global + " at (" + affine_text(r.row0) + ", " + affine_text(r.col0) + ")" +
             (r.rows_broadcast ? ", rows broadcast" : "") + (r.cols_broadcast ? ", columns broadcast" : "") + ": " +
             s(r.def.regs) + " registers per thread, each distinct element loaded once\n";
        break;
      }
      case StepKind::math: {
        const auto& m = st.math;
        int n = 0;
        for (const auto& f : m.def.frags) n += f.regs;
        if (m.fill) {
          o += in2 + spell::alu({.op = spell::Op::mov, .type = spell::Ty::b32}) + " " + m.def.name + ", " + plan::operand_text(m, 0) +
               ": " + s(n) + " instructions over " + s(static_cast<int64_t>(m.def.frags.size())) + " fragment(s), " + s(m.def.regs) +
               " registers per thread\n";
          break;
        }
        std::string args;
        // select: its condition first, a != 0 (setp.ne.f32 p, a, 0), then selp.f32 y, b, c, p.
        const bool sel = m.fn == MathFn::select;
        for (int k = sel ? 1 : 0; k < info(m.fn).operands; ++k) args += ", " + plan::operand_text(m, static_cast<size_t>(k));
        if (sel) args += ", p";
        o += in2 + (sel ? spell::setp(spell::Cmp::ne, spell::Ty::f32) + " p, " + plan::operand_text(m, 0) + ", 0; " : std::string()) +
             spell::alu(spell::math(m.fn, m.approx, m.dtype)) + " " + m.def.name + args + ": " +
             (m.def.wgmma ? s(m.def.regs) + " instructions per thread of the warpgroups (wgmma accumulators)\n"
                          : s(n) + " instructions over " + s(static_cast<int64_t>(m.def.frags.size())) + " fragment(s), " +
                                s(m.def.regs) + " registers per thread\n");
        break;
      }
    }
  }
};

// Lines longer than `width` break at a space outside brackets (a descriptor's fields or a list
// stays on one line), the rest indented four more than the line; a line with no such space stays.
std::string wrap_lines(const std::string& text, size_t width) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    const size_t first_char = line.find_first_not_of(' ');
    const size_t indent = first_char == std::string_view::npos ? 0 : first_char;
    std::string lead;
    while (lead.size() + line.size() > width) {
      // The last break at depth 0 that keeps the piece within the width, else the first one after.
      size_t cut = std::string_view::npos, later = std::string_view::npos;
      int depth = 0;
      const size_t from = lead.empty() ? indent : 0;
      for (size_t i = from; i < line.size(); ++i) {
        const char ch = line[i];
        if (ch == '(' || ch == '[') {
          ++depth;
        } else if ((ch == ')' || ch == ']') && depth > 0) {
          --depth;
        } else if (ch == ' ' && depth == 0 && i > from && line[i - 1] != ' ') {
          if (i + lead.size() <= width) cut = i;
          else if (later == std::string_view::npos) later = i;
        }
        if (cut != std::string_view::npos && i + lead.size() > width) break;
      }
      if (cut == std::string_view::npos) cut = later;
      if (cut == std::string_view::npos) break;
      out += lead;
      out += line.substr(0, cut);
      out += '\n';
      line.remove_prefix(cut);
      line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
      lead = std::string(indent + 4, ' ');
    }
    out += lead;
    out += line;
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string plan_text(const Plan& pl) {
  const auto& t = isa::target_info(pl.ir().target);
  const PtxVersion v = ptx_version(pl);
  Printer pr{pl, t, "", 0};
  std::string& o = pr.o;
  o += "plan for \"" + pl.ir().name + "\" (" + std::string(t.name) + ", PTX ISA " + s(v.major) + "." + s(v.minor) + "): " +
       s(pl.ir().threads) + " threads" + (pl.ir().cta_group == 2 ? " in each CTA of a pair (CTA 0 issues .cta_group::2)" : "") + ", " +
       (pl.roles.size() == 1 ? "one role the planner orders" : s(static_cast<int64_t>(pl.roles.size())) + " warp-specialized roles") + "\n";
  if (!pl.summary.empty()) o += "  " + pl.summary + "\n";
  for (const auto& c : pl.ir().chosen) o += "  chosen   " + c + "\n";
  // A persistent grid is a bound: one CTA (pair) per tile at most, the launch taking one per
  // multiprocessor (or pair of them) of the device it runs on.
  o += "  launch: " + std::string(pl.ir().grid.persistent ? "at most " : "") + "grid " + s(pl.launch.x) + " x " + s(pl.launch.y) + " x " + s(pl.launch.z) +
       (pl.ir().grid.persistent ? " (one CTA per tile; the launch takes one per multiprocessor)" : "") + " for the spec's sizes, cluster " +
       s(pl.ir().cluster[0]) + " x " + s(pl.ir().cluster[1]) + " x " + s(pl.ir().cluster[2]) +
       (pl.ir().max_registers < 255 ? ", .maxnreg " + s(pl.ir().max_registers) : "") + "\n";
  if (pl.ir().grid.tiled)
    o += "  grid of output tiles " + s(pl.ir().grid.tile_m) + " x " + s(pl.ir().grid.tile_n) + " over " + pl.ir().grid.m_param + " x " + pl.ir().grid.n_param +
         ", K blocks of " + s(pl.ir().grid.tile_k) +
         (pl.ir().grid.raster_group > 1 ? ", in groups of " + s(pl.ir().grid.raster_group) + " tile rows" : ", row by row") +
         (pl.ir().grid.persistent ? (pl.ir().cta_group == 2 ? ", walked by persistent CTA pairs (one per two multiprocessors)"
                                                  : ", walked by persistent CTAs (one per multiprocessor)")
                             : ", one CTA per tile") +
         (pl.ir().grid.cluster_m * pl.ir().grid.cluster_n > 1 ? "; each cluster a block of " + s(pl.ir().grid.cluster_m) + " x " + s(pl.ir().grid.cluster_n) +
                                                          " tiles sharing " + (pl.ir().grid.cluster_n > 1 && pl.ir().grid.cluster_m > 1 ? "A along its tile rows and B along its columns"
                                                                                                 : pl.ir().grid.cluster_n > 1 ? "A" : "B") +
                                                              " by multicast"
                                                    : "") + "\n";
  // A grouped grid: how each CTA (each persistent role) finds its group (docs/spec.md, "Grouped GEMM").
  const ir::Grid& gr = pl.ir().grid;
  if (!gr.groups_param.empty())
    o += "  grouped over " + gr.groups_param + ": " +
         (gr.persistent ? "all groups' tiles walked in order, group g's " +
                              (gr.group_rows.empty() ? "the tiles of its segment of A's rows, from the previous segment's end rounded up to " + s(gr.group_align) +
                                                           " to " + gr.group_ends + "[g],"
                                                     : "ceil(" + gr.group_rows + "[g] / " + s(gr.tile_m) + ") tile rows") +
                              " counted as each role reaches it"
          : gr.group_rows.empty() ? "each CTA's group by a binary search of " + gr.group_ends + " (segments aligned to " + s(gr.group_align) +
                                         "); a CTA in padding or past every segment exits at once"
                                   : "the grid's z walks the groups; a CTA whose first row is at or past " + gr.group_rows + "[z] exits at once") +
         "\n";
  o += "\nResources\n";
  for (const auto& g : pl.ir().globals)
    o += "  global   " + g.name + ": " + dt(g.dtype) + " [" + extent(pl.ir(), g.rows_param, g.rows) + " x " + extent(pl.ir(), g.cols_param, g.cols) + "] row-major, " + s(g.bits) + " bits per element, ld " +
         (g.ld_param.empty() ? s(g.ld) : g.ld_param) + (g.param.empty() ? " (tensor maps only)" : ", param " + g.param) +
         (g.planes ? "; " + s(g.planes) + " planes" : "") +
         (g.scale_vec ? ": block-scale factors of " + g.scales + ", one per " + s(g.scale_vec) + " of k, 128x4 layout" : "") +
         (g.compressed ? ": " + isa::sparse_granularity(g.sparse_kind) + " sparse, half of the elements of k" : "") +
         (g.metadata_of.empty() ? ""
                                : ": sparsity metadata of " + g.metadata_of + " (.kind::" + std::string(isa::name(g.sparse_kind)) +
                                      "), atoms of 128 rows x " + s(isa::sparse_atom_k(g.sparse_kind)) + " of k") +
         "\n";
  for (const auto& sm : pl.smem) {
    const auto& l = sm.layout;
    o += "  smem     " + sm.name + ": " + dt(sm.dtype) + " " + s(l.mn) + " x " + s(l.k) + " " + (l.major == isa::Major::k ? "K" : "MN") +
         "-major " + std::string(isa::name(l.swizzle)) + " at " + s(sm.offset) + " (" + s(l.bytes) + " B, align " + s(sm.align) +
         (sm.stages > 1 ? ", a ring of " + s(sm.stages) + " stages " + s(sm.stage_bytes) + " B apart" : "") +
         (sm.overlay.empty() ? "" : ", over \"" + sm.overlay + "\"'s ring") + ")\n";
    o += "           atom " + s(l.atom_mn) + " x " + s(l.atom_k) + ", LBO " + s(l.lbo) + " B, SBO " + s(l.sbo) + " B\n";
  }
  for (size_t i = 0; i < pl.allocs.size(); ++i)
    o += "  tmem     " + pl.allocs[i].name + ": tcgen05.alloc #" + s(static_cast<int64_t>(i)) + " of " + s(pl.allocs[i].columns) +
         " columns, address word at " + s(pl.allocs[i].slot_offset) + "\n";
  for (const auto& n : pl.view_order) {
    const ResolvedView& v = pl.views.at(n);
    o += "  view     " + n + " = " + v.describe() + "\n";
    for (const auto& c : v.chain) o += "             <- " + c + "\n";
    if (!v.of.empty()) o += "             <- " + v.of + "\n";
  }
  for (const auto& b : pl.barriers)
    o += "  mbarrier " + b.name + " at " + s(b.offset) + (b.stages > 1 ? ", " + s(b.stages) + " stages" : "") + ", " + s(b.count) +
         " arrival(s) per phase\n";
  for (const auto& [n, c] : pl.reg_counts) o += "  regs     " + n + ": " + s(c) + " per thread\n";
  o += "  shared memory: " + s(pl.smem_bytes) + " B dynamic (base rounded up to " + s(pl.smem_align) +
       " B at run time); tensor memory: " + s(pl.tmem_columns) + " columns\n";
  for (const auto& r : pl.roles) {
    o += "\nRole \"" + r.ir().name + "\": warp" + (r.ir().warps > 1 ? "s " + s(r.ir().first_warp) + "-" + s(r.ir().first_warp + r.ir().warps - 1) : " " + s(r.ir().first_warp)) +
         (r.ir().single_thread ? ", one thread" : "") + (r.ir().leader_cta_only && pl.ir().cta_group == 2 ? ", CTA 0 of the pair" : "") +
         (r.ir().max_registers ? ", " + std::string(spell::name(spell::Op::setmaxnreg)) + " " + s(r.ir().max_registers) : "") + (r.ir().persistent ? (r.ir().turns > 1 ? ", tiles i of the CTA with i % " + s(r.ir().turns) + " = " + s(r.ir().turn) + " (ping-pong)" : ", once per tile of the CTA")
                        : "") +
         "\n";
    pr.steps(r.steps, "  ");
  }
  return wrap_lines(o, 100);
}

namespace {

ojson step_json(const Plan& pl, const isa::TargetInfo& t, const Step& st) {
  ojson x = {{"step", std::string(name(st.kind))}, {"op", st.op}, {"pointer", st.ptr}, {"why", st.why}};
  if (st.parity >= 0) x["parity"] = {{"parity", st.parity}, {"lag", st.lag}};
  switch (st.kind) {
    case StepKind::load: {
      const auto& l = st.load;
      x["load"] = {{"global", l.global}, {"tile", l.tile}, {"row0", l.row0.base}, {"col0", l.col0.base},
                   {"origin", {affine_json(l.row0), affine_json(l.col0)}}, {"chunks", l.chunks}};
      // The arrangement (§9.7.16.3.3): `rows` rows of `row_bytes`, in columns `box_bytes` wide, each
      // column `column_bytes` long, from `tile_offset`; global row r at r x `global_row_bytes`.
      x["load"]["arrangement"] = {{"tile_offset", l.tile_offset}, {"rows", l.box_rows}, {"row_bytes", l.row_bytes},
                                  {"box_bytes", l.box_bytes}, {"column_bytes", l.column_bytes},
                                  {"swizzle", std::string(isa::name(l.swizzle))},
                                  {"global_row_bytes", l.global_row_bytes}, {"col0_bytes", l.col0_bytes}};
      if (pl.ir().cta_group == 2) x["load"]["cta_bytes"] = l.cta_bytes;
      if (l.tma) {
        ojson bx = ojson::array();
        for (const auto& b : l.boxes) {
          bx.push_back({{"smem", b.smem}, {"coords", {b.c0, b.c1}}});
          if (l.multicast > 1) bx.back()[plan::multicast_whole_cluster(pl.ir().grid, pl.ir().cta_group, l) ? "cluster_rank" : "place"] = b.part;
        }
        x["load"]["tma"] = {{"instruction", l.multicast > 1 ? spell::tma_load_multicast(l.map.rank, l.to_leader && pl.ir().cta_group == 2)
                                                            : spell::tma_load(l.to_leader && pl.ir().cta_group == 2, l.map.rank)},
                            {"tensor_map", l.map.param},
                            {"barrier", l.barrier}, {"phase", phase_json(l.phase)}, {"arms_barrier", l.arm},
                            {"to_leader", l.to_leader}, {"boxes", bx}};
        if (pl.ir().cta_group == 2) x["load"]["tma"]["cta_coords"] = {l.cta_c0, l.cta_c1};
        if (l.multicast > 1 && plan::multicast_whole_cluster(pl.ir().grid, pl.ir().cta_group, l))
          x["load"]["tma"]["multicast"] = {{"ctas", l.multicast}, {"shared_by", "cluster"}, {"cta_mask", (1 << l.multicast) - 1}};
        else if (l.multicast > 1)
          x["load"]["tma"]["multicast"] = {{"ctas", l.multicast}, {"shared_by", l.multicast_along_m ? "block_column" : "block_row"}};
        if (l.map.rank == 3) x["load"]["tma"]["plane"] = {{"base", l.c2}, {"origin", affine_json(l.c2_rt)}, {"cta", l.cta_c2}};
      }
      break;
    }
    case StepKind::cp: {
      ojson a = ojson::array();
      for (const auto& c : st.cps)
        a.push_back({{"instruction", spell::cp(c.shape, c.decompress, pl.ir().cta_group)}, {"dst", tmem_json(c.alloc, c.taddr, c.ring)},
                     {"src", desc_json(c.src, c.tile)}, {"src_row", c.src_row}, {"src_col", c.src_col}});
      x["cp"] = a;
      break;
    }
    case StepKind::mma: {
      const auto& m = st.mma;
      ojson a = ojson::array();
      for (const auto& in : m.instrs) {
        ojson j = {{"mi", in.mi}, {"ni", in.ni}, {"ki", in.ki}, {"shape", {in.m, in.n, in.k}}, {"b", desc_json(in.b_desc, in.b_tile)},
                   {"enable_input_d", in.enable_input_d}};
        if (m.engine == ir::Engine::wgmma) {
          j["instruction"] = spell::wgmma(m, in.n);
          if (!m.a_registers) j["a"] = desc_json(in.a_desc, in.a_tile);
          j["acc_reg"] = in.acc_reg;
        } else {
          j["instruction"] = spell::mma(m, pl.ir().cta_group, t, in.collector);
          j["idesc"] = {{"hex", isa::hex32(encoded(in.idesc))}, {"fields", fields_json(isa::fields(in.idesc))}};
          j["d"] = tmem_json(in.d_alloc, in.d_taddr);
          if (in.a_tmem) j["a"] = tmem_json(in.a_alloc, in.a_taddr);
          else j["a"] = desc_json(in.a_desc, in.a_tile);
          if (m.scaled) {
            j["scale_a"] = tmem_json(in.sfa_alloc, in.sfa_taddr, in.sfa_ring);
            j["scale_b"] = tmem_json(in.sfb_alloc, in.sfb_taddr, in.sfb_ring);
          }
          if (m.sparse) j["metadata"] = tmem_json(in.meta_alloc, in.meta_taddr, in.meta_ring);
        }
        a.push_back(j);
      }
      x["mma"] = {{"engine", m.engine == ir::Engine::wgmma ? "wgmma" : "tcgen05"}, {"instrs", a},
                  {"first_iteration_overwrites", m.first_iteration_overwrites}};
      if (m.engine == ir::Engine::tcgen05) {
        x["mma"]["instruction"] = spell::mma(m, pl.ir().cta_group, t);
        x["mma"]["tmem_ring"] = ring_json(st.tmem_ring);
      }
      else x["mma"]["accumulator"] = {{"regs", m.acc_regs}, {"dtype", dt(m.acc_dtype)}, {"a_from_registers", m.a_registers},
                                      {"a_warpgroup_stride", m.a_warpgroup_stride}};
      break;
    }
    case StepKind::tmem_ld:
      x["ld"] = ld_json(st.ld);
      x["ld"]["tmem_ring"] = ring_json(st.tmem_ring);
      break;
    case StepKind::tmem_st: x["st"] = ld_json(st.st.dst); break;
    case StepKind::store:
      x["store"] = {{"regs", st.store.src.name}, {"global", st.store.global}, {"row0", st.store.row0.base}, {"col0", st.store.col0.base},
                    {"origin", {affine_json(st.store.row0), affine_json(st.store.col0)}}, {"clip", st.store.clip}};
      if (st.store.tma)
        x["store"]["tma"] = {{"instruction", spell::tma_store(st.store.map.rank)}, {"tensor_map", st.store.map.param}, {"stage", st.store.stage},
                             {"stage_offset", st.store.stage_offset}, {"boxes", st.store.boxes}, {"box_cols", st.store.box_cols},
                             {"box_stride", st.store.box_stride}, {"shared_by", st.store.shared_by}, {"reuse", st.store.reuse},
                             {"box_rows", st.store.box_rows}, {"pending", st.store.pending}, {"overlay", st.store.overlay}};
      if (st.store.tma && st.store.src.wgmma)
        x["store"]["tma"]["staging"] = {{"instruction", st.store.stmatrix ? spell::stmatrix(4) : spell::st(spell::Space::shared, spell::Ty::b32)},
                                        {"why", st.store.staging},
                                        {"subtiles", st.store.subtiles}};
      if (st.store.map.optional) x["store"]["tma"]["direct_fallback"] = true;
      if (pl.ir().cta_group == 2) x["store"]["per_cta"] = {st.store.cta_row, st.store.cta_col};
      break;
    case StepKind::commit:
    case StepKind::wait:
    case StepKind::arrive:
    case StepKind::expect_tx:
      x["barrier"] = {{"name", st.bar.barrier}, {"parity", st.bar.parity}, {"phase", phase_json(st.bar.phase)}};
      if (st.kind == StepKind::expect_tx) x["barrier"]["tx_bytes"] = st.bar.tx_bytes;
      if (st.kind == StepKind::arrive) x["barrier"]["to_leader"] = st.bar.to_leader;
      if (st.bar.per_warpgroup) x["barrier"]["per_warpgroup"] = true;
      if (st.bar.cluster_ctas > 1) x["barrier"]["cluster_ctas"] = st.bar.cluster_ctas;
      if (st.bar.release_row) x["barrier"]["release_row"] = true;
      if (st.bar.release_column) x["barrier"]["release_column"] = true;
      break;
    case StepKind::mma_wait: x["pending"] = st.bar.pending; break;
    case StepKind::reduce:
      x["reduce"] = {{"fn", std::string(kReduceNames[static_cast<size_t>(st.reduce.fn)])}, {"regs", st.reduce.def.name},
                     {"a", st.reduce.a}, {"shuffle", st.reduce.shuffle}};
      break;
    case StepKind::amax:
      x["amax"] = {{"a", st.amax.a}, {"dst", st.amax.dst}, {"of", st.amax.bounds.global}};
      break;
    case StepKind::quantize:
      x["quantize"] = {{"regs", st.quantize.def.name}, {"a", st.quantize.a}, {"dst", st.quantize.dst}, {"of", st.quantize.bounds.global},
                       {"vec", st.quantize.vec}, {"elem", std::string(isa::name(st.quantize.elem))}, {"scale", "ue8m0"},
                       {"shuffle", st.quantize.shuffle}};
      break;
    case StepKind::read:
      x["read"] = {{"regs", st.read.def.name}, {"global", st.read.global}, {"rows_broadcast", st.read.rows_broadcast},
                   {"cols_broadcast", st.read.cols_broadcast}};
      break;
    case StepKind::math:
      if (st.math.fill) {
        x["math"] = {{"instruction", spell::alu({.op = spell::Op::mov, .type = spell::Ty::b32})}, {"regs", st.math.def.name},
                     {"value", static_cast<double>(st.math.value[0].value_or(0.0f))}};
        break;
      }
      x["math"] = {{"instruction", spell::alu(spell::math(st.math.fn, st.math.approx, st.math.dtype))}, {"regs", st.math.def.name}, {"a", st.math.a},
                   {"b", st.math.b}, {"c", st.math.c}};
      for (size_t k = 0; k < 3; ++k)  // a constant operand is its number
        if (const auto& v = st.math.value[k]) x["math"][std::string(1, static_cast<char>('a' + k))] = static_cast<double>(*v);
      break;
    case StepKind::sync: x["proxy_fence"] = st.proxy_fence; break;
    case StepKind::loop: {
      x["loop"] = {{"k_param", st.k_param}, {"block", st.block}, {"trips", st.trips}};
      if (st.unroll > 1) x["loop"]["unroll"] = st.unroll;
      ojson b = ojson::array();
      for (const auto& y : st.body) b.push_back(step_json(pl, t, y));
      x["body"] = b;
      break;
    }
    default: break;
  }
  return x;
}

}  // namespace

std::string plan_json(const Plan& p) {
  const auto& t = isa::target_info(p.ir().target);
  const PtxVersion v = ptx_version(p);
  ojson j;
  j["format"] = kPlanJsonFormat;
  j["name"] = p.ir().name;
  j["target"] = std::string(t.name);
  j["ptx_version"] = s(v.major) + "." + s(v.minor);
  j["engine"] = p.ir().engine == ir::Engine::wgmma ? "wgmma" : "tcgen05";
  j["threads"] = p.ir().threads;
  j["cta_group"] = p.ir().cta_group;
  j["cluster"] = p.ir().cluster;
  if (!p.ir().chosen.empty()) j["chosen"] = p.ir().chosen;
  j["grid"] = {p.launch.x, p.launch.y, p.launch.z};
  if (p.ir().grid.tiled) j["tiles"] = {{"m", p.ir().grid.tile_m}, {"n", p.ir().grid.tile_n}, {"k", p.ir().grid.tile_k}, {"m_param", p.ir().grid.m_param}, {"n_param", p.ir().grid.n_param},
                                   {"raster_group", p.ir().grid.raster_group}, {"persistent", p.ir().grid.persistent}};
  if (p.ir().grid.cluster_m * p.ir().grid.cluster_n > 1) j["tiles"]["cluster_tiles"] = {{"m", p.ir().grid.cluster_m}, {"n", p.ir().grid.cluster_n}};
  ojson g = ojson::array();
  for (const auto& x : p.ir().globals) {
    g.push_back({{"name", x.name}, {"param", x.param}, {"dtype", dt(x.dtype)}, {"rows", x.rows}, {"cols", x.cols}, {"ld", x.ld},
                 {"rows_param", x.rows_param}, {"cols_param", x.cols_param}});
    if (x.planes) g.back()["planes"] = x.planes;
    if (x.scale_vec) g.back()["scale"] = {{"of", x.scales}, {"vec", x.scale_vec}, {"layout", "128x4"}};
    if (x.compressed) g.back()["sparse"] = isa::sparse_granularity(x.sparse_kind);
    if (!x.metadata_of.empty())
      g.back()["metadata"] = {{"of", x.metadata_of},
                              {"layout", "128x" + std::to_string(isa::sparse_atom_k(x.sparse_kind)) + " atoms"},
                              {"kind", isa::name(x.sparse_kind)}};
  }
  j["params"] = g;
  ojson sz = ojson::array();
  for (const auto& z : p.ir().size_params) {
    ojson x = {{"name", z.name}, {"value", z.value}};
    if (!z.of.empty()) x.update({{"of", z.of}, {"div", z.div}, {"mul", z.mul}});
    sz.push_back(x);
  }
  j["sizes"] = sz;
  ojson sm = ojson::array();
  for (const auto& x : p.smem)
    sm.push_back({{"name", x.name}, {"offset", x.offset}, {"align", x.align}, {"bytes", x.layout.bytes}, {"lbo", x.layout.lbo},
                  {"sbo", x.layout.sbo}, {"swizzle", std::string(isa::name(x.layout.swizzle))}, {"stages", x.stages},
                  {"stage_bytes", x.stage_bytes}});
  j["smem"] = sm;
  ojson al = ojson::array();
  for (const auto& a : p.allocs) al.push_back({{"name", a.name}, {"columns", a.columns}, {"slot_offset", a.slot_offset}});
  j["allocations"] = al;
  ojson vs = ojson::object();
  for (const auto& n : p.view_order) {
    const ResolvedView& v = p.views.at(n);
    vs[n] = {{"alloc", v.alloc},       {"lane", v.lane},       {"lanes", v.lanes}, {"column", v.column},
             {"columns", v.columns},   {"dtype", dt(v.dtype)}, {"packing", v.packing},
             {"layout", std::string(isa::name(v.layout))}, {"rows", v.rows}, {"chain", v.chain}, {"of", v.of}};
    if (v.stages > 1) vs[n]["ring"] = {{"stages", v.stages}, {"columns", v.stage_columns}};
  }
  j["views"] = vs;
  ojson bs = ojson::array();
  for (const auto& b : p.barriers) bs.push_back({{"name", b.name}, {"offset", b.offset}, {"count", b.count}, {"stages", b.stages}});
  j["barriers"] = bs;
  j["shared_memory_bytes"] = p.smem_bytes;
  j["tensor_memory_columns"] = p.tmem_columns;
  ojson roles = ojson::array();
  for (const auto& r : p.roles) {
    ojson steps = ojson::array();
    for (const auto& st : r.steps) steps.push_back(step_json(p, t, st));
    ojson role = {{"name", r.ir().name}, {"first_warp", r.ir().first_warp}, {"warps", r.ir().warps}, {"single_thread", r.ir().single_thread},
                  {"leader_cta_only", r.ir().leader_cta_only}, {"max_registers", r.ir().max_registers}, {"persistent", r.ir().persistent}};
    if (r.ir().turns > 1) {  // ping-pong roles only: the other roles' JSON stays as it was
      role["turn"] = r.ir().turn;
      role["turns"] = r.ir().turns;
    }
    role["steps"] = steps;
    roles.push_back(role);
  }
  j["roles"] = roles;
  return j.dump(2) + "\n";
}

}  // namespace ptxgen::emit
