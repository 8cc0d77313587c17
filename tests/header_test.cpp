// `ptxgen build SPEC... --header FILE`: the launch header. One header per level for every shipped
// spec, compiled by g++ and clang at -Wall -Wextra -Werror (and more), linked against the
// toolkit's stub libcuda and run (tests/header/kernels_test.cpp); the command line's failures.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli_support.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/rules.hpp"
#include "../src/cli/header.hpp"

using namespace support;
using ptxgen::io::Run;

namespace {

// The CUDA toolkit's root (include/cuda.h, lib64/stubs/libcuda.so), from ptxas's directory.
std::string cuda_root() {
  const auto ptxas = ptxgen::io::find_ptxas();
  REQUIRE_MESSAGE(ptxas, "ptxas not found: this test needs the CUDA toolkit");
  const auto root = std::filesystem::path(*ptxas).parent_path().parent_path();
  REQUIRE_MESSAGE(std::filesystem::exists(root / "include" / "cuda.h"), "no cuda.h beside " << *ptxas);
  return root.string();
}

std::vector<std::string> specs_starting(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& f : spec_files())
    if (std::filesystem::path(f).filename().string().rfind(prefix, 0) == 0) out.push_back(f);
  return out;
}

std::string dir_listing(const TempDir& t) {
  std::string out;
  for (const auto& e : t.entries()) out += e + " ";
  return out;
}

}  // namespace

TEST_SUITE("header") {
TEST_CASE(
    "--header: every shipped spec's launch functions compile warning-free with g++ and clang, and check their "
    "arguments") {
  const std::string cuda = cuda_root();
  TempDir t;
  const auto gemms = specs_starting("gemm_"), programs = specs_starting("prog_");
  REQUIRE(gemms.size() + programs.size() == spec_files().size());
  std::vector<std::string> args{"build"};
  args.insert(args.end(), gemms.begin(), gemms.end());
  args.insert(args.end(), {"--header", t / "gemms.hpp", "-q"});
  Run r = ptxgen_run(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  args = {"build"};
  args.insert(args.end(), programs.begin(), programs.end());
  args.insert(args.end(), {"--header", t / "programs.hpp", "--depfile", t / "programs.d"});
  r = ptxgen_run(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  // Before it, only the warnings of the shipped programs whose kernels spill (PTXAS-SPILL).
  const size_t wrote = r.output.find("wrote " + t / "programs.hpp" + " (launch header: prog_");
  REQUIRE(wrote != std::string::npos);
  size_t warnings = 0, spills = 0;
  for (size_t at = r.output.find("warning["); at < wrote; at = r.output.find("warning[", at + 1)) ++warnings;
  for (size_t at = r.output.find("warning[PTXAS-SPILL]: "); at < wrote; at = r.output.find("warning[PTXAS-SPILL]: ", at + 1)) ++spills;
  CHECK(warnings == spills);
  CHECK(r.output.rfind("\n", wrote) == (wrote == 0 ? std::string::npos : wrote - 1));
  CHECK(r.output.find("error") == std::string::npos);
  // The depfile names every spec the header was made of.
  const std::string dep = slurp(t / "programs.d");
  for (const auto& p : programs) CHECK(dep.find(p) != std::string::npos);

  // The torch example's two kernels for two targets: the image is chosen by the device.
  std::vector<std::string> torch{"build"};
  for (const auto& e : std::filesystem::directory_iterator(source_root() + "/examples/torch/specs"))
    torch.push_back(e.path().string());
  std::sort(torch.begin() + 1, torch.end());
  torch.insert(torch.end(), {"--target", "sm_90a", "--target", "sm_100a", "--header", t / "multi.hpp", "-q"});
  r = ptxgen_run(torch);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);

  // libcuda.so.1: the stub (stub/), or the fake driver (fake/), for running without a GPU.
  std::filesystem::create_directories(t / "stub");
  std::filesystem::create_symlink(cuda + "/lib64/stubs/libcuda.so", t / "stub/libcuda.so.1");
  std::filesystem::create_directories(t / "fake");
  Run fake = ptxgen::io::run({"/usr/bin/env", "g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-fPIC",
                              "-shared", "-Wl,-soname,libcuda.so.1", "-I" + cuda + "/include",
                              source_root() + "/tests/header/fake_cuda.cpp", "-o", t / "fake/libcuda.so.1"},
                             300);
  REQUIRE_MESSAGE(fake.exit_code == 0, fake.output);
  const std::string src = source_root() + "/tests/header/kernels_test.cpp";
  const std::vector<std::vector<std::string>> builds = {
      {"g++", "-Wpedantic", "-Wshadow", "-Wconversion", "-I" + cuda + "/include"},
      {"clang++", "-Wpedantic", "-Wshadow", "-Wconversion", "-I" + cuda + "/include"},
      // CUDA's own f16/bf16/fp8 types (their headers' warnings are theirs: -isystem).
      {"g++", "-DPTXGEN_CUDA_TYPES", "-isystem", cuda + "/include"},
  };
  for (const auto& b : builds) {
    std::vector<std::string> cmd{"/usr/bin/env", b[0],      "-std=c++17", "-Wall",
                                 "-Wextra",      "-Werror", "-O0",        "-pthread"};
    cmd.insert(cmd.end(), b.begin() + 1, b.end());
    const std::string exe = t / "kernels_test";
    cmd.insert(cmd.end(), {"-I" + t.path.string(), src, "-L" + cuda + "/lib64/stubs", "-lcuda", "-ldl", "-o", exe});
    std::string shown;
    for (const auto& c : cmd) shown += c + " ";
    CAPTURE(shown);
    Run c = ptxgen::io::run(cmd, 300);
    REQUIRE_MESSAGE(c.exit_code == 0, c.output);
    CHECK_MESSAGE(c.output.empty(), c.output);  // not one warning
    const std::string counts =
        std::to_string(gemms.size()) + " gemm kernels, " + std::to_string(programs.size()) + " programs, 0 failures";
    Run run = ptxgen::io::run({"/usr/bin/env", "LD_LIBRARY_PATH=" + t / "stub", exe}, 60);
    CHECK_MESSAGE(run.exit_code == 0, run.output);
    CHECK(run.output == counts + "\n");
    run = ptxgen::io::run({"/usr/bin/env", "LD_LIBRARY_PATH=" + t / "fake", exe}, 60);
    CHECK_MESSAGE(run.exit_code == 0, run.output);
    CHECK(run.output == "through the fake driver: " + counts + "\n");
  }
}

TEST_CASE("--header: the same specs give the same bytes; the header holds each target's cubin") {
  TempDir t;
  const std::string spec = spec_path("gemm_bf16_tn_128x256x64");
  Run a = ptxgen_run({"build", spec, "--target", "sm_100a", "--target", "sm_90a", "--header", "-", "-q"});
  REQUIRE_MESSAGE(a.exit_code == 0, a.output);
  CHECK(a.output.find("// Generated by ptxgen build " + spec + " --target sm_100a --target sm_90a --header -.") == 0);
  Run b = ptxgen_run({"build", spec, "--target", "sm_100a", "--target", "sm_90a", "--header", t / "k.hpp", "-q"});
  REQUIRE_MESSAGE(b.exit_code == 0, b.output);
  CHECK(b.output.empty());
  CHECK(dir_listing(t) == "k.hpp ");  // the header alone: no cubin, PTX, manifest or fatbin
  const std::string h = slurp(t / "k.hpp");
  CHECK(h.find("// Generated by ptxgen build " + spec + " --target sm_100a --target sm_90a --header " +
               t / "k.hpp") == 0);
  // From another directory, the same header but for the command on its first line.
  TempDir t2;
  REQUIRE(
      ptxgen_run({"build", spec, "--target", "sm_100a", "--target", "sm_90a", "--header", t2 / "k.hpp"}).exit_code ==
      0);
  const std::string h2 = slurp(t2 / "k.hpp");
  CHECK(h.substr(h.find('\n')) == h2.substr(h2.find('\n')));
  CHECK(h.find("{\"sm_100a\", {100, 0}, true, image_0") != std::string::npos);
  CHECK(h.find("{\"sm_90a\", {90, 0}, true, image_1") != std::string::npos);
  CHECK(h.find("#define PTXGEN_K_GEMMS(X) \\\n  X(gemm_bf16_tn_128x256x64, ::ptxgen::bf16, ::ptxgen::bf16, "
               "::ptxgen::bf16)") != std::string::npos);
}

// Issue 32: every name of a spec that reaches C++ (kernel, tensor and size names) is checked or
// renamed. Kernel names are the launch functions' names, so a name that a macro of the header's
// includes takes (errno, EOF, NULL, stdin, assert), that g++ and clang predefine in gnu++ modes
// (linux, unix, i386), that is reserved (_Q, a__b) or that cuda.h's driver API takes
// (cuMemAlloc) is refused: exit 1, nothing written. A program's tensors and sizes are parameters
// only, renamed where such a name would not compile; the header then compiles with g++ and clang++
// at -std=c++17 and -std=gnu++17 after the C library's headers (all names in one translation
// unit, -fsyntax-only).
TEST_CASE("--header: names that are macros, keywords or reserved: kernels refused, tensors and sizes renamed; it compiles") {
  const std::string cuda = cuda_root();
  TempDir t;
  const ptxgen::rules::Rule* grid = ptxgen::rules::find("PROGRAM-LAUNCH-GRID");
  REQUIRE(grid);
  // The program of a grid over sizes m and n, tensors A, B, D: renamed to hazards.
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(ptxgen::rules::good_document(*grid));
  std::string text = j.dump();
  const std::pair<std::string, std::string> renames[] = {{"\"A\"", "\"EOF\""},   {"\"B\"", "\"NULL\""}, {"\"D\"", "\"errno\""},
                                                         {"\"m\"", "\"linux\""}, {"\"n\"", "\"unix\""}};
  for (const auto& [from, to] : renames)
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  j = nlohmann::ordered_json::parse(text);
  j["name"] = "hazards";
  j["program"]["grid"]["m"] = "linux";
  j["program"]["grid"]["n"] = "unix";
  // Tensors and sizes no op uses: kernel parameters all the same.
  for (const char* g : {"stdin", "assert", "i386", "a__b", "_Q", "launch", "cuMemAlloc", "int", "hazards_prepare"})
    j["program"]["globals"][g] = {{"dtype", "bf16"}, {"shape", {64, 64}}};
  // Sizes are parameters and types (ptxgen::size::NAME, renamed where a struct cannot take the name).
  for (const char* z : {"stream", "NDEBUG", "stdout", "EOF_", "offsetof", "sched_priority", "value", "_z"})
    j["program"]["sizes"][z] = 64;
  write(t / "hazards.json", j.dump(2));
  Run r = ptxgen::io::run({bin(), "build", t / "hazards.json", "--header", t / "hazards.hpp", "-q"}, 120);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string h = slurp(t / "hazards.hpp");
  // The parameters: EOF_ is the size's own name, so the tensor EOF takes EOF_2. The sizes' types
  // take the parameters' names, but for value (a struct's member) and _z (its guard macro would
  // hold a double underscore), which no parameter needs to rename.
  CHECK(h.find("inline ::CUresult hazards(const bf16* EOF_2, const bf16* NULL_, const bf16* Q, const bf16* a_b, "
               "const bf16* assert_, const bf16* xcuMemAlloc, float* errno_, const bf16* hazards_prepare_, "
               "const bf16* i386_, const bf16* int_, const bf16* launch_, const bf16* stdin_, size::EOF_ EOF_, "
               "size::NDEBUG_ NDEBUG_, size::z _z, size::linux_ linux_, size::offsetof_ offsetof_, "
               "size::sched_priority_ sched_priority_, size::stdout_ stdout_, size::stream_ stream_, size::unix_ unix_, "
               "size::value_ value, ::CUstream stream)") != std::string::npos);
  // One translation unit after the headers that define the macros; every function referenced.
  write(t / "hazards_test.cpp", "#include <cassert>\n#include <cerrno>\n#include <csignal>\n#include <cstddef>\n#include <cstdio>\n"
                                "#include <cstdlib>\n#include <pthread.h>\n#include \"hazards.hpp\"\n"
                                "#define PTXGEN_USE(NAME) (void)&::ptxgen::NAME; (void)&::ptxgen::NAME##_check; "
                                "(void)&::ptxgen::NAME##_prepare; (void)::ptxgen::NAME##_info;\n"
                                "int main() {\n  PTXGEN_HAZARDS_PROGRAMS(PTXGEN_USE)\n  return 0;\n}\n");
  for (const char* cxx : {"g++", "clang++"})
    for (const char* std : {"-std=c++17", "-std=gnu++17"}) {
      const std::vector<std::string> cmd{"/usr/bin/env", cxx, std, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wshadow",
                                         "-pthread", "-I" + cuda + "/include", "-I" + t.path.string(), t / "hazards_test.cpp"};
      CAPTURE(cxx);
      CAPTURE(std);
      const Run c = ptxgen::io::run(cmd, 300);
      CHECK_MESSAGE(c.exit_code == 0, c.output);
      CHECK_MESSAGE(c.output.empty(), c.output);
    }

  // Kernel names: refused, nothing written.
  for (const char* name : {"errno", "linux", "EOF", "NULL", "unix", "stdin", "assert", "i386", "cuMemAlloc", "_Q", "a__b"}) {
    CAPTURE(name);
    j["name"] = name;
    TempDir d;
    write(d / "k.json", j.dump(2));
    r = ptxgen::io::run({bin(), "build", d / "k.json", "--header", d / "k.hpp"}, 120);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("is named \"" + std::string(name) + "\", which ") != std::string::npos);
    CHECK(r.output.find("rename the spec") != std::string::npos);
    CHECK(dir_listing(d) == "k.json ");
  }
}

// Issue 32: a program's launch function takes its sizes in name order (k, m, n), a gemm's in m, n,
// k; when both were std::int64_t, prog(A, B, D, m, n, k, stream) compiled and launched the wrong
// problem. Each size is now its own type (ptxgen::size::m{...}): the right order compiles (one
// translation unit, -fsyntax-only), and swapped sizes or bare integers do not, for a gemm and a
// program kernel of one header, with g++ and clang++; the error names the parameter's type.
TEST_CASE("--header: sizes are typed: the right order compiles, swapped sizes or bare integers do not") {
  const std::string cuda = cuda_root();
  TempDir t;
  const std::string gemm = "gemm_sm90_bf16_128x256x64", prog = "prog_pipelined_gemm_bf16";  // prog: sizes k, m, n
  Run r = ptxgen_run({"build", spec_path(gemm), spec_path(prog), "--header", t / "sizes.hpp", "-q"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string h = slurp(t / "sizes.hpp");
  CHECK(h.find("inline ::CUresult " + gemm +
               "(const bf16* a, ::std::int64_t lda, const bf16* b, ::std::int64_t ldb, bf16* d, "
               "size::m m, size::n n, size::k k, ::CUstream stream)") != std::string::npos);
  CHECK(h.find("inline ::CUresult " + prog +
               "(const bf16* A, const bf16* B, float* D, size::k k, size::m m, size::n n, "
               "::CUstream stream)") != std::string::npos);
  // One type per size name, shared by both kernels.
  size_t defined = 0;
  for (size_t at = h.find("\nstruct m {"); at != std::string::npos; at = h.find("\nstruct m {", at + 1)) ++defined;
  CHECK(defined == 1);

  // Each case is one translation unit of calls: the first compiles, each other fails with an
  // error whose line says "from 'FROM' ... to '...size::TO'" (the argument's type and the parameter's).
  struct Case {
    const char* what;
    std::vector<std::string> calls;
    const char* from;  // "" for the case that compiles
    const char* to;
  };
  const std::string g = "ptxgen::" + gemm, p = "ptxgen::" + prog;
  const Case cases[] = {
      {"the right order, any integer type",
       {g + "(nullptr, nullptr, nullptr, sz::m{m}, sz::n{n}, sz::k{k}, nullptr)",
        g + "_check(nullptr, 64, nullptr, 64, nullptr, sz::m{4096u}, sz::n{n}, sz::k{std::size_t{64}})",
        p + "(nullptr, nullptr, nullptr, sz::k{k}, sz::m{m}, sz::n{n}, nullptr)",
        p + "_prepare(nullptr, nullptr, nullptr, sz::k{k}, sz::m{m}, sz::n{n}, l)"},
       "",
       ""},
      {"gemm, m and n swapped",
       {g + "(nullptr, nullptr, nullptr, sz::n{n}, sz::m{m}, sz::k{k}, nullptr)"},
       "sz::n",
       "m"},
      {"gemm, bare integers", {g + "_check(nullptr, nullptr, nullptr, m, n, k)"}, "int64_t", "m"},
      {"program, the gemm's order",
       {p + "(nullptr, nullptr, nullptr, sz::m{m}, sz::n{n}, sz::k{k}, nullptr)"},
       "sz::m",
       "k"},
      {"program, bare integers", {p + "_prepare(nullptr, nullptr, nullptr, k, m, n, l)"}, "int64_t", "k"},
  };
  int tu = 0;
  for (const Case& c : cases) {
    const std::string file = t / ("case" + std::to_string(tu++) + ".cpp");
    std::string text =
        "#include \"sizes.hpp\"\nnamespace sz = ptxgen::size;\nint main() {\n"
        "  const std::int64_t m = 4096, n = 2048, k = 1024;\n  ptxgen::" +
        prog + "_launch l;\n  (void)l;\n";
    for (const std::string& call : c.calls) text += "  (void)" + call + ";\n";
    write(file, text + "  return 0;\n}\n");
    for (const std::string cxx : {"g++", "clang++"}) {
      const std::string what = c.what;
      CAPTURE(what);
      CAPTURE(cxx);
      const Run cc = ptxgen::io::run(
          {"/usr/bin/env", "LC_ALL=C", cxx, cxx == "g++" ? "-std=c++17" : "-std=gnu++17", "-fsyntax-only", "-Wall",
           "-Wextra", "-Werror", "-Wshadow", "-Wconversion", "-I" + cuda + "/include", "-I" + t.path.string(), file},
          300);
      if (!*c.from) {
        CHECK_MESSAGE(cc.exit_code == 0, cc.output);
        CHECK_MESSAGE(cc.output.empty(), cc.output);
        continue;
      }
      CHECK(cc.exit_code != 0);
      // gcc: "no known conversion for argument 4 from 'ptxgen::launch1::size::n' to 'ptxgen::launch1::size::m'";
      // clang: "no known conversion from 'sz::n' to 'size::m' for 4th argument" (the alias as written).
      std::string from = c.from;
      if (from.rfind("sz::", 0) == 0) from = "(sz|([A-Za-z0-9_]+::)*size)" + from.substr(2);
      const std::regex said("from '[^']*" + from + "'.* to '([A-Za-z0-9_]+::)*size::" + c.to + "'");
      std::istringstream in(cc.output);
      std::string line;
      bool found = false;
      while (std::getline(in, line)) found = found || std::regex_search(line, said);
      CHECK_MESSAGE(found, cc.output);
    }
  }
}

// The launch header reads each manifest's tensors (factor layouts, metadata atoms, sparsity), so a
// combination it was not written for is an internal error there (the e2m1 kinds' 4:8 metadata was,
// before it learnt "128x256 atoms"). Every combination of operand types, block scaling (scale type,
// block size, kind) and sparse A the rules accept goes into one header, which must be written.
TEST_CASE("--header: every block-scaled and sparse combination the rules accept gets its launch functions") {
  TempDir t;
  struct Types {
    const char *a, *b;
  };
  const Types types[] = {{"e4m3", "e4m3"}, {"e2m3", "e2m1"}, {"e2m1", "e2m1"}, {"bf16", "bf16"}, {"tf32", "tf32"}, {"s8", "s8"}};
  const char* scales[] = {"",
                          R"(, "scale": {"dtype": "ue8m0"})",
                          R"(, "scale": {"dtype": "ue8m0", "vec": 16})",
                          R"(, "scale": {"dtype": "ue8m0", "vec": 32, "kind": "mxf4nvf4"})",
                          R"(, "scale": {"dtype": "ue8m0", "vec": 64})",
                          R"(, "scale": {"dtype": "ue4m3"})",
                          R"(, "scale": {"dtype": "ue4m3", "vec": 32})",
                          R"(, "scale": {"dtype": "ue8m0", "kind": "mxf8f6f4"})"};
  std::vector<std::string> args{"build"};
  int combo = 0, accepted = 0, sparse_scaled = 0;
  for (const Types& ty : types)
    for (const char* sc : scales)
      for (bool sparse : {false, true}) {
        const std::string name = "sweep_" + std::to_string(combo++);
        const std::string acc = std::string(ty.a) == "s8" ? "s32" : "f32";
        const std::string text = std::string(R"({"ptxgen": 1, "name": ")") + name + R"(", "target": "sm_100a", "gemm": {"m": 1024, "n": 1024, "k": 2048, "a": {"dtype": ")" +
                                 ty.a + R"(", "major": "k"}, "b": {"dtype": ")" + ty.b + R"(", "major": "k"}, "d": {"dtype": ")" + acc +
                                 R"("}, "accumulator": ")" + acc + "\"" + (sparse ? R"(, "sparse": true)" : "") + sc + "}}";
        ptxgen::Diagnostics d;
        if (!ptxgen::rules::parse_and_check(text, d).ok) continue;
        if (!sparse && !*sc) continue;  // dense unscaled: the shipped specs cover them
        write(t / (name + ".json"), text);
        args.push_back(t / (name + ".json"));
        ++accepted;
        sparse_scaled += sparse && *sc;
      }
  MESSAGE("sweep: " << accepted << " specs, " << sparse_scaled << " sparse and block-scaled");
  CHECK(accepted >= 14);
  CHECK(sparse_scaled >= 6);
  args.insert(args.end(), {"--header", t / "sweep.hpp", "-q"});
  const Run r = ptxgen_run(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string h = slurp(t / "sweep.hpp");
  CHECK(h.find("in CUTLASS's sm_100 atoms for .kind::mxf4nvf4 of 128 rows x 256 of k") != std::string::npos);
  CHECK(h.find("(4:8 sparse: two pairs of every eight elements of k)") != std::string::npos);
}
}

// The header generator's refusals and name tables, without a compiler run: in suite cli, so that the
// sanitized build (tools/sanitize) runs src/cli/header.cpp too.
TEST_SUITE("cli") {
TEST_CASE("--header: a spec that fails its check, a name C++ cannot take, or a usage error writes nothing") {
  TempDir t;
  const std::string good = spec_path("gemm_sm90_bf16_128x256x64");
  auto spec_named = [&](const std::string& file, const std::string& name) {
    std::string text = slurp(good);
    const std::string from = "\"name\": \"gemm_sm90_bf16_128x256x64\"";
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), "\"name\": \"" + name + "\"");
    write(t / file, text);
    return t / file;
  };
  write(t / "bad.json", R"({"ptxgen": 1, "name": "k", "target": "sm_90a", "gemm": {"m": 64}})");
  const std::string bad = t / "bad.json";
  Run r = ptxgen_run({"build", good, bad, "--header", t / "k.hpp", "--depfile", t / "k.d"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("nothing written") != std::string::npos);
  CHECK(dir_listing(t) == "bad.json ");

  const std::string kw = spec_named("kw.json", "launch");
  r = ptxgen_run({"build", kw, "--header", t / "k.hpp"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("is named \"launch\", which is a C++ keyword or a name the header itself uses") !=
        std::string::npos);
  const std::string twice = spec_named("twice.json", "gemm_sm90_bf16_128x256x64");
  r = ptxgen_run({"build", good, twice, "--header", t / "k.hpp"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("two specs are named \"gemm_sm90_bf16_128x256x64\"") != std::string::npos);
  const std::string clash = spec_named("clash.json", "gemm_sm90_bf16_128x256x64_check");
  r = ptxgen_run({"build", good, clash, "--header", t / "k.hpp"});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("would both define gemm_sm90_bf16_128x256x64_check") != std::string::npos);
  CHECK(dir_listing(t) == "bad.json clash.json kw.json twice.json ");

  // Usage: several specs need --header; --header writes only the header.
  r = ptxgen_run({"build", good, good});
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("several specs only with --header") != std::string::npos);
  CHECK(ptxgen_run({"build", good, "--header", t / "k.hpp", "-o", t / "k.cubin"}).exit_code == 2);
  CHECK(ptxgen_run({"build", good, "--header", t / "k.hpp", "--ptx", t / "k.ptx"}).exit_code == 2);
  CHECK(ptxgen_run({"build", good, "--header", "-", "--depfile", t / "k.d"}).exit_code == 2);
  CHECK(ptxgen_run({"build", "-", "-", "--header", t / "k.hpp"}).exit_code == 2);
  CHECK(ptxgen_run({"build", good, "--target", "sm_99z", "--header", t / "k.hpp"}).exit_code == 7);
  CHECK(dir_listing(t) == "bad.json clash.json kw.json twice.json ");
}

// The names the header refuses or renames cover every macro the compilers installed define in
// the header's includes (tools/update-cpp-macros made the list; a newer libc or CUDA may add some).
TEST_CASE("--header: every macro of the header's includes is a name the header refuses") {
  const std::string cuda = cuda_root();
  TempDir t;
  write(t / "inc.cpp", "#include <cuda.h>\n#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n#include <cstring>\n"
                       "#include <mutex>\n#include <string>\n#include <vector>\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"
                       "#include <cuda_fp8.h>\n");
  for (const char* cxx : {"g++", "clang++"})
    for (const char* std : {"-std=c++17", "-std=gnu++17"}) {
      CAPTURE(cxx);
      CAPTURE(std);
      const Run c = ptxgen::io::run({"/usr/bin/env", cxx, std, "-pthread", "-isystem", cuda + "/include", "-dM", "-E", t / "inc.cpp"}, 120);
      REQUIRE_MESSAGE(c.exit_code == 0, c.output);
      std::istringstream in(c.output);
      std::string line, missing;
      int names = 0;
      while (std::getline(in, line)) {
        if (line.rfind("#define ", 0) != 0) continue;
        std::string name = line.substr(8, line.find_first_of(" (", 8) - 8);
        ++names;
        if (ptxgen::cli::name_problem(name).empty()) missing += name + " ";
      }
      CHECK(names > 500);
      CHECK_MESSAGE(missing.empty(), "macros the header would take as names (run tools/update-cpp-macros): " << missing);
    }
}
}
