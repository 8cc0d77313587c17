// Goldens: `ptxgen emit specs/X.json --check golden/X.ptx` passes for every spec (the path users'
// builds take), and every golden is assembled by ptxas for its target. Goldens change only through
// tools/update-golden (which runs the same command with --update).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "ptxgen/emit.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/rules.hpp"
#include "cli_support.hpp"

using namespace ptxgen;

TEST_SUITE("golden") {
TEST_CASE("emit --check passes for every golden") {
  int n = 0;
  for (const auto& f : support::spec_files()) {
    CAPTURE(f);
    const std::string golden = support::source_root() + "/golden/" + support::stem(f) + ".ptx";
    REQUIRE_MESSAGE(std::filesystem::exists(golden), "no golden for " << f << ": run tools/update-golden");
    const spec::Spec s = support::checked_spec(support::slurp(f));
    CHECK_MESSAGE(s.name == support::stem(f), "a spec's name must match its file name");
    const io::Run r = support::ptxgen_run({"emit", f, "--check", golden});
    CHECK_MESSAGE(r.exit_code == 0, "golden differs (run tools/update-golden and read the diff):\n" << r.output);
    // Before the verdict, the spec's warnings as `check` prints them: only the specs that cover a
    // path ptxgen warns about on purpose have any (a persistent accumulator with one buffer).
    Diagnostics d;
    const auto checked = rules::parse_and_check(support::slurp(f), d);
    std::string warnings;
    for (const auto& x : d.list()) warnings += format_text(x, f, &checked.parsed.positions) + "\n";
    const bool one_buffer = support::stem(f) == "gemm_bf16_a_tmem_persistent_one_buffer" ||
                            support::stem(f) == "gemm_sparse_mxf4nvf4_ue8m0_v32_m256_persistent_tma_sm110a" ||
                            support::stem(f) == "gemm_sparse_tf32_cta2_m128_n320_persistent_tma_sm110a";
    CHECK(d.list().size() == (one_buffer ? 1u : 0u));
    for (const auto& x : d.list()) CHECK(x.rule == "PLAN-ACC-SINGLE-BUFFER");
    CHECK(r.output == warnings + golden + ": matches\n");
    const std::string ptx = support::slurp(golden);
    CHECK_MESSAGE(std::all_of(ptx.begin(), ptx.end(), [](unsigned char c) { return c < 0x80; }),
                  "non-ASCII byte in PTX (ptxas refuses it)");
    ++n;
  }
  CHECK(n >= 30);
  for (const auto& e : std::filesystem::directory_iterator(support::source_root() + "/golden"))
    if (e.path().extension() == ".ptx")
      CHECK_MESSAGE(std::filesystem::exists(support::source_root() + "/specs/" + e.path().stem().string() + ".json"),
                    "golden without a spec: " << e.path());
}

TEST_CASE("ptxas assembles every golden for its target") {
  auto ptxas = io::find_ptxas();
  REQUIRE_MESSAGE(ptxas, "ptxas not found: the golden tests need the CUDA toolkit");
  const auto ver = io::ptxas_version(*ptxas);
  REQUIRE(ver);
  const char* nvdisasm = std::getenv("PTXGEN_NVDISASM");
  const std::string tmp = std::filesystem::temp_directory_path() / ("ptxgen-golden-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  int assembled = 0;
  for (const auto& f : support::spec_files()) {
    CAPTURE(f);
    const spec::Spec s = support::checked_spec(support::slurp(f));
    const auto& t = isa::target_info(s.target);
    const std::string golden = support::source_root() + "/golden/" + support::stem(f) + ".ptx";
    const std::string cubin = tmp + "/" + support::stem(f) + ".cubin";
    io::Run r = io::run({*ptxas, "-v", "-arch=" + std::string(t.name), golden, "-o", cubin});
    REQUIRE(r.launched);
    CHECK_MESSAGE(r.exit_code == 0, "ptxas " << ver->text << " rejected " << golden << ":\n" << r.output);
    // A warning is a defect too (issue 32): ptxas accepts, but the kernel is not what was meant.
    CHECK_MESSAGE(r.output.find("warning") == std::string::npos, "ptxas " << ver->text << " warns on " << golden << ":\n" << r.output);
    ++assembled;
    if (s.gemm) {
      // The template's kernels keep everything in registers: ptxas -v reports no local-memory
      // spills (a program may ask for more registers than a thread has: prog_ldst_shapes).
      static const std::regex spill("(\\d+) bytes spill stores, (\\d+) bytes spill loads");
      int reports = 0;
      for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), spill); it != std::sregex_iterator(); ++it, ++reports)
        CHECK_MESSAGE(((*it)[1] == "0" && (*it)[2] == "0"), "ptxas spills in " << golden << ": " << it->str());
      CHECK_MESSAGE(reports > 0, "no spill report from ptxas -v:\n" << r.output);
    }
    if (nvdisasm && r.exit_code == 0) {
      // One tensor-core MMA instruction in the SASS per planned MMA (wgmma: every warpgroup runs
      // the same instructions, so those of one warpgroup).
      const plan::Plan p = support::plan_of(s);
      const long want = p.mma_instructions();
      io::Run d = io::run({nvdisasm, cubin});
      REQUIRE(d.exit_code == 0);
      static const std::regex mma("\\b(UTC[A-Z]*MMA|HGMMA|QGMMA|IGMMA)\\b");
      const auto count = std::distance(std::sregex_iterator(d.output.begin(), d.output.end(), mma), std::sregex_iterator());
      CHECK(count == want);
      // One UTMALDG per planned box (plain loads issue none; a pipeline's loop issues each once),
      // one UTMASTG per planned TMA store of D.
      static const std::regex tma("\\bUTMALDG\\b"), tma_st("\\bUTMASTG\\b");
      CHECK(std::distance(std::sregex_iterator(d.output.begin(), d.output.end(), tma), std::sregex_iterator()) == p.tma_boxes());
      CHECK(std::distance(std::sregex_iterator(d.output.begin(), d.output.end(), tma_st), std::sregex_iterator()) == p.tma_stores());
    }
  }
  std::filesystem::remove_all(tmp);
  CHECK(assembled >= 30);
  if (!nvdisasm) MESSAGE("PTXGEN_NVDISASM not set: SASS instruction counts not checked");
}
}
