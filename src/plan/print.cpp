// `ptxgen plan`: the plan as text (four steps) and as JSON (every descriptor named field by field
// as the ISA names it, with its hex value).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <set>

#include "ptxgen/plan.hpp"

namespace ptxgen::plan {

namespace {

using ojson = nlohmann::ordered_json;

std::string s(int64_t v) { return std::to_string(v); }
std::string major_name(isa::Major m, char mn) {
  return m == isa::Major::k ? "K-major" : std::string(1, mn) + "-major";
}

std::string fields_line(const std::vector<isa::Field>& fs) {
  std::string out;
  for (const auto& f : fs) {
    out += (out.empty() ? "" : "  ") + f.name + "[" + s(f.lo) + (f.hi != f.lo ? "-" + s(f.hi) : "") + "]=" +
           s(static_cast<int64_t>(f.raw));
    if (f.value != s(static_cast<int64_t>(f.raw))) out += " (" + f.value + ")";
  }
  return out;
}

ojson fields_json(const std::vector<isa::Field>& fs) {
  ojson j = ojson::object();
  for (const auto& f : fs)
    j[f.name] = {{"bits", f.lo == f.hi ? s(f.lo) : s(f.lo) + "-" + s(f.hi)}, {"raw", f.raw}, {"value", f.value}};
  return j;
}

ojson desc_json(const isa::SmemDesc& d) {
  return {{"hex", isa::hex64(encoded(d))}, {"start_relative_to", "aligned shared-memory base"},
          {"fields", fields_json(isa::fields(d))}};
}

ojson tmem_json(uint32_t a) {
  const isa::TmemAddr t = isa::decode_tmem(a);
  return {{"hex", isa::hex32(a)}, {"relative_to", "tcgen05.alloc base"}, {"lane", t.lane}, {"column", t.column}};
}

std::string tile_line(const OperandTile& t) {
  const auto& l = t.layout;
  return std::string(1, t.name) + ": " + s(l.mn) + " rows x " + s(l.k) + " K, " + s(l.bits) + "-bit in shared memory, " +
         (l.major == isa::Major::k ? "K" : "MN") + "-major " + std::string(isa::name(l.swizzle)) +
         "; atom " + s(l.atom_mn) + " x " + s(l.atom_k) + "; LBO " + s(l.lbo) + " B, SBO " + s(l.sbo) + " B; " +
         s(l.bytes) + " B per stage";
}

std::string kernel_text(const Plan& p) {
  const Kernel& k = p.kernel;
  const spec::Gemm& g = *p.spec.gemm;
  std::string o = "The kernel\n";
  if (p.shapes.engine == Engine::wgmma)
    o += "  threads        " + s(k.threads) + ": warpgroups 0-" + s(k.consumer_warpgroups - 1) +
         " issue wgmma (warpgroup w owns rows 64w..64w+63), warp " + s(k.producer_warp) + " issues TMA; .maxnreg " +
         s(k.max_registers) + "\n";
  else
    o += "  threads        " + s(k.threads) + ": warps 0-3 read the accumulator back (tcgen05.ld), warp " +
         s(k.producer_warp) + " issues TMA, warp " + s(k.mma_warp) + " allocates TMEM and issues tcgen05.cp/mma\n";
  const Grid gr = grid(p);
  o += "  launch         grid " + s(gr.x) + " x " + s(gr.y) + " x " + s(gr.z) + ", cluster " + s(k.cluster[0]) + " x " +
       s(k.cluster[1]) + " x " + s(k.cluster[2]) + " for M=" + s(g.m) + " N=" + s(g.n) + "\n";
  for (const auto& t : k.tensor_maps)
    o += "  " + t.param + "         " + std::string(1, t.tensor) + " dims [" + s(t.dim_inner) + ", " + s(t.dim_outer) +
         "] stride " + s(t.stride_bytes) + " B, box [" + s(t.box_inner) + ", " + s(t.box_outer) + "], " +
         std::string(isa::name(t.swizzle)) + "\n";
  o += "  per stage      " + s(static_cast<int64_t>(k.loads.size())) + " cp.async.bulk.tensor, " + s(k.tx_bytes) +
       " bytes expected per CTA\n";
  for (const auto& l : k.loads)
    o += "    " + std::string(1, l.tensor) + " box at +" + s(l.smem_offset) + " <- tile origin + (" + s(l.inner) + ", " +
         s(l.outer) + ")\n";
  if (!k.epilogue.empty()) {
    o += "  epilogue       tcgen05.ld.32x32b per warp w at lane 32w (layout " +
         std::string(1, "DAFB"[static_cast<int>(k.layout)]) + "):\n";
    for (const auto& e : k.epilogue)
      o += "    column " + s(e.column) + " .x" + s(e.num) + " -> rows " + s(e.row_base) + "+" +
           (e.row_base2 >= 0 ? " / " + s(e.row_base2) + "+ (lanes 16-31)" : "") + ", columns " + s(e.col_base) + "+" +
           (k.layout == Layout::B ? " (warps 2-3: " + s(e.col_base2) + "+)" : "") + "\n";
  }
  return o;
}

}  // namespace

std::string to_text(const Plan& p) {
  if (p.program) return program_text(p);
  const spec::Gemm& g = *p.spec.gemm;
  const Shapes& sh = p.shapes;
  const auto& t = isa::target_info(p.spec.target);
  std::string o;
  o += "plan for \"" + p.spec.name + "\" (" + std::string(t.name) + ")\n\n";

  o += "Step 1. Shapes and types\n";
  if (sh.engine == Engine::tcgen05)
    o += "  instruction    tcgen05.mma .kind::" + std::string(isa::name(sh.kind)) + " at .cta_group::" + s(sh.cta_group) + "\n";
  else
    o += "  instruction    wgmma.mma_async (sm_90a), accumulators in registers\n";
  o += "  types          A " + std::string(isa::name(g.a.dtype)) + " " + major_name(g.a.major, 'M') + ", B " +
       std::string(isa::name(g.b.dtype)) + " " + major_name(g.b.major, 'N') + ", accumulator " +
       std::string(isa::name(g.accumulator)) + ", D " + std::string(isa::name(g.d)) + "\n";
  o += "  problem        M=" + s(g.m) + " N=" + s(g.n) + " K=" + s(g.k) + "\n";
  o += "  CTA tile       " + s(g.tile.m) + " x " + s(g.tile.n) + " x " + s(g.tile.k) +
       (sh.cta_group == 2 ? " for the pair; each CTA holds " + s(g.tile.m / 2) + " rows of A and " +
                                s(g.tile.n / 2) + " rows of B"
                          : "") +
       "\n";
  o += "  A source       " +
       std::string(sh.a_in_tmem        ? "tensor memory (tcgen05.cp from shared memory)"
                   : sh.a_in_registers ? "registers (fragments loaded from shared memory, PTX ISA 9.7.15.5.1.1)"
                                       : "shared memory") +
       "\n\n";

  o += "Step 2. Instruction shapes\n";
  std::string ns;
  for (int n : sh.n_groups) ns += (ns.empty() ? "" : ", ") + s(n);
  o += "  instruction    M=" + s(sh.m_instr) + " K=" + s(sh.k_instr) + ", N per group: " + ns + "\n";
  o += "  groups         " + s(sh.m_groups) + " M group(s) x " + s(static_cast<int64_t>(sh.n_groups.size())) +
       " N group(s) x " + s(sh.k_steps) + " K step(s) = " + s(static_cast<int64_t>(p.mmas.size())) + " tcgen05.mma\n";
  o += "  " + tile_line(sh.a) + "\n";
  o += "  " + tile_line(sh.b) + "\n";
  const SmemMap& m = sh.smem;
  o += "  shared memory  base rounded up to " + s(m.align) + " B at run time; stage s: A at " + s(m.a_offset.at(0)) +
       " + s*" + s(m.stage_bytes) + ", B at " + s(m.b_offset.at(0)) + " + s*" + s(m.stage_bytes) + " (" +
       s(static_cast<int64_t>(m.a_offset.size())) + " stages)\n";
  o += "                 " + s(m.barriers) + " mbarriers at " + s(m.barriers_offset) + ", TMEM address slot at " +
       s(m.tmem_slot_offset) + "; " + s(m.dynamic_bytes) + " B dynamic shared memory\n";
  if (sh.engine == Engine::wgmma)
    o += "  registers      " + s(sh.acc_registers) + " accumulator registers per thread in each of " + s(sh.m_groups) +
         " consumer warpgroup(s)\n";
  else
    o += "  tensor memory  " + s(sh.tmem.used_columns) + " columns used, tcgen05.alloc of " + s(sh.tmem.alloc_columns) + "\n";
  for (const auto& r : sh.tmem.regions)
    o += "    " + r.what + "(m" + s(r.mi) + (r.what == "D" ? ",n" + s(r.ni) : "") + ")  lanes " + s(r.lane) + "-" +
         s(r.lane + r.lanes - 1) + (r.half_datapath ? " of each 32-lane quarter (layout F)" : "") + ", columns " +
         s(r.column) + "-" + s(r.column + r.columns - 1) + "\n";
  o += "\n";

  o += "Step 3. Descriptors\n";
  for (size_t i = 0; i < p.idescs.size(); ++i)
    o += "  idesc[" + s(static_cast<int64_t>(i)) + "] " + isa::hex32(encoded(p.idescs[i])) + "  " +
         fields_line(isa::fields(p.idescs[i])) + "\n";
  std::set<uint64_t> seen;
  auto print_desc = [&](const char* what, const isa::SmemDesc& d) {
    const uint64_t v = encoded(d);
    if (!seen.insert(v).second) return;
    o += "  " + std::string(what) + " " + isa::hex64(v) + "  " + fields_line(isa::fields(d)) + "\n";
  };
  for (const auto& c : p.copies) print_desc("cp-src", c.src);
  for (const auto& mm : p.mmas) {
    if (!mm.a_tmem) print_desc("a-desc", mm.a_desc);
    print_desc("b-desc", mm.b_desc);
  }
  o += "  (shared-memory descriptor start addresses are relative to the aligned base; TMEM addresses to the\n"
       "   tcgen05.alloc result)\n\n";

  o += "Step 4. Issue order\n";
  for (const auto& c : p.copies)
    o += "  tcgen05.cp." + c.shape + "  A m" + s(c.mi) + " chunk " + s(c.ki) + ": [tmem " + isa::hex32(c.dst_tmem) +
         "] <- " + isa::hex64(encoded(c.src)) + "\n";
  for (size_t i = 0; i < p.mmas.size(); ++i) {
    const Mma& mm = p.mmas[i];
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %3zu  m%d n%d k%-3d", i, mm.mi, mm.ni, mm.ki);
    o += buf;
    if (sh.engine == Engine::wgmma) {
      o += " d=acc[" + s(mm.acc_reg) + ".." + s(mm.acc_reg + (g.accumulator == isa::DType::f16 ? mm.n / 4 : mm.n / 2) - 1) +
           "] of warpgroup " + s(mm.mi);
    } else {
      o += " d=[tmem " + isa::hex32(mm.d_tmem) + "]";
    }
    o += mm.a_tmem ? " a=[tmem " + isa::hex32(mm.a_tmem_addr) + "]" : " a=" + isa::hex64(encoded(mm.a_desc));
    o += " b=" + isa::hex64(encoded(mm.b_desc));
    if (sh.engine == Engine::tcgen05) o += " idesc[" + s(mm.idesc) + "]";
    o += mm.first ? " (first K step: D = A*B on the first K block)" : "";
    o += "\n";
  }
  o += "\n" + kernel_text(p);
  return o;
}

std::string to_json(const Plan& p) {
  if (p.program) return program_json(p);
  const Shapes& sh = p.shapes;
  const auto& t = isa::target_info(p.spec.target);
  ojson j;
  j["spec"] = ojson::parse(spec::to_json(p.spec));
  j["target"] = std::string(t.name);
  ojson st1;
  st1["engine"] = sh.engine == Engine::tcgen05 ? "tcgen05" : "wgmma";
  st1["kind"] = std::string(isa::name(sh.kind));
  st1["cta_group"] = sh.cta_group;
  st1["a_in_tmem"] = sh.a_in_tmem;
  j["shapes_and_types"] = st1;
  ojson st2;
  st2["m_instr"] = sh.m_instr;
  st2["m_groups"] = sh.m_groups;
  st2["m_per_cta"] = sh.m_per_cta;
  st2["n_groups"] = sh.n_groups;
  st2["k_instr"] = sh.k_instr;
  st2["k_steps"] = sh.k_steps;
  for (const OperandTile* op : {&sh.a, &sh.b}) {
    const auto& l = op->layout;
    st2[std::string(1, static_cast<char>(op->name + 32))] = {
        {"rows", l.mn},   {"k", l.k},     {"bits", l.bits},
        {"major", l.major == isa::Major::k ? "k" : "mn"},
        {"swizzle", std::string(isa::name(l.swizzle))},
        {"atom", {l.atom_mn, l.atom_k}}, {"lbo", l.lbo}, {"sbo", l.sbo}, {"bytes", l.bytes}};
  }
  ojson sm;
  sm["align"] = sh.smem.align;
  sm["stage_bytes"] = sh.smem.stage_bytes;
  sm["a_offset"] = sh.smem.a_offset;
  sm["b_offset"] = sh.smem.b_offset;
  sm["barriers_offset"] = sh.smem.barriers_offset;
  sm["barriers"] = sh.smem.barriers;
  sm["tmem_slot_offset"] = sh.smem.tmem_slot_offset;
  sm["dynamic_bytes"] = sh.smem.dynamic_bytes;
  st2["shared_memory"] = sm;
  ojson tm;
  tm["used_columns"] = sh.tmem.used_columns;
  tm["alloc_columns"] = sh.tmem.alloc_columns;
  tm["regions"] = ojson::array();
  for (const auto& r : sh.tmem.regions)
    tm["regions"].push_back({{"what", r.what}, {"mi", r.mi}, {"ni", r.ni}, {"lane", r.lane}, {"lanes", r.lanes},
                             {"column", r.column}, {"columns", r.columns}, {"half_datapath", r.half_datapath}});
  st2["tensor_memory"] = tm;
  j["instruction_shapes"] = st2;
  ojson st3 = ojson::array();
  for (const auto& d : p.idescs) st3.push_back({{"hex", isa::hex32(encoded(d))}, {"fields", fields_json(isa::fields(d))}});
  j["instruction_descriptors"] = st3;
  ojson cps = ojson::array();
  for (const auto& c : p.copies)
    cps.push_back({{"mi", c.mi}, {"chunk", c.ki}, {"shape", c.shape}, {"src", desc_json(c.src)}, {"dst", tmem_json(c.dst_tmem)}});
  j["copies"] = cps;
  ojson ms = ojson::array();
  for (const auto& mm : p.mmas) {
    ojson x;
    x["mi"] = mm.mi;
    x["ni"] = mm.ni;
    x["ki"] = mm.ki;
    x["shape"] = {mm.m, mm.n, mm.k};
    if (mm.a_tmem) x["a_tmem"] = tmem_json(mm.a_tmem_addr);
    else x["a_desc"] = desc_json(mm.a_desc);
    x["b_desc"] = desc_json(mm.b_desc);
    if (sh.engine == Engine::tcgen05) {
      x["d_tmem"] = tmem_json(mm.d_tmem);
      x["idesc"] = mm.idesc;
    } else {
      x["acc_register"] = mm.acc_reg;
    }
    x["first_k_step"] = mm.first;
    ms.push_back(x);
  }
  j["issue_order"] = ms;
  const Kernel& k = p.kernel;
  ojson kj;
  kj["threads"] = k.threads;
  kj["producer_warp"] = k.producer_warp;
  kj["mma_warp"] = k.mma_warp;
  kj["consumer_warpgroups"] = k.consumer_warpgroups;
  kj["max_registers"] = k.max_registers;
  kj["tx_bytes_per_stage"] = k.tx_bytes;
  ojson loads = ojson::array();
  for (const auto& l : k.loads)
    loads.push_back({{"tensor", std::string(1, l.tensor)}, {"smem_offset", l.smem_offset}, {"inner", l.inner}, {"outer", l.outer}});
  kj["loads"] = loads;
  ojson ep = ojson::array();
  for (const auto& e : k.epilogue)
    ep.push_back({{"region", e.region}, {"column", e.column}, {"num", e.num}, {"row_base", e.row_base},
                  {"row_base2", e.row_base2}, {"col_base", e.col_base}, {"col_base2", e.col_base2}});
  kj["epilogue"] = ep;
  j["kernel"] = kj;
  return j.dump(2) + "\n";
}

}  // namespace ptxgen::plan
