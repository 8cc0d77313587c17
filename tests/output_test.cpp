// Output safety: every output goes to a temporary file in its directory and is renamed into place;
// an output that cannot be written exits 1 with the OS error and leaves nothing behind; `-o -`
// writes standard output; a failed ptxas leaves no cubin.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli_support.hpp"

using namespace support;
using ptxgen::io::Run;

namespace {

const std::string kSpec = "gemm_bf16_tn_128x256x64";

// A directory where creating a file fails, and the OS error it gives. As root, permissions do not
// stop writes, so sysfs (which refuses new files to everyone) stands in; the test asserts the
// error it observed itself, whichever it was.
struct Unwritable {
  std::string dir, error;
};
Unwritable unwritable_dir(const TempDir& t) {
  const std::string ro = t / "read-only";
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  for (const std::string& dir : {ro, std::string("/sys")}) {
    const std::string probe = dir + "/probe";
    const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_EXCL, 0600);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
      continue;
    }
    return {dir, std::strerror(errno)};
  }
  FAIL("no unwritable directory found to test with");
  return {};
}

}  // namespace

TEST_SUITE("output") {
TEST_CASE("-o - writes standard output: emit, plan, plan --json, build") {
  TempDir t;
  const std::string spec = spec_path(kSpec);
  REQUIRE(ptxgen_run({"emit", spec, "-o", t / "k.ptx"}).exit_code == 0);
  Run e = ptxgen_run({"emit", spec, "-o", "-"});
  CHECK(e.exit_code == 0);
  CHECK(e.output == slurp(t / "k.ptx"));
  REQUIRE(ptxgen_run({"plan", spec, "--json", "-o", t / "plan.json"}).exit_code == 0);
  Run pj = ptxgen_run({"plan", spec, "--json", "-o", "-"});
  CHECK(pj.output == slurp(t / "plan.json"));
  Run pd = ptxgen_run({"plan", spec, "--json"});  // standard output is plan's default
  CHECK(pd.output == pj.output);
  // build -o -: the cubin's bytes on standard output, messages and the ptxas report on stderr.
  REQUIRE(ptxgen_run({"build", spec, "-o", t / "k.cubin"}).exit_code == 0);
  Run b = shell(sh_quote(bin()) + " build " + sh_quote(spec) + " -o - 2>" + sh_quote(t / "err.txt"));
  CHECK(b.exit_code == 0);
  CHECK(b.output == slurp(t / "k.cubin"));
  CHECK(b.output.substr(0, 4) == "\x7f" "ELF");
  CHECK(slurp(t / "err.txt").find("Used ") != std::string::npos);
  // --ptx -: the PTX on standard output, the cubin in its file.
  Run bp = shell("cd " + sh_quote(t.path.string()) + " && " + sh_quote(bin()) + " build " + sh_quote(spec) +
                 " --ptx - -o k2.cubin 2>/dev/null");
  CHECK(bp.exit_code == 0);
  CHECK(bp.output == slurp(t / "k.ptx"));
  CHECK(slurp(t / "k2.cubin") == slurp(t / "k.cubin"));
  CHECK(ptxgen_run({"build", spec, "-o", "-", "--ptx", "-"}).exit_code == 2);
  // Nothing was staged in the working directory or left behind.
  for (const auto& f : t.entries()) CHECK_MESSAGE(f.rfind(".ptxgen-", 0) != 0, "temporary file left: " << f);
}

TEST_CASE("outputs replace their destination by rename, never by rewriting it in place") {
  TempDir t;
  write(t / "k.ptx", "old contents\n");
  // A second name for the old file: an in-place rewrite would change what it shows; a rename
  // leaves it with the old contents, as a reader holding the old file open would see it.
  fs::create_hard_link(t / "k.ptx", t / "reader-view.ptx");
  REQUIRE(ptxgen_run({"emit", spec_path(kSpec), "-o", t / "k.ptx"}).exit_code == 0);
  CHECK(slurp(t / "k.ptx") == slurp(source_root() + "/golden/" + kSpec + ".ptx"));
  CHECK(slurp(t / "reader-view.ptx") == "old contents\n");
  CHECK(t.entries() == std::vector<std::string>{"k.ptx", "reader-view.ptx"});
  // The new file has the usual permissions of a build product (umask applied), not mkstemp's 0600.
  struct stat st {};
  REQUIRE(::stat((t / "k.ptx").c_str(), &st) == 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((st.st_mode & 0777) == (0666 & ~mask));
}

TEST_CASE("unwritable destinations: exit 1, the OS error, nothing written, nothing left behind") {
  TempDir t;
  const std::string spec = spec_path(kSpec);
  auto fails_with = [&](const std::vector<std::string>& args, const std::string& error) {
    CAPTURE(args.back());
    Run r = ptxgen_run(args);
    CHECK(r.exit_code == 1);
    CHECK_MESSAGE(r.output.find(error) != std::string::npos, r.output);
  };
  fails_with({"emit", spec, "-o", t / "no/such/dir/k.ptx"}, "No such file or directory");
  write(t / "file", "x");
  fails_with({"emit", spec, "-o", t / "file/k.ptx"}, "Not a directory");
  fs::create_directories(t / "dir.ptx");
  fails_with({"emit", spec, "-o", t / "dir.ptx"}, "is a directory");
  // The rename itself fails (a name longer than NAME_MAX): the temporary file must not survive.
  fails_with({"emit", spec, "-o", t / (std::string(300, 'n') + ".ptx")}, "File name too long");
  fails_with({"plan", spec, "--json", "-o", t / "no/such/dir/plan.json"}, "No such file or directory");
  fails_with({"build", spec, "-o", t / "no/such/dir/k.cubin"}, "No such file or directory");
  const Unwritable u = unwritable_dir(t);
  fails_with({"emit", spec, "-o", u.dir + "/k.ptx"}, u.error);
  fails_with({"build", spec, "-o", u.dir + "/k.cubin"}, u.error);
  CHECK(t.entries() == std::vector<std::string>{"dir.ptx", "file", "read-only"});
  CHECK(fs::is_empty(t / "read-only"));
  CHECK(fs::is_empty(t / "dir.ptx"));
  // A full standard output is an unwritable destination too.
  Run full = shell(sh_quote(bin()) + " emit " + sh_quote(spec) + " -o - >/dev/full");
  CHECK(full.exit_code == 1);
  CHECK(full.output.find("cannot write standard output: No space left on device") != std::string::npos);
}

TEST_CASE("input: size is bounded before reading on; unreadable inputs exit 1 with the OS error") {
  // /dev/zero never ends: reading stops one byte past the limit and the limit is the diagnostic.
  Run z = ptxgen_run({"check", "/dev/zero"});
  CHECK(z.exit_code == 1);
  CHECK(z.output.find("error[SPEC-LIMIT-SIZE]: the spec is larger than 1048576 bytes") != std::string::npos);
  TempDir t;
  write(t / "big.json", std::string(size_t{20} << 20, ' '));
  Run big = ptxgen_run({"check", t / "big.json"});
  CHECK(big.exit_code == 1);
  CHECK(big.output.find("error[SPEC-LIMIT-SIZE]") != std::string::npos);
  Run stdin_spec = shell(sh_quote(bin()) + " check - < " + sh_quote(spec_path(kSpec)));
  CHECK(stdin_spec.exit_code == 0);
}

TEST_CASE("a failed ptxas leaves no cubin: not from this build, not from an earlier one") {
  TempDir t;
  const std::string spec = spec_path(kSpec);
  REQUIRE(ptxgen_run({"build", spec, "-o", t / "k.cubin"}).exit_code == 0);
  REQUIRE(fs::exists(t / "k.cubin"));
  REQUIRE(fs::exists(t / "k.ptxas.txt"));
  const std::string bad = script(t, "bad-ptxas",
                                 "if [ \"$1\" = --version ]; then echo 'release 13.0'; exit 0; fi\n"
                                 "for a; do case $a in *.ptxgen-*) echo partial > \"$a\";; esac; done\n"
                                 "echo 'ptxas fatal   : boom'; exit 255\n");
  Run r = ptxgen_env({"PTXGEN_PTXAS=" + bad}, {"build", spec, "-o", t / "k.cubin"});
  CHECK(r.exit_code == 3);
  CHECK(r.output.find("ptxas fatal   : boom") != std::string::npos);
  CHECK(r.output.find("(exit 255) on " + t / "k.ptx") != std::string::npos);
  CHECK(r.output.find("note: removed " + t / "k.cubin" + " from an earlier build") != std::string::npos);
  CHECK_FALSE(fs::exists(t / "k.cubin"));
  CHECK_FALSE(fs::exists(t / "k.ptxas.txt"));
  CHECK(t.entries() == std::vector<std::string>{"bad-ptxas", "k.ptx"});  // the PTX ptxas refused stays

  // ptxas that says it succeeded but wrote nothing.
  const std::string silent = script(t, "silent-ptxas", "if [ \"$1\" = --version ]; then echo 'release 13.0'; fi\nexit 0\n");
  Run s = ptxgen_env({"PTXGEN_PTXAS=" + silent}, {"build", spec, "-o", t / "s.cubin"});
  CHECK(s.exit_code == 3);
  CHECK(s.output.find("exit 0 but no cubin written") != std::string::npos);
  CHECK_FALSE(fs::exists(t / "s.cubin"));

  // ptxas killed by a signal.
  const std::string crash = script(t, "crash-ptxas", "if [ \"$1\" = --version ]; then echo 'release 13.0'; exit 0; fi\nkill -9 $$\n");
  Run c = ptxgen_env({"PTXGEN_PTXAS=" + crash}, {"build", spec, "-o", t / "c.cubin"});
  CHECK(c.exit_code == 3);
  CHECK(c.output.find("(exit 137)") != std::string::npos);
  CHECK_FALSE(fs::exists(t / "c.cubin"));

  // ptxas that never finishes is killed after PTXGEN_PTXAS_TIMEOUT seconds.
  const std::string hang = script(t, "hang-ptxas", "if [ \"$1\" = --version ]; then echo 'release 13.0'; exit 0; fi\nexec sleep 60\n");
  const auto start = std::chrono::steady_clock::now();
  Run h = ptxgen_env({"PTXGEN_PTXAS=" + hang, "PTXGEN_PTXAS_TIMEOUT=1"}, {"build", spec, "-o", t / "h.cubin"});
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(h.exit_code == 3);
  CHECK(h.output.find("killed after 1 s (PTXGEN_PTXAS_TIMEOUT)") != std::string::npos);
  CHECK(took < std::chrono::seconds(30));
  CHECK_FALSE(fs::exists(t / "h.cubin"));
  for (const auto& f : t.entries()) CHECK_MESSAGE(f.rfind(".ptxgen-", 0) != 0, "temporary file left: " << f);
}
}
