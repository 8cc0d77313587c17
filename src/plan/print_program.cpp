// `ptxgen plan` for a program-level spec: resources (globals, tiles, allocations, every view with
// the chain it resolved through, barriers, registers), then the steps in order with each
// instruction's shape, descriptor (field by field in JSON) and tensor-memory address.
#include <nlohmann/json.hpp>

#include "internal.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::plan {

namespace {

using ojson = nlohmann::ordered_json;

std::string s(int64_t v) { return std::to_string(v); }
std::string dt(isa::DType t) { return std::string(isa::name(t)); }

std::string taddr(const std::string& alloc, uint32_t a) {
  const isa::TmemAddr t = isa::decode_tmem(a);
  return "[" + alloc + " + " + isa::hex32(a) + " (lane " + s(t.lane) + ", column " + s(t.column) + ")]";
}

ojson fields_json(const std::vector<isa::Field>& fs) {
  ojson j = ojson::object();
  for (const auto& f : fs)
    j[f.name] = {{"bits", f.lo == f.hi ? s(f.lo) : s(f.lo) + "-" + s(f.hi)}, {"raw", f.raw}, {"value", f.value}};
  return j;
}

ojson tmem_json(const std::string& alloc, uint32_t a) {
  const isa::TmemAddr t = isa::decode_tmem(a);
  return {{"alloc", alloc}, {"hex", isa::hex32(a)}, {"lane", t.lane}, {"column", t.column}};
}

ojson desc_json(const isa::SmemDesc& d) {
  return {{"hex", isa::hex64(encoded(d))}, {"start_relative_to", "aligned shared-memory base"},
          {"fields", fields_json(isa::fields(d))}};
}

std::string cp_name(const CpInstr& c, int cta_group) {
  const auto& i = isa::info(c.shape);
  return "tcgen05.cp.cta_group::" + s(cta_group) + "." + std::string(i.name) + (i.multicast.empty() ? "" : "." + std::string(i.multicast)) +
         std::string(isa::qualifier(c.decompress));
}

std::string ld_name(const LdInstr& f, bool st) {
  return std::string(st ? "tcgen05.st." : "tcgen05.ld.") + std::string(isa::info(f.shape).name) + ".x" + s(f.num) +
         (f.pack ? (st ? ".unpack::16b" : ".pack::16b") : "");
}

std::string mma_name(const MmaStep& m, int cta_group) {
  return std::string("tcgen05.mma") + (m.sparse ? ".sp" : "") + ".cta_group::" + s(cta_group) + ".kind::" + std::string(isa::name(m.kind)) +
         (m.scaled ? ".block_scale" + m.scale_qualifier : "");
}

void ld_lines(std::string& o, const RegDef& d, bool st) {
  for (const auto& f : d.frags) {
    o += "      warp " + s(f.warp) + ": " + ld_name(f, st) + " " + taddr(f.alloc, f.taddr) + (f.split ? ", split " + s(f.split) : "") +
         "  regs " + s(f.first_reg) + "-" + s(f.first_reg + f.regs - 1) + "  rows from " + s(f.row0) + ", elements from " +
         s(f.elem0) + "\n";
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
  return j;
}

}  // namespace

std::string program_text(const Plan& pl) {
  const ProgramPlan& p = *pl.program;
  const auto& t = isa::target_info(pl.spec.target);
  std::string o;
  o += "plan for \"" + pl.spec.name + "\" (" + std::string(t.name) + ", PTX ISA " + s(p.ptx_version / 10) + "." +
       s(p.ptx_version % 10) + "): program level, " + s(p.threads) + " threads" +
       (p.cta_group == 2 ? " in each CTA of a pair (one cluster of 2; CTA 0 issues .cta_group::2)" : "") + "\n\n";
  o += "Resources\n";
  for (size_t i = 0; i < p.globals.size(); ++i) {
    const auto& g = p.globals[i];
    o += "  param " + s(static_cast<int64_t>(i)) + "  " + g.name + ": " + dt(g.dtype) + " [" + s(g.rows) + " x " + s(g.cols) +
         "] row-major, " + s(g.bits) + " bits per element\n";
  }
  for (const auto& sm : p.smem) {
    const auto& l = sm.layout;
    o += "  smem    " + sm.name + ": " + dt(sm.dtype) + " " + s(l.mn) + " x " + s(l.k) + " " +
         (l.major == isa::Major::k ? "K" : "MN") + "-major " + std::string(isa::name(l.swizzle)) + " at " + s(sm.offset) +
         " (" + s(l.bytes) + " B, align " + s(sm.align) + "); atom " + s(l.atom_mn) + " x " + s(l.atom_k) + ", LBO " + s(l.lbo) +
         " B, SBO " + s(l.sbo) + " B\n";
  }
  for (size_t i = 0; i < p.allocs.size(); ++i)
    o += "  tmem    " + p.allocs[i].name + ": tcgen05.alloc #" + s(static_cast<int64_t>(i)) + " of " + s(p.allocs[i].columns) +
         " columns, address word at " + s(p.allocs[i].slot_offset) + "\n";
  for (const auto& [n, v] : p.views) {
    o += "  view    " + n + " = " + v.describe() + "\n";
    for (const auto& c : v.chain) o += "            <- " + c + "\n";
  }
  for (const auto& b : p.barriers) o += "  mbarrier " + b.name + " at " + s(b.offset) + "\n";
  for (const auto& [n, c] : p.reg_counts) o += "  regs    " + n + ": " + s(c) + " per thread\n";
  o += "  shared memory: " + s(p.smem_bytes) + " B dynamic (base rounded up to " + s(p.smem_align) +
       " B at run time); tensor memory: " + s(p.tmem_columns) + " columns\n\n";
  o += "Steps\n";
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& st = p.steps[i];
    o += "  [" + s(static_cast<int64_t>(i)) + "] " + std::string(name(st.kind)) +
         (st.op >= 0 ? "  (" + pl.spec.program->ops[static_cast<size_t>(st.op)].ptr + ")" : "  (inserted)") + ": " + st.why + "\n";
    switch (st.kind) {
      case StepKind::load: {
        const auto& l = st.load;
        o += "      " + s(l.chunks) + " chunks of 16 B: " + s(l.box_rows) + " rows of " + s(l.row_bytes) + " B from (" + s(l.row0) +
             ", " + s(l.col0) + "), boxes " + s(l.box_bytes) + " B wide, " + std::string(isa::name(l.swizzle)) + " swizzle" +
             (p.cta_group == 2 ? "; CTA 1 reads " + s(l.cta_bytes) + " B further on" : "") + "\n";
        if (l.tma) {
          o += "      TMA through " + l.map.param + " (" + (l.map.unit == 4 ? "4-byte words" : "bytes") + ", box " + s(l.map.box_inner) +
               " x " + s(l.map.box_outer) + "), mbarrier " + l.barrier + (p.cta_group == 2 ? "; CTA 1 at +(" + s(l.cta_c0) + ", " + s(l.cta_c1) + ")" : "") + "\n";
          for (const auto& b : l.boxes)
            o += "        box -> shared +" + s(b.smem) + " from row " + s(b.c1) + ", " + (l.map.unit == 4 ? "word " : "byte ") + s(b.c0) + "\n";
        }
        break;
      }
      case StepKind::cp:
        for (const auto& c : st.cps)
          o += "      " + cp_name(c, p.cta_group) + " " + taddr(c.alloc, c.taddr) + " <- " + isa::hex64(encoded(c.src)) + " (rows from " +
               s(c.src_row) + ", column " + s(c.src_col) + ")\n";
        break;
      case StepKind::mma: {
        const auto& m = st.mma;
        o += "      " + mma_name(m, p.cta_group) + (m.scaled ? ", " + s(m.factors_per_instr) + " scale factor(s) per row per instruction" : "") + "\n";
        for (const auto& in : m.instrs) {
          o += "      m" + s(in.mi) + " n" + s(in.ni) + " k" + s(in.ki) + " " + s(in.m) + "x" + s(in.n) + "x" + s(in.k) +
               " d=" + taddr(in.d_alloc, in.d_taddr) + " a=" +
               (in.a_tmem ? taddr(in.a_alloc, in.a_taddr) : isa::hex64(encoded(in.a_desc))) + " b=" + isa::hex64(encoded(in.b_desc)) +
               " idesc=" + isa::hex32(encoded(in.idesc)) + (in.enable_input_d ? " accumulate" : " overwrite");
          if (m.scaled)
            o += " sfa=" + taddr(in.sfa_alloc, in.sfa_taddr) + " id " + s(in.idesc.a_sf_id) + " sfb=" + taddr(in.sfb_alloc, in.sfb_taddr) +
                 " id " + s(in.idesc.b_sf_id);
          if (m.sparse) o += " meta=" + taddr(in.meta_alloc, in.meta_taddr) + " selector " + s(in.idesc.sparse_selector);
          o += "\n";
        }
        break;
      }
      case StepKind::tmem_ld: ld_lines(o, st.ld, false); break;
      case StepKind::tmem_st: ld_lines(o, st.st.dst, true); break;
      case StepKind::store:
        o += "      " + st.store.src.name + " (" + dt(st.store.src.dtype) + ") -> " + st.store.global + " (" + dt(st.store.to) +
             ") at (" + s(st.store.row0) + ", " + s(st.store.col0) + ")" +
             (p.cta_group == 2 ? ", CTA 1 at (" + s(st.store.row0 + st.store.cta_row) + ", " + s(st.store.col0 + st.store.cta_col) + ")"
                               : "") + "\n";
        break;
      case StepKind::commit:
      case StepKind::wait:
        o += "      barrier " + st.bar.barrier + (st.kind == StepKind::wait ? ", parity " + s(st.bar.parity) : "") + "\n";
        break;
      case StepKind::sync:
        o += std::string("      ") + (st.proxy_fence ? "fence.proxy.async.shared::cta; " : "") +
             "tcgen05.fence::before_thread_sync; " +
             std::string(p.cta_group == 2 ? "barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned"
                                          : "bar.sync 0") +
             "; tcgen05.fence::after_thread_sync\n";
        break;
      default: break;
    }
  }
  return o;
}

std::string program_json(const Plan& pl) {
  const ProgramPlan& p = *pl.program;
  ojson j;
  j["spec"] = ojson::parse(spec::to_json(pl.spec));
  j["target"] = std::string(isa::target_info(pl.spec.target).name);
  j["ptx_version"] = s(p.ptx_version / 10) + "." + s(p.ptx_version % 10);
  j["threads"] = p.threads;
  ojson g = ojson::array();
  for (const auto& x : p.globals) g.push_back({{"name", x.name}, {"dtype", dt(x.dtype)}, {"rows", x.rows}, {"cols", x.cols}});
  j["params"] = g;
  ojson sm = ojson::array();
  for (const auto& x : p.smem)
    sm.push_back({{"name", x.name}, {"offset", x.offset}, {"align", x.align}, {"bytes", x.layout.bytes}, {"lbo", x.layout.lbo},
                  {"sbo", x.layout.sbo}, {"swizzle", std::string(isa::name(x.layout.swizzle))}});
  j["smem"] = sm;
  ojson al = ojson::array();
  for (const auto& a : p.allocs) al.push_back({{"name", a.name}, {"columns", a.columns}, {"slot_offset", a.slot_offset}});
  j["allocations"] = al;
  ojson vs = ojson::object();
  for (const auto& [n, v] : p.views)
    vs[n] = {{"alloc", v.alloc},       {"lane", v.lane},       {"lanes", v.lanes}, {"column", v.column},
             {"columns", v.columns},   {"dtype", dt(v.dtype)}, {"packing", v.packing},
             {"layout", std::string(spec::name(v.layout))}, {"rows", v.rows}, {"chain", v.chain}};
  j["views"] = vs;
  ojson bs = ojson::array();
  for (const auto& b : p.barriers) bs.push_back({{"name", b.name}, {"offset", b.offset}});
  j["barriers"] = bs;
  j["shared_memory_bytes"] = p.smem_bytes;
  j["tensor_memory_columns"] = p.tmem_columns;
  ojson steps = ojson::array();
  for (const auto& st : p.steps) {
    ojson x = {{"step", std::string(name(st.kind))}, {"op", st.op}, {"why", st.why}};
    switch (st.kind) {
      case StepKind::load:
        x["load"] = {{"global", st.load.global}, {"tile", st.load.tile}, {"row0", st.load.row0}, {"col0", st.load.col0},
                     {"chunks", st.load.chunks}};
        // The arrangement (§9.7.16.3.3): `rows` rows of `row_bytes`, in columns `box_bytes` wide, each
        // column rows x box_bytes long, from `tile_offset`; global row r at r x `global_row_bytes`.
        x["load"]["arrangement"] = {{"tile_offset", st.load.tile_offset}, {"rows", st.load.box_rows},
                                    {"row_bytes", st.load.row_bytes}, {"box_bytes", st.load.box_bytes},
                                    {"swizzle", std::string(isa::name(st.load.swizzle))},
                                    {"global_row_bytes", st.load.global_row_bytes}, {"col0_bytes", st.load.col0_bytes}};
        if (p.cta_group == 2) x["load"]["cta_bytes"] = st.load.cta_bytes;
        if (st.load.tma) {
          ojson bx = ojson::array();
          for (const auto& b : st.load.boxes) bx.push_back({{"smem", b.smem}, {"coords", {b.c0, b.c1}}});
          x["load"]["tma"] = {{"tensor_map", st.load.map.param}, {"barrier", st.load.barrier}, {"boxes", bx}};
          if (p.cta_group == 2) x["load"]["tma"]["cta_coords"] = {st.load.cta_c0, st.load.cta_c1};
        }
        break;
      case StepKind::cp: {
        ojson a = ojson::array();
        for (const auto& c : st.cps)
          a.push_back({{"instruction", cp_name(c, p.cta_group)}, {"dst", tmem_json(c.alloc, c.taddr)}, {"src", desc_json(c.src)},
                       {"src_row", c.src_row}, {"src_col", c.src_col}});
        x["cp"] = a;
        break;
      }
      case StepKind::mma: {
        ojson a = ojson::array();
        for (const auto& in : st.mma.instrs) {
          ojson m = {{"mi", in.mi}, {"ni", in.ni}, {"ki", in.ki}, {"shape", {in.m, in.n, in.k}},
                     {"idesc", {{"hex", isa::hex32(encoded(in.idesc))}, {"fields", fields_json(isa::fields(in.idesc))}}},
                     {"d", tmem_json(in.d_alloc, in.d_taddr)}, {"b", desc_json(in.b_desc)}, {"enable_input_d", in.enable_input_d}};
          if (in.a_tmem) m["a"] = tmem_json(in.a_alloc, in.a_taddr);
          else m["a"] = desc_json(in.a_desc);
          if (st.mma.scaled) {
            m["scale_a"] = tmem_json(in.sfa_alloc, in.sfa_taddr);
            m["scale_b"] = tmem_json(in.sfb_alloc, in.sfb_taddr);
          }
          if (st.mma.sparse) m["metadata"] = tmem_json(in.meta_alloc, in.meta_taddr);
          a.push_back(m);
        }
        x["mma"] = {{"instruction", mma_name(st.mma, p.cta_group)}, {"instrs", a}};
        break;
      }
      case StepKind::tmem_ld: x["ld"] = ld_json(st.ld); break;
      case StepKind::tmem_st: x["st"] = ld_json(st.st.dst); break;
      case StepKind::store:
        x["store"] = {{"regs", st.store.src.name}, {"global", st.store.global}, {"row0", st.store.row0}, {"col0", st.store.col0}};
        if (pl.program->cta_group == 2) x["store"]["per_cta"] = {st.store.cta_row, st.store.cta_col};
        break;
      case StepKind::commit:
      case StepKind::wait: x["barrier"] = {{"name", st.bar.barrier}, {"parity", st.bar.parity}}; break;
      case StepKind::sync: x["proxy_fence"] = st.proxy_fence; break;
      default: break;
    }
    steps.push_back(x);
  }
  j["steps"] = steps;
  return j.dump(2) + "\n";
}

std::string program_manifest(const Plan& pl) {
  // One CTA of `threads` threads runs the whole program (.cta_group::1, no %ctaid; plan::grid), or
  // one cluster of two for a CTA pair (.cta_group::2, %cluster_ctarank picks the half);
  // the parameters are the globals' addresses in the order of the .entry.
  const ProgramPlan& p = *pl.program;
  ojson j;
  j["ptxgen"] = 1;
  j["entry"] = pl.spec.name;
  j["target"] = std::string(isa::target_info(pl.spec.target).name);
  j["level"] = "program";
  j["requirements"] = "every tensor row-major, rows tightly packed (leading dimension = columns), its address 16-byte aligned";
  j["block"] = {p.threads, 1, 1};
  const Grid gr = grid(pl);
  j["grid"] = {gr.x, gr.y, gr.z};
  j["cluster"] = {p.cta_group, 1, 1};
  j["dynamic_shared_memory_bytes"] = p.smem_bytes;
  ojson params = ojson::array();
  for (const auto& g : p.globals) params.push_back({{"name", param_name(g.name)}, {"kind", "global_pointer"}, {"tensor", g.name}});
  for (const auto& m : p.tensor_maps) params.push_back({{"name", m.param}, {"kind", "tensor_map"}, {"tensor", m.global}});
  j["params"] = params;
  ojson tensors = ojson::object();
  for (const auto& g : p.globals) {
    ojson t = {{"dtype", dt(g.dtype)}, {"storage_bits", g.bits}};
    // 4- and 6-bit types: padded (16 elements, then padding to 16 bytes: 8 bits per element on
    // average; ptxgen/program.hpp) or, e2m1 only, packed two per byte.
    if (isa::value_bits(g.dtype) < 8) t["format"] = g.bits < 8 ? "packed" : "padded";
    t["shape"] = {g.rows, g.cols};
    t["dims"] = {"rows", "cols"};
    t["contiguous"] = "cols";
    t["leading_dimension"] = g.cols;
    tensors[g.name] = t;
  }
  j["tensors"] = tensors;
  // A TMA load's map: a byte copy (rows of bytes, or of 4-byte words for the 32-byte-atom swizzle),
  // whatever the dtype; the host encodes it with cuTensorMapEncodeTiled from these fields.
  if (!p.tensor_maps.empty()) {
    ojson maps = ojson::array();
    for (const auto& m : p.tensor_maps)
      maps.push_back(detail::tensor_map_entry(m.param, m.global,
                                              m.unit == 4 ? "CU_TENSOR_MAP_DATA_TYPE_UINT32" : "CU_TENSOR_MAP_DATA_TYPE_UINT8",
                                              m.dim_inner, m.dim_outer, m.stride_bytes, m.box_inner, m.box_outer,
                                              m.swizzle));
    j["tensor_maps"] = maps;
  }
  return j.dump(2) + "\n";
}

}  // namespace ptxgen::plan
