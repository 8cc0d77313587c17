// What build systems use: --check/--update goldens, --depfile, --target, fatbins, and that every
// failure exits with its own code and leaves nothing written.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ptxgen/io.hpp"
#include "cli_support.hpp"

namespace fs = std::filesystem;
using ptxgen::io::Run;
using support::ptxgen_run;
using support::slurp;
using support::TempDir;
using support::write;

namespace {

const std::string kName = "gemm_bf16_tn_128x256x64";
std::string spec(const std::string& name = kName) { return support::source_root() + "/specs/" + name + ".json"; }
std::string golden(const std::string& name = kName) { return support::source_root() + "/golden/" + name + ".ptx"; }

// The files in a directory, by name (temporary files included: none may be left behind).
std::vector<std::string> listing(const TempDir& t) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(t.path)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1) out.push_back(s.substr(start, nl - start));
  return out;
}

}  // namespace

TEST_SUITE("integration") {
TEST_CASE("--check: 0 when equal; 4 with a unified diff of the first differences; the golden untouched") {
  TempDir t;
  const std::string real = slurp(golden());
  CHECK(ptxgen_run({"emit", spec(), "--check", golden()}).output == golden() + ": matches\n");

  // Change the ".target sm_100a" line: one hunk, three lines of context each side.
  const auto ls = lines(real);
  const size_t at = std::find(ls.begin(), ls.end(), ".target sm_100a") - ls.begin();
  REQUIRE(at >= 3);
  REQUIRE(at + 20 < ls.size());
  std::string edited, hunk;
  for (size_t i = 0; i < ls.size(); ++i) edited += (i == at ? std::string(".target sm_100f") : ls[i]) + "\n";
  for (size_t i = at - 3; i <= at + 3; ++i) hunk += i == at ? "-.target sm_100f\n+.target sm_100a\n" : " " + ls[i] + "\n";
  const std::string first = std::to_string(at - 2);  // 1-based number of the hunk's first line
  const std::string g = t / "k.ptx";
  write(g, edited);
  Run r = ptxgen_run({"emit", spec(), "--check", g});
  CHECK(r.exit_code == 4);
  CHECK(r.output == "--- " + g + "\n+++ " + g + "\t(ptxgen emit " + spec() + ")\n@@ -" + first + ",7 +" + first + ",7 @@\n" + hunk +
                        "error: " + g + " differs from the output of ptxgen emit " + spec() +
                        " (2 changed lines)\n  = help: if the new output is right, rewrite the golden with --update\n");
  CHECK(slurp(g) == edited);
  CHECK(listing(t) == std::vector<std::string>{"k.ptx"});

  // Many differences: the first ones, then how many more.
  write(g, "nothing alike\n");
  Run many = ptxgen_run({"emit", spec(), "--check", g});
  CHECK(many.exit_code == 4);
  CHECK(many.output.find("@@ -1 +1,59 @@\n-nothing alike\n+//") != std::string::npos);
  CHECK(many.output.find("... " + std::to_string(ls.size() + 1 - 60) + " more changed lines not shown\n") !=
        std::string::npos);

  // CRLF goldens get a note saying why every line differs.
  std::string crlf;
  for (const auto& l : ls) crlf += l + "\r\n";
  write(g, crlf);
  Run c = ptxgen_run({"emit", spec(), "--check", g});
  CHECK(c.exit_code == 4);
  CHECK(c.output.find("= note: the golden has CRLF line endings") != std::string::npos);
}

TEST_CASE("--check: a missing or unreadable golden exits 5 and creates nothing") {
  TempDir t;
  Run missing = ptxgen_run({"emit", spec(), "--check", t / "none.ptx"});
  CHECK(missing.exit_code == 5);
  CHECK(missing.output == "error: golden: cannot open " + t / "none.ptx" +
                              ": No such file or directory\n  = help: create it from the current output with --update\n");
  fs::create_directory(t / "dir.ptx");
  Run dir = ptxgen_run({"emit", spec(), "--check", t / "dir.ptx"});
  CHECK(dir.exit_code == 5);
  CHECK(dir.output == "error: golden: cannot read " + t / "dir.ptx" + ": it is a directory\n");
  Run plan = ptxgen_run({"plan", spec(), "--json", "--check", t / "none.json"});
  CHECK(plan.exit_code == 5);
  CHECK(listing(t) == std::vector<std::string>{"dir.ptx"});
}

TEST_CASE("--check --update: creates a missing golden, rewrites a differing one, leaves an equal one alone") {
  TempDir t;
  const std::string g = t / "k.ptx";
  Run created = ptxgen_run({"emit", spec(), "--check", g, "--update"});
  CHECK(created.exit_code == 0);
  CHECK(created.output == "created " + g + "\n");
  CHECK(slurp(g) == slurp(golden()));

  struct stat before {};
  REQUIRE(::stat(g.c_str(), &before) == 0);
  Run same = ptxgen_run({"emit", spec(), "--check", g, "--update"});
  CHECK(same.output == g + ": matches\n");
  struct stat after {};
  REQUIRE(::stat(g.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);  // not replaced: a build system sees no new file

  write(g, "old\n");
  Run updated = ptxgen_run({"emit", spec(), "--check", g, "--update"});
  CHECK(updated.exit_code == 0);
  CHECK(updated.output.find("updated " + g + " (") == 0);
  CHECK(slurp(g) == slurp(golden()));
  CHECK(listing(t) == std::vector<std::string>{"k.ptx"});
}

TEST_CASE("plan --json, plan text and the launch manifest go through the same --check") {
  TempDir t;
  const std::string g = t / "plan.json";
  CHECK(ptxgen_run({"plan", spec(), "--json", "--check", g, "--update"}).exit_code == 0);
  CHECK(slurp(g) == ptxgen_run({"plan", spec(), "--json"}).output);
  CHECK(ptxgen_run({"plan", spec(), "--json", "--check", g}).exit_code == 0);
  Run text = ptxgen_run({"plan", spec(), "--check", g});  // the text plan is not the JSON golden
  CHECK(text.exit_code == 4);
  CHECK(text.output.find("+++ " + g + "\t(ptxgen plan " + spec() + ")\n") != std::string::npos);

  const std::string mg = t / "k.manifest.json";
  CHECK(ptxgen_run({"manifest", spec(), "--check", mg}).exit_code == 5);
  CHECK(ptxgen_run({"manifest", spec(), "--check", mg, "--update"}).exit_code == 0);
  CHECK(slurp(mg) == ptxgen_run({"manifest", spec(), "-o", "-"}).output);
  CHECK(ptxgen_run({"manifest", spec(), "--check", mg}).output == mg + ": matches\n");
  Run other = ptxgen_run({"manifest", spec(), "--target", "sm_90a", "--check", mg});
  CHECK(other.exit_code == 4);
  CHECK(other.output.find("-  \"target\": \"sm_100a\",\n+  \"target\": \"sm_90a\",\n") != std::string::npos);
}

TEST_CASE("usage errors exit 2 and write nothing") {
  TempDir t;
  const std::vector<std::vector<std::string>> bad{
      {"emit", spec(), "--update"},
      {"emit", spec(), "--check", golden(), "-o", t / "x.ptx"},
      {"emit", spec(), "--check", golden(), "--depfile", t / "x.d"},
      {"plan", spec(), "--depfile", t / "x.d"},
      {"emit", spec(), "-o", "-", "--depfile", t / "x.d"},
      {"emit", spec(), "--target", "sm_100a", "--target", "sm_103a", "-o", t / "x.ptx"},
      {"build", spec(), "--target", "sm_100a", "--target", "sm_103a", "--ptx", t / "x.ptx", "-o", t / "x.fatbin"},
      {"build", spec(), "--check", golden()},
  };
  for (const auto& args : bad) {
    CAPTURE(args);
    CHECK(ptxgen_run(args).exit_code == 2);
  }
  CHECK(listing(t).empty());
}

TEST_CASE("--depfile: the output depends on the spec, in Makefile syntax with escaped paths") {
  TempDir t;
  Run r = ptxgen_run({"emit", spec(), "-o", t / "k.ptx", "--depfile", t / "k.d"});
  CHECK(r.exit_code == 0);
  CHECK(slurp(t / "k.d") == t / "k.ptx" + ": " + spec() + "\n");
  CHECK(ptxgen_run({"plan", spec(), "--json", "-o", t / "p.json", "--depfile", t / "p.d"}).exit_code == 0);
  CHECK(slurp(t / "p.d") == t / "p.json" + ": " + spec() + "\n");

  // Spaces and '#' get a backslash (with the backslashes before them doubled), '$' is doubled.
  fs::create_directory(t / "a b");
  const std::string odd = t / "a b/k$#\\ 1.json";
  fs::copy_file(spec(), odd);
  CHECK(ptxgen_run({"emit", odd, "-o", t / "o#.ptx", "--depfile", t / "o.d"}).exit_code == 0);
  CHECK(slurp(t / "o.d") == t / "o\\#.ptx" + ": " + t / "a\\ b/k$$\\#\\\\\\ 1.json" + "\n");
}

TEST_CASE("--depfile that cannot be written: exit 6, and neither the output nor the depfile appears") {
  TempDir t;
  Run r = ptxgen_run({"emit", spec(), "-o", t / "k.ptx", "--depfile", t / "no/such/dir/k.d"});
  CHECK(r.exit_code == 6);
  CHECK(r.output == "error: cannot create a file in " + t / "no/such/dir" + ": No such file or directory; nothing written\n");
  fs::create_directory(t / "d.d");
  CHECK(ptxgen_run({"emit", spec(), "-o", t / "k.ptx", "--depfile", t / "d.d"}).exit_code == 6);
  CHECK(ptxgen_run({"build", spec(), "-o", t / "k.cubin", "--depfile", t / "d.d"}).exit_code == 6);
  CHECK(ptxgen_run({"build", spec(), "--target", "sm_100a", "--target", "sm_103a", "-o", t / "k.fatbin", "--depfile",
                    t / "d.d"})
            .exit_code == 6);
  CHECK(listing(t) == std::vector<std::string>{"d.d"});
}

TEST_CASE("--target: unknown names exit 7 and write nothing; a known one replaces the spec's") {
  TempDir t;
  Run r = ptxgen_run({"emit", spec(), "--target", "sm_100", "-o", t / "k.ptx"});
  CHECK(r.exit_code == 7);
  CHECK(r.output ==
        "error: unknown --target \"sm_100\"; ptxgen knows sm_90a, sm_100a, sm_100f, sm_103a, sm_110a\n"
        "  = help: did you mean sm_100a?\n  = help: did you mean sm_100f?\n");
  CHECK(ptxgen_run({"build", spec(), "--target", "sm_100a", "--target", "sm_999z", "-o", t / "k.fatbin"}).exit_code == 7);
  CHECK(ptxgen_run({"check", spec(), "--target", "compute_100a"}).exit_code == 7);
  CHECK(listing(t).empty());

  // The spec says sm_100a; --target sm_103a gives that target's .target and lowest .version.
  Run e = ptxgen_run({"emit", spec(), "--target", "sm_103a", "-o", "-"});
  CHECK(e.exit_code == 0);
  CHECK(e.output.find("\n.version 8.8\n.target sm_103a\n") != std::string::npos);
  // Byte for byte what the same spec saying "target": "sm_103a" gives.
  std::string edited = slurp(spec());
  const auto at = edited.find("\"sm_100a\"");
  REQUIRE(at != std::string::npos);
  edited.replace(at, 9, "\"sm_103a\"");
  write(t / "k103.json", edited);
  CHECK(e.output == ptxgen_run({"emit", t / "k103.json", "-o", "-"}).output);
}

TEST_CASE("--target re-runs the rule check per target and names the target of each diagnostic") {
  // .kind::i8 is on sm_100a and sm_110a, not on sm_100f or sm_103a.
  const std::string i8 = spec("gemm_s8_s8_128x256x128");
  Run ok = ptxgen_run({"check", i8, "--target", "sm_100a", "--target", "sm_110a"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.output == i8 + ": ok for sm_100a, sm_110a\n");

  Run r = ptxgen_run({"check", i8, "--target", "sm_100a", "--target", "sm_100f", "--target", "sm_103a"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("note: " + i8 + " checked for --target sm_100f (the spec says sm_100a)\n"
                      "error[TARGET-KIND-I8]: .kind::i8 (s8 x s8) is not available on sm_100f") != std::string::npos);
  CHECK(r.output.find("checked for --target sm_103a") != std::string::npos);
  CHECK(r.output.find("checked for --target sm_100a") == std::string::npos);
  CHECK(r.output.find(i8 + ": 2 error(s) for --target sm_100f, sm_103a; nothing written\n") != std::string::npos);

  Run j = ptxgen_run({"check", i8, "--target", "sm_100f", "--diagnostics=json"});
  CHECK(j.exit_code == 1);
  const auto d = nlohmann::json::parse(j.output.substr(0, j.output.find('\n')));
  CHECK(d["rule"] == "TARGET-KIND-I8");
  CHECK(d["pointer"] == "/target");
  CHECK(d["target"] == "sm_100f");

  TempDir t;
  CHECK(ptxgen_run({"build", i8, "--target", "sm_100a", "--target", "sm_100f", "-o", t / "k.fatbin"}).exit_code == 1);
  CHECK(listing(t).empty());
}

TEST_CASE("build with several --target: one fatbin holding each target's cubin, a manifest, per-target PTX") {
  REQUIRE_MESSAGE(ptxgen::io::find_ptxas(), "ptxas not found: this test needs the CUDA toolkit");
  REQUIRE_MESSAGE(ptxgen::io::find_fatbinary(*ptxgen::io::find_ptxas()), "fatbinary not found");
  TempDir t;
  const std::vector<std::string> targets{"sm_100a", "sm_90a", "sm_110a"};  // tcgen05 and wgmma
  Run r = ptxgen_run({"build", spec(), "--target", "sm_100a", "--target", "sm_90a", "--target", "sm_110a", "-o",
                      t / "k.fatbin", "--depfile", t / "k.d"});
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  CHECK(listing(t) == std::vector<std::string>{"k.d", "k.fatbin", "k.manifest.json", "k.sm_100a.ptx",
                                               "k.sm_100a.ptxas.txt", "k.sm_110a.ptx", "k.sm_110a.ptxas.txt",
                                               "k.sm_90a.ptx", "k.sm_90a.ptxas.txt"});
  const std::string fatbin = slurp(t / "k.fatbin");
  CHECK(fatbin.substr(0, 4) == std::string("\x50\xed\x55\xba", 4));  // fatbin magic 0xBA55ED50
  TempDir single;
  for (const std::string& target : targets) {
    CAPTURE(target);
    // The per-target PTX is what emit --target writes, and the fatbin holds the cubin ptxas makes of it.
    CHECK(slurp(t / ("k." + target + ".ptx")) == ptxgen_run({"emit", spec(), "--target", target, "-o", "-"}).output);
    REQUIRE(ptxgen_run({"build", spec(), "--target", target, "-o", single / (target + ".cubin")}).exit_code == 0);
    const std::string cubin = slurp(single / (target + ".cubin"));
    CHECK(cubin.substr(0, 4) == "\x7f" "ELF");
    CHECK(fatbin.find(cubin) != std::string::npos);
    CHECK(slurp(t / ("k." + target + ".ptxas.txt")).find("for '" + target + "'") != std::string::npos);
  }
  // The manifest: the fatbin, then per target that target's launch manifest and its files.
  const auto m = nlohmann::ordered_json::parse(slurp(t / "k.manifest.json"));
  CHECK(m.size() == 5);
  CHECK(m["ptxgen"] == 1);
  CHECK(m["kind"] == "fatbin");
  CHECK(m["name"] == kName);
  CHECK(m["fatbin"] == "k.fatbin");
  REQUIRE(m["entries"].size() == targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    CAPTURE(targets[i]);
    auto want = nlohmann::ordered_json::parse(ptxgen_run({"manifest", spec(), "--target", targets[i], "-o", "-"}).output);
    want["ptx"] = "k." + targets[i] + ".ptx";
    // The .version the PTX declares.
    const std::string ptx = slurp(t / ("k." + targets[i] + ".ptx"));
    const auto v = ptx.find("\n.version ") + 10;
    want["ptx_isa"] = ptx.substr(v, ptx.find('\n', v) - v);
    want["ptxas_report"] = "k." + targets[i] + ".ptxas.txt";
    CHECK(m["entries"][i] == want);
    CHECK(m["entries"][i]["target"] == targets[i]);
    CHECK(m["entries"][i]["entry"] == kName);
  }
  CHECK(slurp(t / "k.d") == t / "k.fatbin" + ": " + spec() + "\n");
}

TEST_CASE("build with several --target: fatbinary missing or failing exits 3 and writes nothing") {
  TempDir tools, t;
  const std::vector<std::string> args{"build", spec(), "--target", "sm_100a", "--target", "sm_103a", "-o", t / "k.fatbin"};
  Run missing = support::ptxgen_env({"PTXGEN_FATBINARY=" + tools / "none"}, args);
  CHECK(missing.exit_code == 3);
  CHECK(missing.output.find("error: fatbinary not found") == 0);
  write(tools / "fatbinary", "#!/bin/sh\necho 'nvFatbin error: boom'; exit 1\n");
  ::chmod((tools / "fatbinary").c_str(), 0755);
  Run failing = support::ptxgen_env({"PTXGEN_FATBINARY=" + tools / "fatbinary"}, args);
  CHECK(failing.exit_code == 3);
  CHECK(failing.output == "error: fatbinary failed (exit 1):\nnvFatbin error: boom\n");
  CHECK(listing(t).empty());
}

TEST_CASE("build -q prints nothing on success; --version names the version") {
  TempDir t;
  Run quiet = ptxgen_run({"build", spec(), "-o", t / "k.cubin", "-q"});
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.output.empty());
  CHECK(listing(t) == std::vector<std::string>{"k.cubin", "k.manifest.json", "k.ptx", "k.ptxas.txt"});
  CHECK(slurp(t / "k.manifest.json") == ptxgen_run({"manifest", spec(), "-o", "-"}).output);
  // Without -q, one line per file; the register count is ptxas's (N here).
  std::string loud = ptxgen_run({"build", spec(), "-o", t / "k.cubin"}).output;
  const auto regs = loud.find(" registers)");
  REQUIRE(regs != std::string::npos);
  const auto count = loud.rfind(", ", regs) + 2;
  loud.replace(count, regs - count, "N");
  CHECK(loud == "wrote " + t / "k.ptx" + "\nwrote " + t / "k.cubin" + " (sm_100a, N registers)\nwrote " +
                    t / "k.ptxas.txt" + " (ptxas resource report)\nwrote " + t / "k.manifest.json" +
                    " (launch manifest)\n");
  Run v = ptxgen_run({"--version"});
  CHECK(v.exit_code == 0);
  CHECK(v.output == "ptxgen 0.1.0\n");
  CHECK(ptxgen_run({"version"}).output == v.output);
}
}
