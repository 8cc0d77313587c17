// Planner coverage: instruction groups tile M x N x K exactly once, tensor-memory regions do not
// overlap and fit the allocation, every descriptor decodes to what the plan says, and the
// reference model (written from the ISA, not from our encoders) computes the right GEMM.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ptxgen/isa.hpp"
#include "refmodel.hpp"
#include "support.hpp"

using namespace ptxgen;

namespace {

void check_plan_invariants(const plan::Plan& p) {
  const auto& sh = p.shapes;
  const auto& g = *p.spec.gemm;
  // Coverage: every (M group, N group) receives K steps 0..k_steps-1 exactly once, in order.
  std::map<std::pair<int, int>, std::vector<int>> ks;
  int n_total = 0;
  for (int n : sh.n_groups) n_total += n;
  CHECK(n_total == g.tile.n);
  CHECK(sh.m_groups * sh.m_instr == g.tile.m);
  CHECK(sh.k_steps * sh.k_instr == g.tile.k);
  for (const auto& m : p.mmas) ks[{m.mi, m.ni}].push_back(m.ki);
  CHECK(ks.size() == static_cast<size_t>(sh.m_groups) * sh.n_groups.size());
  for (const auto& [key, v] : ks) {
    REQUIRE(v.size() == static_cast<size_t>(sh.k_steps));
    for (int i = 0; i < sh.k_steps; ++i) CHECK(v[static_cast<size_t>(i)] == i);
  }
  const bool wgmma = sh.engine == plan::Engine::wgmma;
  const auto format = wgmma ? isa::DescFormat::sm90 : isa::DescFormat::sm100;
  for (const auto& m : p.mmas) {
    for (const isa::SmemDesc* sd : {&m.a_desc, &m.b_desc}) {
      if (sd == &m.a_desc && m.a_tmem) continue;
      auto back = isa::decode_smem_desc(plan::encoded(*sd), format);
      CHECK(back.problems.empty());
      CHECK(back.desc.start_address == sd->start_address);
      CHECK(back.desc.base_offset == 0);
      CHECK(back.desc.start_address < sh.smem.dynamic_bytes);
    }
    CHECK(m.first == (m.ki == 0));
  }
  // TMA: the loads of one stage fill each operand tile exactly.
  CHECK(p.kernel.tx_bytes == sh.a.layout.bytes + sh.b.layout.bytes);
  if (wgmma) {
    for (const auto& m : p.mmas) {
      CHECK(m.m == 64);
      CHECK(isa::wgmma_legal_n(sh.kind, m.n));
    }
    CHECK(p.kernel.threads == 128 * sh.m_groups + 32);
    return;
  }
  // Each MMA: the instruction descriptor decodes to its shape, and is legal per Table 39.
  for (const auto& m : p.mmas) {
    const isa::InstrDesc d = isa::decode_idesc(plan::encoded(p.idescs.at(static_cast<size_t>(m.idesc))), sh.kind);
    CHECK(static_cast<int>(d.m) == m.m);
    CHECK(static_cast<int>(d.n) == m.n);
    CHECK(isa::legal_m(sh.kind, sh.cta_group, m.m));
    CHECK(isa::legal_n(sh.kind, sh.cta_group, g.b.major == isa::Major::mn && sh.b.layout.bits == 8, m.n));
    CHECK(d.transpose_a == (g.a.major == isa::Major::mn));
    CHECK(d.transpose_b == (g.b.major == isa::Major::mn));
  }
  // Tensor memory: regions pairwise disjoint (lanes x columns) and inside the allocation.
  const auto& regs = sh.tmem.regions;
  CHECK(sh.tmem.alloc_columns >= 32);
  CHECK(sh.tmem.alloc_columns <= 512);
  CHECK((sh.tmem.alloc_columns & (sh.tmem.alloc_columns - 1)) == 0);
  for (size_t i = 0; i < regs.size(); ++i) {
    CHECK(regs[i].column + regs[i].columns <= sh.tmem.alloc_columns);
    for (size_t j = i + 1; j < regs.size(); ++j) {
      const bool cols = regs[i].column < regs[j].column + regs[j].columns && regs[j].column < regs[i].column + regs[i].columns;
      const auto a = plan::lane_mask(regs[i]), b = plan::lane_mask(regs[j]);
      const bool lanes = (a[0] & b[0]) || (a[1] & b[1]);
      CHECK_MESSAGE(!(cols && lanes), "TMEM regions " << i << " and " << j << " overlap");
    }
  }
  // Shared memory: tiles of every stage disjoint, 1024-aligned, under the barriers.
  for (size_t s = 0; s < sh.smem.a_offset.size(); ++s) {
    CHECK(sh.smem.a_offset[s] % 1024 == 0);
    CHECK(sh.smem.b_offset[s] % 1024 == 0);
    CHECK(sh.smem.a_offset[s] + sh.a.layout.bytes <= sh.smem.b_offset[s]);
    CHECK(sh.smem.b_offset[s] + sh.b.layout.bytes <= sh.smem.barriers_offset);
  }
}

}  // namespace

TEST_SUITE("plan") {
TEST_CASE("every shipped spec: plan invariants and the reference model") {
  int n = 0;
  for (const auto& f : support::spec_files()) {
    CAPTURE(f);
    const spec::Spec s = support::checked_spec(support::slurp(f));
    if (!s.gemm) continue;  // program specs: tests/program_test.cpp
    const plan::Plan p = plan::make_plan(s);
    check_plan_invariants(p);
    for (unsigned seed : {1u, 2u}) {
      const refmodel::Result r = refmodel::replay(p, seed);
      std::string errs;
      for (const auto& e : r.errors) errs += e + "\n";
      CHECK_MESSAGE(r.ok, errs);
      CHECK(r.elements_checked == s.gemm->tile.m * s.gemm->tile.n);
    }
    ++n;
  }
  CHECK(n >= 30);
}

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
  int planned = 0, refused = 0;
  for (const auto& t : types)
    for (const auto& mj : majors)
      for (const auto& sw : swizzles)
        for (const auto& tl : tiles)
          for (int cta : {1, 2})
            for (const char* src : {"smem", "tmem", "wgmma"}) {
              if (std::string(src) == "wgmma" && cta == 2) continue;
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
              Diagnostics d;
              auto c = rules::parse_and_check(j.dump(), d);
              if (!c.ok) {
                ++refused;
                continue;
              }
              CAPTURE(j.dump());
              const plan::Plan p = plan::make_plan(*c.parsed.spec);
              check_plan_invariants(p);
              const refmodel::Result r = refmodel::replay(p, 7);
              std::string errs;
              for (const auto& e : r.errors) errs += e + "\n";
              REQUIRE_MESSAGE(r.ok, errs);
              ++planned;
            }
  MESSAGE("sweep: " << planned << " specs planned and replayed, " << refused << " refused by rules");
  CHECK(planned > 400);
}

TEST_CASE("several M tiles with A in tensor memory: each M group reads its own A columns") {
  const std::string text = R"({"ptxgen":1,"name":"k","target":"sm_100a","gemm":{"m":1024,"n":1024,"k":1024,
    "a":{"dtype":"bf16","major":"k"},"b":{"dtype":"bf16","major":"k"},"d":{"dtype":"bf16"},"accumulator":"f32",
    "tile":{"m":384,"n":64,"k":64},"stages":2,"a_source":"tmem"}})";
  const plan::Plan p = plan::make_plan(support::checked_spec(text));
  REQUIRE(p.shapes.m_groups == 3);
  // D: 3 x 64 columns; A: 3 x (64 x 16 / 32 = 32) columns after them.
  std::set<uint32_t> a_cols;
  for (const auto& m : p.mmas) {
    REQUIRE(m.a_tmem);
    const isa::TmemAddr a = isa::decode_tmem(m.a_tmem_addr);
    CHECK(a.lane == 0);
    CHECK(a.column == 192u + 32u * static_cast<uint32_t>(m.mi) + 8u * static_cast<uint32_t>(m.ki));
    a_cols.insert(a.column);
    const isa::TmemAddr d = isa::decode_tmem(m.d_tmem);
    CHECK(d.column == 64u * static_cast<uint32_t>(m.mi));
  }
  CHECK(a_cols.size() == 12);
  CHECK(p.copies.size() == 12);  // 3 M groups x 4 chunks of 128 rows x 256 bits
  CHECK(p.shapes.tmem.alloc_columns == 512);
}

TEST_CASE("M=64 groups pair up in layout F's two lane alignments") {
  const std::string text = R"({"ptxgen":1,"name":"k","target":"sm_100a","gemm":{"m":1024,"n":1024,"k":1024,
    "a":{"dtype":"bf16","major":"k"},"b":{"dtype":"bf16","major":"k"},"d":{"dtype":"bf16"},"accumulator":"f32",
    "tile":{"m":192,"n":128,"k":64},"stages":2}})";
  const plan::Plan p = plan::make_plan(support::checked_spec(text));
  REQUIRE(p.shapes.m_instr == 64);
  for (const auto& m : p.mmas) {
    const isa::TmemAddr d = isa::decode_tmem(m.d_tmem);
    CHECK(d.lane == (m.mi % 2 ? 16u : 0u));
    CHECK(d.column == (m.mi / 2) * 128u);
  }
  CHECK(p.shapes.tmem.used_columns == 256);
}
}
