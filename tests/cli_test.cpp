// The command line: exit codes, no output on failure, atomic writes, toolchain errors, determinism.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ptxgen/io.hpp"
#include "cli_support.hpp"

namespace fs = std::filesystem;
using ptxgen::io::Run;
using support::bin;
using support::ptxgen_env;
using support::ptxgen_run;
using support::TempDir;
using support::write;

namespace {

std::string spec(const std::string& name) { return support::source_root() + "/specs/" + name + ".json"; }

std::string invalid_spec(const TempDir& t) {
  nlohmann::json j = nlohmann::json::parse(ptxgen::rules::example_base());
  j["gemm"]["tile"]["m"] = 96;
  write(t / "bad.json", j.dump());
  return t / "bad.json";
}

}  // namespace

TEST_SUITE("cli") {
TEST_CASE("check: 0 on a valid spec, 1 with the rule id and pointer on an invalid one") {
  TempDir t;
  CHECK(ptxgen_run({"check", spec("gemm_bf16_tn_128x256x64")}).exit_code == 0);
  Run r = ptxgen_run({"check", invalid_spec(t)});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("error[MMA-M]: tile.m=96") != std::string::npos);
  CHECK(r.output.find("bad.json:1:") != std::string::npos);
  CHECK(r.output.find("at /gemm/tile/m") != std::string::npos);
  Run j = ptxgen_run({"check", invalid_spec(t), "--diagnostics=json"});
  CHECK(j.exit_code == 1);
  const auto first_line = j.output.substr(0, j.output.find('\n'));
  const auto parsed = nlohmann::json::parse(first_line);
  CHECK(parsed["rule"] == "MMA-M");
  CHECK(parsed["pointer"] == "/gemm/tile/m");
  CHECK(parsed["line"] == 1);
}

TEST_CASE("usage errors exit 2") {
  CHECK(ptxgen_run({}).exit_code == 2);
  CHECK(ptxgen_run({"frobnicate"}).exit_code == 2);
  CHECK(ptxgen_run({"check"}).exit_code == 2);
  CHECK(ptxgen_run({"emit", spec("gemm_bf16_tn_128x256x64"), "--bogus"}).exit_code == 2);
  CHECK(ptxgen_run({"check", "x.json", "--diagnostics=xml"}).exit_code == 2);
  CHECK(ptxgen_run({"explain", "NO-SUCH-RULE"}).exit_code == 2);
  CHECK(ptxgen_run({"explain", "MMA-N"}).exit_code == 0);
  CHECK(ptxgen_run({"rules"}).exit_code == 0);
}

TEST_CASE("missing or unreadable spec files exit 1 with the OS error") {
  TempDir t;
  Run r = ptxgen_run({"check", t / "nope.json"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("No such file or directory") != std::string::npos);
  Run d = ptxgen_run({"check", t.path.string()});
  CHECK(d.exit_code == 1);
  CHECK(d.output.find("is a directory") != std::string::npos);
}

TEST_CASE("no output file on an invalid spec; unwritable destinations exit 1") {
  TempDir t;
  Run r = ptxgen_run({"emit", invalid_spec(t), "-o", t / "out.ptx"});
  CHECK(r.exit_code == 1);
  CHECK_FALSE(fs::exists(t / "out.ptx"));
  Run u = ptxgen_run({"emit", spec("gemm_bf16_tn_128x256x64"), "-o", t / "no/such/dir/out.ptx"});
  CHECK(u.exit_code == 1);
  CHECK(u.output.find("No such file or directory") != std::string::npos);
  // Nothing but the destination appears: no temporary files left behind.
  Run ok = ptxgen_run({"emit", spec("gemm_bf16_tn_128x256x64"), "-o", t / "out.ptx"});
  CHECK(ok.exit_code == 0);
  int files = 0;
  for (const auto& e : fs::directory_iterator(t.path)) files += e.path().filename() != "bad.json";
  CHECK(files == 1);
}

TEST_CASE("-o - writes to standard output; same bytes as the golden, from any directory") {
  const std::string golden = support::slurp(support::source_root() + "/golden/gemm_bf16_tn_128x256x64.ptx");
  Run r = ptxgen_run({"emit", spec("gemm_bf16_tn_128x256x64"), "-o", "-"});
  CHECK(r.exit_code == 0);
  CHECK(r.output == golden);
  TempDir t;
  Run again = ptxgen::io::run({"/bin/sh", "-c", "cd '" + t.path.string() + "' && LC_ALL=C.UTF-8 '" + bin() + "' emit '" +
                                                   spec("gemm_bf16_tn_128x256x64") + "' -o -"});
  CHECK(again.output == golden);
}

TEST_CASE("build: cubin and resource report; toolchain failures exit 3") {
  TempDir t;
  Run r = ptxgen_run({"build", spec("gemm_bf16_tn_128x256x64"), "-o", t / "k.cubin"});
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(t / "k.cubin"));
  CHECK(fs::exists(t / "k.ptx"));
  CHECK(support::slurp(t / "k.ptxas.txt").find("Used ") != std::string::npos);

  Run missing = ptxgen_env({"PTXGEN_PTXAS=" + t / "none"}, {"build", spec("gemm_bf16_tn_128x256x64"), "-o", t / "m.cubin"});
  CHECK(missing.exit_code == 3);
  CHECK(missing.output.find("is not an executable file") != std::string::npos);
  CHECK_FALSE(fs::exists(t / "m.cubin"));

  write(t / "old-ptxas", "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.99'\n");
  ::chmod((t / "old-ptxas").c_str(), 0755);
  Run old = ptxgen_env({"PTXGEN_PTXAS=" + t / "old-ptxas"}, {"build", spec("gemm_bf16_sm110a"), "-o", t / "o.cubin"});
  CHECK(old.exit_code == 3);
  CHECK(old.output.find("needs CUDA 13.0 or newer") != std::string::npos);

  write(t / "bad-ptxas", "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'release 13.0'; exit 0; fi\necho 'ptxas fatal   : boom'; exit 255\n");
  ::chmod((t / "bad-ptxas").c_str(), 0755);
  Run bad = ptxgen_env({"PTXGEN_PTXAS=" + t / "bad-ptxas"}, {"build", spec("gemm_bf16_tn_128x256x64"), "-o", t / "b.cubin"});
  CHECK(bad.exit_code == 3);
  CHECK(bad.output.find("ptxas fatal   : boom") != std::string::npos);
  CHECK_FALSE(fs::exists(t / "b.cubin"));
}

TEST_CASE("plan text and JSON are deterministic and name every descriptor field") {
  Run a = ptxgen_run({"plan", spec("gemm_bf16_a_tmem_m256"), "--json"});
  Run b = ptxgen_run({"plan", spec("gemm_bf16_a_tmem_m256"), "--json"});
  CHECK(a.exit_code == 0);
  CHECK(a.output == b.output);
  const auto j = nlohmann::json::parse(a.output);
  CHECK(j["format"] == ptxgen::emit::kPlanJsonFormat);
  // The MMA role's K loop: its first mma step's first instruction.
  nlohmann::json mma;
  for (const auto& r : j["roles"])
    if (r["name"] == "mma")
      for (const auto& st : r["steps"][0]["body"])
        if (st["step"] == "mma" && mma.is_null()) mma = st["mma"]["instrs"][0];
  REQUIRE_FALSE(mma.is_null());
  CHECK(mma["b"]["fields"].contains("stride_byte_offset"));
  CHECK(mma["b"]["fields"]["version"]["raw"] == 1);
  CHECK(mma["a"]["column"] == 256);  // A in tensor memory after D's 2 x 128 columns
  CHECK(mma["idesc"]["fields"]["m_dim"]["value"] == "M=128");
  Run text = ptxgen_run({"plan", spec("gemm_bf16_a_tmem_m256")});
  CHECK(text.output.find("Role \"mma\": warp 5, one thread") != std::string::npos);
}
}

// Block scaling's and sparse A's refusals through the command line: each rule's failing example (the rule table's)
// exits 1 with the rule id and the pointer, and `build` writes nothing: no PTX, cubin or manifest.
TEST_SUITE("cli") {
TEST_CASE("build: a spec a SCALE-* or SPARSE-* rule refuses exits 1 with its id and pointer, writing nothing") {
  int n = 0;
  for (const auto& r : ptxgen::rules::table()) {
    const std::string id(r.id);
    if (id.rfind("SCALE-", 0) != 0 && id.rfind("SPARSE-", 0) != 0) continue;
    CAPTURE(id);
    TempDir t;
    write(t / "bad.json", ptxgen::rules::bad_document(r));
    const Run b = ptxgen_run({"build", t / "bad.json", "-o", t / "k.cubin", "--ptx", t / "k.ptx"});
    CHECK(b.exit_code == 1);
    CHECK(b.output.find("error[" + id + "]") != std::string::npos);
    CHECK(b.output.find("at " + std::string(r.bad_pointer) + "\n") != std::string::npos);
    CHECK(b.output.find("nothing written") != std::string::npos);
    CHECK(t.entries() == std::vector<std::string>{"bad.json"});
    ++n;
  }
  CHECK(n == 13);  // 9, and the block-wise f32 factors' SCALE-BLOCK-TYPE, -VEC, -TILE, -PARTIALS
}
}

// The performance warnings (src/rules/check_perf.cpp) through the command line: each rule's failing
// example exits 0 and writes what it was asked for, with one warning[ID] line at the rule's pointer
// (one JSON object with --diagnostics=json, with -q too); its fix draws none. The plan's warnings
// come from the check, so `check` prints them too; PTXAS-SPILL from ptxas's report, so only `build`
// (and `build --header`) can.
TEST_SUITE("cli") {
TEST_CASE("warnings: exit 0, a warning[ID] line at the pointer and its JSON object; PTXAS-SPILL from ptxas on build") {
  TempDir t;
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  for (const std::string id : {"PLAN-SINGLE-STAGE", "PLAN-ACC-SINGLE-BUFFER", "PTXAS-SPILL"}) {
    CAPTURE(id);
    const ptxgen::rules::Rule* r = ptxgen::rules::find(id);
    REQUIRE(r);
    const bool from_ptxas = !r->ptxas_report.empty();
    CHECK(from_ptxas == (id == "PTXAS-SPILL"));
    const std::string bad = t / (id + ".json"), good = t / (id + "-fixed.json");
    write(bad, ptxgen::rules::bad_document(*r));
    write(good, ptxgen::rules::good_document(*r));
    const std::string line = "warning[" + id + "]: ", at = "at " + std::string(r->bad_pointer) + "\n";

    Run c = ptxgen_run({"check", bad});
    CHECK(c.exit_code == 0);
    CHECK(c.output.find(bad + ": ok") != std::string::npos);
    CHECK(count(c.output, line) == (from_ptxas ? 0 : 1));

    Run b = ptxgen_run({"build", bad, "-o", t / (id + ".cubin")});
    CHECK(b.exit_code == 0);
    CHECK(fs::exists(t / (id + ".cubin")));
    CHECK(count(b.output, line) == 1);
    CHECK(b.output.find(line + (from_ptxas ? "ptxas spills registers to local memory in \"example\" for sm_90a: " : "")) != std::string::npos);
    CHECK(b.output.find(at, b.output.find(line)) != std::string::npos);
    if (from_ptxas) {
      // The bytes are the report's (ptxas's version decides them): the report says it spilled.
      const std::string report = support::slurp(t / (id + ".ptxas.txt"));
      CHECK(report.find(" bytes spill stores") != std::string::npos);
      CHECK(report.find(" 0 bytes spill stores") == std::string::npos);
    }

    // Quiet and JSON, for a --target (one with tensor memory for the accumulator's warning): the
    // one object names it.
    const std::string target = id == "PLAN-ACC-SINGLE-BUFFER" ? "sm_103a" : "sm_90a";
    Run j = ptxgen_run({"build", bad, "-q", "--diagnostics=json", "--target", target, "-o", t / (id + "-j.cubin")});
    CHECK(j.exit_code == 0);
    const std::string key = "\"rule\":\"" + id + "\"";
    REQUIRE_MESSAGE(count(j.output, key) == 1, j.output);
    CHECK_MESSAGE(count(j.output, "\n") == 1, j.output);  // -q: the warning's line alone
    const size_t nl = j.output.rfind('\n', j.output.find(key)), from = nl == std::string::npos ? 0 : nl + 1;
    const auto o = nlohmann::json::parse(j.output.substr(from, j.output.find('\n', from) - from));
    CHECK(o["severity"] == "warning");
    CHECK(o["pointer"] == r->bad_pointer);
    CHECK(o["file"] == bad);
    CHECK(o["line"].get<int>() > 0);
    CHECK(o["target"] == target);
    CHECK(!o["help"].empty());

    Run f = ptxgen_run({"build", good, "-o", t / (id + "-fixed.cubin")});
    CHECK(f.exit_code == 0);
    CHECK_MESSAGE(f.output.find("warning[") == std::string::npos, f.output);
  }
  // The launch header assembles each spec too: its spills are the same warning.
  const ptxgen::rules::Rule* spill = ptxgen::rules::find("PTXAS-SPILL");
  REQUIRE(spill);
  Run h = ptxgen_run({"build", t / "PTXAS-SPILL.json", "--header", t / "spill.hpp"});
  CHECK(h.exit_code == 0);
  CHECK(fs::exists(t / "spill.hpp"));
  CHECK(count(h.output, "warning[PTXAS-SPILL]: ") == 1);
}
}
