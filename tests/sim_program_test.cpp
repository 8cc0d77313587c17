// Every program-level golden, run whole by the kernel simulator on random inputs (random scale
// factors, valid sparsity metadata), its stored outputs against a float64 evaluation of the spec's
// ops (src/sim/program.cpp); and each once more with every load switched to TMA (emitted here).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "ptxgen/emit.hpp"
#include "ptxgen/rules.hpp"
#include "sim_program.hpp"
#include "support.hpp"

using namespace ptxgen;


TEST_SUITE("sim_program") {
TEST_CASE("every program golden, simulated whole, stores what its ops compute") {
  int n = 0;
  for (const auto& file : support::spec_files()) {
    nlohmann::json doc = nlohmann::json::parse(support::slurp(file));
    if (!doc.contains("program")) continue;
    if (const char* only = std::getenv("KSIM_ONLY"); only && support::stem(file) != only) continue;  // debugging one spec
    CAPTURE(file);
    std::string line;
    for (const bool all_tma : {false, true}) {
      CAPTURE(all_tma);
      if (all_tma)
        for (auto& o : doc["program"]["ops"])
          if (o["op"] == "load") o["via"] = "tma";
      const spec::Spec s = support::checked_spec(doc.dump());
      const plan::Plan p = support::plan_of(s);
      const auto manifest = nlohmann::json::parse(plan::manifest(p));
      const std::string ptx =
          all_tma ? emit::ptx(p) : support::slurp(support::source_root() + "/golden/" + support::stem(file) + ".ptx");
      const ksim::KernelPtr k = ksim::parse(ptx);
      const simtest::ProgramResult r = simtest::run_program(*k, *s.program, manifest, 99 + static_cast<unsigned>(n));
      CHECK_MESSAGE(r.error.empty(), r.error);
      // Every stored element is one the evaluation defines, but F_out of the decompression example:
      // its 4-row copy fills lanes 0, 32, 64, 96 only, and the kernel stores all 128 lanes.
      const long undefined = support::stem(file) == "prog_cp_shapes_decompress" ? 124 * 16 : 0;
      CHECK(r.checked == r.outputs - undefined);
      CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " exceeds the bound (" << r.worst << " of it) at " << r.where);
      char buf[128];
      std::snprintf(buf, sizeof buf, "  %s: %ld/%ld elements, max |err| %.2g (%.2g of the bound)", all_tma ? "tma" : "golden", r.checked, r.outputs,
                    r.max_err, r.worst);
      line += buf;
    }
    std::printf("sim %-34s%s\n", support::stem(file).c_str(), line.c_str());
    ++n;
  }
  if (!std::getenv("KSIM_ONLY")) CHECK(n >= 30);
}
}

// The program level's TMA store (docs/spec.md, "TMA stores"): specs/prog_pipelined_epilogue_bf16_tma.json
// is specs/prog_pipelined_epilogue_bf16.json with D stored by TMA through the staging tile
// "d_stage". Its golden stores D with one cp.async.bulk.tensor per tile where the direct one has
// per-element st.global; run at other ragged sizes (a 2 x 2 grid whose second row holds 2 rows and
// second column 8 columns of D, 2 K blocks the second of 8), both kernels are within the float64
// bound, and store the same D bit for bit (the same arithmetic, the same conversion).
TEST_SUITE("sim_program") {
TEST_CASE("a program's TMA store writes what its direct store writes, one box per tile, clipped at D's extents") {
  const auto count = support::occurrences;
  struct Run {
    std::string ptx;
    simtest::ProgramResult r;
  };
  const std::map<std::string, int64_t> sizes = {{"m", 130}, {"n", 72}, {"k", 72}};
  auto run = [&](const std::string& name) {
    const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/" + name + ".json"));
    const plan::Plan p = support::plan_of(s);
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    Run x{support::slurp(support::source_root() + "/golden/" + name + ".ptx"), {}};
    x.r = simtest::run_program(*ksim::parse(x.ptx), *s.program, manifest, 17, {}, sizes);
    CHECK_MESSAGE(x.r.error.empty(), x.r.error);
    CHECK_MESSAGE(x.r.worst <= 1.0, name << ": " << x.r.where);
    return x;
  };
  const Run direct = run("prog_pipelined_epilogue_bf16"), tma = run("prog_pipelined_epilogue_bf16_tma");
  // D's 96 clipped st.global (pairs of 64 bf16 columns in each of a thread's rows, R's 96 stay).
  CHECK(count(direct.ptx, "st.global") == 192);
  CHECK(count(tma.ptx, "st.global") == 96);
  CHECK(count(direct.ptx, "cp.async.bulk.tensor.2d.global.shared::cta") == 0);
  CHECK(count(tma.ptx, "cp.async.bulk.tensor.2d.global.shared::cta") == 1);
  CHECK(count(tma.ptx, "st.shared.v4.b32") == 8);  // a thread's row of 64 bf16: 8 chunks of 16 bytes
  // The 128 x 256 tile: four boxes, no st.global; from box 2 on, each waits for box j - 2's reads.
  const std::string n256 = support::slurp(support::source_root() + "/golden/prog_pipelined_epilogue_bf16_tma_n256.ptx");
  CHECK(count(n256, "st.global") == 0);
  CHECK(count(n256, "cp.async.bulk.tensor.2d.global.shared::cta") == 4);
  CHECK(count(n256, "cp.async.bulk.wait_group.read 1;") == 4);
  CHECK(direct.r.stats.tma_stores == 0);
  CHECK(tma.r.stats.tma_stores == 2 * 2);
  REQUIRE(direct.r.tensors.size() == tma.r.tensors.size());
  for (size_t i = 0; i < tma.r.tensors.size(); ++i) {
    const auto &a = direct.r.tensors[i], &b = tma.r.tensors[i];
    CAPTURE(b.name);
    CHECK(b.rows * b.cols == (b.name == "D" || b.name == "R" ? 130 * 72 : b.rows * b.cols));
    REQUIRE(a.got.size() == b.got.size());
    size_t differ = 0;
    for (size_t j = 0; j < a.got.size(); ++j) differ += !(a.got[j] == b.got[j]);
    CHECK(differ == 0);
  }
}
}

// A TMA store in a program without roles (one role of all warps, the planner ordering the ops):
// the example program of the rule table with its D one box of f32 wide (128 x 32, a slice of the
// accumulator) stored through "d_stage", simulated whole against float64; the CTA waits for the
// store's reads before it leaves (cp.async.bulk.wait_group.read 0 in the teardown).
TEST_SUITE("sim_program") {
TEST_CASE("a TMA store in a program without roles, simulated whole") {
  nlohmann::json j = nlohmann::json::parse(rules::example_program_base());
  auto& p = j["program"];
  p["globals"]["D"]["shape"] = {128, 32};
  p["smem"]["d_stage"] = {{"dtype", "f32"}, {"shape", {128, 32}}, {"major", "k"}, {"swizzle", 128}};
  p["tmem"]["acc0"] = {{"slice", {{"of", "t"}, {"columns", {0, 32}}}}};
  p["ops"][6]["src"] = "acc0";
  p["ops"][7] = {{"op", "store"}, {"regs", "r"}, {"dst", "D"}, {"via", "tma"}, {"stage", "d_stage"}};
  const spec::Spec s = support::checked_spec(j.dump());
  const plan::Plan pl = support::plan_of(s);
  const std::string ptx = emit::ptx(pl);
  CHECK(ptx.find("cp.async.bulk.wait_group.read 0;                       // the stores have read the staging tiles") != std::string::npos);
  const simtest::ProgramResult r = simtest::run_program(*ksim::parse(ptx), *s.program, nlohmann::json::parse(plan::manifest(pl)), 23);
  CHECK_MESSAGE(r.error.empty(), r.error);
  CHECK(r.checked == 128 * 32);
  CHECK(r.checked == r.outputs);
  CHECK_MESSAGE(r.worst <= 1.0, r.where);
  CHECK(r.stats.tma_stores == 1);
}
}
