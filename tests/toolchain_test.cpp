// Toolchain errors: ptxas missing, too old for the target (each target's minimum CUDA release, read
// from `ptxas --version`), or failing: a message naming what to install, exit 3, ptxas's own output.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "ptxgen/isa.hpp"

using namespace support;
using ptxgen::io::Run;

namespace {

// A stand-in ptxas of release `major.minor`: answers --version, and writes a cubin it is asked for.
std::string fake_ptxas(const TempDir& t, int major, int minor) {
  const std::string name = "ptxas-" + std::to_string(major) + "." + std::to_string(minor);
  return script(t, name,
                "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release " + std::to_string(major) + "." +
                    std::to_string(minor) + ", V0'; exit 0; fi\n"
                    "while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then printf 'cubin' > \"$2\"; fi; shift; done\n");
}

std::string spec_for(const TempDir& t, std::string_view target) {
  nlohmann::json j = nlohmann::json::parse(ptxgen::rules::example_base());
  j["target"] = std::string(target);
  const std::string p = t / (std::string(target) + ".json");
  write(p, j.dump());
  return p;
}

}  // namespace

TEST_SUITE("toolchain") {
TEST_CASE("parse_ptxas_version: the release, or nothing; never an exception") {
  auto v = ptxgen::io::parse_ptxas_version("Cuda compilation tools, release 13.0, V13.0.88\n");
  REQUIRE(v);
  CHECK(v->major == 13);
  CHECK(v->minor == 0);
  CHECK(v->text == "release 13.0");
  CHECK_FALSE(ptxgen::io::parse_ptxas_version("release 99999999999.0"));  // std::stoi threw here
  CHECK_FALSE(ptxgen::io::parse_ptxas_version("release 12"));
  CHECK_FALSE(ptxgen::io::parse_ptxas_version("release .5"));
  CHECK_FALSE(ptxgen::io::parse_ptxas_version(""));
  auto second = ptxgen::io::parse_ptxas_version("release x.y; release 12.8");
  REQUIRE(second);
  CHECK(second->minor == 8);
}

TEST_CASE("every target: one release below its minimum CUDA exits 3, the minimum builds") {
  TempDir t;
  int checked = 0;
  for (auto arch : ptxgen::isa::all_archs()) {
    const auto& info = ptxgen::isa::target_info(arch);
    CAPTURE(info.name);
    const std::string spec = spec_for(t, info.name);
    const int major = info.cuda_min_major, minor = info.cuda_min_minor;
    const std::string below = minor > 0 ? fake_ptxas(t, major, minor - 1) : fake_ptxas(t, major - 1, 9);
    Run old = ptxgen_env({"PTXGEN_PTXAS=" + below}, {"build", spec, "-o", t / "old.cubin"});
    CHECK(old.exit_code == 3);
    const std::string need = "needs CUDA " + std::to_string(major) + "." + std::to_string(minor) + " or newer";
    CHECK_MESSAGE(old.output.find(std::string(info.name) + " " + need) != std::string::npos, old.output);
    CHECK(old.output.find("install the CUDA toolkit " + std::to_string(major) + "." + std::to_string(minor) +
                          " or newer") != std::string::npos);
    CHECK_FALSE(fs::exists(t / "old.cubin"));
    CHECK_FALSE(fs::exists(t / "old.ptx"));  // nothing is written before the toolchain is known good

    Run ok = ptxgen_env({"PTXGEN_PTXAS=" + fake_ptxas(t, major, minor)}, {"build", spec, "-o", t / "ok.cubin"});
    CHECK_MESSAGE(ok.exit_code == 0, ok.output);
    CHECK(slurp(t / "ok.cubin") == "cubin");
    ++checked;
  }
  CHECK(checked == 5);
  // The minimums follow PTX ISA 9.1 §13 (ISA version -> CUDA release) and the ISA version that
  // introduced each target (§11.1.2): 8.6 -> 12.7, 8.8 -> 12.9, 9.0 -> 13.0.
  using ptxgen::isa::Arch;
  CHECK(ptxgen::isa::target_info(Arch::sm_100a).cuda_min_minor == 7);
  CHECK(ptxgen::isa::target_info(Arch::sm_100f).cuda_min_minor == 9);
  CHECK(ptxgen::isa::target_info(Arch::sm_103a).cuda_min_minor == 9);
  CHECK(ptxgen::isa::target_info(Arch::sm_110a).cuda_min_major == 13);
}

TEST_CASE("ptxas missing or unusable: exit 3, what to install, ptxas's own output") {
  TempDir t;
  const std::string spec = spec_path("gemm_bf16_tn_128x256x64");
  Run missing = ptxgen_env({"PTXGEN_PTXAS=" + t / "none"}, {"build", spec, "-o", t / "k.cubin"});
  CHECK(missing.exit_code == 3);
  CHECK(missing.output.find("PTXGEN_PTXAS=" + t / "none" + " is not an executable file") != std::string::npos);
  CHECK(missing.output.find("install the CUDA toolkit 12.7 or newer") != std::string::npos);

  const std::string failing = script(t, "v-fails", "echo 'libcuda.so: cannot open shared object'; exit 127\n");
  Run vf = ptxgen_env({"PTXGEN_PTXAS=" + failing}, {"build", spec, "-o", t / "k.cubin"});
  CHECK(vf.exit_code == 3);
  CHECK(vf.output.find("--version failed (exit 127)") != std::string::npos);
  CHECK(vf.output.find("libcuda.so: cannot open shared object") != std::string::npos);

  // A release that overflows an int: reported, not an internal error (it was exit 70).
  const std::string giant = script(t, "v-giant", "echo 'release 99999999999.0'\n");
  Run vg = ptxgen_env({"PTXGEN_PTXAS=" + giant}, {"build", spec, "-o", t / "k.cubin"});
  CHECK(vg.exit_code == 3);
  CHECK(vg.output.find("did not report a CUDA release") != std::string::npos);
  CHECK(vg.output.find("release 99999999999.0") != std::string::npos);

  const std::string not_ptxas = script(t, "v-other", "echo 'GNU assembler 2.40'\n");
  Run vo = ptxgen_env({"PTXGEN_PTXAS=" + not_ptxas}, {"build", spec, "-o", t / "k.cubin"});
  CHECK(vo.exit_code == 3);
  CHECK(vo.output.find("ptxas said:\nGNU assembler 2.40") != std::string::npos);
  CHECK(t.entries() == std::vector<std::string>{"v-fails", "v-giant", "v-other"});
}

TEST_CASE("ptxas is found in PATH, then CUDA_HOME/bin") {
  TempDir t;
  fs::create_directories(t / "path-bin");
  fs::create_directories(t / "cuda/bin");
  const std::string spec = spec_path("gemm_bf16_tn_128x256x64");
  // In PATH: a release too old, so the message names which ptxas was found without assembling.
  script(t, "path-bin/ptxas", "echo 'release 11.8'\n");
  Run p = ptxgen_env({"-u", "PTXGEN_PTXAS", "PATH=" + t / "path-bin"}, {"build", spec, "-o", t / "k.cubin"});
  CHECK(p.exit_code == 3);
  CHECK(p.output.find(t / "path-bin/ptxas is CUDA 11.8") != std::string::npos);
  script(t, "cuda/bin/ptxas", "echo 'release 11.7'\n");
  Run c = ptxgen_env({"-u", "PTXGEN_PTXAS", "PATH=/nonexistent", "CUDA_HOME=" + t / "cuda"},
                     {"build", spec, "-o", t / "k.cubin"});
  CHECK(c.exit_code == 3);
  CHECK(c.output.find(t / "cuda/bin/ptxas is CUDA 11.7") != std::string::npos);
}
}
