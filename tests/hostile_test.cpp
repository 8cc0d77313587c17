// Hostile input and misuse (issue 15): what a spec can make ptxgen spend (deep view chains, long
// op lists: time and peak memory of each command measured with wait4), numbers as written, what
// -o does to devices, FIFOs, links and the spec itself, a hung ptxas and its children, stale
// outputs on every toolchain failure, depfiles GNU Make and Ninja read back, and diagnostics that
// point at the root and suggest the right name.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_support.hpp"
#include "ptxgen/emit.hpp"

extern char** environ;

using namespace support;
using nlohmann::json;
using ptxgen::io::Run;
using ptxgen::Diagnostics;
namespace rules = ptxgen::rules;

namespace {

// What one command may cost (issue 15): 1 s of CPU, 200 MB. Sanitized builds are many times
// slower and keep freed memory in quarantine: there only gross blow-ups are caught.
const double kCpuLimit = support::kSanitized ? 30.0 : 1.0;
const long kRssLimitKb = support::kSanitized ? 2L << 20 : 200L << 10;

struct Cost {
  int exit = -1;
  double cpu_s = 0;  // user + system
  long rss_kb = 0;   // peak resident set
  std::string out;   // standard output and error
};

// Runs ptxgen with `args`, its output to a file, and takes its own resource usage from wait4.
Cost measured(const TempDir& t, const std::vector<std::string>& args) {
  const std::string log = t / "measured.log";
  std::vector<std::string> argv{bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, cargs.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  struct rusage ru {};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  Cost c;
  c.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  c.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  c.rss_kb = ru.ru_maxrss;
  c.out = slurp(log);
  return c;
}

void within_limits(const Cost& c, const std::string& what) {
  CAPTURE(what);
  CAPTURE(c.out.substr(0, 2000));
  MESSAGE(what << ": " << c.cpu_s << " s CPU, " << c.rss_kb / 1024 << " MB peak");
  CHECK(c.cpu_s < kCpuLimit);
  CHECK(c.rss_kb < kRssLimitKb);
}

json program_base() { return json::parse(rules::example_program_base()); }

// A chain of `named` views, each `inline_depth` inline links (alternately slices and aliases)
// over the one before: about named x inline_depth views, at most 256 members and 32 levels deep.
json view_chain(int named, int inline_depth) {
  json j = program_base();
  auto& p = j["program"];
  p["tmem"] = {{"t", {{"columns", 256}}}};
  std::string prev = "t";
  for (int i = 0; i < named; ++i) {
    json v = prev;
    for (int d = 0; d < inline_depth; ++d)
      v = d % 2 ? json{{"alias", v}} : json{{"slice", {{"of", v}, {"columns", {0, 128}}}}};
    p["tmem"]["v" + std::to_string(i)] = v;
    prev = "v" + std::to_string(i);
  }
  p["tmem"]["acc"] = {{"alias", prev}};
  p["tmem"]["a_t"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 160}}}}}}, {"dtype", "bf16"}, {"packing", 2}}}};
  return j;
}

// The example program with its tmem_load followed by `stores` tmem_store ops of the accumulator's
// registers into a bf16 view (each 4 warps x 128 registers converted), or with `mmas` mma ops.
json long_ops(int stores, int mmas) {
  json j = program_base();
  auto& p = j["program"];
  p["tmem"]["x"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {128, 256}}}}}}, {"dtype", "bf16"}}}};
  p["tmem"].erase("a_t");
  json ops = json::array({{{"op", "load"}, {"src", "A"}, {"dst", "a"}}, {{"op", "load"}, {"src", "B"}, {"dst", "b"}}});
  for (int i = 0; i < mmas; ++i) ops.push_back({{"op", "mma"}, {"a", "a"}, {"b", "b"}, {"d", "acc"}, {"accumulate", i > 0}});
  ops.push_back({{"op", "commit"}, {"barrier", "done"}});
  ops.push_back({{"op", "wait"}, {"barrier", "done"}});
  ops.push_back({{"op", "tmem_load"}, {"src", "acc"}, {"regs", "r"}});
  for (int i = 0; i < stores; ++i) ops.push_back({{"op", "tmem_store"}, {"regs", "r"}, {"dst", "x"}});
  p["ops"] = ops;
  return j;
}

// The one diagnostic of a `check --diagnostics=json` run: rule and pointer.
std::pair<std::string, std::string> first_diagnostic(const std::string& out) {
  const auto nl = out.find('\n');
  const auto j = json::parse(out.substr(0, nl), nullptr, false);
  if (!j.is_object()) return {"", out.substr(0, 200)};
  return {j.value("rule", ""), j.value("pointer", "")};
}

size_t count_lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

// What a command may cost, measured on the plain build (tools/run-tests); under the sanitizers
// only gross blow-ups are caught (kCpuLimit).
TEST_SUITE("cost") {
TEST_CASE("a chain of 3,300 views: check, plan and emit in linear time and memory") {
  TempDir t;
  // 253 named views of 13 links each (the 256 members of /program/tmem with t, acc and a_t),
  // 3,289 views; before, each view copied the chain before it (2 s and 460 MB for a chain this
  // long, four times that for twice it).
  const json chain = view_chain(253, 13);
  write(t / "chain.json", chain.dump());
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"check", t / "chain.json"}, {"plan", t / "chain.json", "-o", t / "p.txt"},
        {"plan", t / "chain.json", "--json", "-o", t / "p.json"}, {"emit", t / "chain.json", "-o", t / "k.ptx"}}) {
    const Cost c = measured(t, cmd);
    CHECK_MESSAGE(c.exit == 0, c.out);
    within_limits(c, cmd[0] + (cmd.size() > 2 && cmd[2] == "--json" ? " --json" : "") + " of the view chain");
  }
  // Each view lists its own links and the named view they start from: the plan grows with the chain.
  const std::string text = slurp(t / "p.txt");
  CHECK(text.size() < 400000);
  CHECK(text.find("<- v251\n") != std::string::npos);
  // Twice the chain (in inline depth): at most about twice the cost, nothing quadratic.
  write(t / "half.json", view_chain(253, 6).dump());
  const Cost half = measured(t, {"plan", t / "half.json", "--json", "-o", t / "h.json"});
  const Cost full = measured(t, {"plan", t / "chain.json", "--json", "-o", t / "p.json"});
  CHECK(slurp(t / "p.json").size() < 3 * slurp(t / "h.json").size());
  CHECK(full.rss_kb < 2 * half.rss_kb + (support::kSanitized ? 1L << 20 : 20L << 10));
}

TEST_CASE("thousands of tmem_store or mma ops: refused at the op crossing OUTPUT-SIZE, checked cheaply") {
  TempDir t;
  // 4,090 tmem_store ops (each 4 warps x 128 converted registers): 26 s and 784 MB to emit
  // before, 138 MB of PTX; 4,093 mma ops: 3 s and 522 MB for plan --json.
  write(t / "st.json", long_ops(4090, 1).dump());
  write(t / "mma.json", long_ops(0, 4090).dump());
  for (const auto& [file, ptr] : {std::pair{"st.json", "/program/ops/68"}, std::pair{"mma.json", "/program/ops/514"}}) {
    for (const std::string cmd : {"check", "plan", "emit"}) {
      std::vector<std::string> args{cmd, t / file, "--diagnostics=json"};
      if (cmd != "check") args.insert(args.end(), {"-o", t / "out"});
      const Cost c = measured(t, args);
      CHECK(c.exit == 1);
      CHECK(first_diagnostic(c.out) == std::pair<std::string, std::string>{"OUTPUT-SIZE", ptr});
      within_limits(c, cmd + " " + file);
    }
  }
  CHECK_FALSE(fs::exists(t / "out"));
}

TEST_CASE("the largest accepted op lists: every command within 1 s and 200 MB, the PTX within the bound") {
  TempDir t;
  // One op below each bound: 62 tmem_store ops (65,536 instructions), 512 mma ops (2,048 tcgen05.mma).
  for (const auto& [name, spec] : {std::pair{"st", long_ops(62, 1)}, std::pair{"mma", long_ops(0, 512)}}) {
    const std::string f = t / (std::string(name) + ".json");
    write(f, spec.dump());
    for (const std::vector<std::string>& cmd :
         {std::vector<std::string>{"check", f}, {"plan", f, "-o", t / "p.txt"}, {"plan", f, "--json", "-o", t / "p.json"},
          {"emit", f, "-o", t / "k.ptx"}, {"manifest", f, "-o", t / "m.json"}}) {
      const Cost c = measured(t, cmd);
      CHECK_MESSAGE(c.exit == 0, c.out);
      within_limits(c, cmd[0] + (cmd.size() > 2 && cmd[2] == "--json" ? " --json " : " ") + name);
    }
    const std::string ptx = slurp(t / "k.ptx");
    CHECK(ptx.size() <= static_cast<size_t>(ptxgen::plan::kMaxOutput.ptx_bytes));
    CHECK(count_lines(ptx) <= static_cast<size_t>(ptxgen::plan::kMaxOutput.instructions));
  }
}
}

TEST_SUITE("limits") {
TEST_CASE("OUTPUT-SIZE's count is an upper bound of the emitted PTX, for every shipped spec") {
  std::vector<std::string> texts;
  for (const auto& f : spec_files()) texts.push_back(slurp(f));
  texts.push_back(long_ops(62, 1).dump());
  texts.push_back(long_ops(0, 512).dump());
  texts.push_back(view_chain(100, 9).dump());
  for (const auto& text : texts) {
    const support::Planned p = support::plan_of(checked_spec(text));
    const std::string ptx = ptxgen::emit::ptx(p);
    CAPTURE(p.spec.name);
    CHECK(static_cast<int64_t>(count_lines(ptx)) <= p.size.instructions);
    CHECK(static_cast<int64_t>(ptx.size()) <= p.size.ptx_bytes);
    // And not too loose: code that warps share is counted once, as the emitter writes it once
    // (plan::uniform_warp_rows, warps_hold_same_registers). Counted per warp, a 128 x 256
    // persistent TMA store was bounded at 23x its lines and an NVFP4 128 x 256 epilogue refused.
    CHECK_MESSAGE(p.size.instructions <= 8 * static_cast<int64_t>(count_lines(ptx)),
                  "bound " << p.size.instructions << " for " << count_lines(ptx) << " lines");
    // The asynchronous count is exact: the tcgen05.mma, tcgen05.cp and wgmma instructions the PTX holds.
    // Instruction lines only: comments name the instructions too.
    int64_t async = 0;
    std::istringstream lines(ptx);
    for (std::string line; std::getline(lines, line);) {
      size_t at = line.find_first_not_of(" \t");
      if (at == std::string::npos || line.compare(at, 2, "//") == 0) continue;
      if (line[at] == '@') at = line.find_first_not_of(" \t", line.find_first_of(" \t", at));
      if (at != std::string::npos && (line.compare(at, 11, "tcgen05.mma") == 0 || line.compare(at, 11, "tcgen05.cp.") == 0 ||
                                      line.compare(at, 15, "wgmma.mma_async") == 0))
        ++async;
    }
    CHECK(p.size.async == async);
  }
}
}

TEST_SUITE("spec") {
TEST_CASE("numbers: the literal as written, and the real reason") {
  auto diag = [](const std::string& from, const std::string& to, bool program = false) {
    std::string text(program ? rules::example_program_base() : rules::example_base());
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    Diagnostics d;
    ptxgen::spec::parse(text, d);
    REQUIRE(d.list().size() == 1);
    return d.list()[0];
  };
  auto x = diag("\"m\": 128", "\"m\": 1e400");
  CHECK(x.rule == "SPEC-INT-RANGE");
  CHECK(x.pointer == "/gemm/tile/m");
  CHECK(x.message == "\"m\" = 1e400 is outside [1, 1024]");
  x = diag("\"m\": 128", "\"m\": 1e-400");
  CHECK(x.rule == "SPEC-TYPE");
  CHECK(x.message == "\"m\" must be an integer, not 1e-400");
  x = diag("\"m\": 128", "\"m\": -1e400");
  CHECK(x.message == "\"m\" = -1e400 is outside [1, 1024]");
  x = diag("\"m\": 128", "\"m\": 128.0");
  CHECK(x.rule == "SPEC-TYPE");
  CHECK(x.message == "\"m\" must be an integer literal, not 128.0 (a number with a fraction or an exponent)");
  CHECK(x.help == std::vector<std::string>{"write 128"});
  x = diag("\"m\": 128", "\"m\": 1.28e2");
  CHECK(x.help == std::vector<std::string>{"write 128"});
  x = diag("\"m\": 128", "\"m\": 64.5");
  CHECK(x.rule == "SPEC-TYPE");
  CHECK(x.message == "\"m\" must be an integer, not 64.5");
  x = diag("\"m\": 4096", "\"m\": 5e9");
  CHECK(x.rule == "SPEC-INT-RANGE");
  CHECK(x.message == "\"m\" = 5e9 is outside [1, 2147483647]");
  x = diag("\"m\": 4096", "\"m\": 99999999999999999999");
  CHECK(x.message == "\"m\" = 99999999999999999999 is outside [1, 2147483647]");
  x = diag("\"ptxgen\": 1", "\"ptxgen\": 9223372036854775808.0");  // 2^63: outside int64, no overflow
  CHECK(x.rule == "SPEC-INT-RANGE");
  x = diag("\"swizzle\": {\"a\": 128", "\"swizzle\": {\"a\": 128.0");
  CHECK(x.rule == "SPEC-ENUM");
  CHECK(x.message == "swizzle 128.0 is not one of: 0 (or 16), 32, 64, 128, \"128_base32b\"");
  x = diag("\"shape\": [128, 64]}", "\"shape\": [128, 6.4e1]}", true);
  CHECK(x.message == "\"shape[1]\" must be an integer literal, not 6.4e1 (a number with a fraction or an exponent)");
  // -0 is the integer 0.
  std::string text(rules::example_program_base());
  const std::string store = "{\"op\": \"store\", \"regs\": \"r\", \"dst\": \"D\"}";
  REQUIRE(text.find(store) != std::string::npos);
  text.replace(text.find(store), store.size(), "{\"op\": \"store\", \"regs\": \"r\", \"dst\": \"D\", \"at\": [-0, 0]}");
  Diagnostics d;
  CHECK(ptxgen::spec::parse(text, d).spec);
}

TEST_CASE("did you mean: case first, other tools' spellings, then edit distance") {
  auto help = [](const json& patch, bool program = false) {
    json j = program ? program_base() : json::parse(rules::example_base());
    j.merge_patch(patch);
    Diagnostics d;
    ptxgen::spec::parse(j.dump(), d);
    REQUIRE(!d.list().empty());
    const auto& h = d.list()[0].help;
    return h.empty() ? std::string() : h[0];
  };
  CHECK(help({{"gemm", {{"a", {{"dtype", "BF16"}}}}}}) == "did you mean \"bf16\"?");
  CHECK(help({{"gemm", {{"a", {{"dtype", "bfloat16"}}}}}}) == "did you mean \"bf16\"?");
  CHECK(help({{"gemm", {{"a", {{"dtype", "float16"}}}}}}) == "did you mean \"f16\"?");
  CHECK(help({{"gemm", {{"a", {{"dtype", "fp8"}}}}}}) == "did you mean \"e4m3\" or \"e5m2\"?");
  CHECK(help({{"gemm", {{"a", {{"dtype", "float8_e4m3fn"}}}}}}) == "did you mean \"e4m3\"?");
  CHECK(help({{"gemm", {{"a", {{"dtype", "float8_e5m2"}}}}}}) == "did you mean \"e5m2\"?");
  CHECK(help({{"gemm", {{"a", {{"dtype", "int8"}}}}}}) == "did you mean \"s8\"?");
  {
    json j = json::parse(rules::example_base());
    j["gemm"].erase("m");
    j["gemm"]["M"] = 4096;
    Diagnostics d;
    ptxgen::spec::parse(j.dump(), d);
    bool found = false;
    for (const auto& x : d.list())
      if (x.rule == "SPEC-UNKNOWN-KEY") found = x.pointer == "/gemm/M" && x.help.at(0) == "did you mean \"m\"?";
    CHECK(found);
  }
  CHECK(help({{"gemm", {{"a_src", "tmem"}}}}) == "did you mean \"a_source\"?");
  json p = program_base();
  p["program"]["ops"][0] = {{"op", "load"}, {"source", "A"}, {"dst", "a"}};
  Diagnostics d;
  ptxgen::spec::parse(p.dump(), d);
  bool src = false;
  for (const auto& x : d.list())
    if (x.rule == "SPEC-UNKNOWN-KEY" && x.pointer == "/program/ops/0/source") src = x.help.at(0) == "did you mean \"src\"?";
  CHECK(src);
}

TEST_CASE("a per-op cta_group: the reason and where the value goes") {
  json j = program_base();
  j["program"]["ops"][3]["cta_group"] = 2;
  Diagnostics d;
  ptxgen::spec::parse(j.dump(), d);
  REQUIRE(d.list().size() == 1);
  const auto& x = d.list()[0];
  CHECK(x.rule == "SPEC-UNKNOWN-KEY");
  CHECK(x.pointer == "/program/ops/3/cta_group");
  CHECK(x.message.find(".cta_group is one value per kernel") != std::string::npos);
  CHECK(x.message.find("must specify the same value for .cta_group") != std::string::npos);
  CHECK(x.help.at(0).find("/program/cta_group") != std::string::npos);
}
}

TEST_SUITE("program") {
TEST_CASE("diagnostics at the root: SMEM-TILE at the shape when no swizzle fits, no follow-on errors") {
  auto check = [](const json& patch) {
    json j = program_base();
    j.merge_patch(patch);
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    return d;
  };
  // 100 rows, no swizzle: the shape is wrong (8-row core matrices), not the swizzle.
  Diagnostics rows = check({{"program", {{"globals", {{"A", {{"shape", {100, 64}}}}}}, {"smem", {{"a", {{"shape", {100, 64}}, {"swizzle", 0}}}}}}}});
  REQUIRE(rows.list().size() == 1);
  CHECK(rows.list()[0].rule == "SMEM-TILE");
  CHECK(rows.list()[0].pointer == "/program/smem/a/shape");
  CHECK(rows.list()[0].help.at(0).rfind("use \"shape\": [104, 64]", 0) == 0);
  // A 64-byte K extent under a 128-byte swizzle: the swizzle, and the one that fits.
  Diagnostics sw = check({{"program", {{"globals", {{"A", {{"shape", {128, 32}}}}}}, {"smem", {{"a", {{"shape", {128, 32}}}}}}}}});
  CHECK(sw.list().at(0).pointer == "/program/smem/a/swizzle");
  CHECK(sw.list().at(0).help.at(0).rfind("use \"swizzle\": 64", 0) == 0);
  // A copy refused for its view's type: the mma reading the view is not reported again.
  Diagnostics cp = check({{"program", {{"tmem", {{"a_t", {{"cast", {{"dtype", "f16"}}}}}}}}}});
  REQUIRE(cp.list().size() == 1);
  CHECK(cp.list()[0].rule == "CP-FORMAT");
  // An allocation of 100 columns: its slices are not reported out of range.
  Diagnostics alloc = check({{"program", {{"tmem", {{"t", {{"columns", 100}}}}}}}});
  REQUIRE(alloc.list().size() == 1);
  CHECK(alloc.list()[0].rule == "TMEM-ALLOC");
  // 100 threads: no warp count ("3 warps") follows.
  Diagnostics threads = check({{"program", {{"threads", 100}}}});
  REQUIRE(threads.list().size() == 1);
  CHECK(threads.list()[0].rule == "PROGRAM-THREADS");
}
}

TEST_SUITE("cli") {
TEST_CASE("explain takes rule ids in any case") {
  const Run upper = ptxgen_run({"explain", "MMA-M"});
  CHECK(upper.exit_code == 0);
  CHECK(ptxgen_run({"explain", "mma-m"}).output == upper.output);
  CHECK(ptxgen_run({"explain", "Mma-M"}).output == upper.output);
  CHECK(ptxgen_run({"explain", "mma-x"}).exit_code == 2);
}

TEST_CASE("plan text: lines of at most 100 characters, views as declared, single-buffered A said") {
  for (const auto& f : spec_files()) {
    CAPTURE(f);
    const std::string text = ptxgen::emit::plan_text(support::plan_of(checked_spec(slurp(f))));
    size_t start = 0, longest = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) longest = std::max(longest, nl - start);
    CHECK(longest <= 100);
  }
  const std::string prog = ptxgen::emit::plan_text(support::plan_of(checked_spec(std::string(rules::example_program_base()))));
  const auto t = prog.find("  view     t = "), acc = prog.find("  view     acc = "), a_t = prog.find("  view     a_t = ");
  CHECK(t < acc);  // the allocation, then its views in the order of their columns
  CHECK(acc < a_t);
  const std::string gemm =
      ptxgen::emit::plan_text(support::plan_of(checked_spec(slurp(spec_path("gemm_bf16_a_tmem_m128")))));
  CHECK(gemm.find("A in tensor memory is single-buffered") != std::string::npos);
}

TEST_CASE("plan text: a scale-factor tensor's lines are not called k, a persistent grid is a bound") {
  // Issue 32: the factor tensors of k = 8192 were labelled [k=2048 x 16], and a persistent launch
  // printed its most CTAs as if they were the launch.
  auto doc = nlohmann::json::parse(slurp(spec_path("gemm_mxf4_sm100a")));
  doc["gemm"]["k"] = 8192;
  const std::string scaled = ptxgen::emit::plan_text(support::plan_of(checked_spec(doc.dump())));
  CHECK(scaled.find("SFA: ue8m0 [2048 (k=8192) x 16]") != std::string::npos);
  CHECK(scaled.find("k=2048") == std::string::npos);
  CHECK(scaled.find("  launch: grid 16 x 32 x 1 for the spec's sizes") != std::string::npos);
  const std::string persistent =
      ptxgen::emit::plan_text(support::plan_of(checked_spec(slurp(spec_path("gemm_bf16_cta2_cluster_4x2_persistent_tma")))));
  CHECK(persistent.find("  launch: at most grid 512 x 1 x 1 (one CTA per tile; the launch takes one per multiprocessor)") !=
        std::string::npos);
}
}

TEST_SUITE("output") {
TEST_CASE("-o onto a device or FIFO writes into it in place; a write error exits 1") {
  TempDir t;
  const std::string spec = spec_path("gemm_bf16_tn_128x256x64");
  const std::string golden = source_root() + "/golden/gemm_bf16_tn_128x256x64.ptx";
  // Devices of our own (as root: mknod; /dev/null and /dev/full otherwise, which a non-root
  // process could not replace): a rename over them would leave a regular file.
  bool root = ::geteuid() == 0;
  std::string null_dev = root ? t / "null" : "/dev/null", full_dev = root ? t / "full" : "/dev/full";
  if (root) {
    REQUIRE(::mknod(null_dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    REQUIRE(::mknod(full_dev.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0);
    const int fd = ::open(null_dev.c_str(), O_WRONLY);
    if (fd < 0) {  // a nodev mount: no device of our own to write
      MESSAGE("devices cannot be opened in " << t.path.string() << " (nodev); the device cases are not run");
      null_dev = full_dev = "";
    } else {
      ::close(fd);
    }
  }
  struct stat st {};
  if (!null_dev.empty()) {
  Run n = ptxgen_run({"emit", spec, "-o", null_dev});
  CHECK(n.exit_code == 0);
  REQUIRE(::stat(null_dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  Run f = ptxgen_run({"emit", spec, "-o", full_dev});
  CHECK(f.exit_code == 1);
  CHECK(f.output == "error: cannot write " + full_dev + ": No space left on device\n");
  REQUIRE(::stat(full_dev.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  }
  // A FIFO: its reader gets the PTX, and it stays a FIFO.
  REQUIRE(::mkfifo((t / "fifo").c_str(), 0600) == 0);
  Run fi = shell("cat " + sh_quote(t / "fifo") + " > " + sh_quote(t / "got") + " & " + sh_quote(bin()) + " emit " + sh_quote(spec) +
                 " -o " + sh_quote(t / "fifo") + "; s=$?; wait; exit $s");
  CHECK(fi.exit_code == 0);
  CHECK(slurp(t / "got") == slurp(golden));
  REQUIRE(::stat((t / "fifo").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // No temporary file is left beside the destinations (nor in $TMPDIR's ptxgen files).
  for (const auto& e : t.entries()) CHECK(e.rfind(".ptxgen-", 0) != 0);
}

TEST_CASE("-o through a symbolic link writes its target; -o onto the spec is refused") {
  TempDir t;
  const std::string golden = source_root() + "/golden/gemm_bf16_tn_128x256x64.ptx";
  fs::copy_file(spec_path("gemm_bf16_tn_128x256x64"), t / "k.json");
  fs::create_directory(t / "out");
  write(t / "out/target.ptx", "old");
  fs::create_symlink("out/target.ptx", t / "link.ptx");
  CHECK(ptxgen_run({"emit", t / "k.json", "-o", t / "link.ptx"}).exit_code == 0);
  CHECK(fs::is_symlink(t / "link.ptx"));
  CHECK(slurp(t / "out/target.ptx") == slurp(golden));
  // A dangling link: its target is created.
  fs::create_symlink("out/new.ptx", t / "dangling.ptx");
  CHECK(ptxgen_run({"emit", t / "k.json", "-o", t / "dangling.ptx"}).exit_code == 0);
  CHECK(fs::is_symlink(t / "dangling.ptx"));
  CHECK(slurp(t / "out/new.ptx") == slurp(golden));
  // The spec itself, directly or through a link, for every output: exit 1, the spec untouched.
  const std::string before = slurp(t / "k.json");
  fs::create_symlink("k.json", t / "spec-link");
  const std::vector<std::vector<std::string>> onto{
      {"emit", t / "k.json", "-o", t / "k.json"},
      {"emit", t / "k.json", "-o", t / "spec-link"},
      {"plan", t / "k.json", "-o", t / "k.json"},
      {"manifest", t / "k.json", "-o", t / "k.json"},
      {"emit", t / "k.json", "-o", t / "x.ptx", "--depfile", t / "k.json"},
      {"emit", t / "k.json", "--check", t / "k.json", "--update"},
      {"build", t / "k.json", "-o", t / "k.json"},
      {"build", t / "k.json", "-o", t / "y.cubin", "--ptx", t / "k.json"}};
  for (const auto& args : onto) {
    CAPTURE(args);
    const Run r = ptxgen_run(args);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("refusing to write") != std::string::npos);
    CHECK(slurp(t / "k.json") == before);
  }
  CHECK_FALSE(fs::exists(t / "x.ptx"));
}
}

TEST_SUITE("toolchain") {
TEST_CASE("PTXGEN_PTXAS_TIMEOUT: the whole process group is killed; invalid values exit 2") {
  TempDir t;
  const std::string spec = spec_path("gemm_bf16_tn_128x256x64");
  // A wrapper whose child hangs, for --version and for the compile: once the timeout kills the
  // group, the child must be gone too (before, it ran on under init).
  for (const bool at_version : {true, false}) {
    CAPTURE(at_version);
    const std::string pidfile = t / (at_version ? "v.pid" : "c.pid");
    const std::string hang = "sleep 300 & echo $! > " + sh_quote(pidfile) + "; wait\n";
    const std::string wrapper =
        script(t, at_version ? "ptxas-v" : "ptxas-c",
               at_version ? hang
                          : "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0, V0'; exit 0; fi\n" + hang);
    const auto start = std::chrono::steady_clock::now();
    const Run r = ptxgen_env({"PTXGEN_PTXAS=" + wrapper, "PTXGEN_PTXAS_TIMEOUT=1"}, {"build", spec, "-o", t / "k.cubin"});
    CHECK(r.exit_code == 3);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
    REQUIRE(fs::exists(pidfile));
    const pid_t child = static_cast<pid_t>(std::stol(slurp(pidfile)));
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
      gone = ::kill(child, 0) != 0 && errno == ESRCH;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK_MESSAGE(gone, "the ptxas wrapper's child " << child << " still runs");
    if (!gone) ::kill(child, SIGKILL);
  }
  for (const std::string bad : {"abc", "-1", "0", "", "10s", "99999999999"}) {
    CAPTURE(bad);
    const Run r = ptxgen_env({"PTXGEN_PTXAS_TIMEOUT=" + bad}, {"build", spec, "-o", t / "x.cubin"});
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("PTXGEN_PTXAS_TIMEOUT=\"" + bad + "\" is not a number of seconds") != std::string::npos);
    CHECK_FALSE(fs::exists(t / "x.cubin"));
    CHECK_FALSE(fs::exists(t / "x.ptx"));
  }
}

TEST_CASE("every toolchain failure (exit 3) removes the cubin, report and manifest of an earlier build") {
  TempDir t;
  const std::string spec = spec_path("gemm_bf16_tn_128x256x64");
  const std::string hang = script(t, "ptxas-hang", "sleep 300\n");
  const std::string garbage = script(t, "ptxas-garbage", "echo 'hello'\n");
  const std::string old = script(t, "ptxas-old", "echo 'Cuda compilation tools, release 11.0, V0'\n");
  const std::vector<std::vector<std::string>> envs{{"PTXGEN_PTXAS=" + t / "missing"},
                                                   {"PTXGEN_PTXAS=" + hang, "PTXGEN_PTXAS_TIMEOUT=1"},
                                                   {"PTXGEN_PTXAS=" + garbage},
                                                   {"PTXGEN_PTXAS=" + old}};
  for (const auto& env : envs) {
    CAPTURE(env);
    for (const std::string f : {"k.cubin", "k.ptxas.txt", "k.manifest.json"}) write(t / f, "from an earlier build");
    const Run r = ptxgen_env(env, {"build", spec, "-o", t / "k.cubin"});
    CHECK(r.exit_code == 3);
    for (const std::string f : {"k.cubin", "k.ptxas.txt", "k.manifest.json"}) CHECK_FALSE(fs::exists(t / f));
  }
}
}

TEST_SUITE("integration") {
TEST_CASE("depfiles GNU Make and Ninja both read back: ':', spaces, '#', '$'; paths neither can spell refused") {
  TempDir t;
  const bool have_make = ptxgen::io::run({"/bin/sh", "-c", "command -v make"}).exit_code == 0;
  const bool have_ninja = ptxgen::io::run({"/bin/sh", "-c", "command -v ninja"}).exit_code == 0;
  REQUIRE_MESSAGE(have_make, "GNU make is needed (tools/setup-deps installs it)");
  REQUIRE_MESSAGE(have_ninja, "ninja is needed (tools/setup-deps installs it)");
  int case_no = 0;
  for (const std::string name : {"c:d.json", "a b#1$x.json", "back\\slash.json", "x:y z.json"}) {
    CAPTURE(name);
    const fs::path dir = t.path / ("w" + std::to_string(case_no++));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string sp = (dir / name).string();
    fs::copy_file(spec_path("gemm_bf16_tn_128x256x64"), sp);
    // In the directory, as build systems run it: relative paths in the depfile.
    const std::string d = sh_quote(dir.string());
    const Run e = shell("cd " + d + " && " + sh_quote(bin()) + " emit " + sh_quote(name) + " -o out.ptx --depfile out.d");
    REQUIRE_MESSAGE(e.exit_code == 0, e.output);
    // Make: the spec is a prerequisite of out.ptx (rebuilt once the spec is newer, not before).
    write((dir / "Makefile").string(), "out.ptx:\n\t@echo rebuilt\n-include out.d\n");
    const Run clean = shell("cd " + d + " && make -s 2>&1");
    CHECK_MESSAGE(clean.exit_code == 0, clean.output);
    CHECK(clean.output.empty());
    const Run stale = shell("cd " + d + " && touch -d '+2 sec' " + sh_quote(name) + " && make -s 2>&1 | grep -v 'skew\\|modification time'");
    CHECK_MESSAGE(stale.output == "rebuilt\n", stale.output);
    // Ninja: the depfile's one dependency is exactly the spec's path.
    write((dir / "build.ninja").string(), "rule gen\n  command = cp out.d dep.d\n  depfile = dep.d\n  deps = gcc\nbuild out.ptx: gen\n");
    fs::remove(dir / "out.ptx");
    const Run nj = shell("cd " + d + " && ninja >/dev/null 2>&1; ninja -t deps out.ptx");
    CHECK_MESSAGE(nj.output.find("\n    " + name + "\n") != std::string::npos, nj.output);
  }
  // Characters Make and Ninja read differently: refused with the reason, exit 6, nothing written.
  for (const std::string name : {"a*b.json", "a=b.json", "a;b.json", "tab\tname.json", "end\\"}) {
    CAPTURE(name);
    const std::string sp = t / name;
    fs::copy_file(spec_path("gemm_bf16_tn_128x256x64"), sp);
    const Run r = ptxgen_run({"emit", sp, "-o", t / "bad.ptx", "--depfile", t / "bad.d"});
    CHECK(r.exit_code == 6);
    CHECK(r.output.find("which Make and Ninja cannot both read in a depfile") != std::string::npos);
    CHECK_FALSE(fs::exists(t / "bad.ptx"));
    CHECK_FALSE(fs::exists(t / "bad.d"));
    fs::remove(sp);
  }
}
}
