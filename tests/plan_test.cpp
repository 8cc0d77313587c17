// Planner coverage: instruction groups tile M x N x K exactly once, tensor-memory regions do not
// overlap and fit the allocation, every descriptor decodes to what the plan says, and the
// reference model (written from the ISA, not from our encoders) computes the right GEMM.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ptxgen/isa.hpp"
#include "refmodel.hpp"
#include "support.hpp"

using namespace ptxgen;

namespace {

const plan::RolePlan* role(const plan::Plan& p, const std::string& name) {
  for (const auto& r : p.roles)
    if (r.ir().name == name) return &r;
  return nullptr;
}

// The steps of a role's K loop (the role's first loop: a persistent MMA issuer first waits for its
// accumulator buffer).
const std::vector<plan::Step>& loop_body(const plan::Plan& p, const std::string& name) {
  const plan::RolePlan* r = role(p, name);
  REQUIRE(r);
  for (const auto& st : r->steps)
    if (st.kind == plan::StepKind::loop) return st.body;
  FAIL("role " << name << " has no loop");
  return r->steps[0].body;
}

// The role that issues the MMAs: tcgen05's "mma", wgmma's "consumer" (the first of the ping-pong
// consumers, which issue the same instructions).
std::string issuer(const plan::Plan& p) {
  if (p.ir().engine != ir::Engine::wgmma) return "mma";
  return role(p, "consumer") ? "consumer" : "consumer0";
}

std::vector<const plan::MmaInstr*> mma_instrs(const plan::Plan& p) {
  std::vector<const plan::MmaInstr*> out;
  for (const auto& st : loop_body(p, issuer(p)))
    for (const auto& in : st.mma.instrs) out.push_back(&in);
  return out;
}

void check_plan_invariants(const plan::Plan& p, const spec::Gemm& g) {
  const bool wgmma = p.ir().engine == ir::Engine::wgmma;
  const auto format = wgmma ? isa::DescFormat::sm90 : isa::DescFormat::sm100;
  // Every mma op: each (M group, N group) receives its K steps 0..k_steps-1 exactly once, in order.
  for (const auto& st : loop_body(p, issuer(p))) {
    if (st.kind != plan::StepKind::mma) continue;
    std::map<std::pair<int, int>, std::vector<int>> ks;
    for (const auto& m : st.mma.instrs) ks[{m.mi, m.ni}].push_back(m.ki);
    REQUIRE(!ks.empty());
    const size_t steps = ks.begin()->second.size();
    CHECK(steps * static_cast<size_t>(st.mma.instrs[0].k) == static_cast<size_t>(g.tile.k));
    for (const auto& [key, v] : ks) {
      REQUIRE(v.size() == steps);
      for (size_t i = 0; i < steps; ++i) CHECK(v[i] == static_cast<int>(i));
    }
    // Block-wise f32 factors (docs/spec.md): every K block's wgmmas start fresh partial sums (the
    // first K step of each group overwrites in every iteration); else only iteration 0 overwrites.
    const bool blockwise = g.scale && g.scale->blockwise();
    CHECK(st.mma.first_iteration_overwrites == !blockwise);
    for (const auto& m : st.mma.instrs) CHECK(m.enable_input_d == (m.ki > 0));
  }
  for (const plan::MmaInstr* m : mma_instrs(p)) {
    for (const isa::SmemDesc* sd : {&m->a_desc, &m->b_desc}) {
      if (sd == &m->a_desc && (m->a_tmem || m->a_tile.empty())) continue;
      auto back = isa::decode_smem_desc(plan::encoded(*sd), format);
      CHECK(back.problems.empty());
      CHECK(back.desc.start_address == sd->start_address);
      CHECK(back.desc.base_offset == 0);
      CHECK(back.desc.start_address < p.smem_bytes);
    }
    CHECK(m->enable_input_d == (m->ki > 0));
  }
  // TMA: the loads of one stage fill each operand tile exactly, and the stage's barrier expects
  // their bytes (a pair's CTA 0 both CTAs').
  uint32_t armed = 0, loaded = 0;
  std::map<std::string, uint32_t> loaded_of;  // bytes loaded into each tile per stage
  for (const auto& st : loop_body(p, "producer")) {
    if (st.kind == plan::StepKind::expect_tx) armed += st.bar.tx_bytes;
    if (st.kind == plan::StepKind::load) loaded += st.load.chunks * 16, loaded_of[st.load.tile] += st.load.chunks * 16;
  }
  // The TMA epilogue's staging tile is written by the consumers, never loaded.
  for (const auto& t : p.smem) CHECK((loaded_of.count(t.name) || t.name.rfind("d_stage", 0) == 0));
  CHECK(armed == loaded * static_cast<uint32_t>(p.ir().cta_group));
  // Each loaded tile is filled whole, but for layout F's slabs (M = 64; a pair's sparse M = 128, layout C), whose
  // lines at an alignment no M group takes stay unloaded: there each 64-row placement loads whole 16-row boxes,
  // every row of the CTA's tile at least once, and no more lines than the slabs hold.
  // Rows of each CTA per instruction, from the planned MMAs: 64 is layout F (one CTA) or C (a sparse pair); a dense
  // pair's 64 (layout B) loads whole tiles.
  const bool half_lanes = !wgmma && !mma_instrs(p).empty() && mma_instrs(p)[0]->m / p.ir().cta_group == 64 && (p.ir().cta_group == 1 || g.sparse);
  for (const auto& t : p.smem) {
    if (!loaded_of.count(t.name)) continue;
    CAPTURE(t.name);
    const bool slab = half_lanes && (t.name == "meta_s" || (t.name == "a" && g.a_source == spec::ASource::tmem));
    if (!slab) {
      CHECK(loaded_of[t.name] == t.layout.bytes);
      continue;
    }
    const uint32_t line = t.layout.bytes / static_cast<uint32_t>(t.layout.mn);  // bytes of one of its lines
    const uint32_t placement = 64 * line;
    CHECK(loaded_of[t.name] % placement == 0);
    CHECK(loaded_of[t.name] >= static_cast<uint32_t>(g.tile.m / g.cta_group) * line);
    CHECK(loaded_of[t.name] <= t.layout.bytes);
  }
  if (wgmma) {
    for (const plan::MmaInstr* m : mma_instrs(p)) {
      CHECK(m->m == 64);
      CHECK(isa::wgmma_legal_n(*isa::wgmma_kind(g.a.dtype, g.b.dtype), m->n));
    }
    // One consumer warpgroup per 64 rows, or two ping-pong ones; a producer warp, or warpgroup with budgets.
    const int consumers = g.consumers == spec::Consumers::pingpong ? 2 : static_cast<int>(g.tile.m / 64);
    CHECK(p.ir().threads == 128 * consumers + (g.registers ? 128 : 32));
    if (g.consumers == spec::Consumers::pingpong) {
      // Each ping-pong consumer's mma covers the whole tile: tile.m / 64 M groups of every N group.
      std::set<int> mis;
      for (const plan::MmaInstr* m : mma_instrs(p)) mis.insert(m->mi);
      CHECK(static_cast<int64_t>(mis.size()) == g.tile.m / 64);
      REQUIRE(role(p, "consumer1"));
      CHECK(role(p, "consumer0")->ir().turn == 0);
      CHECK(role(p, "consumer1")->ir().turn == 1);
      CHECK(role(p, "consumer1")->ir().turns == 2);
    }
    CHECK(p.allocs.empty());
    return;
  }
  // Each MMA: the instruction descriptor decodes to its shape, and is legal per Table 39.
  const isa::Kind kind = g.scale ? *isa::gemm_scaled_kind(g.a.dtype, g.b.dtype, g.scale->dtype, g.scale->vec, g.scale->kind)
                                 : *isa::unscaled_kind(g.a.dtype, g.b.dtype);
  for (const plan::MmaInstr* m : mma_instrs(p)) {
    const isa::InstrDesc d = isa::decode_idesc(plan::encoded(m->idesc), kind);
    CHECK(static_cast<int>(d.m) == m->m);
    CHECK(static_cast<int>(d.n) == m->n);
    CHECK(isa::legal_m(kind, p.ir().cta_group, m->m));
    CHECK(isa::legal_n(kind, p.ir().cta_group, g.b.major == isa::Major::mn && isa::smem_bits(kind, g.b.dtype) == 8, m->n));
    CHECK(d.transpose_a == (g.a.major == isa::Major::mn));
    CHECK(d.transpose_b == (g.b.major == isa::Major::mn));
  }
  // Tensor memory: one allocation; the accumulator pieces and A pairwise disjoint (lanes x
  // columns) and inside it.
  REQUIRE(p.allocs.size() == 1);
  const uint32_t cols = p.allocs[0].columns;
  CHECK(cols >= 32);
  CHECK(cols <= 512);
  CHECK((cols & (cols - 1)) == 0);
  std::vector<const ir::ResolvedView*> regions;
  for (const auto& [n, v] : p.views)
    if ((n[0] == 'd' && n.find('_') == std::string::npos && n != "d_all") || n == "a_tmem" ||
        (n.rfind("a_slab", 0) == 0 && n.find("_f") != std::string::npos) || n == "sfa" || n == "sfb" || n == "meta")
      regions.push_back(&v);
  // A ring of block-scale factor (or metadata) buffers spans every stage's copy.
  auto end_of = [](const ir::ResolvedView& v) { return v.column + static_cast<uint32_t>(v.stages - 1) * v.stage_columns + v.columns; };
  auto lanes_of = [](const ir::ResolvedView& v) {
    std::set<uint32_t> l;
    for (int r = 0; r < v.rows; ++r)
      for (uint32_t x : v.lanes_of_row(r % v.rows_per_block())) l.insert(x);
    return l;
  };
  for (size_t i = 0; i < regions.size(); ++i) {
    CHECK(end_of(*regions[i]) <= cols);
    for (size_t j = i + 1; j < regions.size(); ++j) {
      const auto& a = *regions[i];
      const auto& b = *regions[j];
      const bool col = a.column < end_of(b) && b.column < end_of(a);
      if (!col) continue;
      const auto la = lanes_of(a), lb = lanes_of(b);
      bool shared = false;
      for (uint32_t x : la) shared |= lb.count(x) > 0;
      CHECK_MESSAGE(!shared, "tensor-memory regions " << a.describe() << " and " << b.describe() << " overlap");
    }
  }
  // Shared memory: the tiles' rings disjoint and aligned to their swizzle pattern (Table 41); a
  // tile the planner laid over a ring (the TMA epilogue's staging ring, used once the ring is no
  // longer read) starts with that ring and ends before the other tiles' memory does.
  uint32_t end = 0;
  for (const auto& a : p.smem)
    if (a.overlay.empty()) end = std::max(end, a.offset + a.stage_bytes * static_cast<uint32_t>(a.stages));
  for (size_t i = 0; i < p.smem.size(); ++i) {
    const auto& a = p.smem[i];
    CHECK(a.offset % static_cast<uint32_t>(std::max(16, isa::pattern_bytes(a.layout.swizzle))) == 0);
    CHECK(a.stage_bytes % a.align == 0);
    if (!a.overlay.empty()) {
      const auto over = std::find_if(p.smem.begin(), p.smem.end(), [&](const plan::SmemPlacement& x) { return x.name == a.overlay; });
      REQUIRE(over != p.smem.end());
      CHECK(a.offset == over->offset);
      CHECK(a.offset + a.stage_bytes * static_cast<uint32_t>(a.stages) <= end);
      continue;
    }
    for (size_t j = 0; j < i; ++j) {
      const auto& b = p.smem[j];
      if (!b.overlay.empty()) continue;
      CHECK((a.offset >= b.offset + b.stage_bytes * static_cast<uint32_t>(b.stages) || b.offset >= a.offset + a.stage_bytes * static_cast<uint32_t>(a.stages)));
    }
  }
}

refmodel::Result replayed(const support::Planned& p, unsigned seed) { return refmodel::replay(p, *p.spec.gemm, seed); }

}  // namespace

TEST_SUITE("plan") {
TEST_CASE("every shipped spec: plan invariants and the reference model") {
  int n = 0;
  for (const auto& f : support::spec_files()) {
    CAPTURE(f);
    const spec::Spec s = support::checked_spec(support::slurp(f));
    if (!s.gemm) continue;  // program specs: tests/program_test.cpp
    const support::Planned p = support::plan_of(s);
    check_plan_invariants(p, *s.gemm);
    // The reference model replays dense, unscaled MMAs into a plain product's tile; block-scaled
    // kernels, those of sparse A and gated epilogues (swiglu, geglu: D is no plain product) run whole
    // in the simulator against a float64 (scaled) product or epilogue (suite sim_gemm).
    if (s.gemm->scale || s.gemm->sparse || s.gemm->glu) continue;
    for (unsigned seed : {1u, 2u}) {
      const refmodel::Result r = replayed(p, seed);
      std::string errs;
      for (const auto& e : r.errors) errs += e + "\n";
      CHECK_MESSAGE(r.ok, errs);
      CHECK(r.elements_checked == s.gemm->tile.m * s.gemm->tile.n);
    }
    ++n;
  }
  CHECK(n >= 30);
}

TEST_CASE("several M tiles with A in tensor memory: each M group reads its own A columns") {
  const std::string text = R"({"ptxgen":1,"name":"k","target":"sm_100a","gemm":{"m":1024,"n":1024,"k":1024,
    "a":{"dtype":"bf16","major":"k"},"b":{"dtype":"bf16","major":"k"},"d":{"dtype":"bf16"},"accumulator":"f32",
    "tile":{"m":384,"n":64,"k":64},"stages":2,"a_source":"tmem"}})";
  const support::Planned p = support::plan_of(support::checked_spec(text));
  // D: 3 x 64 columns; A: 3 x (64 x 16 / 32 = 32) columns after them.
  std::set<uint32_t> a_cols;
  for (const plan::MmaInstr* m : mma_instrs(p)) {
    REQUIRE(m->a_tmem);
    const isa::TmemAddr a = isa::decode_tmem(m->a_taddr);
    CHECK(a.lane == 0);
    CHECK(a.column == 192u + 32u * static_cast<uint32_t>(m->mi) + 8u * static_cast<uint32_t>(m->ki));
    a_cols.insert(a.column);
    const isa::TmemAddr d = isa::decode_tmem(m->d_taddr);
    CHECK(d.column == 64u * static_cast<uint32_t>(m->mi));
  }
  CHECK(a_cols.size() == 12);
  size_t copies = 0;
  for (const auto& st : loop_body(p, "mma")) copies += st.cps.size();
  CHECK(copies == 12);  // 3 M groups x 4 chunks of 128 rows x 256 bits
  CHECK(p.allocs.at(0).columns == 512);
  CHECK(replayed(p, 3).ok);
}

TEST_CASE("M=64 groups pair up in layout F's two lane alignments; a group left over halves its N there") {
  auto plan_m = [](int m, int n, const char* a_source) {
    const std::string text = R"({"ptxgen":1,"name":"k","target":"sm_100a","gemm":{"m":1024,"n":1024,"k":1024,
      "a":{"dtype":"bf16","major":"k"},"b":{"dtype":"bf16","major":"k"},"d":{"dtype":"bf16"},"accumulator":"f32",
      "tile":{"m":)" + std::to_string(m) + R"(,"n":)" + std::to_string(n) + R"(,"k":64},"stages":2,"a_source":")" + a_source + R"("}})";
    return support::plan_of(support::checked_spec(text));
  };
  for (const char* src : {"smem", "tmem"}) {
    CAPTURE(src);
    // 192 rows: groups 0 and 1 share columns 0-127 at lanes 0 and 16 of each quarter; group 2 splits
    // its N into halves at columns 128-191, lane 0 for N 0-63 and lane 16 for N 64-127.
    const support::Planned p = plan_m(192, 128, src);
    std::vector<std::pair<uint32_t, uint32_t>> placed;  // (lane, column) of each mma op's D, in op order
    int ops = 0;
    for (const auto& st : loop_body(p, "mma")) {
      if (st.kind != plan::StepKind::mma) continue;
      ++ops;
      const plan::MmaInstr& m = st.mma.instrs.front();
      CHECK(m.m == 64);
      CHECK(m.n == (ops <= 2 ? 128 : 64));
      const isa::TmemAddr d = isa::decode_tmem(m.d_taddr);
      placed.push_back({d.lane, d.column});
    }
    CHECK(placed == std::vector<std::pair<uint32_t, uint32_t>>{{0, 0}, {16, 0}, {0, 128}, {16, 128}});
    CHECK(replayed(p, 5).ok);
    // One M = 64 group of N = 256 in 128 columns (a peer's planner's count), N = 512 in 256.
    CHECK(plan_m(64, 256, src).allocs.at(0).columns == 128u * (std::string(src) == "tmem" ? 2u : 1u));
    CHECK(plan_m(64, 512, "smem").allocs.at(0).columns == 256);
    CHECK(replayed(plan_m(64, 256, src), 6).ok);
  }
}

TEST_CASE("A in tensor memory at a pair's M = 128 (layout B): each CTA's rows at lanes r and 64 + r") {
  const std::string text = R"({"ptxgen":1,"name":"k","target":"sm_100a","gemm":{"m":1024,"n":1024,"k":1024,
    "a":{"dtype":"bf16","major":"k"},"b":{"dtype":"bf16","major":"k"},"d":{"dtype":"bf16"},"accumulator":"f32",
    "tile":{"m":128,"n":128,"k":64},"stages":2,"a_source":"tmem","cta_group":2,"cluster":[2,1,1]}})";
  const support::Planned p = support::plan_of(support::checked_spec(text));
  bool warpx2 = false;
  for (const auto& st : loop_body(p, "mma"))
    for (const auto& c : st.cps) warpx2 |= c.shape == isa::CpShape::s64x128b_02_13;
  CHECK(warpx2);
  CHECK(replayed(p, 9).ok);
}
}

// The whole sweep runs on the plain build (tools/run-tests), every 7th combination under the
// sanitizers (support::kSweepStride).
TEST_SUITE("sweep") {
TEST_CASE("a sweep of kinds, majors, swizzles, tiles and CTA groups replays correctly") {
  // Every combination the rules accept must plan and replay; the ones they refuse are counted.
  struct T {
    const char* a;
    const char* b;
    const char* acc;
  };
  const T types[] = {{"bf16", "bf16", "f32"}, {"f16", "f16", "f16"}, {"tf32", "tf32", "f32"},
                     {"e4m3", "e5m2", "f32"}, {"e2m1", "e3m2", "f32"}, {"s8", "u8", "s32"}};
  const char* majors[][2] = {{"k", "k"}, {"m", "k"}, {"k", "n"}, {"m", "n"}};
  const nlohmann::json swizzles[] = {0, 32, 64, 128, "128_base32b"};
  const int tiles[][3] = {{64, 64, 64}, {128, 96, 128}, {256, 128, 64}, {128, 264, 32}, {192, 48, 128}};
  // Each spec in turn one CTA per tile or persistent, and with the direct or the TMA epilogue
  // (those are also emitted: the tile loops, the accumulator ring and the staging ring).
  int planned = 0, refused = 0, variant = 0, combination = 0;
  for (const auto& t : types)
    for (const auto& mj : majors)
      for (const auto& sw : swizzles)
        for (const auto& tl : tiles)
          for (int cta : {1, 2})
            for (const char* src : {"smem", "tmem", "wgmma"}) {
              if (std::string(src) == "wgmma" && cta == 2) continue;
              if (combination++ % support::kSweepStride != 0) continue;
              nlohmann::json j = nlohmann::json::parse(rules::example_base());
              auto& g = j["gemm"];
              g["a"] = {{"dtype", t.a}, {"major", mj[0]}};
              g["b"] = {{"dtype", t.b}, {"major", mj[1]}};
              g["accumulator"] = t.acc;
              g["d"] = {{"dtype", t.acc}};
              g["tile"] = {{"m", tl[0] * cta}, {"n", tl[1]}, {"k", tl[2]}};
              g["swizzle"] = {{"a", sw}, {"b", sw}};
              g["cta_group"] = cta;
              if (std::string(src) == "wgmma") j["target"] = "sm_90a";
              else g["a_source"] = src;
              g["stages"] = 1;
              const bool persistent = variant % 2 == 1, tma = variant % 4 >= 2;
              ++variant;
              if (persistent) {
                g["schedule"] = "persistent";
                g["cluster"] = {cta, 1, 1};
              }
              if (tma) g["epilogue"] = "tma";
              Diagnostics d;
              auto c = rules::parse_and_check(j.dump(), d);
              if (!c.ok) {
                ++refused;
                continue;
              }
              CAPTURE(j.dump());
              const support::Planned p = support::plan_of(*c.parsed.spec);
              check_plan_invariants(p, *c.parsed.spec->gemm);
              const refmodel::Result r = replayed(p, 7);
              std::string errs;
              for (const auto& e : r.errors) errs += e + "\n";
              REQUIRE_MESSAGE(r.ok, errs);
              if (persistent || tma) CHECK(!emit::ptx(p).empty());
              ++planned;
            }
  MESSAGE("sweep: " << planned << " specs planned and replayed, " << refused << " refused by rules");
  CHECK(planned > 400 / support::kSweepStride);
}
}

TEST_SUITE("plan") {
TEST_CASE("N groups of one K step and M group share A through the collector buffer: fill, use, lastuse") {
  const std::string text = R"({"ptxgen":1,"name":"k","target":"sm_100a","gemm":{"m":1024,"n":1024,"k":1024,
    "a":{"dtype":"bf16","major":"k"},"b":{"dtype":"bf16","major":"k"},"d":{"dtype":"bf16"},"accumulator":"f32",
    "tile":{"m":128,"n":264,"k":64},"stages":2}})";
  const support::Planned p = support::plan_of(support::checked_spec(text));
  std::vector<plan::Collector> seen;
  for (const plan::MmaInstr* m : mma_instrs(p)) seen.push_back(m->collector);
  REQUIRE(seen.size() == 8);  // 4 K steps x N groups 256 + 8
  for (size_t i = 0; i < seen.size(); ++i)
    CHECK(seen[i] == (i % 2 == 0 ? plan::Collector::fill : plan::Collector::lastuse));
  // One N group: no qualifier (the default .collector::a::discard).
  const std::string one = R"({"ptxgen":1,"name":"k","target":"sm_100a","gemm":{"m":1024,"n":1024,"k":1024,
    "a":{"dtype":"bf16","major":"k"},"b":{"dtype":"bf16","major":"k"},"d":{"dtype":"bf16"},"accumulator":"f32",
    "tile":{"m":128,"n":256,"k":64},"stages":2}})";
  const support::Planned p1 = support::plan_of(support::checked_spec(one));
  for (const plan::MmaInstr* m : mma_instrs(p1)) CHECK(m->collector == plan::Collector::discard);
  // The emitter spells each from the table: the PTX carries the qualifiers in that order.
  const std::string ptx = emit::ptx(p);
  const auto fill = ptx.find("tcgen05.mma.cta_group::1.kind::f16.collector::a::fill [");
  REQUIRE(fill != std::string::npos);
  CHECK(ptx.find("tcgen05.mma.cta_group::1.kind::f16.collector::a::lastuse [", fill) != std::string::npos);
}
}

// A persistent wgmma kernel (gemm.schedule): both roles walk the CTA's tiles, their ring stages and
// phases set up once before the first tile and never again, and the consumers release the last
// stage of each tile after its final wgmma group completes; the data-parallel kernel has none of it.
TEST_SUITE("plan") {
TEST_CASE("persistent schedule: one tile loop per role, rings carried across tiles, the last stage released") {
  const auto count = support::occurrences;
  const std::string spec = support::slurp(support::source_root() + "/specs/gemm_sm90_bf16_128x256x64.json");
  auto doc = nlohmann::json::parse(spec);
  const std::string dp = emit::ptx(support::plan_of(support::checked_spec(doc.dump())));
  doc["gemm"]["schedule"] = "persistent";
  const support::Planned pp = support::plan_of(support::checked_spec(doc.dump()));
  CHECK(pp.ir().grid.persistent);
  CHECK(pp.launch.x == 16 * 32);  // at most one CTA per 128 x 256 tile of 4096 x 4096 (1-D)
  CHECK(pp.launch.y == 1);
  for (const auto& r : pp.roles) CHECK(r.ir().persistent);
  const std::string pers = emit::ptx(pp);
  CHECK(count(pers, "tile loop: the tiles of this CTA") == 2);
  CHECK(count(pers, "stage of a ring of 4, kept from tile to tile") == 2);
  CHECK(count(pers, "// stage of a ring of 4\n") == 0);  // no K loop starts its ring afresh
  CHECK(count(pers, "release the last K block's stage") == 1);
  CHECK(count(dp, "tile loop") == 0);
  CHECK(count(dp, "// stage of a ring of 4\n") == 2);
  CHECK(count(dp, "release the last K block's stage") == 0);
  // One stage (or A in registers): each K block's stage is released in its own iteration, so there
  // is no last one to release.
  doc["gemm"]["stages"] = 1;
  CHECK(count(emit::ptx(support::plan_of(support::checked_spec(doc.dump()))), "release the last K block's stage") == 0);
}
}

// The TMA epilogue's staging tile lies over the ring where the ring is large enough (after a
// barrier of every consumer), and has its own memory where it is not or the CTA is persistent.
TEST_SUITE("plan") {
TEST_CASE("TMA epilogue: the staging tile over the ring when it fits, its own memory otherwise") {
  auto doc = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/gemm_sm90_bf16_128x256x64.json"));
  doc["gemm"]["epilogue"] = "tma";
  struct Case {
    int stages;
    const char* schedule;
    bool residual;
    bool over;
  };
  // A bf16 D of 256 columns goes through two subtile buffers of 64 columns (128 x 128 x 2 bytes =
  // 32 KB), which fit over even one stage of the ring (a 16 KB + b 32 KB); with a residual (read
  // element by element: st.shared, ir::d_staging) the whole 128 x 256 tile (64 KB) does not.
  for (const Case& c : {Case{4, "data_parallel", false, true}, Case{1, "data_parallel", false, true}, Case{1, "data_parallel", true, false},
                        Case{3, "persistent", false, false}}) {
    CAPTURE(c.stages);
    CAPTURE(c.residual);
    doc["gemm"]["stages"] = c.stages;
    doc["gemm"]["schedule"] = c.schedule;
    if (c.residual) doc["gemm"]["residual"] = {{"dtype", "bf16"}};
    else doc["gemm"].erase("residual");
    const support::Planned p = support::plan_of(support::checked_spec(doc.dump()));
    const plan::SmemPlacement *a = nullptr, *d = nullptr;
    for (const auto& t : p.smem) {
      if (t.name == "a") a = &t;
      if (t.name == "d_stage") d = &t;
    }
    REQUIRE(a);
    REQUIRE(d);
    CHECK(d->overlay == (c.over ? "a" : ""));
    CHECK((d->offset == a->offset) == c.over);
    CHECK(d->layout.bytes == (c.residual ? 128u * 256 * 2 : 128u * 128 * 2));
    const plan::StoreStep* st = nullptr;
    for (const plan::Step* s : support::all_steps(p))
      if (s->kind == plan::StepKind::store) st = &s->store;
    REQUIRE(st);
    CHECK(st->tma);
    CHECK(st->shared_by == (c.over ? 256 : 0));
    CHECK(st->reuse == (std::string(c.schedule) == "persistent"));
    CHECK(st->warpgroup_bytes == 64 * 128);
    CHECK(st->box_cols == 64);
    CHECK(st->boxes == 4);  // 256 columns of 64: through the tile's 4 boxes, or its 2 buffers in turn
    CHECK(st->subtiles == !c.residual);
    CHECK(st->stmatrix == !c.residual);
    CHECK(st->staging == (c.residual ? "the epilogue reads C or a residual element by element (registers)"
                                     : "a 16-bit D in whole 16-column steps, no element-wise reads"));
    CHECK(st->box_stride == 128u * 128);  // a box: the 128 rows of 128 bytes
  }
}
}
