// Every tcgen05 GEMM golden, run whole by the kernel simulator (src/sim/) on random inputs of
// its operand types: several M and N tiles, more K blocks than pipeline stages (the ring wraps and
// every barrier changes phase), and edges in all three dimensions (m, n, k not multiples of the
// tile; k's tail is TMA zero fill); see simtest::gemm_sizes. D is compared with a float64 product computed here, within a
// bound derived from the accumulator and D's type (exact for s32).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "sim_gemm.hpp"
#include "support.hpp"

using namespace ptxgen;

TEST_SUITE("sim_gemm") {
TEST_CASE("every tcgen05 GEMM golden, simulated whole on several tiles and edges, computes D = A * B") {
  int specs = 0;
  for (const auto& file : support::spec_files()) {
    const std::string text = support::slurp(file);
    const auto doc = nlohmann::json::parse(text);
    if (!doc.contains("gemm") || doc.at("target") == "sm_90a") continue;
    if (const char* only = std::getenv("KSIM_ONLY"); only && support::stem(file) != only) continue;  // debugging one spec
    CAPTURE(file);
    const spec::Spec s = support::checked_spec(text);
    const plan::Plan p = support::plan_of(s);
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const std::string ptx = support::slurp(support::source_root() + "/golden/" + support::stem(file) + ".ptx");
    const ksim::KernelPtr k = ksim::parse(ptx);
    std::string line;
    for (const auto& size : simtest::gemm_sizes(manifest, doc.at("gemm").value("stages", 1))) {
      CAPTURE(size[0]);
      CAPTURE(size[1]);
      CAPTURE(size[2]);
      const simtest::GemmResult r = simtest::run_gemm(*k, manifest, size[0], size[1], size[2], 1234 + static_cast<unsigned>(specs));
      CHECK_MESSAGE(r.error.empty(), r.error);
      CHECK(r.checked == size[0] * size[1]);
      CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " exceeds the bound (" << r.worst << " of it) at " << r.where);
      char buf[160];
      std::snprintf(buf, sizeof buf, "  %ldx%ldx%ld (%lu CTAs): max |err| %.2g (%.2g of the bound)", static_cast<long>(size[0]),
                    static_cast<long>(size[1]), static_cast<long>(size[2]), static_cast<unsigned long>(r.ctas), r.max_err, r.worst);
      line += buf;
    }
    std::printf("sim %-34s%s\n", support::stem(file).c_str(), line.c_str());
    ++specs;
  }
  if (!std::getenv("KSIM_ONLY")) CHECK(specs >= 30);
}
}

// The launch order (gemm.raster): CTAs take their tiles in groups of tile rows. Simulated over
// grids with whole groups and a last, shorter one, for one CTA per tile and for pairs (two CTAs
// per tile): every element of D is computed once, from its own tile's rows and columns.
TEST_SUITE("sim_gemm") {
TEST_CASE("the grouped launch order covers every tile once, whole groups and a short last one") {
  struct Case {
    const char* spec;
    int raster;
    int64_t m_tiles, n_tiles;
  };
  for (const Case& c : {Case{"gemm_bf16_m64_n8", 3, 7, 5}, Case{"gemm_bf16_m64_n8", 64, 3, 4},
                        Case{"gemm_bf16_cta2_m128_a_tmem", 2, 3, 2}}) {
    const std::string name = c.spec;
    CAPTURE(name);
    CAPTURE(c.raster);
    auto doc = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/" + c.spec + ".json"));
    doc["gemm"]["raster"] = c.raster;
    const support::Planned p = support::plan_of(support::checked_spec(doc.dump()));
    CHECK(p.ir().grid.raster_group == c.raster);
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const ksim::KernelPtr k = ksim::parse(emit::ptx(p));
    const int64_t tm = p.ir().grid.tile_m, tn = p.ir().grid.tile_n, kk = p.ir().grid.tile_k;
    const int64_t m = c.m_tiles * tm - 5, n = c.n_tiles * tn - 3;
    const simtest::GemmResult r = simtest::run_gemm(*k, manifest, m, n, kk, 99);
    CHECK_MESSAGE(r.error.empty(), r.error);
    CHECK(r.checked == m * n);
    CHECK(r.ctas == static_cast<uint64_t>(c.m_tiles * c.n_tiles * p.ir().cta_group));
    CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " at " << r.where);
  }
}
}

// A persistent grid (gemm.schedule): fewer CTAs than tiles, as the launcher's rule gives on a GPU
// with fewer multiprocessors than tiles. Two CTAs (pairs) walk five tiles with ragged edges, so
// each walks several: both accumulator buffers in turn and their barriers' phases wrapping, the
// shared-memory ring and its phases carried from tile to tile (more K blocks than stages).
TEST_SUITE("sim_gemm") {
TEST_CASE("persistent goldens: two CTAs walk five tiles, every element of D computed once") {
  int specs = 0;
  for (const auto& file : support::spec_files()) {
    const auto doc = nlohmann::json::parse(support::slurp(file));
    if (!doc.contains("gemm") || doc.at("target") == "sm_90a" || doc["gemm"].value("schedule", "") != "persistent") continue;
    if (const char* only = std::getenv("KSIM_ONLY"); only && support::stem(file) != only) continue;
    CAPTURE(file);
    const plan::Plan p = support::plan_of(support::checked_spec(doc.dump()));
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const ksim::KernelPtr k = ksim::parse(support::slurp(support::source_root() + "/golden/" + support::stem(file) + ".ptx"));
    const int64_t tm = p.ir().grid.tile_m, tn = p.ir().grid.tile_n, tk = p.ir().grid.tile_k;
    const int64_t unit = simtest::d_row_unit(manifest);
    for (const auto& [mt, nt] : {std::pair<int64_t, int64_t>{5, 1}, {1, 5}}) {
      // Sparse A: k a multiple of tile.k (SPARSE-K: TMA's zero fill is no valid metadata).
      const int64_t tail = doc["gemm"].value("sparse", false) ? 0 : 5;
      const int64_t m = mt * tm - 3, n = (nt * tn - 2) / unit * unit, kk = (doc["gemm"].value("stages", 1) + 1) * tk - tail;
      CAPTURE(m);
      CAPTURE(n);
      // Two units: CTAs, pairs, or clusters (launched as one row) walking blocks of tiles.
      const int per = p.ir().cluster[0] * p.ir().cluster[1] * p.ir().cluster[2];
      const simtest::GemmResult r = simtest::run_gemm(*k, manifest, m, n, kk, 77, {}, 2 * per);
      CHECK_MESSAGE(r.error.empty(), r.error);
      CHECK(r.checked == m * n);
      CHECK(r.ctas == static_cast<uint64_t>(2 * per));
      CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " at " << r.where);
      std::printf("sim persistent %-30s %ldx%ldx%ld on %lu CTAs: max |err| %.2g\n", support::stem(file).c_str(), static_cast<long>(m),
                  static_cast<long>(n), static_cast<long>(kk), static_cast<unsigned long>(r.ctas), r.max_err);
    }
    ++specs;
  }
  if (!std::getenv("KSIM_ONLY")) CHECK(specs >= 1);
}
}

// Every sm_90a (wgmma) GEMM golden, run whole by the simulator as the tcgen05 ones are: the two
// sizes of simtest::gemm_sizes (two tiles in M and N with ragged edges and a partial second K block;
// one tile short of the edges with more K blocks than stages and a partial last one), each with
// the launch the manifest gives (a CTA per tile, or a cluster of them multicasting A or B; a
// persistent grid with one unit per block of tiles). A persistent golden is also run on a grid of two
// units (CTAs, or clusters) for five tiles in a column and five in a row, ragged edges, as the
// launcher's rule gives on a GPU of that few multiprocessors, so each unit walks several tiles: the
// rings' phases carried from tile to tile, ping-pong consumers taking alternate tiles through their
// hand-off barriers.
TEST_SUITE("sim_gemm") {
TEST_CASE("every sm_90a (wgmma) GEMM golden, simulated whole on several tiles and edges, computes D = A * B") {
  int specs = 0;
  for (const auto& file : support::spec_files()) {
    const auto doc = nlohmann::json::parse(support::slurp(file));
    if (!doc.contains("gemm") || doc.at("target") != "sm_90a") continue;
    if (const char* only = std::getenv("KSIM_ONLY"); only && support::stem(file) != only) continue;  // debugging one spec
    CAPTURE(file);
    const plan::Plan p = support::plan_of(support::checked_spec(doc.dump()));
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const ksim::KernelPtr k = ksim::parse(support::slurp(support::source_root() + "/golden/" + support::stem(file) + ".ptx"));
    const bool persistent = doc["gemm"].value("schedule", "") == "persistent";
    const int stages = doc["gemm"].value("stages", 1);
    const int64_t tm = p.ir().grid.tile_m, tn = p.ir().grid.tile_n, tk = p.ir().grid.tile_k, unit = simtest::d_row_unit(manifest);
    const int per = p.ir().cluster[0] * p.ir().cluster[1] * p.ir().cluster[2];
    struct Run {
      std::array<int64_t, 3> size;
      int multiprocessors;
    };
    std::vector<Run> runs;
    for (const auto& size : simtest::gemm_sizes(manifest, stages)) runs.push_back({size, 0});
    if (persistent)  // five tiles in a column, then in a row: each of the two units walks several blocks of tiles
      for (const auto& [mt, nt] : {std::pair<int64_t, int64_t>{5, 1}, {1, 5}})
        runs.push_back({{mt * tm - 3, (nt * tn - 2) / unit * unit, (stages + 1) * tk - 5}, 2 * per});
    std::string line;
    for (size_t i = 0; i < runs.size(); ++i) {
      // (No structured binding: clang 14 cannot capture one in CAPTURE's lambda.)
      const std::array<int64_t, 3>& size = runs[i].size;
      const int mps = runs[i].multiprocessors;
      CAPTURE(size[0]);
      CAPTURE(size[1]);
      CAPTURE(size[2]);
      CAPTURE(mps);
      const simtest::GemmResult r = simtest::run_gemm(*k, manifest, size[0], size[1], size[2], 4321 + static_cast<unsigned>(specs), {}, mps);
      CHECK_MESSAGE(r.error.empty(), r.error);
      CHECK(r.checked == size[1] * simtest::checked_rows(manifest, size[0]));  // a grouped golden: its groups' valid rows
      CHECK(r.stats.mma > 0);
      if (mps) CHECK(r.ctas == static_cast<uint64_t>(mps));
      CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " exceeds the bound (" << r.worst << " of it) at " << r.where);
      char buf[160];
      std::snprintf(buf, sizeof buf, "  %ldx%ldx%ld (%lu CTAs): max |err| %.2g (%.2g of the bound)", static_cast<long>(size[0]),
                    static_cast<long>(size[1]), static_cast<long>(size[2]), static_cast<unsigned long>(r.ctas), r.max_err, r.worst);
      line += buf;
    }
    std::printf("sim %-48s%s\n", support::stem(file).c_str(), line.c_str());
    ++specs;
  }
  if (!std::getenv("KSIM_ONLY")) CHECK(specs >= 18);
}
}

// Grouped GEMM, masked layout (docs/spec.md, "Grouped GEMM"; issue 30): the golden on both engines
// and both epilogues, run whole on four groups whose masked_m covers each case of the definition
// (past the capacity, empty, ragged, negative), two tiles of rows a group and ragged edges. Each
// valid row is checked against float64, every byte of a tile that holds valid rows written once,
// no byte of the tiles past them (src/sim/gemm.cpp).
TEST_SUITE("sim_gemm") {
TEST_CASE("grouped GEMM (masked, contiguous), simulated whole on both engines and epilogues, under five schedules: valid rows match float64, tiles past them untouched") {
  struct Variant {
    const char* target;
    const char* patch;
    int schedules;  // run_gemm's schedules 0 .. schedules - 1: fixed, random, early, reverse, lifo (ksim::Options::schedule)
  };
  // The golden `spec` with `v`'s target and patch, planned, emitted and run at m x (tile.n + 8) x
  // (5 tile.k - 7) under each of v's schedules; `rows(tile_m)` gives m, `checked(m, tile_m)` the rows
  // of D whose values the run must check, `z` the grid's z, `ctas` the CTAs launched (0: not asserted).
  auto run = [](const char* spec, const Variant& v, auto rows, auto checked, int64_t z, uint64_t ctas, int units = 0) {
    auto doc = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/" + spec + ".json"));
    doc["target"] = v.target;
    doc["gemm"].merge_patch(nlohmann::json::parse(v.patch));
    CAPTURE(doc.dump());
    const plan::Plan p = support::plan_of(support::checked_spec(doc.dump()));
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    REQUIRE(manifest.at("grid").at(2) == z);
    const ksim::KernelPtr k = ksim::parse(emit::ptx(p));
    const int64_t tm = p.ir().grid.tile_m, m = rows(tm, doc), n = p.ir().grid.tile_n + 8, kk = 5 * p.ir().grid.tile_k - 7;
    for (int schedule = 0; schedule < v.schedules; ++schedule) {
      CAPTURE(schedule);
      ksim::Options o;
      o.schedule = static_cast<uint64_t>(schedule);
      const simtest::GemmResult r = simtest::run_gemm(*k, manifest, m, n, kk, 97, o, units);
      CHECK_MESSAGE(r.error.empty(), r.error);
      CHECK(r.checked == checked(m, tm) * n);
      if (ctas) CHECK(r.ctas == ctas);
      CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " (" << r.worst << " of the bound) at " << r.where);
      CHECK(r.stats.mma > 0);
      std::printf("sim grouped %s %s %s %ldx%ldx%ld, schedule %d: max |err| %.2g (%.2g of the bound)\n", spec, v.target, v.patch,
                  static_cast<long>(m), static_cast<long>(n), static_cast<long>(kk), schedule, r.max_err, r.worst);
    }
  };
  // Each layout's m (from tile.m and the spec) and the rows of D checked (the groups' valid rows).
  auto masked_rows = [](int64_t tm, const nlohmann::json&) { return 2 * tm - 3; };
  auto masked_checked = [](int64_t m, int64_t tm) { return m + tm / 2 + 1; };
  auto contiguous_rows = [](int64_t tm, const nlohmann::json& doc) {
    const int64_t align = doc["gemm"]["groups"]["align"];
    return (tm / 2 + 1 + align - 1) / align * align + (2 * tm - 3 + align - 1) / align * align + 3 + 2 * tm;
  };
  auto contiguous_checked = [](int64_t, int64_t tm) { return tm / 2 + 1 + 2 * tm - 3 + 3; };
  // Masked: four groups of two tiles of rows, masked_m m + 100 (as m), 0, tile.m / 2 + 1 (a tile
  // partly valid, the next wholly past), -7 (as 0); the groups are the grid's z (the spec's 8).
  for (const Variant& v : {Variant{"sm_90a", "{}", 5}, Variant{"sm_90a", R"({"epilogue": "direct"})", 1}, Variant{"sm_100a", "{}", 5},
                           Variant{"sm_100a", R"({"epilogue": "direct", "tile": {"n": 128}})", 1}})
    run("gemm_sm90_bf16_128x256x64_masked", v, masked_rows, masked_checked, 8, 2 * 2 * 4);  // 2 N x 2 M tiles x 4 groups launched; past ones exit
  // Contiguous: four segments of A's rows (tile.m / 2 + 1: a tile partly valid, then padding; none;
  // 2 tile.m - 3: two tiles; 3), each starting on a multiple of align after the previous end, and
  // 2 tile.m rows past the last; each CTA finds its segment by a binary search of the ends.
  for (const Variant& v : {Variant{"sm_90a", "{}", 5}, Variant{"sm_90a", R"({"epilogue": "direct", "groups": {"align": 256}})", 1},
                           Variant{"sm_100a", R"({"tile": {"n": 256, "k": 64}, "stages": 4})", 5}})
    run("gemm_sm90_bf16_128x128x64_contiguous", v, contiguous_rows, contiguous_checked, 1, 0);
  // The persistent walk over (group, tile): 3 CTAs walk the same groups' tiles (masked: 2 N tiles x
  // (2 + 0 + 1 + 0) tile rows; contiguous: 2 N tiles x (1 + 0 + 2 + 1) segments' tile rows), each
  // CTA crossing groups, empty ones and (contiguous) padding between its tiles; ping-pong consumers
  // take alternate tiles across the group boundaries. Three CTAs launched, none walking an empty tile.
  for (const Variant& v : {Variant{"sm_90a", "{}", 5}, Variant{"sm_100a", R"({"stages": 4})", 1},
                           Variant{"sm_90a", R"({"consumers": "pingpong", "tile": {"n": 128}, "stages": 4, "raster": 2})", 1}})
    run("gemm_sm90_bf16_128x256x64_masked_persistent", v, masked_rows, masked_checked, 1, 3, 3);
  for (const Variant& v : {Variant{"sm_90a", "{}", 5}, Variant{"sm_100a", R"({"consumers": null, "tile": {"n": 256}})", 1}})
    run("gemm_sm90_bf16_128x128x64_contiguous_persistent", v, contiguous_rows, contiguous_checked, 1, 3, 3);
  // Fused epilogues per group: each group's own bias (a row of n per group, or in the masked layout
  // a column of each group's capacity; the contiguous layout's bias along M one vector over A's
  // rows), then the activation, SwiGLU's gate and up halves from the group's own B.
  for (const Variant& v : {Variant{"sm_90a", "{}", 1}, Variant{"sm_100a", R"({"tile": {"n": 256}, "stages": 4, "schedule": "persistent"})", 1},
                           Variant{"sm_90a", R"({"bias": {"dtype": "f32", "along": "m"}, "activation": "silu", "epilogue": "direct"})", 1}})
    run("gemm_sm90_bf16_128x128x64_contiguous_bias_swiglu", v, contiguous_rows, contiguous_checked, 1, 0, 3);
  for (const Variant& v : {Variant{"sm_90a", R"({"bias": {"dtype": "f32", "along": "m"}, "activation": "gelu_tanh"})", 1},
                           Variant{"sm_100a", R"({"bias": {"dtype": "bf16", "along": "n"}, "activation": "swiglu", "stages": 4})", 1}})
    run("gemm_sm90_bf16_128x256x64_masked_persistent", v, masked_rows, masked_checked, 1, 3, 3);
}
}

// A from registers ("a_source": "registers", wgmma's `{a0, a1, a2, a3}` form): no golden has it, so
// each sm_90a golden's spec is rewritten with it, where the rules accept that, and the emitted kernel
// simulated at the first size of simtest::gemm_sizes (two tiles in M and N, ragged edges, a partial
// K block): the consumers load their A fragments from the stage with ld.shared and the wgmma reads
// them from the four warps' registers by the fragment layouts of 16-bit, tf32 and 8-bit A.
TEST_SUITE("sim_gemm") {
TEST_CASE("sm_90a GEMM kernels with A from registers, simulated whole, compute D = A * B") {
  int variants = 0;
  for (const auto& file : support::spec_files()) {
    auto doc = nlohmann::json::parse(support::slurp(file));
    if (!doc.contains("gemm") || doc.at("target") != "sm_90a") continue;
    if (const char* only = std::getenv("KSIM_ONLY"); only && support::stem(file) != only) continue;
    doc["name"] = support::stem(file) + "_a_registers";
    doc["gemm"]["a_source"] = "registers";
    ptxgen::Diagnostics diags;
    const auto checked = ptxgen::rules::parse_and_check(doc.dump(), diags);
    if (!checked.ok) continue;  // ping-pong consumers read A through descriptors (CONSUMERS-PINGPONG); WGMMA-REGISTERS; GLU-LAYOUT
    CAPTURE(file);
    const plan::Plan p = support::plan_of(*checked.parsed.spec);
    const std::string ptx = emit::ptx(p);
    REQUIRE(ptx.find("}, %rd") != std::string::npos);  // a wgmma with a register vector before the B descriptor
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const ksim::KernelPtr k = ksim::parse(ptx);
    const auto size = simtest::gemm_sizes(manifest, doc["gemm"].value("stages", 1)).front();
    const simtest::GemmResult r = simtest::run_gemm(*k, manifest, size[0], size[1], size[2], 777 + static_cast<unsigned>(variants));
    CHECK_MESSAGE(r.error.empty(), r.error);
    CHECK(r.checked == size[1] * simtest::checked_rows(manifest, size[0]));  // a grouped golden: its groups' valid rows
    CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " exceeds the bound (" << r.worst << " of it) at " << r.where);
    std::printf("sim %-60s %ldx%ldx%ld (%lu CTAs): max |err| %.2g (%.2g of the bound)\n", doc["name"].get<std::string>().c_str(),
                static_cast<long>(size[0]), static_cast<long>(size[1]), static_cast<long>(size[2]), static_cast<unsigned long>(r.ctas),
                r.max_err, r.worst);
    ++variants;
  }
  if (!std::getenv("KSIM_ONLY")) CHECK(variants >= 10);
}
}

// The gated activations (docs/spec.md, "Epilogues": swiglu, geglu) beyond their goldens' epilogues
// (sm_90a TMA; tcgen05 persistent TMA, B 128-byte swizzled): tcgen05's direct stores with an f32
// bias and B 64-byte swizzled (up's rows placed at tile.n / 2 in that layout), two M groups in
// a cluster multicasting A with a bf16 bias, and sm_90a's persistent ping-pong consumers with the
// run-time choice of store ("auto", an odd d: the direct one) and B 32-byte swizzled, each simulated whole against float64 over ragged tiles: D's width d = n / 2 odd and no
// multiple of the D tile, B's 2 d rows.
namespace {
// A shipped spec with a JSON merge patch on its gemm, planned, emitted and simulated whole at
// m x n x k (n: D's width) on `multiprocessors` (a persistent grid), with `seed`: no simulator
// error, every element of D compared, each within its float64 bound.
struct Patched {
  const char* spec;
  const char* patch;
  int64_t m, n, k;
  int multiprocessors;
};
simtest::GemmResult simulate_patched(const Patched& c, unsigned seed, nlohmann::json* manifest_out = nullptr) {
  auto doc = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/" + c.spec + ".json"));
  doc["gemm"].merge_patch(nlohmann::json::parse(c.patch));
  const support::Planned p = support::plan_of(support::checked_spec(doc.dump()));
  const auto manifest = nlohmann::json::parse(plan::manifest(p));
  if (manifest_out) *manifest_out = manifest;
  const ksim::KernelPtr k = ksim::parse(emit::ptx(p));
  const simtest::GemmResult r = simtest::run_gemm(*k, manifest, c.m, c.n, c.k, seed, {}, c.multiprocessors);
  CHECK_MESSAGE(r.error.empty(), r.error);
  CHECK(r.checked == c.m * c.n);
  CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " exceeds the bound (" << r.worst << " of it) at " << r.where);
  return r;
}
}  // namespace

TEST_SUITE("sim_gemm") {
TEST_CASE("gated activations on the other epilogues and schedules, simulated whole, compute act(P[:, :d]) * P[:, d:]") {
  using Case = Patched;  // n: D's width d
  for (const Case& c : {Case{"gemm_bf16_128x256x64_persistent_tma_geglu",
                             R"({"schedule": "data_parallel", "epilogue": "direct", "activation": "swiglu", "bias": {"dtype": "f32"}, "swizzle": {"b": 64}})", 253, 203,
                             189, 0},
                        Case{"gemm_bf16_128x256x64_persistent_tma_geglu",
                             R"({"tile": {"m": 256, "n": 128}, "cluster": [2, 1, 1], "schedule": "data_parallel", "epilogue": "direct", "bias": {"dtype": "bf16"}})",
                             300, 101, 130, 0},
                        Case{"gemm_sm90_bf16_128x256x64_bias_swiglu",
                             R"({"tile": {"n": 128}, "schedule": "persistent", "consumers": "pingpong", "epilogue": "auto", "activation": "geglu", "swizzle": {"b": 32}})",
                             253, 203, 189, 2}}) {
    const std::string name = c.spec;
    CAPTURE(name);
    nlohmann::json manifest;
    const simtest::GemmResult r = simulate_patched(c, 41, &manifest);
    CHECK(manifest.at("derived_sizes").at("d").at("exact") == true);
    std::printf("sim gated %-40s %ldx%ld (B %ld rows) x%ld: max |err| %.2g (%.2g of the bound)\n", c.spec, static_cast<long>(c.m),
                static_cast<long>(c.n), static_cast<long>(2 * c.n), static_cast<long>(c.k), r.max_err, r.worst);
  }
}
}

// The fused epilogue's alpha, beta C, residual, amax and D's scale (docs/spec.md, "Epilogues")
// beyond their goldens' schedules (sm_90a data-parallel TMA and direct; tcgen05 data-parallel
// TMA): sm_90a's persistent ping-pong consumers with the run-time choice of store ("auto", an odd
// n: the direct one), tcgen05 persistent with the TMA store (the amax raised by tiles of several
// CTAs), a tcgen05 CTA pair's direct stores, a gated product with a residual, the amax and D's
// scale, and quantized outputs on tcgen05 M = 64, a pair and a persistent gated kernel, each
// simulated whole against float64 on ragged tiles.
TEST_SUITE("sim_gemm") {
TEST_CASE("fused alpha, beta C, residual, amax and D's scale on the other schedules, simulated whole, match float64") {
  using Case = Patched;
  for (const Case& c : {Case{"gemm_sm90_bf16_128x128x64_alpha_beta_c_residual",
                             R"({"schedule": "persistent", "consumers": "pingpong", "epilogue": "auto", "amax": true, "d": {"dtype": "bf16", "scale": true}})",
                             253, 251, 189, 2},
                        Case{"gemm_bf16_128x256x64_alpha_c_residual_tma", R"({"schedule": "persistent", "amax": true})", 253, 504, 189, 2},
                        // A persistent TMA epilogue with a bias along n and D's scale (836 bytes of spill stores
                        // before its boxes were loaded in pieces): the bias at each piece's columns.
                        Case{"gemm_bf16_128x256x64_mxfp8_persistent_tma",
                             R"({"bias": {"dtype": "bf16", "along": "n"}, "d": {"dtype": "bf16", "scale": true}, "quantize": null})", 253, 480, 189, 2},
                        Case{"gemm_bf16_128x256x64_tma_amax",
                             R"({"tile": {"m": 256}, "cta_group": 2, "epilogue": "direct", "alpha": -0.5, "residual": {"dtype": "f16"}})", 301, 250, 130, 0},
                        Case{"gemm_sm90_bf16_128x256x64_bias_swiglu",
                             R"({"residual": {"dtype": "f32"}, "amax": true, "d": {"dtype": "bf16", "scale": true}})", 253, 200, 189, 0},
                        // Quantized D beyond its goldens' schedules: tcgen05 M = 64 (.16x256b fragments: a block's
                        // amax over the 4 lanes of its row), a CTA pair, and a persistent gated product as NVFP4.
                        Case{"gemm_bf16_128x256x64_bias_gelu_mxfp8", R"({"tile": {"m": 64}})", 253, 480, 189, 0},
                        Case{"gemm_bf16_128x256x64_bias_gelu_mxfp8", R"({"tile": {"m": 256}, "cta_group": 2, "d": {"dtype": "e5m2"}})", 301, 224, 130, 0},
                        Case{"gemm_bf16_128x256x64_persistent_tma_geglu",
                             R"({"epilogue": "direct", "d": {"dtype": "e2m1", "scale": true}, "quantize": "nvfp4"})", 253, 208, 189, 2},
                        // NVFP4 at tile.n 256 with gelu_tanh and the amax: refused by OUTPUT-SIZE until its bound
                        // counted the warps' shared code once (its golden is the 128 x 128 one).
                        Case{"gemm_bf16_128x128x64_scaled_gelu_amax_nvfp4", R"({"tile": {"n": 256}})", 253, 400, 189, 0}}) {
    const std::string name = c.spec;
    CAPTURE(name);
    const simtest::GemmResult r = simulate_patched(c, 43);
    std::printf("sim fused %-44s %s %ldx%ldx%ld: max |err| %.2g (%.2g of the bound)\n", c.spec, c.patch, static_cast<long>(c.m),
                static_cast<long>(c.n), static_cast<long>(c.k), r.max_err, r.worst);
  }
}
}

// An 8-bit D through the TMA store (docs/spec.md, "Epilogues": boxes of 128 one-byte columns) beyond
// its goldens' schedules, each simulated whole against float64, and each asserting which store ran
// (the simulator's count of TMA stores): tcgen05 M = 64 (.16x256b fragments: a pair of columns per
// st.shared.b16), a CTA pair, data-parallel (the staging ring over the operand ring) with a bias; a
// persistent gated product as MXFP8 on both engines; MXFP8 on a 4 x 2 cluster of CTA pairs
// (persistent, 16 CTAs walking five tile rows); sm_90a data-parallel e5m2 with a B-multicast
// cluster; "auto" with n = 250 (rows no tensor map strides: the direct store) and n = 496.
TEST_SUITE("sim_gemm") {
TEST_CASE("an 8-bit D through the TMA store on the other schedules, simulated whole, matches float64") {
  struct Case {
    Patched p;
    bool tma;  // the TMA store ran (else the direct store)
  };
  for (const Case& c : {Case{{"gemm_bf16_128x256x64_mxfp8_persistent_tma", R"({"tile": {"m": 64}})", 253, 480, 189, 2}, true},
                        Case{{"gemm_bf16_128x256x64_mxfp8_persistent_tma", R"({"tile": {"m": 256}, "cta_group": 2, "d": {"dtype": "e5m2"}})", 301, 224, 130, 2},
                             true},
                        Case{{"gemm_bf16_128x256x64_mxfp8_persistent_tma",
                              R"({"schedule": "data_parallel", "bias": {"dtype": "bf16"}, "quantize": null, "d": {"scale": false}})", 253, 496, 189, 0},
                             true},
                        Case{{"gemm_bf16_128x256x64_persistent_tma_geglu", R"({"d": {"dtype": "e4m3"}, "quantize": "mxfp8", "amax": true})", 253, 192, 189, 2},
                             true},
                        // A bias along n with the 8-bit D and MXFP8 (952 bytes of spill stores before the
                        // epilogue loaded its boxes in pieces of 32 columns): every piece's bias columns.
                        Case{{"gemm_bf16_128x256x64_mxfp8_persistent_tma", R"({"bias": {"dtype": "bf16", "along": "n"}})", 253, 480, 189, 2}, true},
                        Case{{"gemm_bf16_cta2_cluster_4x2_persistent_tma", R"({"d": {"dtype": "e4m3"}, "quantize": "mxfp8", "amax": true})", 5 * 256 - 3, 480,
                              315, 16},
                             true},
                        Case{{"gemm_sm90_bf16_128x256x64_bias_swiglu", R"({"d": {"dtype": "e4m3"}, "quantize": "mxfp8", "schedule": "persistent"})", 253, 192,
                              189, 2},
                             true},
                        Case{{"gemm_sm90_bf16_128x256x64_e4m3_amax_tma",
                              R"({"schedule": "data_parallel", "cluster": [1, 2, 1], "d": {"dtype": "e5m2", "scale": false}, "amax": false})", 253, 496,
                              189, 0},
                             true},
                        Case{{"gemm_sm90_bf16_128x256x64_e4m3_amax_tma", R"({"epilogue": "auto"})", 253, 250, 189, 2}, false},
                        Case{{"gemm_sm90_bf16_128x256x64_e4m3_amax_tma", R"({"epilogue": "auto"})", 253, 496, 189, 2}, true}}) {
    const std::string name = c.p.spec, patch = c.p.patch;
    CAPTURE(name);
    CAPTURE(patch);
    const simtest::GemmResult r = simulate_patched(c.p, 47);
    CHECK((r.stats.tma_stores > 0) == c.tma);
    std::printf("sim 8-bit D %-44s %s %ldx%ldx%ld (%s, %lu TMA stores): max |err| %.2g (%.2g of the bound)\n", c.p.spec, c.p.patch,
                static_cast<long>(c.p.m), static_cast<long>(c.p.n), static_cast<long>(c.p.k), c.tma ? "TMA" : "direct",
                static_cast<unsigned long>(r.stats.tma_stores), r.max_err, r.worst);
  }
}
}

// Block-wise f32 scale factors on sm_90a (docs/spec.md, "Block-wise f32 factors", issue 30): D is
// the sum over K blocks of 128 of SFA[kb][m] SFB[n / 128][kb] times the block's product, the
// float64 reference (src/sim/gemm.cpp) computed from the factors and operands as the spec states,
// its bound the block's partial sums, the factors' product and one fma per block. The golden runs
// in the test above (persistent, TMA store); here beyond it: several K blocks with a partial last
// one (k = 5 x 128 - 5 and 3 x 128 + 1), ragged M and N, the direct store with a bias and gelu_tanh
// into f32, e5m2 B, ping-pong consumers of 64 rows, and a B-multicast cluster.
TEST_SUITE("sim_gemm") {
TEST_CASE("block-wise f32 scale factors (sm_90a), simulated whole on several K blocks and ragged edges, match float64") {
  using Case = Patched;
  for (const Case& c : {Case{"gemm_sm90_e4m3_128x128x128_blockwise", R"({"schedule": "data_parallel", "epilogue": "direct", "registers": null})", 253, 250, 635, 0},
                        Case{"gemm_sm90_e4m3_128x128x128_blockwise",
                             R"({"b": {"dtype": "e5m2"}, "d": {"dtype": "f32"}, "bias": {"dtype": "bf16"}, "activation": "gelu_tanh", "epilogue": "direct"})", 131, 381,
                             385, 2},
                        Case{"gemm_sm90_e4m3_128x128x128_blockwise", R"({"tile": {"m": 64}, "consumers": "pingpong", "epilogue": "auto", "registers": null})", 189, 250, 507, 2},
                        Case{"gemm_sm90_e4m3_128x128x128_blockwise", R"({"cluster": [1, 2, 1], "schedule": "data_parallel", "registers": null})", 253, 256, 380, 0}}) {
    const std::string name = std::string(c.spec) + " " + c.patch;
    CAPTURE(name);
    const simtest::GemmResult r = simulate_patched(c, 47);
    CHECK(r.stats.mma > 0);
    std::printf("sim blockwise %s %ldx%ldx%ld: max |err| %.2g (%.2g of the bound)\n", c.patch, static_cast<long>(c.m), static_cast<long>(c.n),
                static_cast<long>(c.k), r.max_err, r.worst);
  }
}

// Two sets of partial sums (scale.partials 2, issue 30: block kb's promotion overlapped with block
// kb + 1's wgmmas): the K loop unrolled by two, the last block's set promoted after it. One K block
// (no iteration promotes; the after-loop promotion is set 0's), three (odd: set 0's last), four
// (even: set 1's last), five; persistent CTAs walking several tiles (the sets carried from tile to
// tile), ping-pong consumers of 64 rows, a B-multicast cluster, the direct store.
TEST_CASE("block-wise f32 scale factors with two sets of partial sums (sm_90a), odd and even K blocks, match float64") {
  using Case = Patched;
  for (const Case& c : {Case{"gemm_sm90_e4m3_128x128x128_blockwise", R"({})", 130, 248, 100, 1},
                        Case{"gemm_sm90_e4m3_128x128x128_blockwise", R"({"schedule": "data_parallel", "epilogue": "direct"})", 253, 131, 3 * 128 - 1, 0},
                        Case{"gemm_sm90_e4m3_128x128x128_blockwise", R"({"tile": {"m": 64}, "consumers": "pingpong", "epilogue": "auto"})", 189, 250, 3 * 128 + 1, 2},
                        Case{"gemm_sm90_e4m3_128x128x128_blockwise", R"({"cluster": [1, 2, 1], "schedule": "data_parallel", "scale": {"partials": 2}})", 253, 256, 5 * 128 - 5, 0}}) {
    const std::string name = std::string(c.spec) + " " + c.patch;
    CAPTURE(name);
    auto doc = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/" + c.spec + ".json"));
    doc["gemm"].merge_patch(nlohmann::json::parse(c.patch));
    const support::Planned p = support::plan_of(support::checked_spec(doc.dump()));
    REQUIRE(p.spec.gemm->scale->partials == 2);
    int unrolled = 0;
    for (const plan::Step* st : support::all_steps(p)) unrolled += st->kind == plan::StepKind::loop && st->unroll == 2;
    CHECK(unrolled == (c.patch == std::string(R"({"tile": {"m": 64}, "consumers": "pingpong", "epilogue": "auto"})") ? 2 : 1));  // a consumer loop each
    const simtest::GemmResult r = simulate_patched(c, 59);
    CHECK(r.stats.mma > 0);
    std::printf("sim blockwise two sets %s %ldx%ldx%ld: max |err| %.2g (%.2g of the bound)\n", c.patch, static_cast<long>(c.m), static_cast<long>(c.n),
                static_cast<long>(c.k), r.max_err, r.worst);
  }
}
}
