// The program level: view resolution, the shapes the planner chooses (tcgen05.cp for 128, 64 and
// 32 rows, tcgen05.ld/st per warp), scale-factor IDs and sparsity selectors per K step, the syncs
// and waits between ops, the reference model over every shipped program spec, and ptxas over every
// spelling the ISA tables produce (and the ones each target refuses).
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "ptxgen/emit.hpp"
#include "ptxgen/io.hpp"
#include "refmodel.hpp"
#include "support.hpp"

using namespace ptxgen;
using nlohmann::json;

namespace {

json base() {
  auto j = json::parse(rules::example_program_base());
  return j;
}

struct Checked {
  Diagnostics d;
  std::optional<spec::Spec> spec;
  bool has(const std::string& rule, const std::string& ptr) const {
    for (const auto& x : d.list())
      if (x.rule == rule && x.pointer == ptr) return true;
    return false;
  }
  std::string all() const {
    std::string s;
    for (const auto& x : d.list()) s += x.rule + " at " + x.pointer + ": " + x.message + "\n";
    return s;
  }
};

Checked check(const json& j) {
  Checked c;
  auto r = rules::parse_and_check(j.dump(), c.d);
  if (r.ok) c.spec = r.parsed.spec;
  return c;
}

support::Planned plan_of(const json& j) {
  Checked c = check(j);
  REQUIRE_MESSAGE(c.spec, c.all());
  return support::plan_of(*c.spec);
}

const plan::Step* first(const plan::Plan& p, plan::StepKind k, int nth = 0) {
  for (const auto& s : p.roles[0].steps)
    if (s.kind == k && nth-- == 0) return &s;
  return nullptr;
}

// A program that copies `rows` x `cols` bf16 from a tile into the view `dst` (its definition).
json copy_program(int rows, int cols, const json& dst_view, int swizzle = 0) {
  json j = base();
  auto& p = j["program"];
  p["globals"] = {{"X", {{"dtype", "bf16"}, {"shape", {rows, cols}}}}};
  p["smem"] = {{"x", {{"dtype", "bf16"}, {"shape", {rows, cols}}, {"swizzle", swizzle}}}};
  p["tmem"] = {{"t", {{"columns", 128}}}, {"v", dst_view}};
  p["ops"] = json::array({{{"op", "load"}, {"src", "X"}, {"dst", "x"}}, {{"op", "copy"}, {"src", "x"}, {"dst", "v"}}});
  return j;
}

json bf16_slice(int lane0, int lane1, int col0, int col1) {
  return {{"cast", {{"of", {{"slice", {{"of", "t"}, {"lanes", {lane0, lane1}}, {"columns", {col0, col1}}}}}}, {"dtype", "bf16"}, {"packing", 2}}}};
}

}  // namespace

TEST_SUITE("program") {
TEST_CASE("views resolve through chains of any depth, inline and named") {
  json j = base();
  auto& t = j["program"]["tmem"];
  // 40 named links: alternately an alias and a column slice dropping the first column.
  std::string prev = "t";
  int width = 256;
  for (int i = 0; i < 40; ++i) {
    const std::string n = "v" + std::to_string(i);
    if (i % 2) t[n] = {{"slice", {{"of", prev}, {"columns", {1, width--}}}}};
    else t[n] = {{"alias", prev}};
    prev = n;
  }
  // Inline: a cast of a slice of a cast of an alias.
  t["deep"] = {{"cast", {{"of", {{"slice", {{"of", {{"cast", {{"of", {{"alias", prev}}}, {"dtype", "bf16"}}}}}, {"lanes", {32, 96}}, {"columns", {2, 10}}}}}}, {"packing", 2}}}};
  const support::Planned p = plan_of(j);
  const auto& v = p.views.at(prev);
  CHECK(v.column == 20);
  CHECK(v.columns == 236);
  // Each view keeps its own link and names the view it is declared of: 41 links back to "t".
  size_t links = 0;
  for (const ir::ResolvedView* x = &v;; x = &p.views.at(x->of)) {
    CHECK(x->chain.size() == 1);
    ++links;
    if (x->of.empty()) break;
  }
  CHECK(links == 41);
  CHECK(v.of == "v38");
  const auto& d = p.views.at("deep");
  CHECK(d.alloc == "t");
  CHECK(d.lane == 32);
  CHECK(d.lanes == 64);
  CHECK(d.column == 22);
  CHECK(d.columns == 8);
  CHECK(d.dtype == isa::DType::bf16);
  CHECK(d.packing == 2);
  CHECK(d.rows == 64);
  CHECK(d.row_elements() == 16);
  CHECK(refmodel::check_views(p, p.spec).empty());
}

TEST_CASE("view problems point at the link: unknown names, cycles, ranges, packing, layout, rows") {
  struct Case {
    json patch;
    const char* rule;
    const char* ptr;
  } cases[] = {
      {{{"x", {{"alias", "nope"}}}}, "NAME-UNKNOWN", "/program/tmem/x/alias"},
      {{{"x", {{"alias", "y"}}}, {"y", {{"slice", {{"of", "z"}}}}}, {"z", {{"cast", {{"of", "x"}}}}}}, "VIEW-CYCLE", "/program/tmem/z/cast/of"},
      {{{"x", {{"slice", {{"of", {{"alias", "x"}}}}}}}}, "VIEW-CYCLE", "/program/tmem/x/slice/of/alias"},
      {{{"x", {{"slice", {{"of", "acc"}, {"lanes", {64, 130}}}}}}}, "VIEW-SLICE-RANGE", "/program/tmem/x/slice/lanes"},
      {{{"x", {{"slice", {{"of", "acc"}, {"columns", {0, 129}}}}}}}, "VIEW-SLICE-RANGE", "/program/tmem/x/slice/columns"},
      {{{"x", {{"cast", {{"of", "acc"}, {"dtype", "f32"}, {"packing", 2}}}}}}, "VIEW-PACKING", "/program/tmem/x/cast/packing"},
      {{{"x", {{"cast", {{"of", "acc"}, {"dtype", "e2m3"}, {"packing", 8}}}}}}, "VIEW-PACKING", "/program/tmem/x/cast/packing"},
      {{{"x", {{"slice", {{"of", {{"cast", {{"of", "acc"}, {"layout", "warpx4"}}}}}, {"lanes", {0, 32}}}}}}}, "VIEW-LAYOUT", "/program/tmem/x/slice/lanes"},
      {{{"x", {{"cast", {{"of", "acc"}, {"rows", 384}}}}}}, "VIEW-ROWS", "/program/tmem/x/cast/rows"},
  };
  for (const auto& c : cases) {
    json j = base();
    j["program"]["tmem"].merge_patch(c.patch);
    Checked r = check(j);
    CAPTURE(c.rule);
    CHECK_MESSAGE(r.has(c.rule, c.ptr), r.all());
  }
  // e2m1 packs 1, 4 (8-bit containers) or 8 (two per byte); 6-bit types 1 or 4.
  json j = base();
  j["program"]["tmem"]["x"] = {{"cast", {{"of", "acc"}, {"dtype", "e2m1"}, {"packing", 8}}}};
  CHECK(check(j).spec);
}

TEST_CASE("tcgen05.cp: the shape for 128, 64 and 32 rows, and 4; replication; none for other lane sets") {
  using isa::CpShape;
  struct Case {
    int rows;
    json view;
    std::optional<CpShape> shape;
    uint32_t instrs;
  } cases[] = {
      {128, bf16_slice(0, 128, 0, 12), CpShape::s128x256b, 2},                                   // 384 bits: 256 + 128
      {64, bf16_slice(0, 64, 0, 12), CpShape::s64x128b_02_13, 3},                                // lanes 0-63 (+ 64-127)
      {64, bf16_slice(64, 128, 0, 12), CpShape::s64x128b_02_13, 3},                              // lanes 64-127 (+ 0-63)
      {64, bf16_slice(32, 96, 0, 12), CpShape::s64x128b_01_23, 3},                               // lanes 32-95
      {32, bf16_slice(96, 128, 0, 12), CpShape::s32x128b_warpx4, 3},                             // one quarter
      {64, {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {0, 12}}}}}}, {"dtype", "bf16"}, {"packing", 2}, {"layout", "warpx2::01_23"}}}}, CpShape::s64x128b_01_23, 3},
      {32, {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {0, 12}}}}}}, {"dtype", "bf16"}, {"packing", 2}, {"layout", "warpx4"}}}}, CpShape::s32x128b_warpx4, 3},
      {64, bf16_slice(16, 80, 0, 12), std::nullopt, 0},  // no shape writes lanes 16-79 in order
      {48, bf16_slice(0, 48, 0, 12), std::nullopt, 0},   // no 48-row shape
      {96, bf16_slice(0, 96, 0, 12), std::nullopt, 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.view.dump());
    const json j = copy_program(c.rows, 24, c.view);
    Checked r = check(j);
    if (!c.shape) {
      CHECK_MESSAGE(r.has("CP-SHAPE", "/program/ops/1/dst"), r.all());
      continue;
    }
    REQUIRE_MESSAGE(r.spec, r.all());
    const support::Planned p = support::plan_of(*r.spec);
    const plan::Step* cp = first(p, plan::StepKind::cp);
    REQUIRE(cp);
    CHECK(cp->cps.size() == c.instrs);
    CHECK(cp->cps[0].shape == *c.shape);
    if (c.rows == 128) CHECK(cp->cps[1].shape == CpShape::s128x128b);
    for (const auto& ci : cp->cps) CHECK(isa::decode_tmem(ci.taddr).lane == 0);  // multicast patterns start at lane 0
    const refmodel::Result m = refmodel::replay_program(p, p.spec, 3);
    std::string errs;
    for (const auto& e : m.errors) errs += e + "\n";
    CHECK_MESSAGE(m.ok, errs);
    CHECK(m.elements_checked >= c.rows * 24);
  }
  // A 4-row source refreshes lanes 0, 32, 64 and 96 (.4x256b).
  json j = copy_program(8, 16, bf16_slice(0, 128, 0, 8), 32);
  j["program"]["ops"][1]["rows"] = {4, 8};
  const support::Planned p = plan_of(j);
  const plan::Step* cp = first(p, plan::StepKind::cp);
  REQUIRE(cp->cps.size() == 1);
  CHECK(cp->cps[0].shape == isa::CpShape::s4x256b);
  CHECK(plan::encoded(cp->cps[0].src) % (1u << 14) == 4u * 32 / 16);  // starts at row 4 of the 32-byte rows
  CHECK(refmodel::replay_program(p, p.spec, 1).ok);
}

TEST_CASE("a multicast copy into a lane slice refuses to overwrite another view's lanes") {
  json j = copy_program(64, 24, bf16_slice(0, 64, 0, 12));
  j["program"]["tmem"]["other"] = {{"slice", {{"of", "t"}, {"lanes", {64, 128}}, {"columns", {8, 16}}}}};
  j["program"]["ops"].push_back({{"op", "tmem_load"}, {"src", "other"}, {"regs", "r"}});
  Checked r = check(j);
  CHECK_MESSAGE(r.has("CP-MULTICAST-OVERLAP", "/program/ops/1/dst"), r.all());
  j["program"]["tmem"]["other"]["slice"]["columns"] = {12, 16};  // beside the copy's columns
  r = check(j);
  CHECK_FALSE(r.has("CP-MULTICAST-OVERLAP", "/program/ops/1/dst"));
}

TEST_CASE("tcgen05.ld/st: one warp per quarter, lane bits in the address, .num and Table 49") {
  json j = base();
  const support::Planned p = plan_of(j);
  const plan::Step* ld = first(p, plan::StepKind::tmem_ld);
  REQUIRE(ld);
  std::set<int> warps;
  for (const auto& f : ld->ld.frags) {
    warps.insert(f.warp);
    // §9.7.16.8.1: warp w reaches lanes 32*(w%4) .. +31, and the address says which.
    CHECK(isa::decode_tmem(f.taddr).lane / 32 == static_cast<uint32_t>(f.warp % 4));
    CHECK(f.shape == isa::LdShape::s32x32b);
    CHECK(f.num == 128);  // 128 columns in one instruction: .x128, 128 registers (Table 49)
  }
  CHECK(warps == std::set<int>{0, 1, 2, 3});
  // Warps of another warpgroup reach the same quarters.
  j["program"]["threads"] = 256;
  j["program"]["ops"][6]["warps"] = {7, 4, 5, 6};
  const support::Planned p2 = plan_of(j);
  for (const auto& f : first(p2, plan::StepKind::tmem_ld)->ld.frags)
    CHECK(isa::decode_tmem(f.taddr).lane == static_cast<uint32_t>(32 * (f.warp % 4)));
  CHECK(refmodel::replay_program(p2, p2.spec, 5).ok);
  // Table 49 limits.
  for (auto [shape_, num_, ok] : {std::tuple{"16x128b", 32, true}, {"16x128b", 128, false}, {"16x256b", 16, true},
                                  {"16x256b", 64, false}, {"32x32b", 128, true}, {"16x64b", 128, false}, {"16x64b", 64, true}}) {
    const std::string shape = shape_;  // CAPTURE's lambda cannot capture a structured binding (clang 14)
    const int num = num_;
    json k = base();
    k["program"]["ops"][6]["shape"] = shape;
    k["program"]["ops"][6]["num"] = num;
    Checked r = check(k);
    CAPTURE(shape);
    CAPTURE(num);
    // 16x128b.x128 and 16x256b.x64 are NA in Table 49; 16x64b.x128 is legal but moves 256 columns,
    // more than the view's 128.
    CHECK(r.has("LD-NUM", "/program/ops/6/num") == !ok);
  }
}

TEST_CASE("wait::ld before registers are used or reused; wait::st before threads synchronize") {
  const support::Planned p = plan_of(base());
  const auto& st = p.roles[0].steps;
  size_t ld = 0, wait = 0, store = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    if (st[i].kind == plan::StepKind::tmem_ld) ld = i;
    if (st[i].kind == plan::StepKind::wait_ld) wait = i;
    if (st[i].kind == plan::StepKind::store) store = i;
  }
  CHECK(ld < wait);
  CHECK(wait < store);
  // P over S: tcgen05.ld of S, tcgen05.st of P into the same cells, tcgen05.mma reading P.
  const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/prog_view_chain_p_over_s.json"));
  const support::Planned q = support::plan_of(s);
  std::vector<plan::StepKind> kinds;
  for (const auto& x : q.roles[0].steps) kinds.push_back(x.kind);
  auto at = [&](plan::StepKind k, size_t from) {
    for (size_t i = from; i < kinds.size(); ++i)
      if (kinds[i] == k) return i;
    return kinds.size();
  };
  const size_t ld_s = at(plan::StepKind::tmem_ld, 0), st_p = at(plan::StepKind::tmem_st, 0), mma2 = at(plan::StepKind::mma, st_p);
  CHECK(at(plan::StepKind::wait_ld, ld_s) < st_p);          // the registers of S are read by tcgen05.st
  CHECK(at(plan::StepKind::wait_st, st_p) < mma2);          // P complete ...
  CHECK(at(plan::StepKind::sync, st_p) < mma2);             // ... and ordered before the issuing thread reads it
  CHECK(at(plan::StepKind::wait_st, st_p) < at(plan::StepKind::sync, st_p));
}

TEST_CASE("block scaling: scale-factor IDs and columns per K step for 1X, 2X and 4X") {
  struct Case {
    const char* spec;
    std::vector<unsigned> ids;
    std::vector<uint32_t> sfa_cols;
  } cases[] = {
      {"prog_mxf8f6f4_sm100a", {0, 1, 2, 3}, {0, 0, 0, 0}},
      {"prog_mxf4_sm100a", {0, 2, 0, 2}, {0, 0, 4, 4}},
      {"prog_mxf4nvf4_ue4m3_sm100a", {0, 0}, {0, 4}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.spec);
    const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/" + c.spec + ".json"));
    const support::Planned p = support::plan_of(s);
    const plan::Step* m = first(p, plan::StepKind::mma);
    REQUIRE(m);
    REQUIRE(m->mma.instrs.size() == c.ids.size());
    const uint32_t base_col = m->mma.instrs[0].sfa_taddr & 0xFFFF;
    for (size_t i = 0; i < c.ids.size(); ++i) {
      const auto& in = m->mma.instrs[i];
      const auto ids = isa::legal_sf_ids(m->mma.scale.factors);
      CHECK(std::find(ids.begin(), ids.end(), in.idesc.a_sf_id) != ids.end());
      CHECK(in.idesc.a_sf_id == c.ids[i]);
      CHECK(in.idesc.b_sf_id == c.ids[i]);
      CHECK((in.sfa_taddr & 0xFFFF) - base_col == c.sfa_cols[i]);
      // The encoded descriptor carries the ids at bits 29-30 (A) and 4-5 (B) (Tables 43/44).
      const uint32_t w = plan::encoded(in.idesc);
      CHECK(((w >> 29) & 3) == c.ids[i]);
      CHECK(((w >> 4) & 3) == c.ids[i]);
    }
  }
}

TEST_CASE("spellings per target: .scale_vec::NX on sm_100a/sm_110a, .blockN elsewhere; PTX versions") {
  auto mma_of = [](const char* name) {
    const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/" + std::string(name) + ".json"));
    return support::plan_of(s);
  };
  const support::Planned a = mma_of("prog_mxf8f6f4_sm100a"), f = mma_of("prog_mxf8f6f4_sm100f"), n = mma_of("prog_mxf4nvf4_ue4m3_sm100a");
  // The spelling table writes the .scale_vectorsize per target (emit/spelling.cpp).
  auto spelled = [](const support::Planned& p) { return std::string(emit::plan_text(p)); };
  CHECK(spelled(a).find(".block_scale.scale_vec::1X") != std::string::npos);
  CHECK(spelled(f).find(".block_scale.block32") != std::string::npos);
  CHECK(spelled(n).find(".block_scale.scale_vec::4X") != std::string::npos);
  CHECK(support::ptx_version(a) == 86);
  CHECK(support::ptx_version(f) == 88);
  CHECK(support::ptx_version(n) == 87);  // .kind::mxf4nvf4 and .scale_vec::4X are PTX ISA 8.7
}

TEST_CASE("sparsity: the selector picks a column of an even pair for f16/tf32, two columns per step otherwise") {
  for (auto [name_, sel] : {std::pair{"prog_sparse_f16", true}, {"prog_sparse_tf32", true}, {"prog_sparse_i8", false},
                            {"prog_sparse_mxf8f6f4", false}, {"prog_sparse_m64_f16", true}, {"prog_sparse_m64_e4m3_x2", false}}) {
    const std::string name = name_;  // CAPTURE's lambda cannot capture a structured binding (clang 14)
    CAPTURE(name);
    const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/" + std::string(name) + ".json"));
    const support::Planned p = support::plan_of(s);
    const plan::Step* m = first(p, plan::StepKind::mma);
    REQUIRE(m);
    const uint32_t c0 = m->mma.instrs[0].meta_taddr & 0xFFFF;
    const uint32_t mcols = m->mma.instrs.back().mi > 0 ? p.views.at("meta").block_columns() : 0;
    for (const auto& in : m->mma.instrs) {
      CHECK(in.idesc.sparse);
      // The metadata address carries D's lane field: 0, or layout F's alignment (§9.7.16.10.8.5).
      CHECK(isa::decode_tmem(in.meta_taddr).lane == isa::decode_tmem(in.d_taddr).lane);
      const uint32_t col = (in.meta_taddr & 0xFFFF) - c0 - static_cast<uint32_t>(in.mi) * mcols;
      if (sel) {
        CHECK(in.idesc.sparse_selector == static_cast<unsigned>(in.ki % 2));
        CHECK(col == static_cast<uint32_t>(in.ki / 2 * 2));
      } else {
        CHECK(in.idesc.sparse_selector == 0);
        CHECK(col == static_cast<uint32_t>(2 * in.ki));
      }
    }
  }
}

TEST_CASE("bad input: a diagnostic with a pointer, exit 1, nothing written") {
  struct Case {
    json patch;
    const char* rule;
    const char* ptr;
  } cases[] = {
      {{{"program", {{"tmem", {{"x", {{"alias", "y"}}}, {"y", {{"alias", "x"}}}}}}}}, "VIEW-CYCLE", "/program/tmem/y/alias"},
      {{{"program", {{"ops", {{{"op", "mma"}, {"a", "qq"}, {"b", "b"}, {"d", "acc"}}}}}}}, "NAME-UNKNOWN", "/program/ops/0/a"},
      {{{"program", {{"tmem", {{"acc", {{"slice", {{"columns", {0, 512}}}}}}}}}}}, "VIEW-SLICE-RANGE", "/program/tmem/acc/slice/columns"},
      {{{"program", {{"ops", {{{"op", "mma"}, {"a", "a"}, {"b", "b"}, {"d", "acc"}}, {{"op", "load"}, {"src", "A"}, {"dst", "a"}}}}}}}, "ORDER-UNWRITTEN", "/program/ops/0/a"},
  };
  const char* bin = std::getenv("PTXGEN_BIN");
  REQUIRE(bin);
  const std::string dir = std::filesystem::temp_directory_path() / ("ptxgen-prog-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& c : cases) {
    json j = base();
    j.merge_patch(c.patch);
    std::ofstream(dir + "/bad.json") << j.dump(2);
    io::Run r = io::run({bin, "emit", dir + "/bad.json", "-o", dir + "/out.ptx", "--diagnostics=json"});
    CAPTURE(c.rule);
    CHECK(r.exit_code == 1);
    CHECK_FALSE(std::filesystem::exists(dir + "/out.ptx"));
    bool found = false;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      auto d = json::parse(line, nullptr, false);
      if (d.is_object() && d.value("rule", "") == c.rule && d.value("pointer", "") == c.ptr) found = true;
    }
    CHECK_MESSAGE(found, r.output);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("every problem the verifiers report is a rule of the table with an example") {
  const std::regex id("problem\\(\"([A-Z0-9-]+)\"");
  std::set<std::string> ids;
  for (const char* f : {"rules/verify_kernel.cpp", "rules/verify_views.cpp", "rules/verify_ops.cpp", "rules/verify_regs.cpp",
                        "rules/verify_mma.cpp", "rules/verify_order.cpp", "rules/check_pipeline.cpp"}) {
    const std::string src = support::slurp(support::source_root() + "/src/" + f);
    for (auto it = std::sregex_iterator(src.begin(), src.end(), id); it != std::sregex_iterator(); ++it) ids.insert((*it)[1]);
  }
  CHECK(ids.size() >= 40);
  for (const auto& i : ids) {
    CAPTURE(i);
    const rules::Rule* r = rules::find(i);
    REQUIRE(r);
    CHECK(static_cast<bool>(r->check));
    CHECK(!r->bad.empty());
  }
}

// The planner issues no diagnostics: no file of src/plan/ names a rule of the table in a string
// literal or reports a problem (the verifiers in src/rules/ do, before it runs).
TEST_CASE("the planner names no rule: src/plan/ has no rule id literal and no problem report") {
  std::set<std::string> table;
  for (const auto& r : rules::table()) table.insert(std::string(r.id));
  const std::regex literal("\"([A-Z][A-Z0-9]*(-[A-Z0-9]+)+)\"");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(support::source_root() + "/src/plan")) {
    const std::string src = support::slurp(e.path().string());
    CAPTURE(e.path().string());
    ++files;
    CHECK(src.find("problem(") == std::string::npos);
    for (auto it = std::sregex_iterator(src.begin(), src.end(), literal); it != std::sregex_iterator(); ++it)
      CHECK_MESSAGE(!table.count((*it)[1]), "rule id " << (*it)[1] << " in the planner");
  }
  CHECK(files >= 8);
}

// The rule check plans no kernel: the rules read the verified IR and the narrow calls of plan.hpp
// (memory_map, launch_grid, output_bound, ...), never the planner's whole plan.
TEST_CASE("the rule check plans no kernel: src/rules/ calls neither make_plan nor the planner's internals") {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(support::source_root() + "/src/rules")) {
    const std::string src = support::slurp(e.path().string());
    CAPTURE(e.path().string());
    ++files;
    for (const char* call : {"make_plan(", "plan::detail"}) CHECK_MESSAGE(src.find(call) == std::string::npos, call);
  }
  CHECK(files >= 10);
}

TEST_CASE("every shipped program spec: views, invariants, and the reference model") {
  int n = 0;
  for (const auto& f : support::spec_files()) {
    const spec::Spec s = support::checked_spec(support::slurp(f));
    if (!s.program) continue;
    CAPTURE(f);
    const support::Planned p = support::plan_of(s);
    for (const auto& e : refmodel::check_views(p, p.spec)) FAIL_CHECK(e);
    // Every tensor-memory address inside its allocation; tcgen05.ld/st in the warp's quarter.
    std::map<std::string, uint32_t> cols;
    for (const auto& a : p.allocs) cols[a.name] = a.columns;
    uint32_t sum = 0;
    for (const auto& a : p.allocs) {
      CHECK((a.columns & (a.columns - 1)) == 0);
      CHECK(a.columns >= 32);
      sum += a.columns;
    }
    CHECK(sum <= 512);
    for (size_t i = 1; i < p.allocs.size(); ++i) CHECK(p.allocs[i].columns <= p.allocs[i - 1].columns);
    auto inside = [&](const std::string& alloc, uint32_t addr, uint32_t width) {
      CHECK(isa::decode_tmem(addr).lane < 128);
      CHECK(isa::decode_tmem(addr).column + width <= cols.at(alloc));
    };
    for (const auto& st : p.roles[0].steps) {
      for (const auto& c : st.cps) inside(c.alloc, c.taddr, static_cast<uint32_t>(isa::info(c.shape).bits / 32));
      // A pair's dense M = 128 (layout B, §9.7.16.10.5.2) folds N into N / 2 columns of both lane halves.
      const bool layout_b = p.ir().cta_group == 2 && !st.mma.sparse;
      for (const auto& m : st.mma.instrs)
        inside(m.d_alloc, m.d_taddr, static_cast<uint32_t>(layout_b && m.m == 128 ? m.n / 2 : m.n));
      for (const auto* d : {&st.ld, &st.st.dst})
        for (const auto& f : d->frags) {
          CHECK(isa::decode_tmem(f.taddr).lane / 32 == static_cast<uint32_t>(f.warp % 4));
          CHECK(f.warp < p.ir().threads / 32);
          CHECK(isa::ld_regs(f.shape, f.num) == f.regs);
        }
    }
    // One seed per spec, different from spec to spec: a second replay of every spec doubled the
    // suite's time (about 10 s of CPU) for little; the operands differ across specs anyway.
    // The reference model replays data movement; a program with arithmetic (docs/spec.md,
    // "Arithmetic") is checked whole against its float64 evaluation instead (sim_program_test.cpp).
    bool math = false;
    auto arithmetic = [](const spec::Op& o) {  // amax and block quantization compute too
      return o.kind == spec::OpKind::math || o.kind == spec::OpKind::amax || o.kind == spec::OpKind::quantize;
    };
    for (const auto& o : s.program->ops) {
      math = math || arithmetic(o);
      for (const auto& b : o.body) math = math || arithmetic(b);
    }
    if (math) continue;
    const refmodel::Result r = refmodel::replay_program(p, p.spec, 1u + static_cast<unsigned>(n));
    std::string errs;
    for (const auto& e : r.errors) errs += e + "\n";
    CHECK_MESSAGE(r.ok, errs);
    CHECK(r.elements_checked > 0);
    ++n;
  }
  CHECK(n >= 20);
}

// M = 64 (data-path layout F, §9.7.16.10.5.6): the base program with 64 rows of A and the
// accumulator cast to a layout-F view; A from shared memory unless a test says otherwise.
json m64_program(const char* layout = "layout_f::0") {
  json j = base();
  auto& p = j["program"];
  p["globals"]["A"]["shape"] = {64, 64};
  p["smem"]["a"]["shape"] = {64, 64};
  p["tmem"]["acc"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {0, 128}}}}}}, {"layout", layout}}}};
  p["ops"] = json::array({{{"op", "load"}, {"src", "A"}, {"dst", "a"}}, {{"op", "load"}, {"src", "B"}, {"dst", "b"}},
                          {{"op", "mma"}, {"a", "a"}, {"b", "b"}, {"d", "acc"}},
                          {{"op", "commit"}, {"barrier", "done"}}, {{"op", "wait"}, {"barrier", "done"}},
                          {{"op", "tmem_load"}, {"src", "acc"}, {"regs", "r"}, {"shape", "16x128b"}},
                          {{"op", "store"}, {"regs", "r"}, {"dst", "D"}}});
  return j;
}

TEST_CASE("sparse M = 64: metadata in D's layout F and lane alignment, every row's lanes replayed") {
  const std::string src = support::slurp(support::source_root() + "/specs/prog_sparse_m64_f16.json");
  const support::Planned p = plan_of(json::parse(src));
  const plan::Step* m = first(p, plan::StepKind::mma);
  REQUIRE(m);
  REQUIRE(m->mma.instrs.size() == 2);  // K = 64: two sparse K = 32 steps of f16
  for (const auto& in : m->mma.instrs) {
    CHECK(in.m == 64);
    CHECK((plan::encoded(in.idesc) >> 24 & 0x1F) == 64u >> 4);
    CHECK((plan::encoded(in.idesc) >> 2 & 1) == 1u);  // Table 42 bit 2: sparse
    CHECK(isa::decode_tmem(in.d_taddr).lane == 16u);
    CHECK(isa::decode_tmem(in.meta_taddr).lane == 16u);
    CHECK(isa::decode_tmem(in.meta_taddr).column == 64u);  // one even pair: selector 0, then 1
    CHECK((plan::encoded(in.idesc) & 3u) == static_cast<uint32_t>(in.ki));
  }
  CHECK(refmodel::replay_program(p, p.spec, 13).ok);
  // The model sees metadata read at the wrong alignment, or from lanes the copy did not write.
  support::Planned bad = p;
  for (auto& st : bad.roles[0].steps)
    for (auto& in : st.mma.instrs) in.meta_taddr = isa::encode(isa::TmemAddr{0, isa::decode_tmem(in.meta_taddr).column});
  CHECK_FALSE(refmodel::replay_program(bad, bad.spec, 13).ok);
  json j = json::parse(src);  // 64 rows of metadata copied: lanes 16-31 of each quarter stay empty
  j["program"]["tmem"]["meta"]["cast"]["layout"] = "layout_f::0";
  Checked r = check(j);
  CHECK_MESSAGE(r.has("OP-MMA-SPARSE", "/program/ops/4/sparse/metadata"), r.all());
  CHECK(r.all().find("layout_f::16") != std::string::npos);
  json k = json::parse(src);  // one column where the two K steps read an even pair
  k["program"]["tmem"]["meta"]["cast"]["of"] = {{"slice", {{"of", "meta_rows"}, {"columns", {0, 1}}}}};
  Checked rk = check(k);
  CHECK_MESSAGE(rk.has("OP-MMA-SPARSE", "/program/ops/4/sparse/metadata"), rk.all());
  CHECK(rk.all().find("2 K steps need 2 columns per 64-row M group") != std::string::npos);
}

TEST_CASE("M = 64: layout F views, the idesc M field, the lane alignment in the address, 16-lane loads") {
  for (auto [layout_, align_] : {std::pair{"layout_f::0", 0u}, {"layout_f::16", 16u}}) {
    const std::string layout = layout_;
    const uint32_t align = align_;
    CAPTURE(layout);
    const support::Planned p = plan_of(m64_program(layout_));
    const plan::Step* mma = first(p, plan::StepKind::mma);
    REQUIRE(mma);
    REQUIRE(mma->mma.instrs.size() == 4);  // K = 64: four K = 16 steps, one M group, one N group
    for (const auto& in : mma->mma.instrs) {
      CHECK(in.m == 64);
      CHECK(in.idesc.m == 64u);
      CHECK((plan::encoded(in.idesc) >> 24 & 0x1F) == 64u >> 4);  // §9.7.16.4.2: M >> 4 in bits 24-28
      CHECK(isa::decode_tmem(in.d_taddr).lane == align);
    }
    const plan::Step* ld = first(p, plan::StepKind::tmem_ld);
    REQUIRE(ld);
    std::set<int> warps;
    for (const auto& f : ld->ld.frags) {
      warps.insert(f.warp);
      // Warp w reads rows 16 (w % 4) .. +15 from lanes 32 (w % 4) + alignment .. +15.
      CHECK(isa::decode_tmem(f.taddr).lane == 32u * static_cast<uint32_t>(f.warp % 4) + align);
      CHECK(f.row0 == 16 * (f.warp % 4));
    }
    CHECK(warps == std::set<int>{0, 1, 2, 3});
    CHECK(refmodel::replay_program(p, p.spec, 7).ok);
  }
  {  // tcgen05.st into a layout-F view at the other alignment, and back: rows land where the ld finds them
    json j = m64_program();
    auto& p = j["program"];
    p["tmem"]["c"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 256}}}}}}, {"layout", "layout_f::16"}}}};
    p["ops"].push_back({{"op", "tmem_store"}, {"dst", "c"}, {"regs", "r"}, {"shape", "16x128b"}});
    p["ops"].push_back({{"op", "tmem_load"}, {"src", "c"}, {"regs", "r2"}, {"shape", "16x128b"}});
    p["ops"].push_back({{"op", "store"}, {"regs", "r2"}, {"dst", "D"}, {"at", {64, 0}}});
    const support::Planned pst = plan_of(j);
    const plan::Step* st = first(pst, plan::StepKind::tmem_st);
    REQUIRE(st);
    for (const auto& f : st->st.dst.frags) CHECK(isa::decode_tmem(f.taddr).lane == 32u * static_cast<uint32_t>(f.warp % 4) + 16u);
    CHECK(refmodel::replay_program(pst, pst.spec, 11).ok);
  }
  // What stays refused, each at its rule.
  struct Case {
    json j;
    const char* rule;
    const char* ptr;
  };
  std::vector<Case> cases;
  {  // 32x32b reads whole quarters; layout F has 16 lanes of each
    json j = m64_program();
    j["program"]["ops"][5]["shape"] = "32x32b";
    cases.push_back({j, "LD-SHAPE", "/program/ops/5/shape"});
  }
  {  // 64 rows of A with a 128-lane rows accumulator: D would be 128 rows
    json j = m64_program();
    j["program"]["tmem"]["acc"] = {{"slice", {{"of", "t"}, {"columns", {0, 128}}}}};
    cases.push_back({j, "OP-MMA-SHAPE", "/program/ops/2/d"});
  }
  {  // a 64-lane rows slice is no data-path layout
    json j = m64_program();
    j["program"]["tmem"]["acc"] = {{"slice", {{"of", "t"}, {"lanes", {0, 64}}, {"columns", {0, 128}}}}};
    cases.push_back({j, "OP-MMA-D", "/program/ops/2/d"});
  }
  {  // a lane slice of a layout-F view; a layout-F cast of a lane slice
    json j = m64_program();
    j["program"]["tmem"]["x"] = {{"slice", {{"of", "acc"}, {"lanes", {0, 16}}}}};
    cases.push_back({j, "VIEW-LAYOUT", "/program/tmem/x/slice/lanes"});
    json k = m64_program();
    k["program"]["tmem"]["acc"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"lanes", {0, 64}}, {"columns", {0, 128}}}}}}, {"layout", "layout_f::0"}}}};
    cases.push_back({k, "VIEW-LAYOUT", "/program/tmem/acc/cast/layout"});
  }
  {  // no tcgen05.cp shape writes 16-lane pieces
    json j = m64_program();
    j["program"]["tmem"]["a_f"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 160}}}}}}, {"dtype", "bf16"}, {"packing", 2}, {"layout", "layout_f::0"}}}};
    j["program"]["ops"][2] = {{"op", "copy"}, {"src", "a"}, {"dst", "a_f"}};
    cases.push_back({j, "CP-SHAPE", "/program/ops/2/dst"});
  }
  {  // A in tensor memory at the other alignment than D (§9.7.16.10.5: the same for A and D)
    json j = m64_program("layout_f::16");
    auto& p = j["program"];
    p["globals"]["A"]["shape"] = {128, 64};
    p["smem"]["a"]["shape"] = {128, 64};
    p["tmem"]["a_rows"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 160}}}}}}, {"dtype", "bf16"}, {"packing", 2}}}};
    p["tmem"]["a_f"] = {{"cast", {{"of", "a_rows"}, {"layout", "layout_f::0"}}}};
    p["ops"][2] = {{"op", "copy"}, {"src", "a"}, {"dst", "a_rows"}};
    p["ops"].insert(p["ops"].begin() + 3, json{{"op", "mma"}, {"a", "a_f"}, {"b", "b"}, {"d", "acc"}});
    cases.push_back({j, "OP-MMA-A-TMEM", "/program/ops/3/a"});
    json k = j;  // the same alignment plans, and the model replays it
    k["program"]["tmem"]["a_f"]["cast"]["layout"] = "layout_f::16";
    const support::Planned pk = plan_of(k);
    for (const auto& in : first(pk, plan::StepKind::mma)->mma.instrs) CHECK(isa::decode_tmem(in.a_taddr).lane == 16u);
    CHECK(refmodel::replay_program(pk, pk.spec, 9).ok);
  }
  // Block-scaled kinds: M = 128 only at .cta_group::1 (Table 39). Sparse M = 64 with its metadata
  // still in a 128-lane rows view: the metadata must sit in D's layout F (§9.7.16.10.8.5).
  for (auto [file_, ptr_, rule_, mma_] : {std::tuple{"prog_mxf8f6f4_sm100a", "/program/ops/6/d", "OP-MMA-SHAPE", 6},
                                          {"prog_sparse_f16", "/program/ops/4/sparse/metadata", "OP-MMA-SPARSE", 4}}) {
    const std::string file = file_, ptr = ptr_, rule = rule_;
    const int mma = mma_;
    json j = json::parse(support::slurp(support::source_root() + "/specs/" + file + ".json"));
    auto& p = j["program"];
    p["smem"]["a"]["shape"][0] = 64;
    p["tmem"]["acc"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {0, 128}}}}}}, {"layout", "layout_f::0"}}}};
    p["ops"][static_cast<size_t>(mma + 3)]["shape"] = "16x128b";
    Checked r = check(j);
    CAPTURE(file);
    CHECK_MESSAGE(r.has(rule, ptr), r.all());
  }
  for (const auto& c : cases) {
    Checked r = check(c.j);
    CAPTURE(c.rule);
    CHECK_MESSAGE(r.has(c.rule, c.ptr), r.all());
  }
}

TEST_CASE("launch manifest of a program: one CTA, the .entry's parameters in order, every tensor") {
  const support::Planned p = plan_of(base());
  const json m = json::parse(plan::manifest(p));
  CHECK(m["level"] == "program");
  CHECK(m["grid"] == json::array({1, 1, 1}));
  const plan::Grid g = p.launch;
  CHECK(g.x == 1);
  CHECK(g.y == 1);
  CHECK(g.z == 1);
  CHECK(m["block"] == json::array({p.ir().threads, 1, 1}));
  CHECK(m["dynamic_shared_memory_bytes"] == p.smem_bytes);
  // The parameters in the order the .entry declares them.
  const std::string ptx = emit::ptx(p);
  size_t at = ptx.find(".entry");
  for (const auto& x : m["params"]) {
    const std::string decl = ".param .u64 " + x["name"].get<std::string>();
    const size_t next = ptx.find(decl, at);
    REQUIRE_MESSAGE(next != std::string::npos, decl);
    at = next;
    CHECK(x["kind"] == "global_pointer");
    CHECK(m["tensors"].contains(x["tensor"].get<std::string>()));
  }
  CHECK(m["params"].size() == p.ir().globals.size());
  CHECK(m["tensors"]["A"]["shape"] == json::array({128, 64}));
}

TEST_CASE("ptxas: every cp/ld/st spelling the tables produce assembles; the variants each target lacks are refused") {
  auto ptxas = io::find_ptxas();
  REQUIRE_MESSAGE(ptxas, "ptxas not found");
  const std::string dir = std::filesystem::temp_directory_path() / ("ptxgen-spell-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto assemble = [&](const isa::TargetInfo& t, int version, const std::string& body) {
    const std::string f = dir + "/k.ptx";
    std::ofstream(f) << ".version " << version / 10 << "." << version % 10 << "\n.target " << t.name
                     << "\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<300>;\n.reg .b64 %rd<4>;\n" << body << "ret;\n}\n";
    return io::run({*ptxas, "-arch=" + std::string(t.name), f, "-o", dir + "/k.cubin"}).exit_code == 0;
  };
  auto regs = [](int n) {
    std::string s = "{";
    for (int i = 0; i < n; ++i) s += (i ? ", %r" : "%r") + std::to_string(i);
    return s + "}";
  };
  for (auto arch : {isa::Arch::sm_100a, isa::Arch::sm_100f, isa::Arch::sm_103a, isa::Arch::sm_110a}) {
    const auto& t = isa::target_info(arch);
    const int v = t.ptx_major * 10 + t.ptx_minor < 88 ? 88 : t.ptx_major * 10 + t.ptx_minor;
    CAPTURE(t.name);
    std::string body;
    for (auto s : isa::all_cp_shapes())
      for (auto d : {isa::CpDecompress::none, isa::CpDecompress::b4x16_p64, isa::CpDecompress::b6x16_p32}) {
        const auto& i = isa::info(s);
        body += "tcgen05.cp.cta_group::1." + std::string(i.name) + (i.multicast.empty() ? "" : "." + std::string(i.multicast)) +
                std::string(isa::qualifier(d)) + " [%r200], %rd1;\n";
      }
    for (auto s : isa::all_ld_shapes())
      for (int num = 1; num <= 128; num *= 2) {
        const int n = isa::ld_regs(s, num);
        if (!n) continue;
        const std::string split = s == isa::LdShape::s16x32bx2 ? ", 16" : "";
        const std::string sh = std::string(isa::info(s).name) + ".x" + std::to_string(num);
        body += "tcgen05.ld.sync.aligned." + sh + ".pack::16b.b32 " + regs(n) + ", [%r200]" + split + ";\n";
        body += "tcgen05.st.sync.aligned." + sh + ".unpack::16b.b32 [%r200]" + split + ", " + regs(n) + ";\n";
      }
    CHECK(assemble(t, v, body + "tcgen05.wait::ld.sync.aligned;\ntcgen05.wait::st.sync.aligned;\n"));
    // Block-scaled kinds in the spelling of the target; .mma.sp gaps; .kind::i8 gaps.
    for (auto k : {isa::Kind::mxf8f6f4, isa::Kind::mxf4, isa::Kind::mxf4nvf4})
      for (int vec : {16, 32})
        for (auto sdt : {isa::DType::ue8m0, isa::DType::ue4m3}) {
          auto f = isa::scale_factors_per_instr(k, sdt, vec);
          if (!f) continue;
          const std::string q = isa::scale_vec_qualifier(*f, vec, t);
          for (bool sp : {false, true}) {
            const std::string ins = std::string("tcgen05.mma") + (sp ? ".sp" : "") + ".cta_group::1.kind::" +
                                    std::string(isa::name(k)) + ".block_scale" + q + " [%r1], %rd1, %rd2, " +
                                    (sp ? "[%r6], " : "") + "%r3, [%r4], [%r5], 1;\n";
            CAPTURE(ins);
            CHECK(assemble(t, std::max(v, isa::mma_min_ptx(k, q)), ins) == !isa::mma_target_gap(k, sp, t));
          }
        }
    CHECK(assemble(t, v, "tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r3, 1;\n") == !isa::mma_target_gap(isa::Kind::i8, false, t));
    // .scale_vec::NX only where the target has it.
    CHECK(assemble(t, v, "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%r1], %rd1, %rd2, %r3, [%r4], [%r5], 1;\n") ==
          (t.arch != isa::Arch::sm_100f));
  }
  std::filesystem::remove_all(dir);
}
}

TEST_SUITE("program") {
TEST_CASE("CTA pairs: .cta_group::2 everywhere, M = 256, B halves per CTA, per_cta offsets, cluster launch") {
  const std::string src = support::slurp(support::source_root() + "/specs/prog_pair_bf16_m256.json");
  const support::Planned p = plan_of(json::parse(src));
  REQUIRE(p.ir().cta_group == 2);
  const plan::Step* m = first(p, plan::StepKind::mma);
  REQUIRE(m);
  REQUIRE(m->mma.instrs.size() == 4);  // K = 64: four K = 16 steps, one M group, one N group
  for (const auto& in : m->mma.instrs) {
    CHECK(in.m == 256);
    CHECK((plan::encoded(in.idesc) >> 24 & 0x1F) == 256u >> 4);  // §9.7.16.4.2: M >> 4
    CHECK((plan::encoded(in.idesc) >> 17 & 0x3F) == 128u >> 3);  // N = 2 x 64 rows of B per CTA
    // B from row 0 of each CTA's tile: the descriptor addresses the issuing CTA's and the peer's
    // shared memory at the same offset.
    const auto* b = &p.smem[0];
    for (const auto& t : p.smem)
      if (t.name == "b") b = &t;
    CHECK(in.b_desc.start_address == b->offset + 32u * static_cast<uint32_t>(in.ki));  // K advances 32 B per step
  }
  const plan::Step* ld = first(p, plan::StepKind::load);
  REQUIRE(ld);
  CHECK(ld->load.cta_bytes == 128 * 64 * 2);  // A: CTA 1 starts 128 rows of 64 bf16 further on
  const json mf = json::parse(plan::manifest(p));
  CHECK(mf["grid"] == json::array({2, 1, 1}));
  CHECK(mf["cluster"] == json::array({2, 1, 1}));
  const std::string ptx = emit::ptx(p);
  CHECK(ptx.find(".reqnctapercluster 2, 1, 1") != std::string::npos);
  CHECK(ptx.find("mov.u32 %r") != std::string::npos);
  CHECK(ptx.find("%cluster_ctarank") != std::string::npos);
  CHECK(ptx.find("tcgen05.mma.cta_group::2.kind::f16") != std::string::npos);
  CHECK(ptx.find("tcgen05.alloc.cta_group::2") != std::string::npos);
  CHECK(ptx.find("tcgen05.dealloc.cta_group::2") != std::string::npos);
  CHECK(ptx.find(".multicast::cluster.b64") != std::string::npos);
  CHECK(ptx.find("barrier.cluster.arrive.release.aligned") != std::string::npos);
  CHECK(ptx.find("cta_group::1") == std::string::npos);  // §9.7.16: one cta_group per kernel
  CHECK(ptx.find("bar.sync") == std::string::npos);
  CHECK(refmodel::replay_program(p, p.spec, 21).ok);

  // The model catches CTA 1 reading the wrong rows, and B's halves read from the wrong rows.
  support::Planned bad = p;
  for (auto& st : bad.roles[0].steps)
    if (st.kind == plan::StepKind::load && st.load.tile == "b") st.load.cta_bytes = 0;
  CHECK_FALSE(refmodel::replay_program(bad, bad.spec, 21).ok);
  support::Planned bad2 = p;
  for (auto& st : bad2.roles[0].steps)
    for (auto& in : st.mma.instrs) in.b_desc.start_address += 8 * 128;  // 8 rows further into B
  CHECK_FALSE(refmodel::replay_program(bad2, bad2.spec, 21).ok);

  // Refusals: CTA 1 outside the tensor, a pair N of two instructions, block scaling, per_cta in one CTA.
  struct Case {
    std::function<void(json&)> patch;
    const char* rule;
    const char* ptr;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["program"]["ops"][0]["per_cta"] = {192, 0}; }, "LOAD-BOUNDS", "/program/ops/0/per_cta"},
      {[](json& j) {
         j["program"]["globals"]["A"]["shape"] = {256, 128};
         j["program"]["ops"][0]["per_cta"] = {128, 4};  // 4 bf16: 64 bits, not a 16-byte chunk
       },
       "LOAD-ALIGN", "/program/ops/0/per_cta/1"},
      {[](json& j) { j["program"]["ops"][6]["per_cta"] = {200, 0}; }, "STORE-BOUNDS", "/program/ops/6/per_cta"},
      {[](json& j) { j["program"]["ops"][6]["per_cta"] = {64, 0}; }, "PAIR-STORE-OVERLAP", "/program/ops/6/per_cta"},
      {[](json& j) { j["program"]["cta_group"] = 1; }, "PAIR-PER-CTA", "/program/ops/0/per_cta"},
      {[](json& j) {
         auto& P = j["program"];
         P["globals"]["B"]["shape"] = {288, 64};
         P["globals"]["D"]["shape"] = {256, 288};
         P["smem"]["b"]["shape"] = {144, 64};
         P["tmem"]["t"]["columns"] = 512;
         P["tmem"]["acc"]["slice"]["columns"] = {0, 288};
         P["ops"][1]["per_cta"] = {144, 0};
       },
       "OP-MMA-SHAPE", "/program/ops/2/b"},
      {[](json& j) {  // a dense pair with 64 rows per CTA is layout B, not F
         j["program"]["smem"]["a"]["shape"] = {64, 64};
         j["program"]["ops"][0]["per_cta"] = {64, 0};
         j["program"]["tmem"]["acc"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {0, 128}}}}}}, {"layout", "layout_f::16"}}}};
       },
       "OP-MMA-D", "/program/ops/2/d"},
      {[](json& j) {  // layout B is a dense pair's: not the sparse M = 128 (layout C)
         j["program"]["tmem"]["acc"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {0, 64}}}}}}, {"layout", "layout_b"}}}};
         j["program"]["cta_group"] = 1;
         for (auto& o : j["program"]["ops"]) o.erase("per_cta");
       },
       "OP-MMA-D", "/program/ops/2/d"},
  };
  for (const auto& c : cases) {
    json j = json::parse(src);
    c.patch(j);
    Checked r = check(j);
    const std::string rule = c.rule;
    CAPTURE(rule);
    CHECK_MESSAGE(r.has(c.rule, c.ptr), r.all());
  }
  // The sparse M = 128 pair: layout C, layout F's organization in each CTA (§9.7.16.10.5): idesc M
  // = 128, 64 rows per CTA, D's and the metadata's addresses at the view's alignment.
  const support::Planned pc = plan_of(json::parse(support::slurp(support::source_root() + "/specs/prog_pair_sparse_m128_e4m3.json")));
  const plan::Step* mc = first(pc, plan::StepKind::mma);
  REQUIRE(mc);
  REQUIRE(mc->mma.instrs.size() == 2);
  for (const auto& in : mc->mma.instrs) {
    CHECK(in.m == 128);
    CHECK((plan::encoded(in.idesc) >> 24 & 0x1F) == 128u >> 4);
    CHECK((plan::encoded(in.idesc) >> 17 & 0x3F) == 64u >> 3);  // N = 2 x 32 rows of B per CTA
    CHECK(isa::decode_tmem(in.d_taddr).lane == 16u);
    CHECK(isa::decode_tmem(in.meta_taddr).lane == 16u);
  }
  CHECK(refmodel::replay_program(pc, pc.spec, 23).ok);
  // The dense M = 128 pair: layout B (§9.7.16.10.5.2). idesc M = 128, N = 2 x 128 rows of B; D's
  // 256 elements per row in 128 columns, the second half in lanes 64-127, which warps 2 and 3 read.
  const std::string srcb = support::slurp(support::source_root() + "/specs/prog_pair_bf16_m128_layout_b.json");
  const support::Planned pb = plan_of(json::parse(srcb));
  const plan::Step* mb = first(pb, plan::StepKind::mma);
  REQUIRE(mb);
  for (const auto& in : mb->mma.instrs) {
    CHECK((plan::encoded(in.idesc) >> 24 & 0x1F) == 128u >> 4);
    CHECK((plan::encoded(in.idesc) >> 17 & 0x3F) == 256u >> 3);
    CHECK(isa::decode_tmem(in.d_taddr).lane == 0u);
  }
  const plan::Step* lb = first(pb, plan::StepKind::tmem_ld);
  REQUIRE(lb);
  std::set<int> lb_warps;
  for (const auto& f : lb->ld.frags) {
    lb_warps.insert(f.warp);
    CHECK(f.row0 == 32 * (f.warp % 2));
    CHECK(f.elem0 == (f.warp >= 2 ? 128 : 0));
  }
  CHECK(lb_warps == std::set<int>{0, 1, 2, 3});
  CHECK(refmodel::replay_program(pb, pb.spec, 25).ok);
  support::Planned bad3 = pb;  // read the halves swapped: the model sees D's columns out of place
  for (auto& st : bad3.roles[0].steps)
    for (auto* d : {&st.ld, &st.store.src})
      for (auto& f : d->frags) f.elem0 = f.warp >= 2 ? 0 : 128;
  CHECK_FALSE(refmodel::replay_program(bad3, bad3.spec, 25).ok);
  {
    json j = json::parse(srcb);  // tcgen05.st into another layout-B view and back: the halves stay in place
    auto& P = j["program"];
    P["tmem"]["t"]["columns"] = 256;
    P["tmem"]["acc2"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 256}}}}}}, {"layout", "layout_b"}}}};
    P["ops"].insert(P["ops"].begin() + 6, json{{"op", "tmem_store"}, {"regs", "r"}, {"dst", "acc2"}});
    P["ops"].insert(P["ops"].begin() + 7, json{{"op", "tmem_load"}, {"src", "acc2"}, {"regs", "r2"}});
    P["ops"][8]["regs"] = "r2";
    const support::Planned pst = plan_of(j);
    const refmodel::Result rr = refmodel::replay_program(pst, pst.spec, 27);
    std::string errs;
    for (const auto& e : rr.errors) errs += e + "\n";
    CHECK_MESSAGE(rr.ok, errs);
  }
  {
    // A in tensor memory for layout B: each CTA's 64 rows twice, a warpx2::02_13 view
    // (prog_pair_bf16_m128_a_tmem, replayed with every spec); a layout-B A view is none of that.
    const support::Planned pa = plan_of(json::parse(support::slurp(support::source_root() + "/specs/prog_pair_bf16_m128_a_tmem.json")));
    const plan::Step* cpa = first(pa, plan::StepKind::cp);
    REQUIRE(cpa);
    for (const auto& c : cpa->cps) CHECK(c.shape == isa::CpShape::s64x128b_02_13);
    json j = json::parse(srcb);
    auto& P = j["program"];
    P["tmem"]["t"]["columns"] = 256;
    P["tmem"]["a_t"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 144}}}}}}, {"dtype", "bf16"}, {"packing", 2}, {"layout", "layout_b"}}}};
    P["ops"].insert(P["ops"].begin() + 2, json{{"op", "copy"}, {"src", "a"}, {"dst", "a_t"}});
    P["ops"][3]["a"] = "a_t";
    Checked r = check(j);
    CHECK_MESSAGE(r.has("CP-SHAPE", "/program/ops/2/dst"), r.all());
    // The view is the root of both: the mma reading the view the refused copy fills is not
    // checked again (it would only repeat that the view is no warpx2::02_13 view).
    CHECK_MESSAGE(r.d.list().size() == 1, r.all());
    // Copied into the warpx2::02_13 view it needs, then read through a layout-B view of the same
    // cells: the mma's own error.
    P["tmem"]["a_w"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 160}}}}}}, {"dtype", "bf16"}, {"packing", 2}, {"layout", "warpx2::02_13"}}}};
    P["tmem"]["a_t"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 144}}}}}}, {"dtype", "bf16"}, {"packing", 2}, {"layout", "layout_b"}}}};
    P["ops"][2]["dst"] = "a_w";
    Checked r2 = check(j);
    CHECK_MESSAGE(r2.has("OP-MMA-A-TMEM", "/program/ops/3/a"), r2.all());
    CHECK_MESSAGE(r2.d.list().size() == 1, r2.all());
  }
  // Block-scaled pairs at M = 256: A's factors per CTA, B's for all of N in each CTA; the model
  // replays it. At the pair's M = 128 (layout B): refused with the reason, at the mma's "scale".
  const std::string srcs = support::slurp(support::source_root() + "/specs/prog_pair_mxf8f6f4_m256.json");
  const support::Planned ps = plan_of(json::parse(srcs));
  for (const auto& in : first(ps, plan::StepKind::mma)->mma.instrs)
    CHECK((plan::encoded(in.idesc) >> 27 & 3) == 256u >> 7);  // Table 44: block-scaled M >> 7 in bits 27-28
  CHECK(refmodel::replay_program(ps, ps.spec, 29).ok);
  json s = json::parse(srcs);
  auto& S = s["program"];
  S["smem"]["a"]["shape"] = {64, 128};
  S["tmem"]["acc"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {0, 64}}}}}}, {"layout", "layout_b"}}}};
  Checked rs = check(s);
  CHECK_MESSAGE(rs.has("PAIR-MMA", "/program/ops/6/scale"), rs.all());
  // cta_group is 1 or 2.
  json three = json::parse(src);
  three["program"]["cta_group"] = 3;
  Checked r3 = check(three);
  CHECK_FALSE(r3.spec);
  CHECK(r3.all().find("/program/cta_group") != std::string::npos);
}
}

TEST_SUITE("program") {
TEST_CASE("TMA loads: boxes, the tensor map, the mbarrier, alignment, and the proxy order after plain stores") {
  // The example's A (128 x 64 bf16, 128-byte swizzle) by TMA: one box of 128 bytes x 128 rows.
  json j = base();
  j["program"]["ops"][0]["via"] = "tma";
  {
    const support::Planned p = plan_of(j);
    const plan::Step* ld = first(p, plan::StepKind::load);
    REQUIRE(ld);
    REQUIRE(ld->load.tma);
    CHECK(ld->load.barrier == "ptxgen_load0");
    CHECK(ld->load.map.param == "tmap_0");
    CHECK(ld->load.map.unit == 1);
    CHECK(ld->load.map.dim_inner == 128);
    CHECK(ld->load.map.dim_outer == 128);
    CHECK(ld->load.map.stride_bytes == 128);
    CHECK(ld->load.map.box_inner == 128);
    CHECK(ld->load.map.box_outer == 128);
    CHECK(ld->load.map.swizzle == isa::Swizzle::b128);
    REQUIRE(ld->load.boxes.size() == 1);
    const auto* a = &p.smem[0];
    for (const auto& t : p.smem)
      if (t.name == "a") a = &t;
    CHECK(ld->load.boxes[0].smem == a->offset);
    CHECK(ld->load.boxes[0].c0 == 0);
    CHECK(ld->load.boxes[0].c1 == 0);
    // B stays a plain load; one tensor map, after the three globals' addresses.
    const plan::Step* ld_b = first(p, plan::StepKind::load, 1);
    REQUIRE(ld_b);
    CHECK_FALSE(ld_b->load.tma);
    REQUIRE(p.tensor_maps.size() == 1);
    const json m = json::parse(plan::manifest(p));
    REQUIRE(m["params"].size() == 4);
    CHECK(m["params"][3]["name"] == "tmap_0");
    CHECK(m["params"][3]["kind"] == "tensor_map");
    CHECK(m["tensor_maps"][0]["data_type"] == "CU_TENSOR_MAP_DATA_TYPE_UINT8");
    CHECK(m["tensor_maps"][0]["global_dims"] == json::array({128, 128}));
    CHECK(m["tensor_maps"][0]["box_dims"] == json::array({128, 128}));
    CHECK(m["tensor_maps"][0]["swizzle"] == "CU_TENSOR_MAP_SWIZZLE_128B");
    // `plan --json` carries the boxes and the arrangement they fill (tools/h200-tma.py reads both).
    const json pj = json::parse(emit::plan_json(p));
    const json& jl = pj["roles"][0]["steps"][0]["load"];
    CHECK(jl["tma"]["tensor_map"] == "tmap_0");
    CHECK(jl["tma"]["boxes"] == json::array({{{"smem", a->offset}, {"coords", {0, 0}}}}));
    CHECK(jl["arrangement"]["rows"] == 128);
    CHECK(jl["arrangement"]["row_bytes"] == 128);
    CHECK(jl["arrangement"]["box_bytes"] == 128);
    CHECK(jl["arrangement"]["swizzle"] == "128B");
    CHECK(jl["arrangement"]["tile_offset"] == a->offset);
    const std::string ptx = emit::ptx(p);
    CHECK(ptx.find(".param .align 64 .b8 tmap_0[128]") != std::string::npos);
    CHECK(ptx.find("mbarrier.arrive.expect_tx.shared::cta.b64") != std::string::npos);
    CHECK(ptx.find(", 16384;") != std::string::npos);  // the tile's bytes
    CHECK(ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") != std::string::npos);
    CHECK(refmodel::replay_program(p, p.spec, 5).ok);
  }
  // A tile taller than a box: the largest height of at most 256 rows that divides 264 and keeps
  // every box 128-byte aligned (a multiple of 8 rows of 16 bytes) is 88.
  {
    json t = base();
    auto& g = t["program"];
    g["globals"]["X"] = {{"dtype", "bf16"}, {"shape", {264, 8}}};
    g["smem"]["x"] = {{"dtype", "bf16"}, {"shape", {264, 8}}, {"swizzle", 0}};
    g["ops"].insert(g["ops"].begin(), json{{"op", "load"}, {"src", "X"}, {"dst", "x"}, {"via", "tma"}});
    const support::Planned p = plan_of(t);
    const plan::Step* ld = first(p, plan::StepKind::load);
    REQUIRE(ld);
    CHECK(ld->load.map.box_outer == 88);
    CHECK(ld->load.map.box_inner == 16);
    REQUIRE(ld->load.boxes.size() == 3);
    for (int i = 0; i < 3; ++i) {
      CHECK(ld->load.boxes[i].c1 == 88 * i);
      CHECK(ld->load.boxes[i].smem - ld->load.boxes[0].smem == 88u * 16u * static_cast<uint32_t>(i));
    }
    // No swizzle asks only 16-byte alignment of a tile, TMA 128: the tile and the run-time base.
    for (const auto& s : p.smem)
      if (s.name == "x") {
        CHECK(s.align == 128);
        CHECK(s.offset % 128 == 0);
      }
    CHECK(p.smem_align >= 128);
    g["smem"]["x"]["align"] = 16;
    Checked r = check(t);
    CHECK_MESSAGE(r.has("SMEM-ALIGN", "/program/smem/x/align"), r.all());
  }
  // Plain stores to shared memory, then a TMA load into the same tile: a sync with
  // fence.proxy.async between them (§9.7.16.6.5).
  {
    json t = base();
    t["program"]["ops"].insert(t["program"]["ops"].begin() + 1, json{{"op", "load"}, {"src", "A"}, {"dst", "a"}, {"via", "tma"}});
    const support::Planned p = plan_of(t);
    REQUIRE(p.roles[0].steps.size() > 2);
    CHECK(p.roles[0].steps[0].kind == plan::StepKind::load);
    CHECK(p.roles[0].steps[1].kind == plan::StepKind::sync);
    CHECK(p.roles[0].steps[1].proxy_fence);
    CHECK(p.roles[0].steps[2].load.tma);
    const std::string ptx = emit::ptx(p);
    const size_t fence = ptx.find("fence.proxy.async");
    REQUIRE(fence != std::string::npos);
    CHECK(fence < ptx.find("cp.async.bulk.tensor"));
  }
  // The spec: "via" is ld or tma on a load, st or tma on a store (docs/spec.md, "TMA stores"),
  // where tma names its staging tile ("stage"), and round-trips.
  {
    json t = base();
    t["program"]["ops"][0]["via"] = "bulk";
    CHECK(check(t).has("SPEC-ENUM", "/program/ops/0/via"));
    t = base();
    t["program"]["ops"][7]["via"] = "ld";
    CHECK(check(t).has("SPEC-ENUM", "/program/ops/7/via"));
    t["program"]["ops"][7]["via"] = "tma";
    CHECK(check(t).has("SPEC-MISSING-KEY", "/program/ops/7/stage"));
    Checked c = check(j);
    REQUIRE(c.spec);
    const json back = json::parse(spec::to_json(*c.spec));
    CHECK(back["program"]["ops"][0]["via"] == "tma");
    CHECK_FALSE(back["program"]["ops"][1].contains("via"));
    const Checked stored = check(json::parse(support::slurp(support::source_root() + "/specs/prog_pipelined_epilogue_bf16_tma.json")));
    REQUIRE(stored.spec);
    const json ops = json::parse(spec::to_json(*stored.spec))["program"]["ops"];
    CHECK(ops[5]["via"] == "tma");
    CHECK(ops[5]["stage"] == "d_stage");
    CHECK_FALSE(ops[7].contains("via"));
  }
}

TEST_CASE("names beginning ptxgen_ are the planner's: a user's barrier or register set there is refused") {
  json j = base();
  j["program"]["ops"][4]["barrier"] = "ptxgen_done";
  j["program"]["ops"][5]["barrier"] = "ptxgen_done";
  j["program"]["ops"][6]["regs"] = "ptxgen_st0";
  j["program"]["ops"][7]["regs"] = "ptxgen_st0";
  Checked r = check(j);
  CHECK_FALSE(r.spec);
  CHECK_MESSAGE(r.has("PROGRAM-NAME", "/program/ops/4/barrier"), r.all());
  CHECK_MESSAGE(r.has("PROGRAM-NAME", "/program/ops/6/regs"), r.all());
  CHECK(r.all().find("ptxgen keeps") != std::string::npos);
}
}

// Packed half-precision arithmetic (docs/spec.md, "Packed half-precision arithmetic"): the plan
// names each packed step's instruction, the convert pairs a thread's registers 2j and 2j + 1 (the
// high half first in cvt's operands, §9.7.9.21), a constant is a register of two 16-bit halves,
// and the pairs are stored as they are, one st.global.b32 per register (no second conversion).
TEST_SUITE("program") {
TEST_CASE("packed pairs: the plan names the packed instructions; the golden converts once and stores the pairs whole") {
  const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/prog_packed_bf16x2.json"));
  const support::Planned p = support::plan_of(s);
  const std::string text = emit::plan_text(p);
  for (const char* want : {"cvt.rn.bf16x2.f32 h, x", "fma.rn.bf16x2 y, h, 1.5, -0.75", "max.bf16x2 y, y, 0", "ex2.approx.ftz.bf16x2 e, n",
                           "tanh.approx.bf16x2 t, h", "cvt.rn.f16x2.f32 f, x", "ex2.approx.f16x2 u, u", "in packed bf16x2 pairs (§9.7.4.4)",
                           "to packed f16x2 pairs (cvt.rn.f16x2.f32, §9.7.9.21)"}) {
    CAPTURE(want);
    CHECK(text.find(want) != std::string::npos);
  }
  const std::string ptx = support::slurp(support::source_root() + "/golden/prog_packed_bf16x2.ptx");
  const auto count = support::occurrences;
  // 4 warps, 32 f32 registers each: 16 pairs per convert; D's two stores and F's one, a b32 per pair.
  CHECK(count(ptx, "\tcvt.rn.bf16x2.f32 %r") == 16);
  CHECK(count(ptx, "\tcvt.rn.f16x2.f32 %r") == 16);
  CHECK(count(ptx, "st.global.b32") == 3 * 16 * 4);
  CHECK(count(ptx, "st.global.b16") == 0);
  // The constants as pairs of halves: bf16 1.5 (0x3fc0) and -0.75 (0xbf40), f16 -64 (0xd400).
  for (const char* pair : {", 0x3fc03fc0;", ", 0xbf40bf40;", ", 0xd400d400;"}) {
    CAPTURE(pair);
    CHECK(count(ptx, pair) == 1);
  }
}
}
