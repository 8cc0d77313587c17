// A sweep of the program level, as tests/plan_test.cpp sweeps the gemm template: generated
// specs over every operand type x A's and B's major x swizzle x how M is split (one or several
// 128-row groups in layout D, 64-row groups in layout F at either lane alignment, two mma ops
// into the two alignments) x where A is (shared or tensor memory) x how N is split, each one
// checked (and CTA pairs at M = 256 and M = 128); every spec the rules accept is planned, its steps replayed by the reference model
// (tests/refmodel_program.cpp, which decodes every descriptor from its bits and compares D with
// the product of the logical operands), and its kernel's issuing thread run through the PTX
// interpreter (tests/ptx_sim.cpp), which must issue exactly the planned tcgen05.cp/mma operands.
//
// The shipped specs never reached an 8-bit MN-major tile with the 128-byte swizzle feeding M = 64
// groups: the template's M = 64 groups come only from tile.m = 64 x odd, whose MN extent is no
// whole 128-byte atom row for 8-bit types, and no program spec had one. There the second group's
// descriptor repeated the first's start address (rows 64-127 never read).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "ptx_sim.hpp"
#include "ptxgen/emit.hpp"
#include "refmodel.hpp"
#include "support.hpp"

using namespace ptxgen;
using nlohmann::json;

namespace {

struct Types {
  const char *a, *b, *acc;
  int bits;       // storage bits of an element in shared memory (4/6-bit types: 8-bit containers)
  int tmem_bits;  // bits of A in tensor memory (8-bit containers for 4/6-bit types)
  int k;          // K of one instruction (Table 39)
};

// How the accumulator's rows are split into instruction M groups.
struct MSplit {
  const char* name;
  int rows;            // rows of A (and D) per mma op
  const char* layout;  // D's layout: "rows" (M = 128 groups) or a layout F alignment (M = 64 groups)
  bool two_ops;        // two mma ops, one per layout F alignment, sharing D's columns
};

json swz(int s, bool tf32_mn) { return s == 128 && tf32_mn ? json("128_base32b") : json(s); }

// The smallest N a B tile of this major and swizzle fills whole atoms of (K-major: 8 rows).
int min_n(int bits, bool b_mn, int sw, bool m64) {
  int n = m64 ? 8 : 16;
  if (b_mn) n = std::max(n, (sw == 0 ? 16 : sw) * 8 / bits);
  return n;
}

struct Built {
  json spec;
  bool pair_ops = false;
};

// One program: load A and B, [copy A into tensor memory], mma(s), commit, wait, and (for one row
// block in layout D) the epilogue tmem_load/store.
json program(const Types& t, bool a_mn, bool b_mn, int sw, const MSplit& ms, bool a_tmem, int n, int k) {
  const bool m64 = std::string(ms.layout) != "rows";
  const int M = ms.rows;
  const int blocks = (ms.two_ops ? M / 2 : M) / (m64 ? 64 : 128);  // row blocks of one mma op's D
  const int d_cols = blocks * n;  // a D block holds N columns (the two ops share them)
  // A in tensor memory: each 64-row layout-F block sits in the lanes of a 128-row copy, so the
  // copied tile has twice the rows (docs/spec.md "M = 64").
  const int a_rows_copied = m64 ? 2 * M : M;
  const int a_cols = a_tmem ? (a_rows_copied / 128) * (k * t.tmem_bits / 32) : 0;
  int alloc = 32;
  while (alloc < d_cols + a_cols) alloc *= 2;
  json j = json::parse(rules::example_program_base());
  j["name"] = "sweep";
  auto& p = j["program"];
  const int tile_rows = a_tmem ? a_rows_copied : M;
  const bool tf32 = std::string(t.a) == "tf32";
  p["globals"] = {{"A", {{"dtype", t.a}, {"shape", a_mn ? json{k, tile_rows} : json{tile_rows, k}}}},
                  {"B", {{"dtype", t.b}, {"shape", b_mn ? json{k, n} : json{n, k}}}},
                  {"D", {{"dtype", "f32"}, {"shape", {M, n}}}}};
  p["smem"] = {{"a", {{"dtype", t.a}, {"shape", {tile_rows, k}}, {"major", a_mn ? "mn" : "k"}, {"swizzle", swz(sw, tf32 && a_mn)}}},
               {"b", {{"dtype", t.b}, {"shape", {n, k}}, {"major", b_mn ? "mn" : "k"}, {"swizzle", swz(sw, tf32 && b_mn)}}}};
  if (std::string(t.acc) == "s32" || std::string(t.acc) == "f16") p["globals"]["D"]["dtype"] = t.acc;
  json acc_cast = {{"of", {{"slice", {{"of", "t"}, {"columns", {0, d_cols}}}}}}, {"rows", ms.two_ops ? M / 2 : M}};
  if (std::string(t.acc) != "f32") acc_cast["dtype"] = t.acc;
  if (m64) acc_cast["layout"] = ms.layout;
  p["tmem"] = {{"t", {{"columns", alloc}}}, {"acc", {{"cast", acc_cast}}}};
  json ops = json::array({{{"op", "load"}, {"src", "A"}, {"dst", "a"}}, {{"op", "load"}, {"src", "B"}, {"dst", "b"}}});
  std::string a_name = "a";
  if (a_tmem) {
    json a_rows = {{"of", {{"slice", {{"of", "t"}, {"columns", {d_cols, d_cols + a_cols}}}}}}, {"dtype", t.a},
                   {"packing", 32 / t.tmem_bits}, {"rows", a_rows_copied}};
    p["tmem"]["a_rows"] = {{"cast", a_rows}};
    ops.push_back({{"op", "copy"}, {"src", "a"}, {"dst", "a_rows"}});
    a_name = "a_rows";
    if (m64) {
      p["tmem"]["a_f"] = {{"cast", {{"of", "a_rows"}, {"layout", ms.layout}, {"rows", M}}}};
      a_name = "a_f";
    }
  }
  if (ms.two_ops) {
    // Two mma ops, rows 0-63 and 64-127 of A, into D at alignments 0 and 16 over the same columns.
    p["smem"]["a"]["shape"] = {M / 2, k};
    p["smem"]["a2"] = p["smem"]["a"];
    p["tmem"]["acc2"] = p["tmem"]["acc"];
    p["tmem"]["acc"]["cast"]["layout"] = "layout_f::0";
    p["tmem"]["acc2"]["cast"]["layout"] = "layout_f::16";
    ops = json::array({{{"op", "load"}, {"src", "A"}, {"dst", "a"}},
                       {{"op", "load"}, {"src", "A"}, {"dst", "a2"}, {"at", a_mn ? json{0, M / 2} : json{M / 2, 0}}},
                       {{"op", "load"}, {"src", "B"}, {"dst", "b"}},
                       {{"op", "mma"}, {"a", "a"}, {"b", "b"}, {"d", "acc"}},
                       {{"op", "mma"}, {"a", "a2"}, {"b", "b"}, {"d", "acc2"}}});
  } else {
    ops.push_back({{"op", "mma"}, {"a", a_name}, {"b", "b"}, {"d", "acc"}});
  }
  ops.push_back({{"op", "commit"}, {"barrier", "done"}});
  ops.push_back({{"op", "wait"}, {"barrier", "done"}});
  if (!m64 && blocks == 1 && n <= 128) {  // the epilogue: tmem_load (at most 128 registers) and store
    ops.push_back({{"op", "tmem_load"}, {"src", "acc"}, {"regs", "r"}});
    ops.push_back({{"op", "store"}, {"regs", "r"}, {"dst", "D"}});
  }
  p["ops"] = ops;
  return j;
}

// A CTA pair (.cta_group::2): M = 256 (128 rows of A per CTA, D in layout A) or, with `layout_b`,
// M = 128 (64 rows per CTA, D in layout B); each CTA holds half of B's N rows; loads and the
// store go per_cta further on in CTA 1.
json pair_program(const Types& t, bool a_mn, bool b_mn, int sw, bool layout_b, int n, int k) {
  const int R = layout_b ? 64 : 128;
  const bool tf32 = std::string(t.a) == "tf32";
  json j = json::parse(rules::example_program_base());
  j["name"] = "sweep_pair";
  auto& p = j["program"];
  p["cta_group"] = 2;
  p["globals"] = {{"A", {{"dtype", t.a}, {"shape", a_mn ? json{k, 2 * R} : json{2 * R, k}}}},
                  {"B", {{"dtype", t.b}, {"shape", b_mn ? json{k, n} : json{n, k}}}},
                  {"D", {{"dtype", t.acc}, {"shape", {2 * R, n}}}}};
  p["smem"] = {{"a", {{"dtype", t.a}, {"shape", {R, k}}, {"major", a_mn ? "mn" : "k"}, {"swizzle", swz(sw, tf32 && a_mn)}}},
               {"b", {{"dtype", t.b}, {"shape", {n / 2, k}}, {"major", b_mn ? "mn" : "k"}, {"swizzle", swz(sw, tf32 && b_mn)}}}};
  const int d_cols = layout_b ? n / 2 : n;
  int alloc = 32;
  while (alloc < d_cols) alloc *= 2;
  json acc = {{"of", {{"slice", {{"of", "t"}, {"columns", {0, d_cols}}}}}}};
  if (layout_b) acc["layout"] = "layout_b";
  if (std::string(t.acc) != "f32") acc["dtype"] = t.acc;
  p["tmem"] = {{"t", {{"columns", alloc}}}, {"acc", {{"cast", acc}}}};
  p["ops"] = json::array({{{"op", "load"}, {"src", "A"}, {"dst", "a"}, {"per_cta", a_mn ? json{0, R} : json{R, 0}}},
                          {{"op", "load"}, {"src", "B"}, {"dst", "b"}, {"per_cta", b_mn ? json{0, n / 2} : json{n / 2, 0}}},
                          {{"op", "mma"}, {"a", "a"}, {"b", "b"}, {"d", "acc"}},
                          {{"op", "commit"}, {"barrier", "done"}},
                          {{"op", "wait"}, {"barrier", "done"}},
                          {{"op", "tmem_load"}, {"src", "acc"}, {"regs", "r"}},
                          {{"op", "store"}, {"regs", "r"}, {"dst", "D"}, {"per_cta", {R, 0}}}});
  return j;
}

// Thread 0 of the emitted kernel issues exactly the planned tcgen05.cp and tcgen05.mma operands
// (descriptors rebased on the aligned shared-memory base, addresses on the allocations).
void check_issue(const plan::Plan& p) {
  const plan::Plan& pp = p;
  const std::string ptx = emit::ptx(p);
  ptxsim::Kernel k;
  k.smem_symbol = 48;
  for (size_t i = 0; i < pp.ir().globals.size(); ++i) k.param_values["p_" + pp.ir().globals[i].name] = uint64_t{0x10000000} * (i + 1);
  const uint64_t base = (k.smem_symbol + pp.smem_align - 1) / pp.smem_align * pp.smem_align;
  const uint64_t dbase = (base >> 4) & 0x3FFF;
  std::map<std::string, uint64_t> tbase;
  uint64_t col = 0;
  for (const auto& a : pp.allocs) {
    tbase[a.name] = col;
    col += a.columns;
  }
  const ptxsim::Thread th = ptxsim::run(ptx, 0, k);
  std::vector<std::vector<uint64_t>> want, got;
  for (const auto& st : pp.roles[0].steps) {
    for (const auto& c : st.cps) want.push_back({tbase.at(c.alloc) + c.taddr, dbase + plan::encoded(c.src)});
    for (const auto& m : st.mma.instrs)
      want.push_back({tbase.at(m.d_alloc) + m.d_taddr, m.a_tmem ? tbase.at(m.a_alloc) + m.a_taddr : dbase + plan::encoded(m.a_desc),
                      dbase + plan::encoded(m.b_desc), plan::encoded(m.idesc), m.enable_input_d ? 1u : 0u});
  }
  for (const auto& x : th.tc)
    if (x.text.rfind("tcgen05.cp", 0) == 0 || x.text.rfind("tcgen05.mma", 0) == 0) got.push_back(x.values);
  CHECK(want == got);
}

}  // namespace

TEST_SUITE("sweep") {
TEST_CASE("a sweep of types, majors, swizzles, M and N splits and A's place replays correctly") {
  const Types types[] = {{"bf16", "bf16", "f32", 16, 16, 16}, {"f16", "f16", "f16", 16, 16, 16}, {"tf32", "tf32", "f32", 32, 32, 8},
                         {"e4m3", "e5m2", "f32", 8, 8, 32},  {"e2m3", "e2m1", "f32", 8, 8, 32}, {"s8", "u8", "s32", 8, 8, 32}};
  const MSplit splits[] = {{"D 128", 128, "rows", false},         {"D 2x128", 256, "rows", false},
                           {"F 64 at 0", 64, "layout_f::0", false}, {"F 64 at 16", 64, "layout_f::16", false},
                           {"F 2x64", 128, "layout_f::0", false},   {"F 4x64 at 16", 256, "layout_f::16", false},
                           {"F 64 + 64, two ops", 128, "layout_f::0", true}};
  int planned = 0, refused = 0, simulated = 0, combination = 0;
  std::map<std::string, int> refused_by;
  auto one = [&](const Types& t, bool a_mn, bool b_mn, int sw, const MSplit* ms, bool a_tmem, bool n_split, bool layout_b = false) {
    if (combination++ % support::kSweepStride != 0) return;
    const bool m64 = ms && std::string(ms->layout) != "rows";
    // N: the smallest whole-atom width; split: one full 256-wide instruction and the rest. A pair:
    // twice the B rows each CTA holds.
    const int n0 = min_n(t.bits, b_mn, sw, m64);
    const int n = ms ? (n_split ? 256 + n0 : n0) : 2 * n0;
    // K: the instruction's K, or what fills a K-major tile's swizzle row.
    int k = t.k;
    if (!a_mn || !b_mn) k = std::max(k, (sw == 0 ? 16 : sw) * 8 / t.bits);
    const json j = ms ? program(t, a_mn, b_mn, sw, *ms, a_tmem, n, k) : pair_program(t, a_mn, b_mn, sw, layout_b, n, k);
    const int rows = ms ? ms->rows : (layout_b ? 64 : 128);
    CAPTURE(j.dump());
    Diagnostics d;
    auto c = rules::parse_and_check(j.dump(), d);
    if (!c.ok) {
      ++refused;
      for (const auto& x : d.list()) ++refused_by[x.rule];
      return;
    }
    const support::Planned p = support::plan_of(*c.parsed.spec);
    const refmodel::Result r = refmodel::replay_program(p, p.spec, 11u + static_cast<unsigned>(planned));
    std::string errs;
    for (const auto& e : r.errors) errs += e + "\n";
    REQUIRE_MESSAGE(r.ok, errs);
    CHECK(r.elements_checked >= int64_t{rows} * n);
    // The PTX interpreter on every fourth spec: the issuing thread only.
    if (planned % 4 == 0) {
      check_issue(p);
      ++simulated;
    }
    ++planned;
  };
  // A's side (where the bug was): every type x A's major x swizzle x M split x A's place, with B
  // K-major; B's side: every type x B's major x swizzle, in one instruction of N and split in two.
  for (const auto& t : types)
    for (const int sw : {0, 32, 64, 128}) {
      for (const bool a_mn : {false, true})
        for (const auto& ms : splits)
          for (const bool a_tmem : {false, true})
            // Four row blocks (the costliest to replay) with the outer swizzles only.
            if ((ms.rows < 256 || sw == 0 || sw == 128) && (!a_tmem || (!a_mn && !ms.two_ops))) one(t, a_mn, false, sw, &ms, a_tmem, false);  // tcgen05.cp reads K-major tiles
      for (const bool b_mn : {false, true})
        for (const auto* ms : {&splits[0], &splits[2]})
          for (const bool n_split : {false, true}) one(t, false, b_mn, sw, ms, false, n_split);
      // CTA pairs: M = 256 (layout A) and M = 128 (layout B), either major for A and B.
      for (const bool a_mn : {false, true})
        for (const bool b_mn : {false, true})
          for (const bool layout_b : {false, true}) one(t, a_mn, b_mn, sw, nullptr, false, false, layout_b);
    }
  std::string why;
  for (const auto& [rule, count] : refused_by) why += " " + rule + " " + std::to_string(count);
  MESSAGE("program sweep: " << planned << " specs planned and replayed (" << simulated << " also simulated), " << refused
                            << " refused:" << why);
  CHECK(planned > 250 / support::kSweepStride);
}
}
