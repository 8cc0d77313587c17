// The simulator must catch broken kernels: each mutation of an emitted kernel's PTX (a
// descriptor field, a barrier phase, a loop bound, an instruction-descriptor bit, a dropped wait,
// commit or deallocation) makes the simulation fail, and the test asserts how: the simulator's
// named error, or D differing from the float64 product beyond its bound. Every pattern must match
// the golden, so that an emitter change that moves it fails here rather than silently testing
// nothing.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli/simulate.hpp"
#include "sim_gemm.hpp"
#include "sim_program.hpp"
#include "support.hpp"

using namespace ptxgen;
namespace cli = ptxgen::cli;

namespace {

// Replaces the n-th match (n = -1: every match) of `re` in `text` by `fmt`; REQUIREs a match.
std::string mutate(const std::string& text, const std::string& re, const std::string& fmt, int n = 0) {
  const std::regex r(re);
  std::string out;
  int i = 0;
  auto begin = std::sregex_iterator(text.begin(), text.end(), r);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it, ++i) {
    if (n >= 0 && i != n) continue;
    out += text.substr(last, static_cast<size_t>(it->position()) - last);
    out += it->format(fmt);
    last = static_cast<size_t>(it->position() + it->length());
  }
  REQUIRE_MESSAGE(i > (n < 0 ? 0 : n), "the pattern /" << re << "/ no longer matches the golden (occurrence " << n << ")");
  out += text.substr(last);
  return out;
}

struct Mutation {
  const char* what;
  const char* re;
  const char* fmt;
  int n;               // which match (-1: all)
  const char* expect;  // a substring of the simulator's error, or "" for a numeric mismatch
  const char* also;    // a second substring the error must carry; for a numeric mismatch, its place ("" none)
};

// The mutated kernel fails for the mutation's reason: the simulator's error carries the expected
// words, or (none expected) D differs from the float64 product beyond its bound, at `also` if given.
// Then the run is reported as `ptxgen simulate --ptx MUTATED` reports it (src/cli/simulate_report.cpp,
// the command's own code on this run's outcome): its cause in one word, the class of the expected
// error (cause_of: deadlock, race, barrier, unfinished, unwritten, ...), or wrong_value with the wrong tensor
// and the spec's op that writes it named. The suite's log shows each kernel's verdict as the
// command prints it.
template <class Result>
void check(const Mutation& mu, const plan::Plan& p, const std::string& ptx, const Result& r) {
  const std::string what = mu.what;
  CAPTURE(what);
  const std::string& error = r.error;
  if (*mu.expect) {
    CHECK_MESSAGE(error.find(mu.expect) != std::string::npos, "expected an error with \"" << std::string(mu.expect) << "\", got: " << (error.empty() ? "none (D matches, worst " + std::to_string(r.worst) + ")" : error));
    if (*mu.also) CHECK_MESSAGE(error.find(mu.also) != std::string::npos, "the error lacks \"" << std::string(mu.also) << "\": " << error);
  } else {
    CHECK_MESSAGE(error.empty(), error);
    CHECK_MESSAGE(r.worst > 1.0, "D still matches the product (worst " << r.worst << " of the bound)");
    if (*mu.also) CHECK_MESSAGE(r.where.find(mu.also) != std::string::npos, "the mismatch is not at \"" << std::string(mu.also) << "\": " << r.where);
  }
  cli::SimReport rep;
  rep.error = r.error;
  rep.tensors = r.tensors;
  rep.stats = r.stats;
  cli::explain_failure(rep, p, ptx, cli::SimulateOptions{}.max_instructions);
  const std::string said = cli::verdict(rep);
  std::ostringstream report;
  cli::print_report(p, cli::SimulateOptions{}, rep, report);
  std::printf("sim mutation: %s\n    %s", mu.what, said.empty() ? "passes\n" : said.substr(0, 400).c_str());
  const std::string cause = *mu.expect ? cli::cause_of(mu.expect) : "wrong_value";
  CHECK_MESSAGE(rep.cause == cause, "reported as " << rep.cause << ", not " << cause << ": " << said);
  CHECK_MESSAGE(said.rfind("error[" + cause + "]: ", 0) == 0, said);
  // A deadlock on an mbarrier names it, and a race in shared memory the tile, in the spec's terms
  // (the plan's memory map: "full[2]", "tile a stage 0, byte 0").
  if (rep.cause == "deadlock" && said.find("mbarrier") != std::string::npos) {
    const bool named = std::regex_search(said, std::regex(R"(mbarrier at shared 0x[0-9a-f]+ \("[^"]+"\))"));
    CHECK_MESSAGE(named, said);
  }
  if (rep.cause == "race" && said.find("shared memory at 0x") != std::string::npos) {
    const bool named = std::regex_search(said, std::regex(R"(shared memory at 0x[0-9a-f]+ \(tile )"));
    CHECK_MESSAGE(named, said);
  }
  if (cause == "wrong_value") {
    const std::string text = report.str();
    CHECK_MESSAGE(text.find(": WRONG\n    written by /") != std::string::npos, text);
  }
}

// Block-wise two-set kernels: in each copy of the unrolled K loop ("Even K blocks." / "Odd K
// blocks."), the promotion's fma of register j reads the previous block's factor product; this
// rewrites it to read the j-th product the copy just computed (mul.rn.f32) for the block it issued.
std::string swap_promoted_factors(const std::string& ptx) {
  std::string out;
  size_t at = 0;
  const std::regex mul(R"(mul\.rn\.f32 (%r\d+), %r\d+, %r\d+;)"), fma(R"(fma\.rn\.f32 (%r\d+), (%r\d+), (%r\d+), \1;)");
  for (const char* half : {"// Even K blocks.", "// Odd K blocks."}) {
    // The even copy ends where the odd one starts, the odd one at the loop's end label.
    const size_t b = ptx.find(half, at);
    if (b == std::string::npos) return ptx;
    const size_t end = half[3] == 'E' ? ptx.find("// Odd K blocks.", b) : ptx.find("_end:", b);
    if (end == std::string::npos) return ptx;
    std::string body = ptx.substr(b, end - b);
    std::vector<std::string> products;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), mul); it != std::sregex_iterator(); ++it) products.push_back((*it)[1]);
    std::string swapped;
    size_t last = 0, j = 0;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), fma); it != std::sregex_iterator() && j < products.size(); ++it, ++j) {
      swapped += body.substr(last, static_cast<size_t>(it->position()) - last);
      swapped += "fma.rn.f32 " + (*it)[1].str() + ", " + (*it)[2].str() + ", " + products[j] + ", " + (*it)[1].str() + ";";
      last = static_cast<size_t>(it->position() + it->length());
    }
    swapped += body.substr(last);
    out += ptx.substr(at, b - at) + swapped;
    at = end;
  }
  return out + ptx.substr(at);
}

// A GEMM golden and the problem its mutations run: m x n x k, on `multiprocessors` for a
// persistent grid (0: a CTA per tile). The unmutated kernel passes (its run is `clean`).
struct Subject {
  std::string golden;
  nlohmann::json manifest;
  int64_t m = 0, n = 0, k = 0;
  unsigned seed = 0;
  int multiprocessors = 0;
  simtest::GemmResult clean;
  plan::Plan plan;  // the spec's, for the command's report
};

// `patch`: a JSON merge patch on the spec's gemm, whose kernel is emitted here instead of the golden.
Subject subject(const std::string& stem, int64_t m, int64_t n, int64_t k, unsigned seed, int multiprocessors = 0, const char* patch = nullptr) {
  Subject x;
  auto doc = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/" + stem + ".json"));
  if (patch) doc["gemm"].merge_patch(nlohmann::json::parse(patch));
  x.plan = support::plan_of(support::checked_spec(doc.dump()));
  x.manifest = nlohmann::json::parse(plan::manifest(x.plan));
  x.golden = patch ? emit::ptx(x.plan) : support::slurp(support::source_root() + "/golden/" + stem + ".ptx");
  x.m = m, x.n = n, x.k = k, x.seed = seed, x.multiprocessors = multiprocessors;
  x.clean = simtest::run_gemm(*ksim::parse(x.golden), x.manifest, m, n, k, seed, {}, multiprocessors);
  REQUIRE_MESSAGE(x.clean.error.empty(), x.clean.error);
  REQUIRE(x.clean.worst <= 1.0);  // the unmutated kernel passes
  return x;
}

// The mutated kernel fails for the mutation's reason.
void run(const Subject& x, const Mutation& mu) {
  const std::string ptx = mutate(x.golden, mu.re, mu.fmt, mu.n);
  REQUIRE(ptx != x.golden);
  const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(ptx), x.manifest, x.m, x.n, x.k, x.seed, {}, x.multiprocessors);
  check(mu, x.plan, ptx, r);
}

// Runs the golden of gemm spec `name` at m x n x k (it must pass), then each mutation of it (each must
// fail for its reason).
template <size_t N>
void mutate_gemm(const std::string& name, int64_t m, int64_t n, int64_t k, unsigned seed, const Mutation (&mutations)[N]) {
  CAPTURE(name);
  const Subject x = subject(name, m, n, k, seed);
  for (const Mutation& mu : mutations) run(x, mu);
}

}  // namespace

TEST_SUITE("sim_mutation") {
TEST_CASE("mutations of an emitted GEMM kernel make the simulation fail, each for its reason") {
  // One tile, six K blocks over four stages (the ring wraps), a partial last K block.
  const Subject x = subject("gemm_bf16_tn_128x256x64", 125, 252, 379, 7);
  static const Mutation kMutations[] = {
      {"A descriptor start +32 bytes (the first MMA reads the second K step)",
       R"((add\.u32 %r\d+, %r\d+, 0)x00010000;(\s*// 0x4000404000010000))", "$1x00010002;$2", 0, "", ""},
      {"descriptor bits 46-48 cleared", R"(mov\.b32 (%r\d+), 0x40004040;)", "mov.b32 $1, 0x40000040;", 0,
       "bits 46-48 are not the fixed constant 0b001", ""},
      {"producer's first pass waits for the empty barrier's phase 0 (parity not flipped)",
       R"(xor\.b32 (%r\d+), (%r\d+), 1;(\s*// the phase before))", "mov.b32 $1, $2;$3", 0, "deadlock", "waits for the phase of parity 0"},
      {"MMA issuer's full-barrier phase starts at 1 (passes before the loads land)",
       R"((mov\.u32 %r\d+,) 0(;\s*// its phase))", "$1 1$2", 1,
       "race: tcgen05.mma reads shared memory", "writes it"},
      {"epilogue waits for the accumulator's parity 1 (reads before the MMAs complete)",
       R"((mbarrier\.try_wait\.parity\.shared::cta\.b64 %p\d+, \[%r\d+\],) 0;)", "$1 1;", 0,
       "race: tcgen05.mma writes tensor memory lane 0, column 0 that tcgen05.ld at ptx line 110 (warp 0, lane 0) read",
       "with no synchronization of this thread since that thread's fence"},
      {"K-block count rounded down (the partial last K block is dropped)", R"((add\.u32 %r\d+, %r\d+,) 63;(\s*div\.u32))", "$1 0;$2", -1, "", ""},
      {"producer's ring wraps after 3 of 4 stages", R"((setp\.eq\.u32 %p\d+, %r\d+,) 4;)", "$1 3;", 0, "deadlock",
       "waits for the phase of parity 0 of the mbarrier at shared 0x30840"},  // the MMA issuer, at the full barrier of the stage never loaded
      {"instruction descriptor reserved bit 23 set", R"(0x08400490, %p)", "0x08c00490, %p", 0, "reserved bit(s) 23-23", ""},
      {"instruction descriptor N = 128 (half of D never computed)", R"(0x08400490, %p)", "0x08200490, %p", -1, "", ""},
      {"instruction descriptor transposes A", R"(0x08400490, %p)", "0x08408490, %p", -1, "", ""},
      {"tcgen05.wait::ld dropped (registers used before they are valid)", R"(\ttcgen05\.wait::ld\.sync\.aligned;[^\n]*\n)", "", -1, "", ""},
      {"MMA issuer does not spin on the full barrier",
       R"((mbarrier\.try_wait\.parity\.shared::cta\.b64 (%p\d+), \[%r\d+\], %r\d+;\s*)@!%p\d+ bra \$L_s\d+_wait;)", "$1", 1,
       "race: tcgen05.mma reads shared memory", ""},
      {"producer does not spin on the empty barrier (overwrites stages in use)",
       R"((mbarrier\.try_wait\.parity\.shared::cta\.b64 (%p\d+), \[%r\d+\], %r\d+;\s*)@!%p\d+ bra \$L_s\d+_wait;)", "$1", 0,
       "race: a TMA load writes shared memory", "reads it"},
      {"the commit to the empty barrier dropped", R"(\ttcgen05\.commit[^\n]*\n)", "", 0, "deadlock", "mbarrier.try_wait"},
      {"expect_tx 16 bytes short", R"((mbarrier\.arrive\.expect_tx\.shared::cta\.b64 _, \[%r\d+\],) 49152;)", "$1 49136;", 0, "deadlock",
       "tx-count -16"},
      {"epilogue warp 1 addresses lanes 16-47 (outside its quarter)", R"(\[(%r\d+)\+0x00200000\])", "[$1+0x00100000]", 0,
       "outside warp quarter", ""},
      {"tcgen05.dealloc dropped", R"(\ttcgen05\.dealloc[^\n]*\n)", "", 0, "exits with tensor memory allocated", ""},
      {"mbarrier.init of the accumulator barrier dropped", R"(\tmbarrier\.init\.shared::cta\.b64 \[%r\d+\], 1;\n)", "", 0,
       "uninitialized mbarrier", ""},
      // The single-thread roles run in their whole warp and issue from the lane elect.sync elects
      // (PTX ISA 9.7.13.14): a predicate true in every lane makes each of the 32 issue.
      {"the producer's election dropped (every lane of warp 4 arms the full barrier and loads)",
       R"(elect\.sync _\|(%p\d+), -1;)", "setp.eq.u32 $1, %r0, %r0;", 0, "more arrivals than the mbarrier", "(warp 4, lane 1)"},
      {"the MMA issuer's election dropped (every lane of warp 5 issues the MMAs and commits)",
       R"(elect\.sync _\|(%p\d+), -1;)", "setp.eq.u32 $1, %r0, %r0;", 1, "race: a TMA load writes shared memory", "reads it"},
      // The tcgen05 fences (PTX ISA 9.7.16.6.3-4): another thread's tcgen05 operation is ordered
      // after a thread's through tcgen05.fence::before_thread_sync (or a completed tcgen05.commit)
      // in that thread, a synchronization, and tcgen05.fence::after_thread_sync in the other.
      {"the epilogue's tcgen05.fence::after_thread_sync after its wait on the accumulator barrier dropped",
       R"((\$L_s0_wait:\n(?:[^\n]*\n){3})\ttcgen05\.fence::after_thread_sync;\n)", "$1", 0,
       "race: tcgen05.ld reads tensor memory lane 0, column 0 that tcgen05.mma at ptx line",
       "issued after the synchronization at ptx line 102 with no tcgen05.fence::after_thread_sync between"},
      {"the teardown's tcgen05.fence::before_thread_sync before barrier.sync 0 and tcgen05.dealloc dropped",
       R"((\$L_teardown:\n\t//[^\n]*\n)\ttcgen05\.fence::before_thread_sync;\n)", "$1", 0,
       "race: tcgen05.dealloc frees tensor memory lane 0, column 0 that tcgen05.ld at ptx line",
       "(warp 0, lane 0) read, with no tcgen05.fence::before_thread_sync by that thread since"},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// A persistent kernel's accumulator ring (gemm.schedule persistent): two CTAs walk five tiles, so
// CTA 0 uses buffer 0 for tiles 0 and 2 (and 4), each reuse behind the epilogue's release.
TEST_CASE("mutations of a persistent kernel's accumulator ring make the simulation fail") {
  const Subject x = subject("gemm_bf16_persistent_128x256x64", 5 * 128 - 3, 250, 5 * 64 - 7, 5, 2);
  REQUIRE(x.clean.ctas == 2);
  static const Mutation kMutations[] = {
      {"the epilogue's acc_empty arrival dropped (the issuer waits for buffer 0 forever at tile 2)",
       R"(\tmbarrier\.arrive\.shared::cta\.b64 _, \[%r\d+\];\n)", "", 0, "deadlock", "waits for the phase of parity 1"},
      {"the issuer's first pass waits for acc_empty's phase 0 (parity not flipped)",
       R"(xor\.b32 (%r\d+), (%r\d+), 1;(\s*// the phase before[^\n]*\n\tmad\.lo\.u32 %r\d+, %r\d+, 8, %r\d+;\s*// acc_empty))",
       "mov.b32 $1, $2;$3", 0, "deadlock", "waits for the phase of parity 0"},
      {"the epilogue's ring over the tiles never flips its phase (tile 2 takes buffer 0 for full at once)",
       R"(\t@%p\d+ xor\.b32 (%r\d+), \1, 1;\n(\tadd\.u32 %r\d+, %r\d+, %r\d+;\n\tbra \$L_s0;))", "$2", 0, "race: tcgen05.ld reads tensor memory", "still writes"},
      {"the epilogue's first load reads buffer 0 on every tile", R"((mul\.lo\.u32 %r\d+, %r\d+,) 256;(\s*// this tile's buffer))",
       "$1 0;$2", 0, "race: tcgen05.ld reads tensor memory", "still writes"},
      // PTX ISA 9.7.16.6.4.4: the epilogue's tcgen05.ld of a buffer, then the next tile's MMAs over it
      // in another thread; the MMA issuer's fence after its wait on "full" also follows its wait on
      // acc_empty, so only dropping both of its fences loses the order.
      {"the epilogue's tcgen05.fence::before_thread_sync before it releases the accumulator buffer dropped",
       R"(\ttcgen05\.fence::before_thread_sync;\n(\tmbarrier\.arrive\.shared::cta\.b64 _, \[%r\d+\];\n))", "$1", 0,
       "race: tcgen05.mma writes tensor memory lane 0, column 0 that tcgen05.ld at ptx line",
       "(warp 0, lane 0) read, with no tcgen05.fence::before_thread_sync by that thread since"},
      {"the MMA issuer's tcgen05.fence::after_thread_sync after its waits on acc_empty and on full dropped",
       R"((\$L_s3[58]_wait:\n(?:[^\n]*\n){3})\ttcgen05\.fence::after_thread_sync;\n)", "$1", -1,
       "race: tcgen05.mma writes tensor memory lane 0, column 0 that tcgen05.ld at ptx line",
       "read, issued after the synchronization at ptx line"},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// A TMA epilogue's staging ring (gemm.epilogue tma): two CTAs walk five tiles, four boxes a tile
// through two stages, so box j's stage is written again by box j + 2, of this tile or the next.
TEST_CASE("mutations of a TMA epilogue's bulk groups and barriers make the simulation fail") {
  const Subject x = subject("gemm_bf16_persistent_tma_128x256x64", 5 * 128 - 3, 248, 5 * 64 - 7, 5, 2);
  REQUIRE(x.clean.stats.tma_stores == 5 * 4);
  static const Mutation kMutations[] = {
      {"the wait_group.read before a stage is written again dropped (box j + 2 overwrites box j's stage while it is read)",
       R"(\t@!%p\d+ cp\.async\.bulk\.wait_group\.read 1;[^\n]*\n)", "", -1, "race: st.shared writes shared memory",
       "reads it (no wait for its completion)"},
      {"the last tile's wait_group.read 0 dropped (the CTA may exit while its stores read shared memory)",
       R"(\tcp\.async\.bulk\.wait_group\.read 0;[^\n]*\n)", "", 0,
       "exits with cp.async.bulk.tensor stores still reading shared memory", ""},
      {"the barrier between the box's writes and its store dropped (the store reads rows not yet written)",
       R"(\tbar\.sync 1, 128;\s*// the box is in shared memory\n)", "", -1, "race: st.shared writes shared memory", ""},
      // The accumulator is released after the tile's last tcgen05.ld, before its last box is
      // computed and stored (the loads' registers hold it): without the wait::ld before that
      // arrival, the MMAs of the CTA's tile after next overwrite the buffer the load still reads.
      {"the wait::ld before the accumulator's release dropped (the next MMAs into the buffer overtake its last tcgen05.ld)",
       R"(\ttcgen05\.wait::ld\.sync\.aligned;\n(\n\t// \[\d+\] mbarrier arrive \(/gemm\): release this tile's accumulator))", "$1", 0,
       "", ""},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// An 8-bit D through the TMA store (docs/spec.md, "Epilogues"): boxes of 128 one-byte columns, row r's
// 16-byte chunk c at chunk c ^ (r % 8) of the 128-byte staging row. Without the xor the TMA store
// (which reads through the map's swizzle) puts row r's chunks at each other's columns: D itself is
// wrong ("D(", not the amax; on MXFP8 the elements against their factors, "(times ", not the
// factors, which are computed before the staging), in a row r % 8 != 0. Persistent kernels on two
// multiprocessors, so the staging is reused from tile to tile.
namespace {
// The row of the worst mismatch "D(i,j) = ..." (or "... D(i,j) = ..." of MXFP8's elements), -1 if none.
int64_t worst_row(const std::string& where) {
  const size_t at = where.find("D(");
  return at == std::string::npos ? -1 : std::stoll(where.substr(at + 2));
}

// A staging mutation that drops the xor with r % 8 leaves rows r % 8 == 0 as they were: the worst
// mismatch must lie in another row.
void run_swizzle(const Subject& x, const Mutation& mu) {
  const std::string ptx = mutate(x.golden, mu.re, mu.fmt, mu.n);
  const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(ptx), x.manifest, x.m, x.n, x.k, x.seed, {}, x.multiprocessors);
  check(mu, x.plan, ptx, r);
  const int64_t row = worst_row(r.where);
  CHECK_MESSAGE(row >= 0, r.where);
  CHECK_MESSAGE(row % 8 != 0, "a row whose swizzle is the identity differs: " << r.where);
}
}  // namespace

TEST_CASE("mutations of an 8-bit D's TMA staging make the simulation fail at D") {
  {  // wgmma, persistent: e4m3 D with its scale, a bf16 bias and the amax; pairs of columns as .b16
    const Subject x = subject("gemm_sm90_bf16_128x256x64_e4m3_amax_tma", 5 * 128 - 3, 496, 5 * 64 - 7, 7, 2);
    REQUIRE(x.clean.stats.tma_stores > 0);
    run_swizzle(x, {"the 8-bit staging's 16-byte chunk not swizzled (the xor with r % 8 dropped)", R"(xor\.b32 (%r\d+), \1, %r\d+;)",
                    "add.u32 $1, $1, 0;", -1, "", "D("});
    run(x, {"an 8-bit D's second 8 columns of a chunk written at its first 8 (the byte offset 8 in the chunk dropped)",
            R"(st\.shared\.b16 \[(%r\d+)\+8\])", "st.shared.b16 [$1]", -1, "", "D("});
  }
  {  // tcgen05, persistent, double-buffered accumulator: MXFP8 (e4m3) with gelu_tanh, the amax and
     // D's scale; 16 columns of a row packed into one st.shared.v4.b32
    const Subject x = subject("gemm_bf16_128x256x64_mxfp8_persistent_tma", 5 * 128 - 3, 480, 5 * 64 - 7, 7, 2);
    REQUIRE(x.clean.stats.tma_stores > 0);
    run_swizzle(x, {"the 8-bit staging's 16-byte chunk not swizzled (chunk c written at c, not c ^ (r % 8))",
                    R"(xor\.b32 (%r\d+), %r\d+, (\d+);(\s*mad\.lo\.u32 \1, \1, 16, %r\d+;\s*st\.shared\.v4\.b32))", "mov.b32 $1, $2;$3", -1,
                    "", "(times "});
    run(x, {"the pairs of a word swapped (columns 2i + 2, 2i + 3 first in memory)", R"(mov\.b32 (%r\d+), \{(%rs\d+), (%rs\d+)\};)",
            "mov.b32 $1, {$3, $2};", -1, "", "(times "});
  }
}

// A 16-bit D's staging by stmatrix.x4 (PTX ISA 9.1 §9.7.14.5.16; docs/spec.md, "Epilogues"): lane l
// gives the address of row 16q + l % 16 of the warpgroup's, its 16-byte chunk (c0 + l / 16) ^ (l % 8)
// of the 128-byte swizzled row. A persistent cluster (two CTAs along M multicasting B, five tiles
// over two clusters), so the staging tile is written again for every next tile.
TEST_CASE("mutations of an sm_90a kernel's stmatrix staging make the simulation fail, each for its reason") {
  const Subject x = subject("gemm_sm90_bf16_128x256x64_multicast_b_persistent", 5 * 128 - 3, 248, 4 * 64 - 5, 25, 4);
  REQUIRE(x.clean.stats.tma_stores > 0);
  REQUIRE(x.golden.find("stmatrix.sync.aligned.m8n8.x4.shared.b16") != std::string::npos);
  {
    // The issuing thread's warp runs on to the store while the other warps of its warpgroup have
    // not yet written their rows: the last-woken-first schedule (4, lifo) lets it (the fixed one
    // runs the warps in step through their stmatrix and hides the missing barrier).
    const Mutation mu{"the warpgroups' barriers between their stmatrix writes and the TMA store dropped (the store is issued while "
                      "other warps still write the rows it reads)",
                      R"((fence\.proxy\.async\.shared::cta;\n\tsetp\.eq\.u32 %p\d+, %r\d+, 0;\n)\t@%p\d+ bar\.sync 2, 128;\n(\tsetp\.eq\.u32 %p\d+, %r\d+, 1;\n)\t@%p\d+ bar\.sync 3, 128;\n)",
                      "$1$2", -1, "race: stmatrix writes shared memory", "while an asynchronous operation issued at ptx line"};
    ksim::Options lifo;
    lifo.schedule = 4;
    const std::string ptx = mutate(x.golden, mu.re, mu.fmt, mu.n);
    const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(ptx), x.manifest, x.m, x.n, x.k, x.seed, lifo, x.multiprocessors);
    check(mu, x.plan, ptx, r);
    const simtest::GemmResult clean = simtest::run_gemm(*ksim::parse(x.golden), x.manifest, x.m, x.n, x.k, x.seed, lifo, x.multiprocessors);
    CHECK_MESSAGE(clean.error.empty(), clean.error);  // with its barriers the kernel passes that schedule
    CHECK(clean.worst <= 1.0);
  }
  {
    // Two subtile buffers (box j through buffer j % 2): without the issuing thread's
    // cp.async.bulk.wait_group.read 1 before a buffer is written again (PTX ISA 9.1 §9.7.9.27.2.2),
    // the warps write box j + 2 while TMA still reads box j from the same buffer.
    const Mutation mu{"the issuing thread's cp.async.bulk.wait_group.read 1 before a subtile buffer is written again dropped (stmatrix "
                      "overwrites a buffer a TMA store still reads)",
                      R"(\t@!%p\d+ cp\.async\.bulk\.wait_group\.read 1;[^\n]*\n)", "", -1, "race: stmatrix writes shared memory",
                      "while an asynchronous operation issued at ptx line"};
    ksim::Options lifo;
    lifo.schedule = 4;
    const std::string ptx = mutate(x.golden, mu.re, mu.fmt, mu.n);
    const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(ptx), x.manifest, x.m, x.n, x.k, x.seed, lifo, x.multiprocessors);
    check(mu, x.plan, ptx, r);
  }
  static const Mutation kMutations[] = {
      {"each lane's row address 16q + l % 8 instead of 16q + l % 16 (rows 8-15 of matrices 1 and 3 land on rows 0-7)",
       R"(and\.b32 (%r\d+), (%r\d+), 15;(\s*mad\.lo\.u32 \1, %r\d+, 16, \1;\s*// the row lane l gives))", "and.b32 $1, $2, 7;$3", -1, "",
       "D("},
      {"an x4's second and third registers swapped (rows 8-15 of columns 0-7 stored as rows 0-7 of columns 8-15)",
       R"((stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 \[[^\]]+\], \{%r\d+, )(%r\d+), (%r\d+))", "$1$3, $2", -1, "", "D("},
      // Box j through the wrong subtile buffer (j % 2 is the one the waits free). Buffer 0 lies at
      // 0x24800: the CTA's tiles from 0x800, after 3 stages of a (16 KB) and b (32 KB). The odd
      // boxes' TMA stores read buffer 0, which box 2 then writes while box 1's store, the newest
      // group that cp.async.bulk.wait_group.read 1 leaves, still reads it; the fixed schedule's first
      // such write is warp 1's first row (16 rows of 128 bytes in: 0x25000).
      {"the odd boxes' TMA stores read subtile buffer 0 instead of 1", R"(add\.u32 (%r\d+), (%r\d+), 16384;(\n\t@!%p\d+ cp\.async\.bulk\.tensor))",
       "add.u32 $1, $2, 0;$3", -1, "race: stmatrix writes shared memory", "at 0x25000 while an asynchronous operation"},
      // And the odd boxes' stmatrix into buffer 0 (box 1's, from its first byte), while box 0's store still reads it.
      {"the odd boxes' stmatrix writes subtile buffer 0 instead of 1", R"((stmatrix[^\[]*\[%r\d+)\+16384\])", "$1]", -1,
       "race: stmatrix writes shared memory", "at 0x24800 while an asynchronous operation"},
      // Box 1's wait alone dropped: it writes buffer 1 while the previous tile's box 3 (a store no
      // thread waited for since) still reads it. The simulator keeps a TMA store in flight while
      // anything else can complete, across the next tile's main loop: the fixed schedule catches it.
      {"box 1's wait for the tile before's box 3 dropped (box 1 writes buffer 1 while that store still reads it)",
       R"(\t@!%p\d+ cp\.async\.bulk\.wait_group\.read 1;[^\n]*\n)", "", 1, "race: stmatrix writes shared memory",
       "while an asynchronous operation issued at ptx line"},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
  // The chunk not swizzled (the xor with l % 8 dropped): rows r % 8 == 0 stay right, the others
  // take each other's columns through the map's 128-byte swizzle.
  run_swizzle(x, {"the stmatrix row's 16-byte chunk not swizzled (chunk c0 + l / 16, not (c0 + l / 16) ^ (l % 8))",
                  R"(xor\.b32 (%r\d+), (%r\d+), %r\d+;(\s*// \(l / 16\) \^ \(l % 8\)))", "mov.b32 $1, $2;$3", -1, "", "D("});
}

TEST_CASE("mutations of a block-scaled GEMM kernel make the simulation fail, each for its reason") {
  // mxf8f6f4 with ue8m0 factors, 128 x 256 x 128 tiles over 3 stages: per K block one 512-byte block
  // of A's factors and two of B's (N = 256), each copied into its stage's tensor-memory buffer.
  static const Mutation kMutations[] = {
      {"the factor buffers single-buffered: every stage's copy into stage 0's columns, over factors an MMA in flight reads",
       R"((mad\.lo\.u32 %r\d+, %r\d+,) [48](, %r\d+;\s*// this stage's copy))", "$1 0$2", -1, "race: tcgen05.cp writes tensor memory",
       "reads it"},
      {"the copy of B's factors for columns 128-255 dropped (the MMAs read stale factors)",
       R"(\ttcgen05\.cp\.cta_group::1\.32x128b\.warpx4 \[%r\d+\+0x00000110\], %rd\d+;\n)", "", 0, "", ""},
      {"A's factors read one column on (rows 32-63's factors scale rows 0-31; rows 96-127 read the next stage's buffer, "
       "which its copy overwrites under the MMA)",
       R"(\[(%r\d+)\+0x00000100\](, \[%r\d+\+0x0000010c\]))", "[$1+0x00000101]$2", -1,
       "race: tcgen05.cp writes tensor memory lane 0, column 260", "reads it"},
      {"scale factor B ID 1 in the first K step (idesc bits 4-5: the second K step's factors)", R"(0x08c00c00, \[)",
       "0x08c00c10, [", 0, "", ""},
  };
  // One tile short of the edges, five K blocks over three stages (the rings wrap), k's tail partial.
  mutate_gemm("gemm_mxf8f6f4_e4m3_e2m3_sm100a", 125, 252, 635, 11, kMutations);
}

TEST_CASE("mutations of a sparse-A GEMM kernel make the simulation fail, each for its reason") {
  // e4m3 2:4, 128 x 256 x 256 tiles over 2 stages: per K block two metadata atoms (128 of K each),
  // copied into the stage's tensor-memory buffer; MMA k reads 2 columns from 2k on.
  static const Mutation kMutations[] = {
      {"the metadata buffers single-buffered: every stage's copy into stage 0's columns",
       R"((mad\.lo\.u32 %r\d+, %r\d+,) 8(, %r\d+;\s*// this stage's copy))", "$1 0$2", -1, "race: tcgen05.cp writes tensor memory",
       "reads it"},
      {"the copy of the K block's second metadata atom dropped (K steps 2-3 read stale metadata)",
       R"(\ttcgen05\.cp\.cta_group::1\.128x128b \[%r\d+\+0x00000104\], %rd\d+;\n)", "", 0, "", ""},
      {"the second K step reads the first one's metadata", R"(\[(%r\d+)\+0x00000102\], 0x08400014)", "[$1+0x00000100], 0x08400014",
       0, "", ""},
  };
  mutate_gemm("gemm_sparse_e4m3_sm100a", 125, 252, 1024, 13, kMutations);  // four K blocks over two stages
}

TEST_CASE("mutations of sparse-A GEMM kernels of .kind::f16 and .kind::tf32 make the simulation fail, each for its reason") {
  {  // bf16 2:4, 128 x 256 x 128 tiles over 2 stages: one metadata atom (128 of K) per K block, four
     // K steps of K = 32, step k reading column k: the even column 2 (k / 2) and selector k % 2.
    const Subject x = subject("gemm_sparse_bf16_sm100a", 125, 252, 512, 17);  // four K blocks over two stages
    static const Mutation kMutations[] = {
        {"the second K step's sparsity selector 0 (reads the first step's metadata column)", R"(0x08400495(, 1; // m0 n0 k1:))",
         "0x08400494$1", 0, "", ""},
        {"the third K step's metadata address on the first column pair (reads the first step's metadata)",
         R"(\[(%r\d+)\+0x00000102\](, 0x08400494))", "[$1+0x00000100]$2", 0, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
    // The metadata written in the 8-bit kinds' row-major atom instead of CUTLASS's permuted .kind::f16
    // atom (docs/architecture.md item 17): the kernel reads other rows' and chunks' indices.
    nlohmann::json mf = x.manifest;
    REQUIRE(mf.at("tensors").at("META").at("kind") == "f16");
    mf["tensors"]["META"]["kind"] = "f8f6f4";
    const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(x.golden), mf, x.m, x.n, x.k, x.seed);
    check({"the metadata in the 8-bit kinds' row-major atom", "", "", 0, "", ""}, x.plan, x.golden, r);
  }
  {  // tf32 1:2, 128 x 128 x 64 tiles over 4 stages: one atom (64 of K) per K block, four K steps of K = 16.
    const Subject x = subject("gemm_sparse_tf32_sm100a", 125, 124, 384, 19);  // six K blocks over four stages
    static const Mutation kMutations[] = {
        {"the fourth K step's sparsity selector 0 (reads the third step's metadata column)", R"(0x08200915(, 1; // m0 n0 k3:))",
         "0x08200914$1", 0, "", ""},
        {"the metadata buffers single-buffered: every stage's copy into stage 0's columns",
         R"((mad\.lo\.u32 %r\d+, %r\d+,) 4(, %r\d+;\s*// this stage's copy))", "$1 0$2", -1, "race: tcgen05.cp writes tensor memory",
         "reads it"},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
}

TEST_CASE("mutations of a sparse-A GEMM kernel at M = 64 (layout F) make the simulation fail, each for its reason") {
  // bf16 2:4, 192 x 128 x 128 tiles over 2 stages: three M = 64 groups, 0 and 1 sharing slab 0 at
  // lane alignments 0 and 16, group 2's N split over both alignments of slab 1; each group's
  // metadata rows placed by 16-row boxes in D's lanes of them (line 32 q + alignment of the slab).
  static const Mutation kMutations[] = {
      {"the alignment-16 group's MMAs read the metadata at lane 0 (the other group's rows)",
       R"(\[(%r\d+)\+0x001000c0\](, 0x04200494, %p))", "[$1+0x000000c0]$2", 0,
       "the sparsity metadata's lane is not D's alignment", ""},
      {"the alignment-16 group's first box of metadata rows lands at alignment 0 (over the other group's)",
       R"((add\.u32 %r\d+, %r\d+,) 114944;)", "$1 114688;", 0, "race: a TMA load writes shared memory", "writes it"},
  };
  mutate_gemm("gemm_sparse_bf16_m192_fold_sm100a", 189, 124, 512, 29, kMutations);  // four K blocks over two stages
}

TEST_CASE("mutations of a CTA pair's sparse-A GEMM kernel at M = 128 (layout C) make the simulation fail, each for its reason") {
  // e4m3 2:4, 128 x 256 x 256 tiles on a pair over 3 stages: each CTA's 64 rows of D at lane
  // alignment 0 (layout C organizes them as layout F), their metadata placed by four 16-row boxes
  // per atom from the CTA's own rows (CTA 1's from row 64 of the tile).
  static const Mutation kMutations[] = {
      {"CTA 1's first box of metadata rows comes from CTA 0's rows (the pair rank's 64 rows dropped)",
       R"((add\.u32 %r\d+, %r\d+, 122880;\n\tadd\.u32 %r\d+, %r\d+, 0;\n\tadd\.u32 %r\d+, %r\d+, 0;\n)\tmad\.lo\.u32 %r\d+, %r4, 64, %r\d+;[^\n]*\n)",
       "$1", 0, "", ""},
      {"the first K step reads its metadata at lane 16 (the alignment no group of D takes)",
       R"(\[(%r\d+)\+0x00000100\](, 0x08400014, %p))", "[$1+0x00100100]$2", 0, "the sparsity metadata's lane is not D's alignment", ""},
  };
  mutate_gemm("gemm_sparse_e4m3_cta2_m128_sm100a", 251, 252, 1280, 31, kMutations);  // five K blocks over three stages
}

TEST_CASE("mutations of a sparse block-scaled GEMM kernel make the simulation fail, each for its reason") {
  // .kind::mxf4 at 4:8 with ue8m0 factors per 64 of K, 128 x 128 x 512 tiles over 3 stages: per K
  // block two 512-byte blocks of A's factors and two of B's (4 factors each, 256 of K), two metadata
  // atoms (256 of K each); K step s (K = 128) reads its 2 factors at half-word 2 (s % 2) of column
  // s / 2 and 2 metadata columns from 2 s on.
  const Subject x = subject("gemm_sparse_mxf4_sm103a", 125, 124, 2560, 23);  // five K blocks over three stages
  static const Mutation kMutations[] = {
      {"the second K step reads the first one's factors (scale factor IDs 0)", R"(0x48a004a4(, \[%r\d+\+0x00000080\]))",
       "0x08a00484$1", 0, "", ""},
      {"the third K step reads the first one's metadata", R"(\[(%r\d+)\+0x000000b4\], 0x08a00484)", "[$1+0x000000b0], 0x08a00484",
       0, "", ""},
      {"the copy of the K block's second metadata atom dropped (K steps 2-3 read stale metadata)",
       R"(\ttcgen05\.cp\.cta_group::1\.128x128b \[%r\d+\+0x000000b4\], %rd\d+;\n)", "", 0, "", ""},
      {"the copy of A's second factor block dropped (K steps 2-3 read stale factors)",
       R"(\ttcgen05\.cp\.cta_group::1\.32x128b\.warpx4 \[%r\d+\+0x00000084\], %rd\d+;\n)", "", 0, "", ""},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
  // Factor tensors at the dense kind's block (one per 32 of K, as MXFP4 without sparsity takes them):
  // the kernel, whose sparse MMAs apply one factor per 64 (Table 56), scales with the wrong ones.
  nlohmann::json mf = x.manifest;
  REQUIRE(mf.at("tensors").at("SFA").at("vec") == 64);
  mf["tensors"]["SFA"]["vec"] = 32;
  mf["tensors"]["SFB"]["vec"] = 32;
  const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(x.golden), mf, x.m, x.n, x.k, x.seed);
  check({"factor tensors of one factor per 32 elements of K (the dense block)", "", "", 0, "", ""}, x.plan, x.golden, r);
}

TEST_CASE("mutations of CTA-pair and program kernels make the simulation fail") {
  {  // A pair: the even CTA expects only its own bytes; the odd CTA's loads then land on a later phase.
    const plan::Plan p = support::plan_of(support::checked_spec(support::slurp(support::source_root() + "/specs/gemm_bf16_cta2_m256.json")));
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const std::string golden = support::slurp(support::source_root() + "/golden/gemm_bf16_cta2_m256.ptx");
    // The unmutated kernel passes at these sizes (what the mutations below break).
    const simtest::GemmResult clean = simtest::run_gemm(*ksim::parse(golden), manifest, 253, 252, 379, 3);
    REQUIRE_MESSAGE(clean.error.empty(), clean.error);
    REQUIRE_MESSAGE(clean.worst <= 1.0, clean.where);
    const Mutation mu{"the even CTA's expect_tx covers only its own loads",
                      R"((mbarrier\.arrive\.expect_tx\.shared::cta\.b64 _, \[%r\d+\],) 65536;)", "$1 32768;", 0,
                      "race: tcgen05.mma reads shared memory at 0x800 while an asynchronous operation issued at ptx line", ""};
    const std::string ptx = mutate(golden, mu.re, mu.fmt, mu.n);
    const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(ptx), manifest, 253, 252, 379, 3);
    check(mu, p, ptx, r);
    const Mutation mu2{"the commit arrives in the even CTA only (ctaMask 1)", R"((mov\.u16 %rs\d+,) 3;)", "$1 1;", -1,
                       "deadlock", "waits for the phase of parity 0 of the mbarrier at shared 0x20800"};
    const std::string ptx2 = mutate(golden, mu2.re, mu2.fmt, mu2.n);
    const simtest::GemmResult r2 = simtest::run_gemm(*ksim::parse(ptx2), manifest, 253, 252, 379, 3);
    check(mu2, p, ptx2, r2);
    // fence.mbarrier_init (PTX ISA 9.7.13.4) releases the barriers' initialization to the peer
    // CTA, whose TMA loads complete on the even CTA's barriers; so does the start-up
    // barrier.cluster.arrive's default .release (§9.7.13.3; §9.7.13.15.16 Example 4 relies on it):
    // only without both is the initialization unordered before the peer's use.
    const char* fence = R"(\tfence\.mbarrier_init\.release\.cluster;\n)";
    const char* arrive = R"(barrier\.cluster\.arrive\.release\.aligned;)";
    const Mutation mu3{"fence.mbarrier_init dropped and the start-up barrier.cluster.arrive made .relaxed",
                       R"(\tfence\.mbarrier_init\.release\.cluster;\n([\s\S]*?)barrier\.cluster\.arrive\.release\.aligned;)",
                       "$1barrier.cluster.arrive.relaxed.aligned;", 0,
                       "race: the mbarrier at shared 0x20828 of CTA rank 0, initialized at ptx line 85, is used by CTA rank 1 with no "
                       "fence.mbarrier_init.release.cluster",
                       "the asynchronous operation issued at ptx line"};
    const std::string ptx3 = mutate(golden, mu3.re, mu3.fmt, mu3.n);
    const simtest::GemmResult r3 = simtest::run_gemm(*ksim::parse(ptx3), manifest, 253, 252, 379, 3);
    check(mu3, p, ptx3, r3);
    for (const std::string& ptx : {mutate(golden, fence, "", 0), mutate(golden, arrive, "barrier.cluster.arrive.relaxed.aligned;", 0)}) {
      const simtest::GemmResult ok = simtest::run_gemm(*ksim::parse(ptx), manifest, 253, 252, 379, 3);
      CHECK_MESSAGE(ok.error.empty(), ok.error);  // either release alone orders the initialization
      CHECK(ok.worst <= 1.0);
    }
  }
  {  // A cluster of 2 x 2 pairs multicasting A along its rows and B along its columns (persistent).
    const Subject x = subject("gemm_bf16_cta2_cluster_4x2_persistent_tma", 5 * 256 - 3, 248, 315, 5, 16);
    static const Mutation kMutations[] = {
        {"the empty barriers count one release (a stage is reloaded while the other pairs' MMAs still read it)",
         R"((mbarrier\.init\.shared::cta\.b64 \[%r\d+(?:\+\d+)?\],) 3;)", "$1 1;", -1, "race: a multicast TMA load writes", "reads it"},
        {"the MMA issuer's commits release the stage in its block row only (the column's producers never see it free)",
         R"(or\.b32 (%r\d+), (%r\d+), %r\d+;(\s*// row and column))", "mov.b32 $1, $2;$3", 0, "deadlock", "mbarrier.try_wait"},
        {"A's multicast reaches this CTA only (the row's other full barriers never complete)",
         R"(shl\.b32 (%r\d+), 5,( %r\d+;\s*// the CTAs of the block's tile row of this CTA's rank))", "shl.b32 $1, 1,$2", 0, "deadlock",
         "waits for the phase of parity 0 of the mbarrier at shared 0x28810 (its current phase 0 has parity 0, 1 of 1 arrivals pending"},
        {"both CTAs of a column issue part 0 of B's boxes (part 0 lands twice, over the first copy still in flight)",
         R"(setp\.eq\.u32 (%p\d+), (%r\d+), 0;(\s*// part 0 of the boxes))", "setp.le.u32 $1, $2, 1;$3", 1, "race: a multicast TMA load writes", "writes it"},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  struct ProgramMutation {
    const char* spec;
    Mutation mu;
  };
  static const ProgramMutation kPrograms[] = {
      {"prog_sparse_f16",
       {"sparsity selector 0 for the second K step (reads the first step's metadata)", R"(0x08200015, 1;)", "0x08200014, 1;", 0, "", ""}},
      {"prog_mxf8f6f4_sm100a",
       {"scale factor A ID 1 for the first K step (idesc bits 29-30: the next step's factors)", R"(0x08a00([0-9a-f]{3}), \[)",
        "0x28a00$1, [", 0, "", ""}},
      {"prog_sparse_tf32",
       {"sparse A descriptor start +16 bytes", R"((add\.s64 %rd\d+, %rd\d+,) 0x4000404000010000;)", "$1 0x4000404000010001;", 0, "", ""}},
      // Row reductions (docs/spec.md, "Row reductions"): a .16x256b row spans 4 lanes.
      {"prog_reduce_softmax_f32",
       {"a row reduction missing its cross-thread step (the exchange with lane ^ 2 dropped)",
        R"(\tshfl\.sync\.bfly\.b32 (%r\d+), %r\d+, 2, 31, -1;[^\n]*\n\t(max|add\.rn)\.f32 (%r\d+), %r\d+, %r\d+;\n)", "", -1, "", ""}},
      {"prog_reduce_softmax_f32",
       {"a row max that folds in none of the row's registers but its first", R"(\tmax\.f32 (%r\d+), \1, %r\d+;\n)", "", -1, "", ""}},
      {"prog_reduce_softmax_f32",
       {"a row sum that exchanges with lane ^ 1 twice (lanes ^ 2's columns missing)", R"(shfl\.sync\.bfly\.b32 (%r\d+), (%r\d+), 2, 31, -1;)",
        "shfl.sync.bfly.b32 $1, $2, 1, 31, -1;", -1, "", ""}},
      // The activations (docs/spec.md, "Activations") against their formulas: a constant of a
      // composition off beyond what the documented bounds allow.
      {"prog_activations_f32",
       {"sigmoid's and silu's -log2 e off by 2^-15 relative", R"(0fBFB8AA3B)", "0fBFB8AB3B", -1, "", ""}},
      {"prog_activations_f32", {"gelu_tanh's 0.044715 as 0.05", R"(0f3D372713)", "0f3D4CCCCD", -1, "", ""}},
      {"prog_activations_f32",
       {"gelu_tanh's 0.5 (1 + tanh) as tanh + 0.5", R"((fma\.rn\.f32 %r\d+, %r\d+,) 0f3F000000, 0f3F000000;)", "$1 0f3F800000, 0f3F000000;",
        -1, "", ""}},
      // gelu's erf form (Abramowitz & Stegun 7.1.26) against 0.5 x (1 + erf(x / sqrt 2)): a
      // coefficient cut to three digits (an error up to 7e-4 |x|; cut to five, 1.4214, it is 7e-6 |x|,
      // inside the bound that the accumulator's error gives x here), the exponential not halved, and
      // x for |x| (wrong for x < 0 only).
      {"prog_gelu_erf_f32", {"7.1.26's a3 1.421413741 written as 1.42", R"(0fBFB5F0E3)", "0fBFB5C28F", -1, "", ""}},
      {"prog_gelu_erf_f32",
       {"exp(-x^2 / 2) not halved (the exponent's -1 as 0)", R"((fma\.rn\.f32 %r\d+, %r\d+, 0fBF38AA3B,) 0fBF800000;)", "$1 0f00000000;", -1,
        "", ""}},
      {"prog_gelu_erf_f32", {"|x| as x (the abs dropped: t of a negative x)", R"(abs\.f32 (%r\d+), (%r\d+);)", "mov.b32 $1, $2;", -1, "", ""}},
      // Comparisons and select (docs/spec.md, "Arithmetic") against their definitions.
      {"prog_compare_select_f32",
       {"select's operands swapped (b where a is 0)", R"((selp\.f32 %r\d+,) (%r\d+|0f[0-9A-F]{8}), (%r\d+|0f[0-9A-F]{8}),)", "$1 $3, $2,", 0,
        "", ""}},
      {"prog_compare_select_f32", {"gt(x, 0) spelled as lt (the leaky ReLU's mask inverted)", R"(set\.gt\.f32\.f32)", "set.lt.f32.f32", -1, "", ""}},
      // Differs only where the clip zeroed y (y * le(y, 4) = 0 exactly): caught once an exact zero
      // kept no rounding doubt in the float64 evaluation (a 2^-150 doubt let ne(y, 0) be either).
      {"prog_compare_select_f32",
       {"ne(y, 0) tested against 1e-30 (wrong only where y is an exact 0)", R"((set\.ne\.f32\.f32 %r\d+, %r\d+,) 0f00000000;)",
        "$1 0f0DA24260;", -1, "", ""}},
      {"prog_compare_select_f32",
       {"select's condition tested for a != 1 instead of a != 0", R"((setp\.ne\.f32 %p\d+, %r\d+,) 0f00000000;)", "$1 0f3F800000;", -1, "", ""}},
      // amax and block quantization (docs/spec.md, "Amax", "Block quantization") against their
      // definitions: a warp's amax without its exchanges is its lane 0's alone; an MXFP8 factor
      // without the carry that rounds its exponent up is OCP's floor, under which the block's
      // largest elements exceed e4m3's 448.
      {"prog_amax_e4m3",
       {"the amax missing the cross-lane step (each warp raises the amax with lane 0's elements only)",
        R"(\tshfl\.sync\.bfly\.b32 %r\d+, %r\d+, (16|8|4|2|1), 31, -1;[^\n]*\n\tmax\.f32 %r\d+, %r\d+, %r\d+;\n)", "", -1, "", "amax"}},
      {"prog_quantize_mxfp8",
       {"the MXFP8 factor rounded down (2^floor(log2(amax / 448)), OCP's rule) instead of up",
        R"((add\.u32 %r\d+, %r\d+,) 2097151;)", "$1 0;", -1, "", "SFD("}},
      {"prog_quantize_mxfp8",
       {"the MXFP4 blocks of .16x256b registers without the exchange with lane ^ 2 (each factor from half of its block)",
        R"(\tshfl\.sync\.bfly\.b32 %r\d+, %r\d+, 2, 31, -1;[^\n]*\n\tmax\.f32 %r\d+, %r\d+, %r\d+;\n)", "", -1, "", "SFE("}},
      {"prog_swiglu_f32",
       {"swiglu's product with the gate instead of up in register 0 (silu(g) * g)", R"((mul\.rn\.f32 %r\d+, %r\d+, )%r40;)", "$1%r8;", 0,
        "", "D("}},
      // Packed pairs (docs/spec.md, "Packed half-precision arithmetic"): a convert with its halves
      // swapped holds each element's neighbour column (cvt.rn.bf16x2.f32 puts its first source in the
      // upper half, §9.7.9.21); a pair constant with 1.0 in its upper half scales the odd columns by 1.
      {"prog_packed_bf16x2",
       {"the bf16x2 convert's halves swapped (each register's two columns exchanged)", R"((cvt\.rn\.bf16x2\.f32 %r\d+, )(%r\d+), (%r\d+);)",
        "$1$3, $2;", -1, "", "D("}},
      {"prog_packed_bf16x2",
       {"the fma's 1.5 in the low half only (the upper half's column scaled by 1.0)", R"(mov\.b32 (%r\d+), 0x3fc03fc0;)", "mov.b32 $1, 0x3f803fc0;", 0,
        "", "D("}},
  };
  std::set<std::string> guarded;  // the programs whose unmutated kernel passed at seed 5
  for (const auto& pm : kPrograms) {
    const std::string spec_name = pm.spec;
    CAPTURE(spec_name);
    const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/" + pm.spec + ".json"));
    const plan::Plan p = support::plan_of(s);
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const std::string golden = support::slurp(support::source_root() + "/golden/" + pm.spec + ".ptx");
    if (guarded.insert(spec_name).second) {  // the unmutated kernel passes (what its mutations break)
      const simtest::ProgramResult clean = simtest::run_program(*ksim::parse(golden), *s.program, manifest, 5);
      REQUIRE_MESSAGE(clean.error.empty(), clean.error);
      REQUIRE_MESSAGE(clean.worst <= 1.0, clean.where);
    }
    const std::string ptx = mutate(golden, pm.mu.re, pm.mu.fmt, pm.mu.n);
    REQUIRE(ptx != golden);
    const simtest::ProgramResult r = simtest::run_program(*ksim::parse(ptx), *s.program, manifest, 5);
    check(pm.mu, p, ptx, r);
  }
}
// A CTA pair's pipelined programs (src/lower/pipeline.cpp): what the leader's MMA thread waits
// for must land on CTA 0's barriers, from both CTAs. The GEMM's loads complete there; the chain's
// softmax warps of both CTAs release S and P there (256 arrivals a phase); where a role of both
// CTAs waits for the same arrivals, each CTA's threads also arrive on its own twin ("_local").
TEST_CASE("mutations of a CTA pair's pipelined programs make the simulation fail, each for its reason") {
  struct PairMutation {
    const char* spec;
    std::map<std::string, int64_t> sizes;
    Mutation mu;
  };
  static const PairMutation kMutations[] = {
      {"prog_pipelined_pair_bf16_m256", {{"m", 488}, {"n", 264}, {"k", 560}},
       {"each CTA's loads complete on its own full barrier (CTA 0's expects both CTAs' bytes and never gets CTA 1's)",
        R"((mapa\.shared::cluster\.u32 %r\d+, %r\d+,) 0;(\s*// CTA 0's barrier))", "$1 %r4;$2", -1, "deadlock",
        "0 of 1 arrivals pending, tx-count 32768"}},
      {"prog_pipelined_pair_bf16_m256", {{"m", 488}, {"n", 264}, {"k", 560}},
       {"the leader arms its full barrier for its own bytes only (CTA 1's land on the next phase)",
        R"((mbarrier\.arrive\.expect_tx\.shared::cta\.b64 _, \[%r\d+\],) 65536;)", "$1 32768;", 0,
        "race: tcgen05.mma reads shared memory at 0x800 while an asynchronous operation issued at ptx line", ""}},
      {"prog_pipelined_pair_bf16_m256", {{"m", 488}, {"n", 264}, {"k", 560}},
       {"the MMAs' commit of a stage arrives in CTA 0 only (ctaMask 1: CTA 1's producer never sees the stage free)",
        R"((mov\.u16 %rs\d+,) 3;)", "$1 1;", 0, "deadlock",
        "of the mbarrier at shared 0x20828 (its current phase 1 has parity 1, 0 of 1 arrivals pending, tx-count 32768)"}},
      {"prog_pipelined_pair_chain_bf16", {{"m", 488}, {"l", 624}},
       {"the softmax warps' release of S dropped (the next block's S = Q.K^T waits forever)",
        R"(\tmbarrier\.arrive\.release\.cluster\.shared::cluster\.b64 _, \[%r\d+\];\n)", "", 0, "deadlock",
        "256 of 256 arrivals pending"}},
      {"prog_pipelined_pair_chain_bf16", {{"m", 488}, {"l", 624}},
       {"each CTA's softmax warps release P on their own CTA's barrier (CTA 0's gets 128 of its 256 arrivals)",
        R"((mapa\.shared::cluster\.u32 %r\d+, (%r\d+), 0;[^\n]*\n\tmbarrier\.arrive\.release\.cluster\.shared::cluster\.b64 _, \[)%r\d+\])",
        "$1$2]", 1, "deadlock", "128 of 256 arrivals pending"}},
      {"prog_pipelined_pair_chain_bf16", {{"m", 488}, {"l", 624}},
       {"the release barrier of P counts one CTA's 128 arrivals (a block's 256 complete two phases: the MMA thread's parity "
        "falls out of step and it waits for a phase that never completes)",
        R"((mbarrier\.init\.shared::cta\.b64 \[%r\d+\],) 256;)", "$1 128;", 1, "deadlock", "128 of 128 arrivals pending"}},
      // PTX ISA 9.7.16.6.4.4: the softmax warps' tcgen05.st of P, then the MMA thread's tcgen05.mma
      // reading P as A from tensor memory, ordered through the "softmax_ready1" barrier.
      {"prog_pipelined_pair_chain_bf16", {{"m", 488}, {"l", 624}},
       {"the MMA thread's tcgen05.fence::after_thread_sync after its wait for P dropped",
        R"((\$L_s9_wait:\n(?:[^\n]*\n){3})\ttcgen05\.fence::after_thread_sync;\n)", "$1", 0,
        "race: tcgen05.mma reads tensor memory lane 0, column 0 of CTA rank 0 that tcgen05.st at ptx line",
        "issued after the synchronization at ptx line 221 with no tcgen05.fence::after_thread_sync between"}},
      {"prog_pipelined_pair_chain_s_bf16", {{"m", 488}, {"l", 624}},
       {"the reader warps' arrival on their own CTA's twin dropped (the softmax warps of both CTAs wait forever to overwrite S "
        "with P)",
        R"(\tmbarrier\.arrive\.shared::cta\.b64 _, \[%r\d+\];\n)", "", 0, "deadlock", "128 of 128 arrivals pending"}},
  };
  for (const auto& pm : kMutations) {
    const std::string spec_name = pm.spec;
    CAPTURE(spec_name);
    const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/" + pm.spec + ".json"));
    const plan::Plan p = support::plan_of(s);
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const std::string golden = support::slurp(support::source_root() + "/golden/" + pm.spec + ".ptx");
    REQUIRE(golden.find("mov.u32 %r4, %cluster_ctarank;") != std::string::npos);  // the rank register a mutation names
    const simtest::ProgramResult clean = simtest::run_program(*ksim::parse(golden), *s.program, manifest, 9, {}, pm.sizes);
    REQUIRE_MESSAGE(clean.error.empty(), clean.error);  // the unmutated kernel passes at these sizes
    REQUIRE(clean.worst <= 1.0);
    const std::string ptx = mutate(golden, pm.mu.re, pm.mu.fmt, pm.mu.n);
    REQUIRE(ptx != golden);
    const simtest::ProgramResult r = simtest::run_program(*ksim::parse(ptx), *s.program, manifest, 9, {}, pm.sizes);
    check(pm.mu, p, ptx, r);
  }
}
}

// The online softmax of specs/prog_attention_fwd_bf16.json (docs/spec.md, "Worked example: attention
// forward"): each step the float64 evaluation of its ops needs, broken in the golden. Four query
// tiles' rows over 4 key blocks (the 2-stage ring wraps twice), where the row max moves between blocks.
TEST_SUITE("sim_mutation") {
TEST_CASE("mutations of the attention program's online softmax make the simulation fail, each for its reason") {
  const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/prog_attention_fwd_bf16.json"));
  const plan::Plan p = support::plan_of(s);
  const auto manifest = nlohmann::json::parse(plan::manifest(p));
  const std::string golden = support::slurp(support::source_root() + "/golden/prog_attention_fwd_bf16.ptx");
  const std::map<std::string, int64_t> sizes = {{"m", 256}, {"l", 512}};
  const simtest::ProgramResult clean = simtest::run_program(*ksim::parse(golden), *s.program, manifest, 11, {}, sizes);
  REQUIRE_MESSAGE(clean.error.empty(), clean.error);  // the unmutated kernel passes at these sizes and seed
  REQUIRE_MESSAGE(clean.worst <= 1.0, clean.where);
  static const Mutation kMutations[] = {
      {"a stale max: m = max(m_new, m_new) not written (m stays -FLT_MAX, each block's alpha is 0 and O keeps only the last block)",
       R"(max\.f32 (%r\d+), (%r\d+), \2;)", "mov.b32 $1, $1;", -1, "", "LSE("},
      {"O not rescaled by exp2(m_old - m_new) before O += P.V (the correction's muls dropped)",
       R"((// \[57\] math \(/program/ops/5/ops/25\): registers "ov" = mul\(ov, al\)[^\n]*\n)(?:\tmul\.rn\.f32 %r\d+, %r\d+, %r\d+;\n)+)", "$1", 0,
       "", "O("},
      {"l not rescaled: l = l + rowsum(P) instead of l * alpha + rowsum(P)", R"(fma\.rn\.f32 (%r\d+), \1, %r\d+, (%r\d+);)",
       "add.rn.f32 $1, $1, $2;", -1, "", "LSE("},
      // One barrier releases both P (over S's cells) and the corrected O to the P.V MMA: without its
      // wait the MMA of block kb runs while the softmax warps still store P and read O to rescale it;
      // the simulator meets the MMA's write of O (column 128) over the correction's tcgen05.st of O,
      // which its thread has not yet fenced and released to the MMA thread (PTX ISA 9.7.16.6.4.4).
      {"the P.V MMA issued before the softmax warps stored P and rescaled O (the MMA thread's wait for softmax_ready1 removed)",
       R"((// \[10\] mbarrier wait \(/program/roles\): the role waits for "softmax_ready1"\n)\$L_s10_wait:\n[^\n]*\n[^\n]*\n)", "$1", 0,
       "race: tcgen05.mma writes tensor memory lane 0, column 128 that tcgen05.st at ptx line",
       "wrote, with no tcgen05.fence::before_thread_sync by that thread since"},
  };
  for (const Mutation& mu : kMutations) {
    const std::string ptx = mutate(golden, mu.re, mu.fmt, mu.n);
    REQUIRE(ptx != golden);
    const simtest::ProgramResult r = simtest::run_program(*ksim::parse(ptx), *s.program, manifest, 11, {}, sizes);
    check(mu, p, ptx, r);
    if (*mu.expect) continue;
    for (const auto& t : r.tensors)  // O is wrong too, not only the row statistics
      if (t.name == "O") CHECK_MESSAGE(t.worst > 1.0, "O still matches (" << t.worst << " of the bound)");
  }
}
}

// sm_90a (wgmma): the consumer warpgroups' wgmma groups, their waits and the stage releases behind
// them, the fence, the scale-d predicate, the descriptors; the simulator completes a wgmma as late
// as it can, so whatever a kernel does before the wgmma.wait_group that covers it meets it in flight.
TEST_SUITE("sim_mutation") {
TEST_CASE("mutations of an sm_90a (wgmma) GEMM kernel make the simulation fail, each for its reason") {
  // Two consumer warpgroups, one tile, six K blocks over four stages (the ring wraps), k's tail partial.
  const Subject x = subject("gemm_sm90_bf16_128x256x64", 125, 252, 379, 21);
  REQUIRE(x.clean.stats.mma == 6 * 4 * 2);  // K blocks x K steps x warpgroups
  static const Mutation kMutations[] = {
      {"the K loop's wgmma.wait_group 1 becomes 2 (a stage is released while the group reading it is in flight)",
       R"(wgmma\.wait_group\.sync\.aligned 1;)", "wgmma.wait_group.sync.aligned 2;", 0, "race: a TMA load writes shared memory",
       "reads it"},
      {"the K loop's wgmma.wait_group dropped (every stage is released while its wgmmas are in flight)",
       R"(\twgmma\.wait_group\.sync\.aligned 1;[^\n]*\n)", "", 0, "race: a TMA load writes shared memory", "reads it"},
      {"the wgmma.wait_group 0 before the epilogue dropped (it reads accumulators the last group still writes)",
       R"(\twgmma\.wait_group\.sync\.aligned 0;[^\n]*\n)", "", 0, "race: reads register %r", "while the wgmma.mma_async issued at ptx line"},
      {"wgmma.commit_group dropped (no group to wait for: stages released and accumulators read in flight)",
       R"(\twgmma\.commit_group\.sync\.aligned;[^\n]*\n)", "", 0,
       "race: a TMA load writes shared memory at 0x800 while an asynchronous operation issued at ptx line", ""},
      {"scale-d true in the first K block (D accumulates onto registers nothing wrote)",
       R"(setp\.ne\.u32 (%p\d+), (%r\d+), 0;(\s*// D = A x B in the first iteration))", "setp.eq.u32 $1, $2, $2;$3", 0,
       "(its accumulator; scale-d is true), which no instruction on this thread's path has written", ""},
      {"A descriptor start +32 bytes (the first wgmma of every K block reads the second K step)",
       R"((add\.u32 %r\d+, %r\d+, 0)x00010000;(\s*// A 0x4000004000010000))", "$1x00010002;$2", 0, "", ""},
      {"B descriptors 64-byte swizzled (bits 62-63 = 2: a 128-byte swizzled tile read through another pattern)",
       R"(mov\.b32 (%r\d+), 0x40000040;(\s*mov\.b64 %rd\d+, \{%r\d+, %r\d+\};\s*wgmma))", "mov.b32 $1, 0x80000040;$2", -1, "", ""},
      {"descriptors in tcgen05's format (bit 46 set: no field of the sm_90 descriptor)", R"(mov\.b32 (%r\d+), 0x40000040;)",
       "mov.b32 $1, 0x40004040;", -1, "bits outside the fields of", ""},
      {"the consumers' release of the stage dropped (the producer waits for an empty stage forever)",
       R"(\tmbarrier\.arrive\.shared::cta\.b64 _, \[%r\d+\];\n)", "", 0, "deadlock", "waits for the phase of parity"},
      {"the consumers do not spin on the full barrier (wgmmas read stages the TMA still writes)",
       R"((mbarrier\.try_wait\.parity\.shared::cta\.b64 (%p\d+), \[%r\d+\], %r\d+;\s*)@!%p\d+ bra \$L_s\d+_wait;)", "$1", 0,
       "race: wgmma.mma_async reads shared memory", "writes it"},
      {"wgmma.fence dropped (PTX ISA 9.7.15.7.1: it must precede the first wgmma.mma_async)",
       R"(\twgmma\.fence\.sync\.aligned;[^\n]*\n)", "", 0, "no wgmma.fence in the warp before its first wgmma.mma_async", ""},
      {"each warp's A rows offset by its warp instead of its warpgroup (the warps' descriptors differ)",
       R"(\tshr\.u32 %r\d+, %r\d+, 2;\s*// warpgroup of the role\n(\tmul\.lo\.u32 %r\d+, %r\d+, 512;))", "$1", 0,
       "the warps of the warpgroup give different matrix descriptors", ""},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// The instruction's immediates (§9.7.15.5.2): an M-major A and an N-major B (imm-trans-a/b 1), no
// negation (imm-scale-a/b 1).
TEST_CASE("mutations of an sm_90a kernel's wgmma immediates make the simulation fail") {
  const Subject x = subject("gemm_sm90_f16_nn_128x128x64", 125, 124, 379, 31);
  static const Mutation kMutations[] = {
      {"imm-trans-b 0 (B's N-major tile read as K-major: the descriptor's strides reach into a stage the TMA is filling)",
       R"((wgmma\.mma_async[^\n]*, 1, 1, 1,) 1;)", "$1 0;", -1, "race: wgmma.mma_async reads shared memory", "writes it"},
      {"imm-trans-a 0 (A's M-major tile read as K-major: the descriptor's strides reach into a stage the TMA is filling)",
       R"((wgmma\.mma_async[^\n]*, 1, 1,) 1, 1;)", "$1 0, 1;", -1, "race: wgmma.mma_async reads shared memory", "writes it"},
      {"imm-scale-a -1 in the first K step (its products negated)", R"((wgmma\.mma_async[^\n]*,) 1, 1, 1, 1;)", "$1 -1, 1, 1, 1;", 0,
       "", ""},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// Ping-pong consumers: two warpgroups take alternate tiles of a persistent CTA, handing the main
// loop to each other through the mainloop barriers; setmaxnreg moves registers from the producer
// warpgroup to the consumers. Two CTAs walk five tiles.
TEST_CASE("mutations of an sm_90a ping-pong kernel make the simulation fail, each for its reason") {
  const Subject x = subject("gemm_sm90_bf16_128x128x64_pingpong", 125, 5 * 128 - 8, 5 * 64 - 5, 23, 2);  // n: whole 16 bytes of D (TMA epilogue)
  REQUIRE(x.clean.ctas == 2);
  static const Mutation kMutations[] = {
      {"the consumers' waits for the hand-off dropped (the second consumer, a tile of K blocks ahead in the ring, passes its "
       "full barriers on the phases of the same parity before)",
       R"(\$L_s\d+_wait:\n\tmbarrier\.try_wait\.parity\.shared::cta\.b64 %p\d+, \[%r1[45]\], %r\d+;\n\t@!%p\d+ bra \$L_s\d+_wait;\n)", "",
       -1, "race: wgmma.mma_async reads shared memory", "writes it"},
      {"the producer's setmaxnreg.dec releases 16 registers fewer (the consumers' setmaxnreg.inc waits forever)",
       R"(setmaxnreg\.dec\.sync\.aligned\.u32 40;)", "setmaxnreg.dec.sync.aligned.u32 56;", 0, "deadlock",
       "waits at setmaxnreg.inc for 2048 registers; the CTA's pool holds"},
      {"the second consumer's wgmma.wait_group 0 after its K loop dropped (it releases the last K block's stage while the group "
       "reading it is in flight)",
       R"(\twgmma\.wait_group\.sync\.aligned 0;[^\n]*\n)", "", 1, "race: a TMA load writes shared memory", "reads it"},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// A cluster of two CTAs along M multicasting B (persistent): each consumer warpgroup releases a stage
// in both CTAs (lane r of its first warp arrives on the barrier of cluster rank r, mapa), once its
// wgmma.wait_group saw the group reading it complete. Two clusters walk five tiles.
TEST_CASE("mutations of an sm_90a multicasting cluster make the simulation fail, each for its reason") {
  const Subject x = subject("gemm_sm90_bf16_128x256x64_multicast_b_persistent", 5 * 128 - 3, 248, 4 * 64 - 5, 25, 4);
  REQUIRE(x.clean.ctas == 4);
  // The barriers lie 0x818 past the tiles, which end at 0x2c000: 3 stages of a (16 KB) and b (32 KB),
  // then D's two 16 KB subtile buffers (the whole 64 KB staging tile ended them at 0x34000).
  static const Mutation kMutations[] = {
      {"the consumers release the stage in their own CTA only (the peer's producer multicasts into it while its wgmmas read it)",
       R"(mapa\.shared::cluster\.u32 (%r\d+), (%r\d+), %r2;)", "mapa.shared::cluster.u32 $1, $2, %r4;", -1,
       "race: a multicast TMA load writes shared memory", "reads it"},
      {"one lane releases (in CTA rank 0 only: rank 1's empty barriers never complete)", R"(setp\.ge\.or\.u32 (%p\d+), %r2, 2, )",
       "setp.ge.or.u32 $1, %r2, 1, ", -1, "deadlock",
       "of the mbarrier at shared 0x2c818 (its current phase 1 has parity 1, 0 of 1 arrivals pending, tx-count 16384)"},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// A 2 x 2 cluster shares A along its rows and B along its columns: each consumer warpgroup releases
// a stage on the CTAs of its row and column (lane r where bit r of the union mask is set).
TEST_CASE("mutations of an sm_90a 2 x 2 cluster's releases make the simulation fail") {
  const Subject x = subject("gemm_sm90_bf16_128x256x64_cluster_2x2_persistent", 5 * 128 - 3, 248, 4 * 64 - 5, 26, 8);
  REQUIRE(x.clean.ctas == 8);
  // Its barriers at 0x2c818 as the multicast kernel's (the same tiles: 3 stages, two subtile buffers).
  static const Mutation kMutations[] = {
      {"the consumers release the stage in their block row only (the empty barriers, counting the column's releases too, never complete)",
       R"(or\.b32 (%r\d+), (%r\d+), %r\d+;)", "mov.b32 $1, $2;", 0, "deadlock",
       "of the mbarrier at shared 0x2c818 (its current phase 1 has parity 1, 1 of 1 arrivals pending, tx-count 0)"},
      {"the empty barriers count one CTA's two warpgroups (a stage is reloaded before the row's and column's consumers release it)",
       R"((mbarrier\.init\.shared::cta\.b64 \[%r\d+(?:\+\d+)?\],) 6;)", "$1 2;", -1, "race: a multicast TMA load writes shared memory", "reads it"},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// A from registers: the consumers load their A fragments from the stage (ld.shared) before each K
// block's wgmmas, which read them when they complete; the K loop waits for its group (0) before
// the next block's loads rewrite them. No golden has the form: the spec is rewritten.
TEST_CASE("mutations of an sm_90a kernel with A from registers make the simulation fail, each for its reason") {
  auto doc = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/gemm_sm90_bf16_128x256x64.json"));
  doc["gemm"]["a_source"] = "registers";
  const plan::Plan p = support::plan_of(support::checked_spec(doc.dump()));
  const auto manifest = nlohmann::json::parse(plan::manifest(p));
  const std::string golden = emit::ptx(p);
  const simtest::GemmResult clean = simtest::run_gemm(*ksim::parse(golden), manifest, 125, 252, 379, 27);
  REQUIRE_MESSAGE(clean.error.empty(), clean.error);
  REQUIRE(clean.worst <= 1.0);
  static const Mutation kMutations[] = {
      {"the K loop waits for all but one group (the stage it releases is reloaded while the wgmma reading its B is in flight)",
       R"(wgmma\.wait_group\.sync\.aligned 0;)", "wgmma.wait_group.sync.aligned 1;", 0, "race: a TMA load writes shared memory", "reads it"},
      {"the A fragments' second register pair (rows + 8) loaded from the first rows", R"((ld\.shared\.b32 %r\d+, \[%r\d+)\];(\s*add\.u32 %r\d+, %r\d+, 1040;))",
       "$1+1024];$2", 0, "", ""},
  };
  for (const Mutation& mu : kMutations) {
    const std::string ptx = mutate(golden, mu.re, mu.fmt, mu.n);
    REQUIRE(ptx != golden);
    const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(ptx), manifest, 125, 252, 379, 27);
    check(mu, p, ptx, r);
  }
}
}

// The fused epilogue (docs/spec.md, "Epilogues"): its bias read along the wrong axis or at the
// wrong element, and the activation's instructions changed, each make D differ from the float64
// evaluation of activation(A x B + bias) beyond its bound.
TEST_SUITE("sim_mutation") {
TEST_CASE("mutations of fused epilogues (alpha, beta C, input alpha and beta, bias, activation, gated activations, residual, amax) make the simulation fail") {
  {  // wgmma, a bias along N, gelu_tanh
    const Subject x = subject("gemm_sm90_bf16_128x256x64_bias_gelu", 125, 256, 379, 31);
    static const Mutation kMutations[] = {
        {"the bias read along the wrong axis (its column index is the thread's row)",
         R"(add\.u32 (%r\d+), (%r\d+), (%r\d+);\n\tand\.b32 (%r\d+), (%r\d+), 3;\n\tmad\.lo\.u32 (%r\d+), %r\d+, 2, %r\d+;)",
         "add.u32 $1, $2, $3;\n\tand.b32 $4, $5, 3;\n\tmov.b32 $6, $1;", 0, "", ""},
        {"every bias element read one column on (its row's address one element on)", R"(mad\.lo\.u64 (%rd\d+), (%rd\d+), 2, (%rd1);)",
         "mad.lo.u64 $1, $2, 2, $3;\n\tadd.u64 $1, $1, 2;", -1, "", ""},
        {"gelu_tanh's cubic coefficient 0.044715 written as 0.03125", R"(0f3D372713)", "0f3D000000", -1, "", ""},
        {"tanh.approx replaced by the identity", R"(tanh\.approx\.f32 (%r\d+), (%r\d+);)", "mov.b32 $1, $2;", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // wgmma, a bf16 bias along N, gelu (the erf form), f32 D
    const Subject x = subject("gemm_sm90_bf16_128x128x64_bias_gelu_erf", 125, 248, 379, 35);
    static const Mutation kMutations[] = {
        {"7.1.26's p / sqrt 2 written as p", R"(0f3E6D3388)", "0f3EA7BA05", -1, "", ""},
        {"Horner's last mul by t dropped (q(t) / t for q(t))", R"((fma\.rn\.f32 %r\d+, %r\d+, %r\d+, 0fBE827906;)\n\tmul\.rn\.f32 %r\d+, %r\d+, %r\d+;)",
         "$1", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, an f32 bias along M, gelu (the erf form), f32 D
    const Subject x = subject("gemm_bf16_128x128x64_bias_gelu_erf", 125, 248, 379, 36);
    static const Mutation kMutations[] = {
        {"exp(-x^2 / 2) not halved (the exponent's -1 as 0)", R"((fma\.rn\.f32 %r\d+, %r\d+, 0fBF38AA3B,) 0fBF800000;)", "$1 0f00000000;", -1,
         "", ""},
        {"|x| as x (the abs dropped: t of a negative x)", R"(abs\.f32 (%r\d+), (%r\d+);)", "mov.b32 $1, $2;", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, a CTA pair, persistent, TMA epilogue: an f32 bias along M, silu
    const Subject x = subject("gemm_bf16_cta2_persistent_tma_bias_m_silu", 253, 256, 189, 32, 2);
    static const Mutation kMutations[] = {
        {"the bias along M read at the column (its row index is the tile's column)",
         R"(add\.u32 (%r\d+), (%r\d+), (%r\d+);\n\tmov\.u32 (%r\d+), (%r\d+);)", "mov.u32 $1, $5;\n\tmov.u32 $4, $5;", 0, "", ""},
        {"silu's exponent without log2(e) (2^-x instead of e^-x)", R"(mul\.rn\.f32 (%r\d+), (%r\d+), 0fBFB8AA3B;)",
         "neg.f32 $1, $2;", -1, "", ""},
        {"rcp.approx of 1 + e^-x dropped (x (1 + e^-x) instead of x / (1 + e^-x))", R"(rcp\.approx\.f32 (%r\d+), (%r\d+);)",
         "mov.b32 $1, $2;", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // wgmma: alpha 0.5, beta -1.5 times a bf16 C, an f32 bias along M, silu, an f16 residual
    const Subject x = subject("gemm_sm90_bf16_128x128x64_alpha_beta_c_residual", 125, 248, 379, 34);
    static const Mutation kMutations[] = {
        {"alpha dropped", R"(mul\.rn\.f32 (%r\d+), (%r\d+), 0f3F000000;)", "mov.b32 $1, $2;", -1, "", ""},
        {"beta dropped (C added unscaled)", R"(fma\.rn\.f32 (%r\d+), (%r\d+), 0fBFC00000, (%r\d+);)", "add.rn.f32 $1, $2, $3;", -1, "", ""},
        {"C's bf16 elements converted as f16", R"(cvt\.f32\.bf16)", "cvt.f32.f16", -1, "", ""},
        {"every residual element read one column on (its row's address one element on)", R"(mad\.lo\.u64 (%rd\d+), (%rd\d+), 2, (%rd3);)",
         "mad.lo.u64 $1, $2, 2, $3;\n\tadd.u64 $1, $1, 2;", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, TMA epilogue: alpha 2, beta 0.25 times an f32 C, relu, a bf16 residual
    const Subject x = subject("gemm_bf16_128x256x64_alpha_c_residual_tma", 125, 248, 379, 35);
    static const Mutation kMutations[] = {
        {"beta times the accumulator instead of C (fma's operands swapped)", R"(fma\.rn\.f32 (%r\d+), (%r\d+), (0f3E800000), (%r\d+);)",
         "fma.rn.f32 $1, $4, $3, $2;", -1, "", ""},
        {"every C element read one column on (its row's address one element on)", R"(mad\.lo\.u64 (%rd\d+), (%rd\d+), 4, (%rd1);)",
         "mad.lo.u64 $1, $2, 4, $3;\n\tadd.u64 $1, $1, 4;", -1, "", ""},
        {"the residual dropped", R"(@(%p\d+) ld\.global\.b16 (%rs\d+), \[(%rd\d+)(\+\d+)?\];)", "mov.b16 $2, 0;", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  // alpha and beta as inputs ("input": one f32 each through a device pointer, issue 28): the
  // reference multiplies by the values the simulation put at the pointers (random, of either sign,
  // magnitude 0.5 to 2), so a kernel that reads the wrong one, or drops one, is caught.
  {  // wgmma, persistent, TMA store: alpha and beta inputs, an f32 C
    const Subject x = subject("gemm_sm90_bf16_128x128x64_alpha_beta_input", 125, 248, 379, 41);
    static const Mutation kMutations[] = {
        {"alpha read through beta's pointer (its ld.param names beta)", R"(ld\.param\.u64 (%rd\d+), \[alpha\];)", "ld.param.u64 $1, [beta];", 0,
         "", "D("},
        {"beta not applied (C added times 1: the fma's beta register as 1.0)", R"(fma\.rn\.f32 (%r\d+), (%r\d+), %r\d+, (%r\d+);)",
         "fma.rn.f32 $1, $2, 0f3F800000, $3;", -1, "", "D("},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, persistent, TMA store: alpha and beta inputs, a bf16 C
    const Subject x = subject("gemm_bf16_128x128x64_alpha_beta_input", 125, 248, 379, 42);
    static const Mutation kMutations[] = {
        {"alpha not applied (its mul.rn.f32 by the loaded register dropped)", R"(mul\.rn\.f32 (%r\d+), (%r\d+), %r\d+;)", "mov.b32 $1, $2;", -1,
         "", "D("},
        {"beta read through alpha's pointer (its ld.param names alpha)", R"(ld\.param\.u64 (%rd\d+), \[beta\];)", "ld.param.u64 $1, [alpha];", 0,
         "", "D("},
        {"alpha loaded 64 bytes past its pointer (past its one f32)", R"((mad\.lo\.u64 (%rd\d+), %rd\d+, 4, %rd2;))",
         "$1\n\tadd.u64 $2, $2, 64;", -1, "outside every buffer", "ld.global.b32"},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  // The amax's mutations change it only where the largest |element| is among what they leave out
  // (a negative element for abs, half of the lanes for an exchange): about half of the random
  // inputs; seed 40 is one where it is for each of them (a seed sweep found 1 in 5 catching all).
  {  // wgmma, an e4m3 D with a bf16 bias, the amax (red.global.max of the f32 bits), then D's scale
    const Subject x = subject("gemm_sm90_bf16_128x128x64_e4m3_scaled_amax", 125, 124, 379, 40);
    static const Mutation kMutations[] = {
        {"abs dropped from the amax (the largest signed value)", R"(abs\.f32 (%r\d+), (%r\d+);)", "mov.b32 $1, $2;", -1, "", ""},
        {"D's scale read as 1 (d_scale ignored)", R"(ld\.global\.b32 (%r\d+), \[(%rd\d+)\];)", "mov.b32 $1, 0f3F800000;", -1, "", ""},
        {"the amax's exchange with lane ^ 1 dropped (odd lanes' columns left out)",
         R"(shfl\.sync\.bfly\.b32 (%r\d+), (%r\d+), 1, 31, -1;)", "mov.b32 $1, 0;", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, TMA epilogue: D = A x B and its amax
    const Subject x = subject("gemm_bf16_128x256x64_tma_amax", 125, 248, 379, 40);
    static const Mutation kMutations[] = {
        {"abs dropped from the amax (the largest signed value)", R"(abs\.f32 (%r\d+), (%r\d+);)", "mov.b32 $1, $2;", -1, "", ""},
        {"the amax's exchange with lane ^ 16 dropped (rows 16-31 of each warp left out)",
         R"(shfl\.sync\.bfly\.b32 (%r\d+), (%r\d+), 16, 31, -1;)", "mov.b32 $1, 0;", -1, "", ""},
        {"the amax's red.global.max dropped (amax never raised)", R"(\t@%p\d+ red\.global\.max\.u32[^\n]*\n)", "", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  // MXFP8 (a ue8m0 factor per 32 columns of a row): the factor byte is checked against its
  // definition before the elements ("SFD(" places the mismatch there), the elements against the
  // factor the kernel chose ("(times ").
  {  // tcgen05, direct epilogue: a bf16 bias, gelu_tanh, e4m3 elements
    const Subject x = subject("gemm_bf16_128x256x64_bias_gelu_mxfp8", 125, 224, 379, 41);
    static const Mutation kMutations[] = {
        {"the factor rounded down (OCP's floor: no carry from amax's mantissa into the exponent)",
         R"(add\.u32 (%r\d+), (%r\d+), 2097151;)", "mov.b32 $1, $2;", -1, "", "SFD("},
        {"the values not divided by their factor (times 1)", R"(shl\.b32 (%r\d+), %r\d+, 23;)", "mov.b32 $1, 0f3F800000;", -1, "",
         "(times "},
        {"a factor's byte at the wrong place in the 128x4 layout (row % 32 four bytes apart, not 16)",
         R"((and\.b32 %r\d+, %r\d+, 31;\s*mad\.lo\.u32 %r\d+, %r\d+, )16(, %r\d+;))", "$1 4$2", -1, "", "SFD"},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, MXFP4: an f32 bias, silu, e2m1 elements two a byte
    const Subject x = subject("gemm_bf16_128x256x64_bias_silu_mxfp4", 125, 224, 379, 41);
    static const Mutation kMutations[] = {
        {"the factor rounded down (no carry from amax's mantissa past 1.5, e2m1's largest)", R"(add\.u32 (%r\d+), (%r\d+), 4194303;)",
         "mov.b32 $1, $2;", -1, "", "SFD("},
        {"each byte's two elements swapped (the column's in the high nibble)",
         R"(cvt\.rn\.satfinite\.e2m1x2\.f32 (%rb\d+), (%r\d+), (%r\d+);)", "cvt.rn.satfinite.e2m1x2.f32 $1, $3, $2;", -1, "", "(times "},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, NVFP4: D's scale (the global encode scale), gelu_tanh, the amax; a ue4m3 factor per 16
    const Subject x = subject("gemm_bf16_128x128x64_scaled_gelu_amax_nvfp4", 125, 224, 379, 41);
    static const Mutation kMutations[] = {
        {"the factor e4m3(amax / 4) instead of amax / 6", R"((mul\.rn\.f32 %r\d+, %r\d+, )0f3E2AAAAB;)", "$1 0f3E800000;", -1, "", "SFD("},
        {"the values times their factor instead of over it", R"(rcp\.rn\.f32 (%r\d+), (%r\d+);)", "mov.b32 $1, $2;", -1, "", "(times "},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // wgmma, direct epilogue: an f32 bias, silu, e5m2 elements; 4 lanes share each block
    const Subject x = subject("gemm_sm90_bf16_128x128x64_silu_mxfp8_e5m2", 125, 224, 379, 41);
    static const Mutation kMutations[] = {
        {"the block's amax without the exchange with lane ^ 2 (half of its columns)",
         R"(shfl\.sync\.bfly\.b32 (%r\d+), (%r\d+), 2, 31, -1;)", "mov.b32 $1, 0;", -1, "", "SFD("},
        {"the values over twice their factor (2^(126 - x))", R"(sub\.u32 (%r\d+), 254, (%r\d+);)", "sub.u32 $1, 253, $2;", -1, "",
         "(times "},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // wgmma, a gated activation (swiglu) with a bias along N: D = silu(P[:, :d]) * P[:, d:]; d = 200
     // (two D tiles of 128, the second ragged), B's 400 rows
    const Subject x = subject("gemm_sm90_bf16_128x256x64_bias_swiglu", 125, 200, 379, 34);
    static const Mutation kMutations[] = {
        {"gate and up swapped (B's gate rows loaded into the tile's up half and up's rows into its gate half)",
         R"(add\.u32 (%r\d+), (%r\d+), 65536;([\s\S]*?)add\.u32 (%r\d+), (%r\d+), 81920;)", "add.u32 $1, $2, 81920;$3add.u32 $4, $5, 65536;", 0, "",
         ""},
        {"up's rows of B read from the gate's (the load's + d = n / 2 dropped)", R"((mad\.lo\.u32 %r\d+, %r\d+, )1(, %r\d+;))", "$1 0$2", 1, "",
         ""},
        {"up's bias read at the gate's element (the read's + d dropped)", R"((mad\.lo\.u32 %r\d+, %r\d+, )1(, %r\d+;))", "$1 0$2", 0, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, persistent, TMA epilogue, geglu without bias: four tiles (d = 200) on two CTAs
    const Subject x = subject("gemm_bf16_128x256x64_persistent_tma_geglu", 253, 200, 189, 35, 2);
    static const Mutation kMutations[] = {
        {"gate and up swapped (B's gate rows loaded into the tile's up half and up's rows into its gate half)",
         R"(add\.u32 (%r\d+), (%r\d+), 65536;([\s\S]*?)add\.u32 (%r\d+), (%r\d+), 81920;)", "add.u32 $1, $2, 81920;$3add.u32 $4, $5, 65536;", 0, "",
         ""},
        {"up's accumulator columns read 64 columns early (tensor-memory column 64 on instead of tile.n / 2 = 128)",
         R"(tensor memory "box\d+(?:_\d+)?_up"[^\n]*\n\s*mul\.lo\.u32 %r\d+, %r\d+, 256;[^\n]*\n\s*add\.u32 (%r\d+), %r\d+, %r\d+;)",
         "$&\n\tsub.u32 $1, $1, 64;", -1, "", ""},
        {"up's rows of B read from the gate's (the load's + d = n / 2 dropped)", R"((mad\.lo\.u32 %r\d+, %r\d+, )1(, %r\d+;))", "$1 0$2", 0, "",
         ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
  {  // tcgen05, an e4m3 D (docs/spec.md: D-FP8): two columns converted into one .b16
    const Subject x = subject("gemm_bf16_128x256x64_e4m3_out", 125, 252, 379, 33);
    static const Mutation kMutations[] = {
        {"the pair's columns swapped in the .e4m3x2 (column j + 1's value stored at column j)",
         R"(cvt\.rn\.satfinite\.e4m3x2\.f32 (%rs\d+), (%r\d+), (%r\d+);)", "cvt.rn.satfinite.e4m3x2.f32 $1, $3, $2;", -1, "", ""},
        {"e5m2 written where D is e4m3", R"(cvt\.rn\.satfinite\.e4m3x2\.f32)", "cvt.rn.satfinite.e5m2x2.f32", -1, "", ""},
    };
    for (const Mutation& mu : kMutations) run(x, mu);
  }
}
}

// Block-wise f32 scale factors (sm_90a, docs/spec.md "Block-wise f32 factors", issue 30): each K
// block's wgmmas start a fresh set of partial sums (scale-d 0 at the block's first), which are then
// multiplied by A's factor of each row in K block kb (row kb of SFA) and B's factor of the tile's N
// block (row n / 128 of SFB, column kb), and added to the accumulator. The golden (persistent, two
// CTAs walking 2 x 2 tiles of 128, five K blocks, the last partial) with each of these broken.
TEST_SUITE("sim_mutation") {
// Grouped GEMM, masked layout (issue 30): four groups (past the capacity, empty, ragged, negative:
// sim::group_sizes) of two tiles of rows each. The group is %ctaid.z: it indexes masked_m,
// and it is the third coordinate of A's and B's loads and of D's TMA stores.
TEST_CASE("mutations of a grouped (masked) GEMM kernel make the simulation fail, each for its reason") {
  const Subject x = subject("gemm_sm90_bf16_128x256x64_masked", 253, 264, 3 * 64 - 5, 61);
  REQUIRE(x.golden.find("mov.u32 %r17, %ctaid.z;") != std::string::npos);
  static const Mutation kMutations[] = {
      {"the exit of the CTAs past their group's valid rows dropped (an empty group's tiles and the rest of a ragged one computed and stored)",
       R"(\t@%p\d+ ret;[^\n]*\n)", "", 0, "", "in tiles past their group's valid rows"},
      {"every group reads group 0's masked_m (the empty and ragged groups' tiles past their rows stored)",
       R"(mul\.wide\.u32 (%rd\d+), %r17, 4;)", "mul.wide.u32 $1, %r17, 0;", 0, "", "in tiles past their group's valid rows"},
      {"B's loads at group 0's plane (a tile of the wrong group: every group multiplies group 0's B)",
       R"(\tmad\.lo\.u32 (%r\d+), %r17, 1, \1;\n)", "", 2, "", "D("},
      {"D's TMA stores at group 0's plane (a later group's tiles stored over group 0's)",
       R"(\tmad\.lo\.u32 (%r\d+), %r17, 1, \1;\n)", "", 0, "", "written more than once"},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// Grouped GEMM, contiguous layout (issue 30): segments of A's rows aligned to 256 (sim::group_sizes:
// a tile partly valid then a tile of padding, none, two tiles, three rows) and rows past the last;
// each CTA's group is the first whose padded end lies past its first row (a binary search of the
// ends), and its plane of B the third coordinate of B's loads.
TEST_CASE("mutations of a grouped (contiguous) GEMM kernel make the simulation fail, each for its reason") {
  const Subject x = subject("gemm_sm90_bf16_128x128x64_contiguous", 900, 264, 3 * 64 - 5, 62, 0, R"({"groups": {"align": 256}})");
  REQUIRE(x.golden.find("$L_group_search:") != std::string::npos);
  static const Mutation kMutations[] = {
      {"the search's comparison made >= (a tile starting at a segment's padded end taken as that segment's padding: the next group's "
       "first tile never computed)",
       R"(setp\.gt\.u32 (%p\d+), (%r\d+), (%r\d+);)", "setp.ge.u32 $1, $2, $3;", 0, "", "coverage: "},
      {"the exit of the tiles past every segment dropped (their group G: ends[G] read past the array)", R"(\t@%p\d+ ret;[^\n]*\n)", "", 0,
       "outside every buffer", "ld.global"},
      {"the exit of the tiles of a segment's padding dropped (padding tiles computed and stored)", R"(\t@%p\d+ ret;[^\n]*\n)", "", 1, "",
       "in tiles past their group's valid rows"},
      {"B's loads at group 0's plane (every segment multiplies group 0's B)", R"(\tmad\.lo\.u32 (%r\d+), %r17, 1, \1;\n)", "", 0, "", "D("},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// The persistent walk over (group, tile) (issue 30): three CTAs walk every group's tiles in order,
// each role moving its own cursor over the groups (sim::group_sizes: masked m + 100, 0, 65, -7 rows;
// contiguous segments of 65, 0, 253 and 3 rows aligned to 128). Every role's copy of the walk is
// mutated alike.
TEST_CASE("mutations of the persistent walk over (group, tile) make the simulation fail, each for its reason") {
  const Subject masked = subject("gemm_sm90_bf16_128x256x64_masked_persistent", 253, 264, 3 * 64 - 5, 63, 3);
  REQUIRE(masked.clean.ctas == 3);
  static const Mutation kMasked[] = {
      {"the walk's test made rel <= count (the first tile taken as the tile of the walk's start, before group 0, which has no "
       "tiles: its tile rows read before any group's entry gave them)",
       R"(setp\.lt\.u32 (%p\d+), (%r\d+), (%r\d+);(\n\t@%p\d+ bra \$L_s\d+_found;))", "setp.le.u32 $1, $2, $3;$4", -1,
       "which no instruction on this thread's path has written", "sub.u32"},  // the raster order's first use of the tile rows
      {"the group's first tile not moved past its tiles (every group's tiles counted from tile 0: a later group's tiles taken as an "
       "earlier one's)",
       R"(\tadd\.u32 (%r\d+), \1, (%r\d+);[^\n]*past this group's tiles[^\n]*\n)", "", -1, "", "coverage: "},
  };
  for (const Mutation& mu : kMasked) run(masked, mu);
  const Subject contiguous = subject("gemm_sm90_bf16_128x128x64_contiguous_persistent", 900, 264, 3 * 64 - 5, 64, 3);
  REQUIRE(contiguous.clean.ctas == 3);
  static const Mutation kContiguous[] = {
      {"the segment's first tile row not added (each segment's tiles at A's first rows)",
       R"(\tadd\.u32 (%r\d+), \1, %r\d+;[^\n]*M tile in A's rows[^\n]*\n)", "", -1, "", "coverage: "},
      {"the next segment's first row rounded down to align, not up (its first tile takes the previous segment's last rows)",
       R"((\tadd\.u32 (%r\d+), %r\d+, )127(;\n\tdiv\.u32 \2, \2, 128;\n\tmul\.lo\.u32 \2, \2, 128;[^\n]*padded end))", "$1 0$3", -1, "",
       "coverage: "},
  };
  for (const Mutation& mu : kContiguous) run(contiguous, mu);
}

// A fused epilogue per group (issue 30): each group's bias is its own row of n (the contiguous
// layout's segments of sim::group_sizes, SwiGLU's gate and up halves from the group's B and bias).
TEST_CASE("mutations of a grouped GEMM's per-group bias make the simulation fail, each for its reason") {
  const Subject x = subject("gemm_sm90_bf16_128x128x64_contiguous_bias_swiglu", 900, 264, 3 * 64 - 5, 65);
  static const Mutation kMutations[] = {
      {"every group's bias at group 0's row (the bias's group offset dropped: a later group's tiles add group 0's bias)",
       R"(\tadd\.u64 (%rd\d+), \1, %rd\d+;[^\n]*bias of this group[^\n]*\n)", "", 0, "", "D("},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

TEST_CASE("mutations of block-wise f32 scaling (sm_90a) make the simulation fail, each for its reason") {
  // One set of partial sums (scale.partials 1): each block promoted once its wgmmas completed.
  const Subject x = subject("gemm_sm90_e4m3_128x128x128_blockwise", 253, 248, 5 * 128 - 5, 51, 2, R"({"scale": {"partials": 1}})");
  REQUIRE(x.clean.ctas == 2);
  // The loop's predicate kb != 0 (the carried sum's fma, and the mutation of scale-d below).
  REQUIRE(x.golden.find("setp.ne.u32 %p5, %r473, 0;                             // D = A x B in the first iteration") != std::string::npos);
  static const Mutation kMutations[] = {
      {"A's factors of the neighbouring K block (row kb + 1 of SFA; the last block's read past SFA as 0)",
       R"(mov\.u32 (%r\d+), 0;(\n\tmad\.lo\.u32 %r\d+, %r\d+, 1, %r\d+;\n\tmov\.u32 %r\d+, 0;\n\tmad\.lo\.u32 %r\d+, %r\d+, 128, %r\d+;))",
       "mov.u32 $1, 1;$2", -1, "", ""},
      {"B's factor of the neighbouring N block (row n / 128 + 1 of SFB; the last tile column's read past SFB as 0)",
       R"(mov\.u32 (%r\d+), 0;(\n\tmad\.lo\.u32 %r\d+, %r\d+, 1, %r\d+;\n\tmov\.u32 %r\d+, 0;\n\tmad\.lo\.u32 %r\d+, %r\d+, 1, %r\d+;\n\tadd\.u32))",
       "mov.u32 $1, 1;$2", -1, "", ""},
      {"B's factor of the neighbouring K block (column kb + 1 of SFB)",
       R"((mov\.u32 %r\d+, 0;\n\tmad\.lo\.u32 %r\d+, %r\d+, 1, %r\d+;\n\tmov\.u32 (%r\d+),) 0;(\n\tmad\.lo\.u32 %r\d+, %r\d+, 1, %r\d+;\n\tadd\.u32))",
       "$1 1;$3", -1, "", ""},
      {"the partial sums not reset per K block (scale-d kb != 0 at the block's first wgmma: earlier blocks' sums, already added, added again)",
       R"((wgmma\.mma_async\.sync\.aligned\.m64n128k32\.f32\.e4m3\.e4m3 \{[^}]*\}, %rd\d+, %rd\d+,) 0, 1, 1;)", "$1 %p5, 1, 1;", -1, "", ""},
      {"the scaled sum not carried (acc = partial * (sa sb) in every K block: only the last block's product is left)",
       R"(\tfma\.rn\.f32 (%r\d+), (%r\d+), (%r\d+), \1;)", "\tmul.rn.f32 $1, $2, $3;", -1, "", ""},
      {"the scaled sum's first register not zeroed before the K loop (its first fma reads a register nothing wrote)",
       R"(\tmov\.b32 %r\d+, 0f00000000;\n)", "", 0, "which no instruction on this thread's path has written", "fma.rn.f32"},
      {"the partial sums read before their wgmmas complete (the K block's wgmma.wait_group 0 dropped)",
       R"re(\twgmma\.wait_group\.sync\.aligned 0;\n(\n\t// \[\d+\] math))re", "$1", 0,
       "race: reads register", "no wgmma.wait_group for its group"},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
}

// Two sets of partial sums (the golden: scale.partials 2, issue 30): the K loop unrolled by two;
// block kb waits for block kb - 1's group (wgmma.wait_group 0), fills set kb % 2 and promotes block
// kb - 1's set while its wgmmas run; the last block's set is promoted after the loop. Five K blocks: the loop ends after an even
// block, so the last promotion is set 0's (the four-block run below ends on set 1's).
TEST_CASE("mutations of block-wise f32 scaling with two sets of partial sums (sm_90a) make the simulation fail, each for its reason") {
  const Subject x = subject("gemm_sm90_e4m3_128x128x128_blockwise", 253, 248, 5 * 128 - 5, 51, 2);
  REQUIRE(x.golden.find("// Odd K blocks.") != std::string::npos);
  static const Mutation kMutations[] = {
      {"the previous block's set promoted while its wgmmas may still run (the loop's wgmma.wait_group 0 turned into 1: its group may be pending)",
       R"((block kb - 1's wgmmas complete[^\n]*\n)\twgmma\.wait_group\.sync\.aligned 0;)", "$1\twgmma.wait_group.sync.aligned 1;", -1, "race: reads register", "no wgmma.wait_group for its group"},
      {"the last K block's partial sums never promoted (both of the after-loop promotions skipped)",
       R"(setp\.ne\.u32 (%p\d+), (%r\d+), \d;(\s+// of the other parity))", "setp.eq.u32 $1, $2, $2;$3", -1, "", ""},
  };
  for (const Mutation& mu : kMutations) run(x, mu);
  // The two sets' factors swapped: in each copy of the loop body the promoted set (block kb - 1's)
  // is multiplied by the factors just loaded for block kb (the other set's sab), register for
  // register: D's blocks get their neighbours' factors.
  {
    const std::string ptx = swap_promoted_factors(x.golden);
    REQUIRE(ptx != x.golden);
    const simtest::GemmResult r = simtest::run_gemm(*ksim::parse(ptx), x.manifest, x.m, x.n, x.k, x.seed, {}, x.multiprocessors);
    check(Mutation{"the two sets' factors swapped (block kb - 1's partial sums times block kb's sa sb)", "", "", 0, "", ""}, x.plan, ptx, r);
  }
  // An even number of K blocks (four: the last promotion is set 1's) with the last promotion dropped.
  const Subject y = subject("gemm_sm90_e4m3_128x128x128_blockwise", 130, 120, 4 * 128 - 3, 53, 1);
  run(y, {"the last K block's partial sums never promoted, four K blocks (set 1's)", R"(setp\.ne\.u32 (%p\d+), (%r\d+), 1;(\s+// of the other parity))",
          "setp.eq.u32 $1, $2, $2;$3", -1, "", ""});
}
}

// A program's TMA store (docs/spec.md, "TMA stores"): specs/prog_pipelined_epilogue_bf16_tma.json
// at its ragged sizes (2 x 4 tiles, the last row and column of tiles clipped by TMA), each CTA's
// epilogue staging its box of D in "d_stage" and storing it with cp.async.bulk.tensor; and its
// 128 x 256 tile (specs/prog_pipelined_epilogue_bf16_tma_n256.json), four boxes through two stages.
// Each step of the staging broken in the golden: the proxy fence between the threads' st.shared and
// TMA's read (PTX ISA 9.1 §9.7.13.4), the barrier that lets the issuing thread store only once every
// warp wrote its rows, the wait for the store's reads before the CTA's shared memory goes, and the
// wait for box j - 2's reads before box j writes its stage (cp.async.bulk.wait_group.read 0 and 1,
// §9.7.9.27.2.2).
TEST_SUITE("sim_mutation") {
TEST_CASE("mutations of a program's TMA store make the simulation fail, each for its reason") {
  struct ProgramMutation {
    const char* spec;
    Mutation mu;
  };
  static const ProgramMutation kMutations[] = {
      {"prog_pipelined_epilogue_bf16_tma",
       {"the fence.proxy.async between the staging writes and the TMA store dropped",
        R"(\tfence\.proxy\.async\.shared::cta;\n(\tbar\.sync 1, 128;\s*// the box is in shared memory\n))", "$1", 0,
        "race: the async proxy reads shared memory", "with no fence.proxy.async since"}},
      {"prog_pipelined_epilogue_bf16_tma",
       {"the barrier between the warps' staging writes and the one thread's TMA store dropped (it reads rows not yet written)",
        R"(\tbar\.sync 1, 128;\s*// the box is in shared memory\n)", "", 0, "race: st.shared writes shared memory",
        "reads it (no wait for its completion)"}},
      {"prog_pipelined_epilogue_bf16_tma",
       {"the epilogue's cp.async.bulk.wait_group.read 0 before it leaves dropped (the CTA may exit while TMA reads the stage)",
        R"(\tcp\.async\.bulk\.wait_group\.read 0;\s*// the stores have read the staging ring\n)", "", 0,
        "exits with cp.async.bulk.tensor stores still reading shared memory", ""}},
      {"prog_pipelined_epilogue_bf16_tma_n256",
       {"the wait_group.read 1 before a stage is written again dropped (box 2 overwrites box 0's stage while TMA reads it)",
        R"(\t@!%p\d+ cp\.async\.bulk\.wait_group\.read 1;[^\n]*\n)", "", -1, "race: st.shared writes shared memory",
        "reads it (no wait for its completion)"}},
  };
  std::string guarded;
  for (const auto& pm : kMutations) {
    const std::string name = pm.spec;
    CAPTURE(name);
    const spec::Spec s = support::checked_spec(support::slurp(support::source_root() + "/specs/" + name + ".json"));
    const plan::Plan p = support::plan_of(s);
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const std::string golden = support::slurp(support::source_root() + "/golden/" + name + ".ptx");
    if (guarded != name) {  // the unmutated kernel passes: one box of D per tile
      guarded = name;
      const simtest::ProgramResult clean = simtest::run_program(*ksim::parse(golden), *s.program, manifest, 3);
      REQUIRE_MESSAGE(clean.error.empty(), clean.error);
      REQUIRE(clean.worst <= 1.0);
      CHECK(clean.stats.tma_stores == (name == "prog_pipelined_epilogue_bf16_tma" ? 2 * 4 : 2 * 2 * 4));
    }
    const std::string ptx = mutate(golden, pm.mu.re, pm.mu.fmt, pm.mu.n);
    REQUIRE(ptx != golden);
    check(pm.mu, p, ptx, simtest::run_program(*ksim::parse(ptx), *s.program, manifest, 3));
  }
}
}
