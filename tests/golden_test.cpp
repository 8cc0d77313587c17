// Goldens: `ptxgen emit specs/X.json --check golden/X.ptx` passes for every spec (the path users'
// builds take), and every golden is assembled by ptxas for its target. Goldens change only through
// tools/update-golden (which runs the same command with --update).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "ptxgen/emit.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/rules.hpp"
#include "cli_support.hpp"

using namespace ptxgen;

namespace {
// One kernel's SASS as nvdisasm prints it: its instructions in order (predicate guard included,
// the trailing ";" and encoding comments dropped) and the place of each label (".L_x_12").
struct Sass {
  std::vector<std::string> ins;
  std::map<std::string, size_t> labels;
};

Sass parse_sass(const std::string& text) {
  static const std::regex label("^(\\.L_x_\\d+):"), instruction("^\\s*/\\*[0-9a-f]+\\*/\\s+([^;]*?)\\s*;");
  Sass s;
  std::istringstream in(text);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, label)) s.labels[m[1]] = s.ins.size();
    else if (std::regex_search(line, m, instruction)) s.ins.push_back(m[1]);
  }
  return s;
}

// The innermost loop around every instruction `what` matches: its head (a backward branch's
// target) and the instructions one iteration runs, from the head to that branch, the branch not
// counted. An mbarrier wait's retry, which ptxas places out of line after the kernel's last
// instruction, branches back into the loop too; the loop it closes holds that tail and so is never
// the smallest. count 0: no loop holds them all; matched: the instructions `what` matches.
struct Loop {
  size_t head = 0;
  long count = 0, matched = 0;
};

Loop innermost_loop(const Sass& s, const std::regex& what) {
  static const std::regex branch("\\bBRA\\b.*`\\((\\.L_x_\\d+)\\)");
  std::vector<size_t> hits;
  for (size_t i = 0; i < s.ins.size(); ++i)
    if (std::regex_search(s.ins[i], what)) hits.push_back(i);
  Loop best;
  best.matched = static_cast<long>(hits.size());
  std::smatch m;
  for (size_t i = 0; i < s.ins.size() && !hits.empty(); ++i) {
    if (!std::regex_search(s.ins[i], m, branch)) continue;
    const auto head = s.labels.find(m[1]);
    if (head == s.labels.end() || head->second > hits.front() || i < hits.back()) continue;
    const long n = static_cast<long>(i - head->second);
    if (!best.count || n < best.count) {
      best.head = head->second;
      best.count = n;
    }
  }
  return best;
}
}  // namespace

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
      // The code sections only (-c) and no dataflow annotations (-ndf): the same instruction
      // lines, in about 15 % less of CI's time (nvdisasm over every golden takes longer than ptxas).
      io::Run d = io::run({nvdisasm, "-c", "-ndf", cubin});
      REQUIRE(d.exit_code == 0);
      static const std::regex mma("\\b(UTC[A-Z]*MMA|HGMMA|QGMMA|IGMMA)\\b");
      const auto count = std::distance(std::sregex_iterator(d.output.begin(), d.output.end(), mma), std::sregex_iterator());
      CHECK(count == want);
      // One UTMALDG per planned box (plain loads issue none; a pipeline's loop issues each once),
      // one UTMASTG per planned TMA store of D.
      static const std::regex tma("\\bUTMALDG\\b"), tma_st("\\bUTMASTG\\b");
      CHECK(std::distance(std::sregex_iterator(d.output.begin(), d.output.end(), tma), std::sregex_iterator()) == p.tma_boxes());
      CHECK(std::distance(std::sregex_iterator(d.output.begin(), d.output.end(), tma_st), std::sregex_iterator()) == p.tma_stores());
      // One STSM per stmatrix of the PTX (the wgmma TMA epilogue's 16-bit D staging, §9.7.14.5.16):
      // ptxas keeps each, none is split into STS.
      static const std::regex stsm("\\bSTSM\\b"), stmatrix("\\bstmatrix\\.");
      const std::string text = support::slurp(golden);
      CHECK(std::distance(std::sregex_iterator(d.output.begin(), d.output.end(), stsm), std::sregex_iterator()) ==
            std::distance(std::sregex_iterator(text.begin(), text.end(), stmatrix), std::sregex_iterator()));
      // Issue 33: the SASS instructions per K block of the MMA warp's and the producer's loops in
      // the 128x256 bf16 persistent TMA kernel and the CTA-pair one (256x256, a 4x2 cluster of
      // pairs, multicast), against CUTLASS's kernels read the same way (docs/architecture.md,
      // "SASS per K block"): 44 (MMA) and 31 (producer), 35 for the pair's producer. Each issues
      // its single-thread instructions under elect.sync in warp-converged code: before, lane 0
      // issued in divergent code, ptxas wrapped each instruction in a loop over the active lanes
      // (ELECT ... BRA), and the loops ran 68 and 45 (87 for the pair's producer).
      // At most: what ptxgen reaches (ptxas 13.0): the MMA warp one over CUTLASS (its lanes meet
      // after the full wait, bar.warp.sync), the pair's producer 71, where each CTA issues its part
      // of the multicast boxes under a branch per part (docs/architecture.md).
      struct Figure {
        const char* spec;
        long mma, producer;
      };
      static const Figure figures[] = {{"gemm_bf16_persistent_tma_128x256x64", 45, 29},
                                       {"gemm_bf16_cta2_cluster_4x2_persistent_tma", 44, 71}};
      // Issue 30: the block-wise kernel's two sets of partial sums. Its consumer loop (unrolled by
      // two) holds both K blocks' QGMMAs and, per K block, one WARPGROUP.DEPBAR (wgmma.wait_group 0
      // before the issue; ptxas serializing the wgmmas would put one after every QGMMA, C7514);
      // after each block's last QGMMA the 64 FFMAs of the previous block's promotion run before the
      // next DEPBAR, while the group is in flight. At most 150 instructions per K block (ptxas 13.0:
      // 149.5; the one-set kernel's 149 held its FFMAs behind the wait).
      if (support::stem(f) == "gemm_sm90_e4m3_128x128x128_blockwise") {
        const Sass sass = parse_sass(d.output);
        const Loop l = innermost_loop(sass, mma);
        MESSAGE("the block-wise consumer's SASS instructions per K block: " << l.count << " / 2");
        CHECK(l.matched == want);
        CHECK(l.count > 0);
        CHECK(l.count <= 2 * 150);
        static const std::regex depbar("\\bWARPGROUP\\.DEPBAR\\b"), last("\\bQGMMA\\b.*\\bgsb0\\b"), ffma("\\bFFMA\\b");
        int depbars = 0, overlapped = 0, after_last = -1;
        for (long i = 0; i < l.count; ++i) {
          const std::string& x = sass.ins.at(l.head + static_cast<size_t>(i));
          if (std::regex_search(x, depbar)) ++depbars, after_last = -1;
          if (std::regex_search(x, last)) after_last = 0;
          if (after_last >= 0 && std::regex_search(x, ffma) && ++after_last == 64) ++overlapped;
        }
        CHECK(depbars == 2);
        CHECK(overlapped == 2);
      }
      for (const Figure& fig : figures) {
        if (support::stem(f) != fig.spec) continue;
        const Sass sass = parse_sass(d.output);
        static const std::regex elect("\\bELECT\\b");
        struct Role {
          std::string name;
          const std::regex* what;
          long figure, matched;
        };
        for (const Role& r : {Role{"MMA warp", &mma, fig.mma, want}, Role{"producer", &tma, fig.producer, p.tma_boxes()}}) {
          CAPTURE(r.name);
          const Loop l = innermost_loop(sass, *r.what);
          MESSAGE(std::string(fig.spec) << ": the " << r.name << "'s SASS instructions per K block: " << l.count);
          CHECK(l.matched == r.matched);  // the loop holds every MMA (UTMALDG) of the kernel
          CHECK(l.count > 0);
          CHECK(l.count <= r.figure);
          // No loop over the active lanes: ptxas's ELECT, which picks the lane of each trip.
          for (long i = 0; i < l.count; ++i) CHECK_FALSE(std::regex_search(sass.ins.at(l.head + static_cast<size_t>(i)), elect));
        }
      }
    }
  }
  std::filesystem::remove_all(tmp);
  CHECK(assembled >= 30);
  if (!nvdisasm) MESSAGE("PTXGEN_NVDISASM not set: SASS instruction counts not checked");
}
// Issue 28's target for the tcgen05 fused kernels: no spills. A TMA epilogue with a bias, C, a
// residual or an activation fused, over the axes that size its registers: the bias along n (a
// register a column in each thread) and m, bf16 and f32 inputs, a 16- and an 8-bit D (a box of 64
// or 128 columns, the latter quantized to MXFP8), tile.n 256 and 128, persistent and
// data-parallel, one CTA and a pair. Each is built as users build it (ptxgen build: ptxas -v) and
// its report says 0 bytes of spill stores and loads. Before the epilogue loaded its boxes in
// pieces and its reads stopped branching around the role's own warps, eight of the TMA ones spilled
// (136 to 3344 bytes of spill stores: every persistent one with a bias along n, C or a residual,
// and the data-parallel MXFP8 one with a bias along n), and the four direct ones.
TEST_CASE("tcgen05 fused epilogues (TMA and direct): ptxas -v reports no spills") {
  struct Config {
    const char* name;
    int tile_m, tile_n;
    bool pair, persistent;
    const char* d;  // the members past "d", as JSON
    const char* epilogue = "tma";
  };
  const Config configs[] = {
      {"p_128x256_bf16_bias_n_bf16_gelu", 128, 256, false, true,
       R"("d": {"dtype": "bf16", "scale": true}, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh")"},
      {"p_128x256_e4m3_mxfp8_bias_n_bf16_gelu_amax", 128, 256, false, true,
       R"("d": {"dtype": "e4m3", "scale": true}, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh", "amax": true, "quantize": "mxfp8")"},
      {"dp_128x256_bf16_bias_n_f32_silu", 128, 256, false, false,
       R"("d": {"dtype": "bf16"}, "bias": {"dtype": "f32", "along": "n"}, "activation": "silu")"},
      {"dp_128x128_f16_bias_m_bf16_gelu", 128, 128, false, false,
       R"("d": {"dtype": "f16"}, "bias": {"dtype": "bf16", "along": "m"}, "activation": "gelu_tanh")"},
      {"p_128x128_bf16_bias_m_f32_silu", 128, 128, false, true,
       R"("d": {"dtype": "bf16"}, "bias": {"dtype": "f32", "along": "m"}, "activation": "silu")"},
      {"dp_128x256_bf16_c_beta_residual", 128, 256, false, false,
       R"("d": {"dtype": "bf16"}, "c": {"dtype": "f32"}, "beta": 0.5, "residual": {"dtype": "bf16"})"},
      {"p_128x256_f16_c_beta_bias_n_gelu", 128, 256, false, true,
       R"("d": {"dtype": "f16"}, "c": {"dtype": "bf16"}, "beta": 0.5, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh")"},
      {"p_128x256_e4m3_bias_n_f32_residual", 128, 256, false, true,
       R"("d": {"dtype": "e4m3", "scale": true}, "bias": {"dtype": "f32", "along": "n"}, "residual": {"dtype": "bf16"})"},
      {"dp_128x128_e4m3_mxfp8_bias_n_silu", 128, 128, false, false,
       R"("d": {"dtype": "e4m3", "scale": true}, "bias": {"dtype": "bf16", "along": "n"}, "activation": "silu", "quantize": "mxfp8")"},
      {"p_128x128_bf16_c_bias_n_gelu_residual", 128, 128, false, true,
       R"("d": {"dtype": "bf16"}, "c": {"dtype": "bf16"}, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh", "residual": {"dtype": "bf16"})"},
      {"cta2_p_256x256_bf16_bias_n_bf16_gelu", 256, 256, true, true,
       R"("d": {"dtype": "bf16"}, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh")"},
      {"cta2_dp_256x256_e4m3_mxfp8_bias_m_gelu", 256, 256, true, false,
       R"("d": {"dtype": "e4m3", "scale": true}, "bias": {"dtype": "bf16", "along": "m"}, "activation": "gelu_tanh", "quantize": "mxfp8")"},
      {"cta2_p_256x256_f16_c_beta_residual_silu", 256, 256, true, true,
       R"("d": {"dtype": "f16"}, "c": {"dtype": "f32"}, "beta": 0.5, "residual": {"dtype": "bf16"}, "activation": "silu")"},
      {"cta2_dp_256x256_bf16_bias_m_f32_gelu", 256, 256, true, false,
       R"("d": {"dtype": "bf16"}, "bias": {"dtype": "f32", "along": "m"}, "activation": "gelu_tanh")"},
      // The direct store's reads are the same ops: four persistent ones that spilled on main (80 to
      // 1660 bytes), their reads branched as the TMA epilogue's were.
      {"direct_p_128x256_bf16_bias_n_bf16_gelu", 128, 256, false, true,
       R"("d": {"dtype": "bf16"}, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh")", "direct"},
      {"direct_p_128x256_f16_c_beta_bias_n_gelu", 128, 256, false, true,
       R"("d": {"dtype": "f16"}, "c": {"dtype": "bf16"}, "beta": 0.5, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh")", "direct"},
      {"direct_p_128x128_bf16_c_bias_n_gelu_residual", 128, 128, false, true,
       R"("d": {"dtype": "bf16"}, "c": {"dtype": "bf16"}, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh", "residual": {"dtype": "bf16"})",
       "direct"},
      // gelu's erf form: 14 steps an element, three temporaries (docs/spec.md, "Activations")
      {"p_128x256_bf16_bias_n_bf16_gelu_erf", 128, 256, false, true,
       R"("d": {"dtype": "bf16"}, "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu")"},
      {"direct_cta2_p_256x256_f16_c_beta_residual_silu", 256, 256, true, true,
       R"("d": {"dtype": "f16"}, "c": {"dtype": "f32"}, "beta": 0.5, "residual": {"dtype": "bf16"}, "activation": "silu")", "direct"},
      // alpha and beta as inputs (issue 28): a register each beside the constants' immediates, on a
      // persistent CTA pair's TMA store and a persistent direct store.
      {"cta2_p_256x256_f16_alpha_c_beta_input_residual_silu", 256, 256, true, true,
       R"("d": {"dtype": "f16"}, "alpha": "input", "c": {"dtype": "f32"}, "beta": "input", "residual": {"dtype": "bf16"}, "activation": "silu")"},
      {"direct_p_128x256_f16_alpha_c_beta_input_bias_n_gelu", 128, 256, false, true,
       R"("d": {"dtype": "f16"}, "alpha": "input", "c": {"dtype": "bf16"}, "beta": "input", "bias": {"dtype": "bf16", "along": "n"}, "activation": "gelu_tanh")",
       "direct"},
  };
  REQUIRE_MESSAGE(io::find_ptxas(), "ptxas not found: the golden tests need the CUDA toolkit");
  const std::filesystem::path tmp = std::filesystem::temp_directory_path() / ("ptxgen-nospill-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  static const std::regex spill("(\\d+) bytes spill stores, (\\d+) bytes spill loads"), used("Used (\\d+) registers");
  for (const Config& c : configs) {
    const std::string name = c.name;
    CAPTURE(name);
    const std::string spec = std::string(R"({"ptxgen": 1, "name": ")") + c.name + R"(", "target": "sm_100a", "gemm": {)" +
                             R"("m": 4096, "n": 4096, "k": 4096, "a": {"dtype": "bf16", "major": "k"}, "b": {"dtype": "bf16", "major": "k"}, )" +
                             R"("accumulator": "f32", "tile": {"m": )" + std::to_string(c.tile_m) + R"(, "n": )" + std::to_string(c.tile_n) +
                             R"(, "k": 64}, "stages": 4, "swizzle": {"a": 128, "b": 128}, "epilogue": ")" + c.epilogue + "\", " +
                             (c.pair ? R"("cta_group": 2, )" : "") + (c.persistent ? R"("schedule": "persistent", )" : "") + c.d + "}}";
    const std::filesystem::path json = tmp / (std::string(c.name) + ".json"), out = tmp / c.name;
    std::ofstream(json) << spec;
    const io::Run r = support::ptxgen_run({"build", json.string(), "-o", out.string()});
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK_MESSAGE(r.output.find("PTXAS-SPILL") == std::string::npos, r.output);
    const std::string report = support::slurp(out.string() + ".ptxas.txt");
    std::smatch m, regs;
    REQUIRE_MESSAGE(std::regex_search(report, m, spill), "no spill report from ptxas -v:\n" << report);
    REQUIRE(std::regex_search(report, regs, used));
    const std::string registers = regs[1].str();
    CAPTURE(registers);
    CHECK(m[1] == "0");
    CHECK(m[2] == "0");
  }
  std::filesystem::remove_all(tmp);
}
}
