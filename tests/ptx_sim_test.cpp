// Every program golden, executed thread by thread by the PTX interpreter of ptx_sim.cpp, does
// what its plan says: the loads put each 16-byte chunk where the canonical layout wants it, one
// thread issues the planned tcgen05.cp/mma with the planned addresses and descriptors, each warp
// issues its tcgen05.ld/st with the lane of its own quarter in the address, the stores write every
// register element at its row and column, and tcgen05.st moves the elements the loads brought.
// TMA loads run through the tensor maps the manifest describes: the boxes land where the plain
// loads would put each chunk, and each mbarrier is armed with exactly the bytes its boxes bring.
// Every program runs a second time with all its loads switched to TMA. Programs with sizes, a grid
// or roles run in the kernel simulator instead (tests/sim_tiled_test.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "ptx_sim.hpp"
#include "ptxgen/emit.hpp"
#include "refmodel.hpp"
#include "support.hpp"

using namespace ptxgen;

namespace {

struct Expected {
  uint64_t base = 0, dbase = 0;
  std::map<std::string, uint64_t> gbase;  // global tensor -> its parameter's value
  std::map<std::string, uint64_t> tbase;  // allocation -> its (simulated) tcgen05.alloc result
};

int ebytes(isa::DType t) { return isa::value_bits(t) / 8; }

// Logical (row, element) of element e of register j of thread t in fragment f.
std::pair<int, int64_t> logical(const plan::LdInstr& f, int packing, int t, int j, int e) {
  int lane, col;
  bool half;
  refmodel::tmem_cell(f.shape, t, j, lane, col, half);
  const int64_t c = (f.pack ? 2 * col : col) + (half ? f.split : 0);
  return {f.row0 + lane, f.elem0 + c * (f.pack ? 1 : packing) + e};
}

}  // namespace

TEST_SUITE("program") {
TEST_CASE("the emitted program kernels, run thread by thread, do what their plans say") {
  int n = 0;
  for (const auto& file : support::spec_files()) {
  // Each program twice: as shipped (its golden), and with every load by TMA (emitted here).
  for (const bool all_tma : {false, true}) {
    nlohmann::json doc = nlohmann::json::parse(support::slurp(file));
    if (!doc.contains("program")) break;
    // This interpreter runs the one-CTA straight-line programs; those with sizes, a grid or roles
    // (loops, mbarrier pipelines) run whole in the kernel simulator (sim_tiled_test.cpp).
    if (doc["program"].contains("sizes") || doc["program"].contains("roles")) break;
    // Nor arithmetic (docs/spec.md, "Arithmetic"): the kernel simulator runs those programs whole
    // against a float64 evaluation (sim_program_test.cpp).
    bool math = false;
    for (const auto& o : doc["program"]["ops"]) {
      for (const auto& f : math_fns()) math = math || o["op"] == std::string(f.name);
      math = math || o["op"] == "amax" || o["op"] == "quantize";  // block scaling's arithmetic too
    }
    if (math) break;
    CAPTURE(file);
    CAPTURE(all_tma);
    if (all_tma)
      for (auto& o : doc["program"]["ops"])
        if (o["op"] == "load") o["via"] = "tma";
    const spec::Spec s = support::checked_spec(doc.dump());
    const plan::Plan p = support::plan_of(s);
    const plan::Plan& pp = p;
    const std::string ptx = all_tma ? emit::ptx(p) : support::slurp(support::source_root() + "/golden/" + support::stem(file) + ".ptx");
    // A CTA pair: both CTAs run, each with its own shared memory (its own Kernel); CTA 0's thread 0
    // issues every tcgen05.cp/mma/commit, and CTA 1's loads and stores sit per_cta further on.
    for (int rank = 0; rank < pp.ir().cta_group; ++rank) {
    CAPTURE(rank);
    ptxsim::Kernel k;
    k.cluster_ctarank = static_cast<uint64_t>(rank);
    k.smem_symbol = 48;  // not aligned: the kernel rounds its base up
    Expected ex;
    for (size_t i = 0; i < pp.ir().globals.size(); ++i) {
      ex.gbase[pp.ir().globals[i].name] = uint64_t{0x10000000} * (i + 1);
      k.param_values["p_" + pp.ir().globals[i].name] = ex.gbase[pp.ir().globals[i].name];
    }
    // The tensor maps a host would encode from the manifest.
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    for (const auto& t : manifest.value("tensor_maps", nlohmann::json::array())) {
      ptxsim::TensorMap m;
      m.global = ex.gbase.at(t.at("tensor").get<std::string>());
      const std::string type = t.at("data_type"), sw = t.at("swizzle");
      m.unit = type == "CU_TENSOR_MAP_DATA_TYPE_UINT32" ? 4 : 1;
      REQUIRE((m.unit == 4 || type == "CU_TENSOR_MAP_DATA_TYPE_UINT8"));
      m.dims[0] = t.at("global_dims")[0];
      m.dims[1] = t.at("global_dims")[1];
      m.stride = t.at("global_strides_bytes")[0];
      m.box[0] = t.at("box_dims")[0];
      m.box[1] = t.at("box_dims")[1];
      REQUIRE(m.box[0] * m.unit % 16 == 0);
      REQUIRE(m.box[0] <= 256);
      REQUIRE(m.box[1] <= 256);
      const std::map<std::string, std::pair<int, int>> modes = {
          {"CU_TENSOR_MAP_SWIZZLE_NONE", {0, 16}},  {"CU_TENSOR_MAP_SWIZZLE_32B", {32, 16}},
          {"CU_TENSOR_MAP_SWIZZLE_64B", {64, 16}},  {"CU_TENSOR_MAP_SWIZZLE_128B", {128, 16}},
          {"CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B", {128, 32}}};
      REQUIRE(modes.count(sw));
      std::tie(m.swizzle, m.atom) = modes.at(sw);
      if (m.swizzle) REQUIRE(m.box[0] * m.unit <= static_cast<uint32_t>(m.swizzle));  // the inner box fits the span
      k.tensor_maps[t.at("param").get<std::string>()] = m;
    }
    ex.base = (k.smem_symbol + pp.smem_align - 1) / pp.smem_align * pp.smem_align;
    ex.dbase = (ex.base >> 4) & 0x3FFF;
    uint64_t col = 0;
    for (const auto& a : pp.allocs) {
      ex.tbase[a.name] = col;
      col += a.columns;
    }
    std::vector<ptxsim::Thread> th;
    for (int t = 0; t < pp.ir().threads; ++t) th.push_back(ptxsim::run(ptx, t, k));

    // 1. Loads: every 16-byte chunk of each tile from its place in the global tensor.
    std::vector<std::pair<uint64_t, uint64_t>> want_sh, got_sh;
    for (const auto& st : pp.roles[0].steps) {
      if (st.kind != plan::StepKind::load) continue;
      const auto& l = st.load;
      const int code = l.swizzle == isa::Swizzle::none ? 0 : l.swizzle == isa::Swizzle::b32 ? 6 : l.swizzle == isa::Swizzle::b64 ? 4 : l.swizzle == isa::Swizzle::b128 ? 2 : 1;
      for (int r = 0; r < l.box_rows; ++r)
        for (int b = 0; b < l.row_bytes; b += 16) {
          // Boxes of one column are column_bytes apart (the tile's rows: a placed load's 16-row piece
          // writes into each column of the whole tile).
          const uint32_t off = l.tile_offset + static_cast<uint32_t>((b / l.box_bytes) * l.column_bytes + r * l.box_bytes + b % l.box_bytes);
          want_sh.push_back({ex.base + refmodel::swizzle(code, off), ex.gbase.at(l.global) + static_cast<uint64_t>((l.row0.base + r) * l.global_row_bytes + l.col0_bytes + b + rank * l.cta_bytes)});
        }
    }
    for (const auto& t : th)
      for (const auto& w : t.shared) {
        for (size_t i = 0; i < 4; ++i) CHECK(w.from[i].addr == w.from[0].addr + 4 * i);
        got_sh.push_back({w.addr, w.from[0].addr});
      }
    std::sort(want_sh.begin(), want_sh.end());
    std::sort(got_sh.begin(), got_sh.end());
    CHECK(want_sh == got_sh);
    for (const auto& t : th) CHECK(t.expect_tx == t.complete_tx);

    // 2. One thread issues the planned tcgen05.cp, tcgen05.mma and tcgen05.commit.
    std::vector<std::vector<uint64_t>> want_is, got_is;
    for (const auto& st : pp.roles[0].steps) {
      for (const auto& c : st.cps) want_is.push_back({ex.tbase.at(c.alloc) + c.taddr, ex.dbase + plan::encoded(c.src)});
      for (const auto& m : st.mma.instrs) {
        std::vector<uint64_t> v{ex.tbase.at(m.d_alloc) + m.d_taddr,
                                m.a_tmem ? ex.tbase.at(m.a_alloc) + m.a_taddr : ex.dbase + plan::encoded(m.a_desc),
                                ex.dbase + plan::encoded(m.b_desc)};
        if (st.mma.sparse) v.push_back(ex.tbase.at(m.meta_alloc) + m.meta_taddr);
        v.push_back(plan::encoded(m.idesc));
        if (st.mma.scaled) {
          v.push_back(ex.tbase.at(m.sfa_alloc) + m.sfa_taddr);
          v.push_back(ex.tbase.at(m.sfb_alloc) + m.sfb_taddr);
        }
        v.push_back(m.enable_input_d ? 1 : 0);
        want_is.push_back(v);
      }
      if (st.kind == plan::StepKind::commit) {
        uint64_t off = 0;
        for (const auto& b : pp.barriers)
          if (b.name == st.bar.barrier) off = b.offset;
        if (pp.ir().cta_group == 2) want_is.push_back({ex.base + off, 3});  // multicast to both CTAs' barriers
        else want_is.push_back({ex.base + off});
      }
    }
    if (rank == 1) want_is.clear();  // CTA 0 issues for the pair
    for (size_t t = 0; t < th.size(); ++t)
      for (const auto& x : th[t].tc)
        if (x.text.rfind("tcgen05.cp", 0) == 0 || x.text.rfind("tcgen05.mma", 0) == 0 || x.text.rfind("tcgen05.commit", 0) == 0) {
          CHECK_MESSAGE(t == 0, "thread " << t << " issues " << x.text);
          if (t == 0) got_is.push_back(x.values);
        }
    CHECK(want_is == got_is);

    // 3. Each warp: its tcgen05.ld/st, with the lane of its quarter in the address.
    std::map<std::pair<int, int>, std::pair<const plan::RegDef*, const plan::LdInstr*>> ld_frag;  // (thread, ld index)
    for (int t = 0; t < pp.ir().threads; ++t) {
      const int w = t / 32;
      std::vector<std::tuple<const plan::RegDef*, const plan::LdInstr*, bool>> want;
      for (const auto& st : pp.roles[0].steps) {
        if (st.kind == plan::StepKind::tmem_ld)
          for (const auto& f : st.ld.frags)
            if (f.warp == w) want.push_back({&st.ld, &f, false});
        if (st.kind == plan::StepKind::tmem_st)
          for (const auto& f : st.st.dst.frags)
            if (f.warp == w) want.push_back({&st.st.dst, &f, true});
      }
      std::vector<const ptxsim::Tcgen05*> got;
      for (const auto& x : th[static_cast<size_t>(t)].tc)
        if (x.text.rfind("tcgen05.ld", 0) == 0 || x.text.rfind("tcgen05.st", 0) == 0) got.push_back(&x);
      REQUIRE(got.size() == want.size());
      int ld_index = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const auto& [d, f, st] = want[i];
        CHECK(got[i]->text.rfind(st ? "tcgen05.st" : "tcgen05.ld", 0) == 0);
        CHECK(got[i]->values[0] == ex.tbase.at(f->alloc) + f->taddr);
        CHECK((got[i]->values[0] >> 16) / 32 == static_cast<uint64_t>(w % 4));  // §9.7.16.8.1
        if (f->shape == isa::LdShape::s16x32bx2) CHECK(got[i]->values.at(1) == static_cast<uint64_t>(f->split));
        if (!st) ld_frag[{t, ld_index++}] = {d, f};
      }
    }

    // 4. Stores: every element of every register, at its row and column of the global tensor.
    std::vector<std::tuple<uint64_t, int, int, int>> want_st, got_st;  // (address, ld index, register, element)
    for (int t = 0; t < pp.ir().threads; ++t) {
      // The thread's most recent load of each register set, at each store.
      std::map<std::string, std::vector<std::pair<int, const plan::LdInstr*>>> latest;
      int ld_index = 0;
      for (const auto& st : pp.roles[0].steps) {
        if (st.kind == plan::StepKind::tmem_ld) {
          auto& v = latest[st.ld.name];
          v.clear();
          for (const auto& f : st.ld.frags)
            if (f.warp == t / 32) v.push_back({ld_index++, &f});
        }
        if (st.kind != plan::StepKind::store) continue;
        const auto& g = st.store;
        const auto* gp = &pp.ir().globals[0];
        for (const auto& x : pp.ir().globals)
          if (x.name == g.global) gp = &x;
        const int eb = ebytes(g.to);
        for (const auto& [li, f] : latest[g.src.name])
          for (int j = 0; j < f->regs; ++j)
            for (int e = 0; e < g.src.elems_per_reg; ++e) {
              const auto [row, c] = logical(*f, g.src.view_packing, t % 32, j, e);
              want_st.push_back({ex.gbase.at(g.global) + static_cast<uint64_t>(((g.row0.base + rank * g.cta_row + row) * gp->cols +
                                                                                 g.col0.base + rank * g.cta_col + c) * eb),
                                 li, j, e});
            }
      }
      for (const auto& w : th[static_cast<size_t>(t)].global) {
        REQUIRE(w.from.kind == 2);
        const auto it = ld_frag.find({t, w.from.ld});
        REQUIRE(it != ld_frag.end());
        const int eb = w.from.part >= 0 ? w.bytes : w.bytes / std::max(1, it->second.first->elems_per_reg);
        if (w.from.part >= 0) got_st.push_back({w.addr, w.from.ld, w.from.reg, w.from.part});
        else
          for (int e = 0; e < w.bytes / eb; ++e) got_st.push_back({w.addr + static_cast<uint64_t>(e * eb), w.from.ld, w.from.reg, e});
      }
    }
    std::sort(want_st.begin(), want_st.end());
    std::sort(got_st.begin(), got_st.end());
    CHECK(want_st.size() == got_st.size());
    CHECK(want_st == got_st);

    // 5. tcgen05.st moves, in each cell, the element the loads brought for it (converted when planned).
    for (int t = 0; t < pp.ir().threads; ++t) {
      std::vector<std::pair<const plan::TmemStStep*, const plan::LdInstr*>> sts;
      for (const auto& st : pp.roles[0].steps)
        if (st.kind == plan::StepKind::tmem_st)
          for (const auto& f : st.st.dst.frags)
            if (f.warp == t / 32) sts.push_back({&st.st, &f});
      size_t k2 = 0;
      for (const auto& x : th[static_cast<size_t>(t)].tc) {
        if (x.text.rfind("tcgen05.st", 0) != 0) continue;
        const auto [st, f] = sts.at(k2++);
        REQUIRE(static_cast<int>(x.regs.size()) == f->regs);
        for (int j = 0; j < f->regs; ++j) {
          const auto& srcs = x.regs[static_cast<size_t>(j)];
          for (int e = 0; e < st->dst.elems_per_reg; ++e) {
            const ptxsim::Token& tok = srcs.size() == 1 && srcs[0].part < 0 ? srcs[0] : srcs.at(static_cast<size_t>(e));
            // The element within its source register: the part taken out of it; a whole register
            // is either the only source (element e of it) or one of several (its only element).
            const int se = tok.part >= 0 ? tok.part : srcs.size() == 1 ? e : 0;
            const auto sf = ld_frag.at({t, tok.ld});
            const auto want = logical(*f, st->dst.view_packing, t % 32, j, e);
            const auto got = logical(*sf.second, sf.first->view_packing, t % 32, tok.reg, se);
            CHECK(want == got);
            CHECK(tok.converted == st->convert);
          }
        }
      }
    }
    }  // rank
    n += all_tma ? 0 : 1;
  }
  }
  CHECK(n >= 20);
}
}
