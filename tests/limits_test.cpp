// Limits of the address arithmetic: specs at the extremes of every range (tile extents up to 1024,
// 32 stages, problem sizes near 2^31, clusters of 16, every kind, major, swizzle and CTA group)
// either fail with a rule of the table, or plan to numbers that fit their fields: 14-bit
// descriptor fields of an 18-bit address, TMEM lanes and columns, the launch grid, expect-tx byte
// counts. Each number is recomputed here in 64 bits from the spec, independently of the planner's
// own (32-bit) types.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>
#include <set>

#include "ptxgen/isa.hpp"
#include "support.hpp"

using namespace ptxgen;
using nlohmann::json;

namespace {

constexpr int64_t kDescRange = int64_t{1} << 18;      // Table 40: 14-bit fields of 16-byte units
constexpr int64_t kTxCountMax = (int64_t{1} << 20) - 1;  // §9.7.13.15.2 tx-count
constexpr int64_t kGridX = (int64_t{1} << 31) - 1, kGridYZ = 65535;  // §10.7 %nctaid

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

struct Types {
  const char *a, *b, *acc, *d;
};

// Checks one planned spec against the 64-bit recomputation; returns how many numbers it checked.
int check_fits(const spec::Spec& s) {
  const spec::Gemm& g = *s.gemm;
  const plan::Plan p = support::plan_of(s);
  const auto& t = isa::target_info(s.target);
  const bool tc = t.tcgen05;
  int n = 0;
  std::map<std::string, const plan::SmemPlacement*> tiles;
  for (const auto& x : p.smem) tiles[x.name] = &x;
  REQUIRE(tiles.size() == 2);
  const plan::SmemPlacement& ta = *tiles.at("a");
  const plan::SmemPlacement& tb = *tiles.at("b");
  // Shared memory, recomputed: the ring of A's stages, then B's, each stage on its swizzle
  // pattern's boundary (at least 128 bytes, TMA's), the mbarriers (full and empty per stage, the
  // accumulator's, A's free one), the 4-byte TMEM slot, rounded to 16, plus the alignment slack.
  auto align = [](isa::Swizzle sw) { return std::max<int64_t>(128, isa::pattern_bytes(sw)); };
  const int64_t a_al = align(g.swizzle_a), b_al = align(g.swizzle_b);
  const int64_t a_bytes = isa::tile_bytes(ta.layout.mn, g.tile.k, ta.bits);
  const int64_t b_bytes = isa::tile_bytes(g.tile.n / g.cta_group, g.tile.k, tb.bits);
  const int64_t a_stage = round_up(a_bytes, a_al), b_stage = round_up(b_bytes, b_al);
  const int64_t b_off = round_up(a_stage * g.stages, b_al);
  const int64_t bars = 2 * g.stages + (tc ? 1 + (g.a_source == spec::ASource::tmem ? 1 : 0) : 0);
  const int64_t dynamic = std::max(a_al, b_al) + round_up(round_up(b_off + b_stage * g.stages, 8) + 8 * bars + (tc ? 4 : 0), 16);
  CHECK(int64_t{ta.layout.bytes} == a_bytes);
  CHECK(int64_t{tb.layout.bytes} == b_bytes);
  CHECK(int64_t{ta.stage_bytes} == a_stage);
  CHECK(int64_t{tb.offset} == b_off);
  CHECK(int64_t{p.smem_bytes} == dynamic);
  CHECK(dynamic <= t.smem_per_block_max);
  CHECK(dynamic < kDescRange);  // so every shared-memory address a descriptor takes fits 18 bits
  // expect-tx: one stage's bytes per CTA; a pair's leader may expect both CTAs' stages.
  CHECK((a_bytes + b_bytes) * g.cta_group <= kTxCountMax);
  n += 8;
  // Descriptors: what is encoded decodes to the same byte values (nothing lost in 14 bits), for
  // the last stage of the ring too.
  const auto format = tc ? isa::DescFormat::sm100 : isa::DescFormat::sm90;
  auto same = [&](const isa::SmemDesc& d, const plan::SmemPlacement& tile) {
    const auto back = isa::decode_smem_desc(plan::encoded(d), format);
    CHECK(back.desc.start_address == d.start_address);
    CHECK(back.desc.lbo == d.lbo);
    CHECK(back.desc.sbo == d.sbo);
    CHECK(int64_t{d.start_address} + int64_t{tile.stage_bytes} * (g.stages - 1) < kDescRange);
    n += 4;
  };
  const uint32_t cols = p.allocs.empty() ? 0 : p.allocs[0].columns;
  for (const plan::Step* st : support::all_steps(p)) {
    for (const auto& c : st->cps) same(c.src, ta);
    for (const auto& m : st->mma.instrs) {
      if (!m.a_tmem && !(st->mma.engine == ir::Engine::wgmma && st->mma.a_registers)) same(m.a_desc, ta);
      same(m.b_desc, tb);
      if (!tc) continue;
      // TMEM addresses: lane < 128, column inside the allocation (<= 512, the 16-bit column field).
      for (uint32_t addr : {m.d_taddr, m.a_tmem ? m.a_taddr : 0u}) {
        const isa::TmemAddr a = isa::decode_tmem(addr);
        CHECK(a.lane < 128);
        CHECK(a.column < cols);
        n += 2;
      }
      const isa::InstrDesc id = isa::decode_idesc(plan::encoded(m.idesc), st->mma.kind);
      CHECK(static_cast<int>(id.n) == m.n);
      CHECK(static_cast<int>(id.m) == m.m);
      n += 2;
    }
  }
  CHECK(cols <= static_cast<uint32_t>(t.tmem_columns));
  // The grid, recomputed (m, n < 2^31, tiles >= 1, cta_group <= 2, clusters <= 16: below 2^37).
  const int64_t x = round_up((g.n + g.tile.n - 1) / g.tile.n * g.cta_group, g.cluster[0]);
  const int64_t y = round_up((g.m + g.tile.m - 1) / g.tile.m, g.cluster[1]);
  const plan::Grid grid = p.launch;
  CHECK(grid.x == x);
  CHECK(grid.y == y);
  CHECK(grid.x <= kGridX);
  CHECK(grid.y <= kGridYZ);
  CHECK(grid.z <= kGridYZ);
  return n + 6;
}

}  // namespace

TEST_SUITE("limits") {
TEST_CASE("extreme specs: a rule refuses them, or every planned number fits its field") {
  const Types types[] = {{"bf16", "bf16", "f32", "bf16"}, {"f16", "f16", "f16", "f16"}, {"tf32", "tf32", "f32", "f32"},
                         {"e4m3", "e5m2", "f32", "bf16"}, {"e2m1", "e2m1", "f32", "f32"}, {"s8", "u8", "s32", "s32"}};
  const int64_t big = (int64_t{1} << 31) - 32;  // rows of any type stay 16-byte multiples
  // N and K near 2^31; M the tallest whose tiles still fit the grid's 65535 CTAs along y, or one
  // cluster of tiles taller (both set per tile below), or 1.
  const int64_t tallest = -1, too_tall = -2;
  const std::array<int64_t, 3> problems[] = {
      {tallest, big, big}, {too_tall, big, big}, {1, (int64_t{1} << 31) - 1, big}};
  const json base = json::parse(rules::example_base());
  int planned = 0, refused = 0, numbers = 0;
  std::set<std::string> refusing_rules;
  auto check = [&](const json& j, Diagnostics& d) { return rules::parse_and_check(j.dump(), d); };
  for (const auto& ty : types)
    for (bool mn : {false, true})
      for (int sw : {0, 32, 128})
        for (int cta : {1, 2})
          for (const char* src : {"smem", "tmem"})
            for (int tm : {64, 256, 1024})
              for (int tn : {8, 264, 1024})
                for (int tk : {32, 128, 1024})
                  for (const auto& pr : problems) {
                    json j = base;
                    auto& g = j["gemm"];
                    const int cluster_y = 8 / cta;
                    g["n"] = pr[1], g["k"] = pr[2];
                    const int64_t tallest_m = int64_t{kGridYZ} / cluster_y * cluster_y * tm;
                    g["m"] = pr[0] == tallest ? tallest_m : pr[0] == too_tall ? tallest_m + cluster_y * tm : pr[0];
                    g["a"] = {{"dtype", ty.a}, {"major", mn ? "m" : "k"}};
                    g["b"] = {{"dtype", ty.b}, {"major", mn ? "n" : "k"}};
                    g["accumulator"] = ty.acc;
                    g["d"] = {{"dtype", ty.d}};
                    g["tile"] = {{"m", tm}, {"n", tn}, {"k", tk}};
                    const bool base32 = sw == 128 && mn && std::string(ty.a) == "tf32";
                    g["swizzle"] = {{"a", base32 ? json("128_base32b") : json(sw)},
                                    {"b", base32 ? json("128_base32b") : json(sw)}};
                    g["cta_group"] = cta;
                    g["a_source"] = src;
                    g["cluster"] = {2 * cta, cluster_y, 1};  // 16 CTAs
                    g["stages"] = 1;
                    Diagnostics d;
                    rules::Checked c = check(j, d);
                    if (!c.ok) {
                      ++refused;
                      for (const auto& x : d.list()) {
                        REQUIRE_MESSAGE(rules::find(x.rule), x.rule);
                        refusing_rules.insert(x.rule);
                      }
                      continue;
                    }
                    CAPTURE(j.dump());
                    numbers += check_fits(*c.parsed.spec);
                    ++planned;
                    // The deepest pipeline that fits, where shared-memory offsets are largest; one
                    // stage more is SMEM-BUDGET's to refuse.
                    int lo = 1, hi = 32;
                    while (lo < hi) {
                      const int mid = (lo + hi + 1) / 2;
                      g["stages"] = mid;
                      Diagnostics dm;
                      if (check(j, dm).ok) lo = mid;
                      else hi = mid - 1;
                    }
                    g["stages"] = lo;
                    Diagnostics dl;
                    rules::Checked deepest = check(j, dl);
                    REQUIRE(deepest.ok);
                    numbers += check_fits(*deepest.parsed.spec);
                    if (lo < 32) {
                      g["stages"] = lo + 1;
                      Diagnostics over;
                      check(j, over);
                      CHECK(over.list().size() == 1);
                      CHECK(over.fired("SMEM-BUDGET"));
                    }
                  }
  MESSAGE(planned << " specs planned at 1 stage and at the deepest pipeline that fits (" << numbers
                  << " numbers checked); " << refused << " refused by a rule");
  // (The 16-CTA clusters multicast A along x and B along y, so tiles that do not split into the
  // cluster's parts are CLUSTER-MULTICAST's.)
  CHECK(planned >= 250);
  // The extremes reach the range rules, not only the shape rules.
  for (const char* r : {"SMEM-DESC-RANGE", "TMEM-BUDGET", "LAUNCH-GRID", "CLUSTER-MULTICAST"})
    CHECK_MESSAGE(refusing_rules.count(r), std::string(r) << " never fired");
}

TEST_CASE("SMEM-DESC-RANGE: exactly at 2^18 bytes refused, one K step below accepted by it") {
  auto diags = [](int tile_k) {
    json j = json::parse(rules::example_base());
    j["gemm"]["tile"] = {{"m", 256}, {"n", 8}, {"k", tile_k}};
    j["gemm"]["stages"] = 1;
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    return d;
  };
  const Diagnostics at = diags(512);  // A: 256 rows x 512 bf16 = 262144 bytes
  REQUIRE(at.fired("SMEM-DESC-RANGE"));
  for (const auto& x : at.list())
    if (x.rule == "SMEM-DESC-RANGE") {
      CHECK(x.pointer == "/gemm/tile/k");
      CHECK(x.message == "A (256 x 512 bf16 per CTA) takes 262144 bytes per stage; a shared-memory matrix "
                         "descriptor addresses at most 262144 bytes (18 bits)");
    }
  CHECK_FALSE(at.fired("LAYOUT-ATOM"));  // it used to be reported as a swizzle-atom problem
  const Diagnostics below = diags(448);
  CHECK_FALSE(below.fired("SMEM-DESC-RANGE"));
  CHECK(below.fired("SMEM-BUDGET"));  // 229376 bytes of A still exceed 227 KB
}

TEST_CASE("LAUNCH-GRID: at the y limit, one past it, and rounded up to whole clusters") {
  auto diags = [](int64_t m, int cluster_y) {
    json j = json::parse(rules::example_base());
    j["gemm"]["m"] = m;
    j["gemm"]["cluster"] = {1, cluster_y, 1};
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    return d;
  };
  CHECK(diags(int64_t{65535} * 128, 1).list().empty());
  const Diagnostics over = diags(int64_t{65535} * 128 + 16, 1);
  REQUIRE(over.list().size() == 1);
  CHECK(over.list()[0].rule == "LAUNCH-GRID");
  CHECK(over.list()[0].pointer == "/gemm/m");
  CHECK(over.list()[0].message.find("the grid needs 65536 CTAs along M (y)") == 0);
  // 65535 tiles along M make 32768 clusters of 2: 65536 CTAs.
  CHECK(diags(int64_t{65535} * 128, 2).fired("LAUNCH-GRID"));
  // x: 2^31-1 columns of N in 16-column tiles at cta_group 2 are 268435456 CTAs, inside 2^31-1.
  json j = json::parse(rules::example_base());
  j["gemm"]["n"] = (int64_t{1} << 31) - 1;
  j["gemm"]["tile"] = {{"m", 256}, {"n", 16}, {"k", 64}};
  j["gemm"]["cta_group"] = 2;
  j["gemm"]["cluster"] = {2, 1, 1};
  const plan::Grid g = support::plan_of(support::checked_spec(j.dump())).launch;
  CHECK(g.x == 268435456);
}
}

TEST_SUITE("program") {
// Issue 32: a program's grid of tiles is held to the launch limits LAUNCH-GRID holds the gemm
// template to (x 2^31-1, y 65535), at the size the user wrote.
TEST_CASE("PROGRAM-LAUNCH-GRID: a program's grid past y (issue 32: m = 2^31-1), at the limit, and past x for a pair") {
  const rules::Rule* r = rules::find("PROGRAM-LAUNCH-GRID");
  REQUIRE(r);
  auto diags = [&](const std::function<void(json&)>& edit) {
    json j = json::parse(rules::good_document(*r));
    edit(j);
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    return d;
  };
  auto with_m = [&](int64_t m) { return diags([&](json& j) { j["program"]["sizes"]["m"] = m; }); };
  {  // the spec: 16777216 tiles of 128 rows; no tile of at most 1024 rows fits
    const Diagnostics d = with_m((int64_t{1} << 31) - 1);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "PROGRAM-LAUNCH-GRID");
    CHECK(d.list()[0].pointer == "/program/sizes/m");
    CHECK(d.list()[0].message ==
          "the grid needs 16777216 CTAs along y: ceil(m 2147483647 / grid.tile[0] 128); at most 65535 are launched along y");
    CHECK(d.list()[0].help == std::vector<std::string>{"split the problem along m into launches of at most 65535 x grid.tile[0] rows"});
  }
  CHECK(with_m(int64_t{65535} * 128).list().empty());
  {  // one row past: a tile of 129 rows or more fits, 256 named
    const Diagnostics d = with_m(int64_t{65535} * 128 + 1);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "PROGRAM-LAUNCH-GRID");
    CHECK(d.list()[0].pointer == "/program/sizes/m");
    CHECK(d.list()[0].message.find("the grid needs 65536 CTAs along y") == 0);
    CHECK(d.list()[0].help.at(0) == "use \"grid\": {\"tile\": [256, 128]} (a tile of at least 129 rows fits), and step the ops' \"m_tile\" with it");
  }
  {  // a grid walking a size of another name points at that size
    const Diagnostics d = diags([](json& j) {
      j["program"]["sizes"] = {{"M", (int64_t{1} << 31) - 1}, {"n", 256}};
      j["program"]["grid"]["m"] = "M";
      j["program"]["globals"]["D"]["shape"] = {"M", "n"};
    });
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "PROGRAM-LAUNCH-GRID");
    CHECK(d.list()[0].pointer == "/program/sizes/M");
  }
  // x: ceil(n / TN) * cta_group reaches past 2^31-1 only for a pair (n is at most 2^31-1).
  {
    const Diagnostics d = diags([](json& j) {
      j["program"]["sizes"]["n"] = (int64_t{1} << 31) - 1;
      j["program"]["grid"]["tile"] = {128, 1};
    });
    CHECK_FALSE(d.fired("PROGRAM-LAUNCH-GRID"));  // 2^31-1 CTAs along x: at the limit
  }
  {
    json j = json::parse(support::slurp(support::source_root() + "/specs/prog_pipelined_pair_bf16_m256.json"));
    j["program"]["sizes"]["n"] = (int64_t{1} << 31) - 1;
    j["program"]["grid"]["tile"] = {256, 1};
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    // A pair's tile of one column contradicts every op, which steps 256 columns per tile column
    // (PROGRAM-COVERAGE, at the tile); the launch grid is reported in the same run.
    REQUIRE(d.list().size() == 2);
    CHECK(d.list()[0].rule == "PROGRAM-LAUNCH-GRID");
    CHECK(d.list()[0].pointer == "/program/sizes/n");
    CHECK(d.list()[1].rule == "PROGRAM-COVERAGE");
    CHECK(d.list()[1].pointer == "/program/grid/tile/1");
    CHECK(d.list()[0].message ==
          "the grid needs 4294967294 CTAs along x: ceil(n 2147483647 / grid.tile[1] 1) x cta_group 2; at most 2147483647 are "
          "launched along x");
    CHECK(d.list()[0].help.at(0) == "use \"grid\": {\"tile\": [256, 4]} (a tile of at least 3 columns fits), and step the ops' \"n_tile\" with it");
  }
}
}

TEST_SUITE("limits") {
TEST_CASE("SMEM-BUDGET holds for wgmma too: 4 stages of 48 KB fit sm_90a, 5 do not (fuzz finding)") {
  auto diags = [](int stages) {
    json j = json::parse(rules::example_base());
    j["target"] = "sm_90a";
    j["gemm"]["stages"] = stages;
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    return d;
  };
  CHECK(diags(4).list().empty());
  const Diagnostics over = diags(5);
  REQUIRE(over.list().size() == 1);
  CHECK(over.list()[0].rule == "SMEM-BUDGET");
  CHECK(over.list()[0].pointer == "/gemm/stages");
  // 5 x (16384 + 32768) bytes of stages, 10 mbarriers (80 bytes), 1024 of alignment slack.
  CHECK(over.list()[0].message.find("need 246864 bytes of shared memory; a CTA on sm_90a gets at most 232448") !=
        std::string::npos);
}
}
