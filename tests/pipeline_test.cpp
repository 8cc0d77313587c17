// A program's roles and loop (docs/spec.md, "Loops and roles"): the mbarriers ptxgen plans between
// the roles from the order of the ops (src/lower/pipeline.cpp), pinned step by step for the worked
// kernels; what the structure rules refuse, each at its pointer, exit 1 and nothing written.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ptxgen/io.hpp"
#include "cli_support.hpp"
#include "support.hpp"

using namespace ptxgen;
using json = nlohmann::json;

namespace {

// Each role's synchronization and ops as a line: "ROLE: op ... | loop[ ... ] | ...", waits with
// the iteration they wait for ("-1": the previous one, "-S": a ring's flipped phase).
std::string trace(const plan::Plan& p) {
  std::string out;
  auto step = [&](auto&& self, const plan::Step& st) -> std::string {
    switch (st.kind) {
      case plan::StepKind::wait:
        return "wait " + st.bar.barrier + (st.bar.phase.lag ? " -" + std::to_string(st.bar.phase.lag) : "") +
               (st.bar.phase.flip ? " -S" : "");
      case plan::StepKind::commit: return "commit " + st.bar.barrier;
      case plan::StepKind::arrive: return "arrive " + st.bar.barrier;
      case plan::StepKind::expect_tx: return "expect_tx " + st.bar.barrier;
      case plan::StepKind::load: return "load " + st.load.tile + "@" + st.load.barrier;
      case plan::StepKind::cp: return "cp";
      case plan::StepKind::mma: return "mma";
      case plan::StepKind::tmem_ld: return "ld";
      case plan::StepKind::tmem_st: return "st";
      case plan::StepKind::store: return "store";
      case plan::StepKind::wait_ld: return "wait::ld";
      case plan::StepKind::wait_st: return "wait::st";
      case plan::StepKind::sync: return "sync";
      case plan::StepKind::mma_wait: return "mma_wait";
      case plan::StepKind::math: return "math";
      case plan::StepKind::read: return "read";
      case plan::StepKind::reduce: return "reduce";
      case plan::StepKind::amax: return "amax";
      case plan::StepKind::quantize: return "quantize";
      case plan::StepKind::loop: {
        std::string b;
        for (const auto& x : st.body) b += (b.empty() ? "" : " | ") + self(self, x);
        return "loop[ " + b + " ]";
      }
    }
    return "?";
  };
  for (const auto& r : p.roles) {
    out += r.ir().name + ":";
    std::string line;
    for (const auto& st : r.steps) line += (line.empty() ? " " : " | ") + step(step, st);
    out += line + "\n";
  }
  return out;
}

std::string barriers(const plan::Plan& p) {
  std::string out;
  for (const auto& b : p.barriers) out += b.name + "(" + std::to_string(b.count) + "x" + std::to_string(b.stages) + ") ";
  return out;
}

// What a CTA pair adds to each step (src/lower/pipeline.cpp): the roles that run in CTA 0 only,
// loads completing on CTA 0's barrier, expect_tx armed by CTA 0 alone (for both CTAs' bytes),
// commits to both CTAs' barriers, arrivals on CTA 0's barrier or on the CTA's own.
std::string pair_steps(const plan::Plan& p) {
  std::string out;
  std::function<void(const std::vector<plan::Step>&)> walk = [&](const std::vector<plan::Step>& ss) {
    for (const auto& st : ss) {
      switch (st.kind) {
        case plan::StepKind::load: out += " load " + st.load.tile + (st.load.to_leader ? "@cta0" : "@own"); break;
        case plan::StepKind::expect_tx:
          out += " expect_tx " + std::to_string(st.bar.tx_bytes) + (st.bar.leader_only ? "@cta0" : "@each");
          break;
        case plan::StepKind::commit: out += " commit " + st.bar.barrier + (st.bar.pair_multicast ? "@both" : "@own"); break;
        case plan::StepKind::arrive: out += " arrive " + st.bar.barrier + (st.bar.to_leader ? "@cta0" : "@own"); break;
        case plan::StepKind::loop: walk(st.body); break;
        default: break;
      }
    }
  };
  for (const auto& r : p.roles) {
    out += r.ir().name + (r.ir().leader_cta_only ? " (CTA 0):" : ":");
    walk(r.steps);
    out += "\n";
  }
  return out;
}

// `ptxgen emit` of the document exits 1 with the rule at the pointer and writes nothing.
void refused(const json& doc, const char* rule, const char* ptr) {
  const char* bin = std::getenv("PTXGEN_BIN");
  REQUIRE(bin);
  support::TempDir t;
  std::ofstream(t / "bad.json") << doc.dump(2);
  io::Run r = io::run({bin, "emit", t / "bad.json", "-o", t / "out.ptx", "--diagnostics=json"});
  CAPTURE(rule);
  CAPTURE(doc.dump());
  CHECK(r.exit_code == 1);
  CHECK_FALSE(std::filesystem::exists(t / "out.ptx"));
  bool found = false;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    auto d = json::parse(line, nullptr, false);
    if (d.is_object() && d.value("rule", "") == rule && d.value("pointer", "") == ptr) found = true;
  }
  CHECK_MESSAGE(found, r.output);
}

plan::Plan planned(const std::string& stem) {
  return support::plan_of(support::checked_spec(support::slurp(support::source_root() + "/specs/" + stem + ".json")));
}

}  // namespace

TEST_SUITE("program") {
TEST_CASE("a pipelined GEMM written as a program: the template's ring of full and empty barriers") {
  const plan::Plan p = planned("prog_pipelined_gemm_bf16");
  // The MMAs release each stage with a commit (a ring of 3, waited 3 iterations later by the
  // producer: the flipped phase), the loads of A and B complete on one ring barrier, and the
  // accumulator is committed once more after the loop for the epilogue.
  CHECK(barriers(p) == "mma_done0(1x3) mma_done0_last(1x1) producer_full0(1x3) ");
  CHECK(trace(p) ==
        "epilogue: wait mma_done0_last | ld | wait::ld | store\n"
        "mma: loop[ wait producer_full0 | mma | commit mma_done0 ] | commit mma_done0_last\n"
        "producer: loop[ wait mma_done0 -S | expect_tx producer_full0 | load a@producer_full0 | load b@producer_full0 ]\n");
}

TEST_CASE("the back-to-back chain: S = Q.K^T, P = bf16(S) over S's cells, O += P.V, every edge synchronized") {
  const plan::Plan p = planned("prog_chain_qk_pv_bf16");
  CHECK(barriers(p) ==
        "mma_done0(1x2) mma_done1(1x2) mma_done1_last(1x1) producer_full0(1x1) producer_full1(1x2) softmax_ready0(128x1) "
        "softmax_ready1(128x1) ");
  // mma role: Q once before the loop; per block, S = Q.K^T after the previous block's O += P.V
  // read P (same cells, -1) and after the softmax warps read the previous S (-S: the ring of one);
  // O += P.V after P is stored; the producer reloads a stage once both MMAs of that block read it.
  CHECK(trace(p) ==
        "mma: wait producer_full0 | loop[ wait producer_full1 | wait mma_done1 -1 | wait softmax_ready0 -S | mma | commit "
        "mma_done0 | wait mma_done0 | wait softmax_ready1 | mma | commit mma_done1 ] | commit mma_done1_last\n"
        "producer: expect_tx producer_full0 | load q@producer_full0 | loop[ wait mma_done0 -S | wait mma_done1 -S | expect_tx "
        "producer_full1 | load kt@producer_full1 | load v@producer_full1 ]\n"
        "softmax: loop[ wait mma_done0 | ld | wait::ld | arrive softmax_ready0 | wait mma_done1 -1 | st | wait::st | arrive "
        "softmax_ready1 ] | wait mma_done1_last | ld | wait::ld | store\n");
}

TEST_CASE("A in tensor memory over two M groups, copied each K block: single-buffered behind the MMAs") {
  const plan::Plan p = planned("prog_pipelined_a_tmem_m256");
  // The copy of block kb waits for the MMAs of block kb - 1 (they read A's cells: mma then cp is
  // not a pipelined pair), then copy and MMAs issue back to back (cp then mma is) and one commit
  // releases the stage and A's cells alike.
  CHECK(barriers(p) == "mma_done0(1x3) mma_done0_last(1x1) producer_full0(1x3) ");
  CHECK(trace(p) ==
        "epilogue: wait mma_done0_last | ld | wait::ld | store\n"
        "mma: loop[ wait producer_full0 | wait mma_done0 -1 | cp | mma | commit mma_done0 ] | commit mma_done0_last\n"
        "producer: loop[ wait mma_done0 -S | expect_tx producer_full0 | load a@producer_full0 | load b@producer_full0 ]\n");
}

TEST_CASE("a 64-row multicast view refilled each K block, read by two warpgroups from its two replicas") {
  const plan::Plan p = planned("prog_pipelined_warpx2_views");
  // The next block's copy (.64x128b.warpx2::02_13) overwrites the view both warpgroups read: it
  // waits for both their arrivals of the previous block; each arrives once its tcgen05.ld is done.
  CHECK(trace(p) ==
        "mma: loop[ wait producer_full0 | wait wg0_ready0 -S | wait wg1_ready0 -S | cp | commit mma_done0 ]\n"
        "producer: loop[ wait mma_done0 -S | expect_tx producer_full0 | load x@producer_full0 ]\n"
        "wg0: loop[ wait mma_done0 | ld | wait::ld | arrive wg0_ready0 | store ]\n"
        "wg1: loop[ wait mma_done0 | ld | wait::ld | arrive wg1_ready0 | store ]\n");
  // tcgen05.ld reaches the warp's own quarter: warps 0, 1 read lanes 0-63, warps 6, 7 the replica in 64-127.
  for (const auto& r : p.roles)
    for (const auto& st : r.steps)
      for (const auto& b : st.body)
        if (b.kind == plan::StepKind::tmem_ld) {
          std::string warps;
          for (const auto& f : b.ld.frags) warps += std::to_string(f.warp) + "@" + std::to_string(f.row0) + " ";
          CHECK(warps == (r.ir().name == "wg0" ? "0@0 1@32 " : "6@0 7@32 "));
        }
}

TEST_CASE("a CTA pair's pipelined GEMM: loads on CTA 0's ring barrier, the MMA thread of CTA 0, commits to both CTAs") {
  const plan::Plan p = planned("prog_pipelined_pair_bf16_m256");
  // The same barriers as one CTA's pipelined GEMM: a ring of 4 full and done barriers and the
  // accumulator's; one arrival (the expect_tx, the commit) completes each phase.
  CHECK(barriers(p) == "mma_done0(1x4) mma_done0_last(1x1) producer_full0(1x4) ");
  CHECK(trace(p) ==
        "epilogue: wait mma_done0_last | ld | wait::ld | store | ld | wait::ld | store\n"
        "mma: loop[ wait producer_full0 | mma | commit mma_done0 ] | commit mma_done0_last\n"
        "producer: loop[ wait mma_done0 -S | expect_tx producer_full0 | load a@producer_full0 | load b@producer_full0 ]\n");
  // Each CTA loads its 128 rows of A and of B (32 KiB); CTA 0 arms the barrier for both CTAs' 64 KiB.
  CHECK(pair_steps(p) ==
        "epilogue:\n"
        "mma (CTA 0): commit mma_done0@both commit mma_done0_last@both\n"
        "producer: expect_tx 65536@cta0 load a@cta0 load b@cta0\n");
  CHECK(p.ir().cta_group == 2);
  CHECK(p.launch.x == 4);  // two CTAs for each of the two tile columns (n = 512, tiles of 256)
}

TEST_CASE("a CTA pair's back-to-back chain: both CTAs' softmax warps release S and P on CTA 0's barriers") {
  const plan::Plan p = planned("prog_pipelined_pair_chain_bf16");
  // The one-CTA chain's edges; the softmax barriers the MMA thread waits on count both CTAs' 128 threads.
  CHECK(barriers(p) ==
        "mma_done0(1x2) mma_done1(1x2) mma_done1_last(1x1) producer_full0(1x1) producer_full1(1x2) softmax_ready0(256x1) "
        "softmax_ready1(256x1) ");
  CHECK(trace(p) ==
        "mma: wait producer_full0 | loop[ wait producer_full1 | wait mma_done1 -1 | wait softmax_ready0 -S | mma | commit "
        "mma_done0 | wait mma_done0 | wait softmax_ready1 | mma | commit mma_done1 ] | commit mma_done1_last\n"
        "producer: expect_tx producer_full0 | load q@producer_full0 | loop[ wait mma_done0 -S | wait mma_done1 -S | expect_tx "
        "producer_full1 | load kt@producer_full1 | load v@producer_full1 ]\n"
        "softmax: loop[ wait mma_done0 | ld | wait::ld | arrive softmax_ready0 | wait mma_done1 -1 | st | wait::st | arrive "
        "softmax_ready1 ] | wait mma_done1_last | ld | wait::ld | store\n");
  CHECK(pair_steps(p) ==
        "mma (CTA 0): commit mma_done0@both commit mma_done1@both commit mma_done1_last@both\n"
        "producer: expect_tx 32768@cta0 load q@cta0 expect_tx 32768@cta0 load kt@cta0 load v@cta0\n"
        "softmax: arrive softmax_ready0@cta0 arrive softmax_ready1@cta0\n");
}

TEST_CASE("a CTA pair's arrivals waited for by CTA 0's MMA thread and by a role of both CTAs: a twin on each CTA") {
  const plan::Plan p = planned("prog_pipelined_pair_chain_s_bf16");
  // The reader warps store S before the softmax warps overwrite it with P: the softmax warps of
  // each CTA wait for their own CTA's reader (reader_ready0_local, 128 arrivals), the MMA thread
  // for both CTAs' readers before the next S (reader_ready0, 256 on CTA 0); the same for P.
  CHECK(barriers(p) ==
        "mma_done0(1x2) mma_done1(1x2) mma_done1_last(1x1) producer_full0(1x1) producer_full1(1x2) reader_ready0(256x1) "
        "reader_ready0_local(128x1) softmax_ready0(256x1) softmax_ready1(256x1) softmax_ready1_local(128x1) ");
  CHECK(trace(p) ==
        "mma: wait producer_full0 | loop[ wait producer_full1 | wait mma_done1 -1 | wait reader_ready0 -S | wait softmax_ready0 -S "
        "| mma | commit mma_done0 | wait mma_done0 | wait softmax_ready1 | mma | commit mma_done1 ] | commit mma_done1_last\n"
        "producer: expect_tx producer_full0 | load q@producer_full0 | loop[ wait mma_done0 -S | wait mma_done1 -S | expect_tx "
        "producer_full1 | load kt@producer_full1 | load v@producer_full1 ]\n"
        "reader: loop[ wait mma_done0 | wait softmax_ready1_local -S | ld | wait::ld | arrive reader_ready0 | arrive "
        "reader_ready0_local | store ]\n"
        "softmax: loop[ wait mma_done0 | ld | wait::ld | arrive softmax_ready0 | wait mma_done1 -1 | wait reader_ready0_local | st "
        "| wait::st | arrive softmax_ready1 | arrive softmax_ready1_local ] | wait mma_done1_last | ld | wait::ld | store\n");
  CHECK(pair_steps(p) ==
        "mma (CTA 0): commit mma_done0@both commit mma_done1@both commit mma_done1_last@both\n"
        "producer: expect_tx 32768@cta0 load q@cta0 expect_tx 32768@cta0 load kt@cta0 load v@cta0\n"
        "reader: arrive reader_ready0@cta0 arrive reader_ready0_local@own\n"
        "softmax: arrive softmax_ready0@cta0 arrive softmax_ready1@cta0 arrive softmax_ready1_local@own\n");
}

TEST_CASE("a program's sizes, grid, loop and roles: what the structure rules refuse, at its pointer, nothing written") {
  const json base = json::parse(support::slurp(support::source_root() + "/specs/prog_pipelined_gemm_bf16.json"));
  struct Case {
    json patch;
    const char* rule;
    const char* ptr;
  } cases[] = {
      // A size used but not declared; a size named like a parameter ptxgen writes.
      {{{"program", {{"globals", {{"A", {{"dtype", "bf16"}, {"shape", {"rows_a", "k"}}}}}}}}}, "PROGRAM-SIZE", "/program/globals/A/shape/0"},
      {{{"program", {{"sizes", {{"p_x", 4}}}}}}, "PROGRAM-SIZE", "/program/sizes/p_x"},
      {{{"program", {{"grid", {{"tile", {128, 128}}, {"n", "cols_n"}}}}}}, "PROGRAM-SIZE", "/program/grid/n"},
      // Derived sizes: of an unknown size, of a derived one; a "mul" past "div" (the size would outgrow its base).
      {{{"program", {{"sizes", {{"kh", {{"of", "kk"}, {"div", 2}}}}}}}}, "PROGRAM-SIZE", "/program/sizes/kh/of"},
      {{{"program", {{"sizes", {{"kh", {{"of", "k"}, {"div", 2}}}, {"kq", {{"of", "kh"}, {"div", 2}}}}}}}}, "PROGRAM-SIZE", "/program/sizes/kq/of"},
      {{{"program", {{"sizes", {{"kh", {{"of", "k"}, {"div", 2}, {"mul", 4}}}}}}}}, "SPEC-INT-RANGE", "/program/sizes/kh/mul"},
      // A step along a fixed extent.
      {{{"program", {{"globals", {{"B", {{"dtype", "bf16"}, {"shape", {256, "k"}}}}}}}}}, "PROGRAM-GRID", "/program/ops/0/ops/1/at/0"},
      // Warps: not consecutive, shared, past the CTA.
      {{{"program", {{"roles", {{"epilogue", {{"warps", {0, 2}}}}}}}}}, "PROGRAM-ROLE", "/program/roles/epilogue/warps"},
      {{{"program", {{"roles", {{"mma", {{"warps", {4}}}}}}}}}, "PROGRAM-ROLE", "/program/roles/producer/warps"},
      {{{"program", {{"roles", {{"mma", {{"warps", {6}}}}}}}}}, "PROGRAM-ROLE", "/program/roles/mma/warps"},
      // Rings of different depths in one loop; a ring used outside the loop.
      {{{"program", {{"smem", {{"b", {{"stages", 2}}}}}}}}, "PROGRAM-LOOP", "/program/smem/b/stages"},
  };
  auto run_case = refused;
  for (const auto& c : cases) {
    json j = base;
    j.merge_patch(c.patch);
    run_case(j, c.rule, c.ptr);
  }
  // Edits of the op list: a loop in a loop, a second loop, an op with no role, an unknown role,
  // a commit, a plain load, registers stored by another role, k_block and a ring outside the loop.
  auto ops = [&](const std::function<void(json&)>& edit, const char* rule, const char* ptr) {
    json j = base;
    edit(j["program"]["ops"]);
    run_case(j, rule, ptr);
  };
  ops([](json& o) { o[0]["ops"].push_back(json{{"op", "loop"}, {"trips", 2}, {"ops", json::array()}}); }, "PROGRAM-LOOP", "/program/ops/0/ops/3");
  ops([](json& o) { o.push_back(o[0]); }, "PROGRAM-LOOP", "/program/ops/3");
  ops([](json& o) { o[1].erase("role"); }, "PROGRAM-ROLE", "/program/ops/1");
  ops([](json& o) { o[1]["role"] = "softmax"; }, "PROGRAM-ROLE", "/program/ops/1/role");
  ops([](json& o) { o.push_back(json{{"op", "commit"}, {"role", "mma"}, {"barrier", "x"}}); }, "PROGRAM-ROLE", "/program/ops/3");
  ops([](json& o) { o[0]["ops"][0].erase("via"); }, "PROGRAM-ROLE", "/program/ops/0/ops/0/via");
  ops([](json& o) { o[2]["role"] = "producer"; }, "PROGRAM-ROLE", "/program/ops/2/role");
  ops([](json& o) { o[1]["warps"] = {0, 4}; }, "PROGRAM-ROLE", "/program/ops/1/warps/1");
  ops([](json& o) { o[2]["at"][0] = {{"k_block", 64}}; }, "PROGRAM-LOOP", "/program/ops/2/at/0");
  ops([](json& o) { o.insert(o.begin(), json{{"op", "load"}, {"role", "producer"}, {"src", "A"}, {"dst", "a"}, {"via", "tma"}}); },
      "PROGRAM-LOOP", "/program/ops/0/dst");
  // "after_first" outside a loop; roles in a program whose ops name none.
  ops([](json& o) { o.push_back(json{{"op", "mma"}, {"role", "mma"}, {"a", "a"}, {"b", "b"}, {"d", "acc"}, {"accumulate", "after_first"}}); },
      "PROGRAM-LOOP", "/program/ops/3/accumulate");
}

TEST_CASE("a CTA pair's roles: what cannot be pipelined over two CTAs is refused, at its pointer, nothing written") {
  const json base = json::parse(support::slurp(support::source_root() + "/specs/prog_pipelined_pair_bf16_m256.json"));
  auto ops = [&](const std::function<void(json&)>& edit, const char* rule, const char* ptr) {
    json j = base;
    edit(j["program"]);
    refused(j, rule, ptr);
  };
  // The MMA role (CTA 0 only) also loads, or reads the accumulator back: CTA 1's threads of the
  // role would wait for barriers that complete in CTA 0 alone.
  ops([](json& p) { p["ops"][0]["ops"][1]["role"] = "mma"; }, "PAIR-ROLE-ISSUE", "/program/ops/0/ops/1/role");
  ops([](json& p) { p["ops"][3]["role"] = "mma"; }, "PAIR-ROLE-ISSUE", "/program/ops/3/role");
  // A second load into "a" before the MMA read it; a ring tile the loop loads and nothing reads
  // (the next iteration's load waits for it): CTA 1's producer cannot wait for bytes that land on
  // CTA 0's barrier.
  ops([](json& p) { p["ops"][0]["ops"].insert(p["ops"][0]["ops"].begin() + 1, p["ops"][0]["ops"][0]); }, "PAIR-ROLE-RELOAD",
      "/program/ops/0/ops/1/dst");
  ops(
      [](json& p) {
        p["smem"]["c"] = p["smem"]["a"];
        json c = p["ops"][0]["ops"][0];
        c["dst"] = "c";
        p["ops"][0]["ops"].push_back(c);
      },
      "PAIR-ROLE-RELOAD", "/program/ops/0/ops/3/dst");
  // The same kernel as one CTA: its producer waits on its own barrier, and nothing is refused.
  json one = json::parse(support::slurp(support::source_root() + "/specs/prog_pipelined_gemm_bf16.json"));
  one["program"]["smem"]["c"] = one["program"]["smem"]["a"];
  json c = one["program"]["ops"][0]["ops"][0];
  c["dst"] = "c";
  one["program"]["ops"][0]["ops"].push_back(c);
  Diagnostics d;
  rules::parse_and_check(one.dump(), d);
  CHECK_FALSE(d.has_errors());
}

TEST_CASE("tiled programs: a plain load of a tensor of run-time extents, a column step that is no whole chunk") {
  // One CTA per tile, no roles: the tile's loads step with the CTA's tile; k is one K block (a
  // larger k would leave part of it unread: PROGRAM-COVERAGE).
  json j = json::parse(support::slurp(support::source_root() + "/specs/prog_pipelined_gemm_bf16.json"));
  j["program"]["sizes"]["k"] = 64;
  j["program"].erase("roles");
  j["program"]["threads"] = 128;
  json loads = j["program"]["ops"][0]["ops"];
  loads[0].erase("role");
  loads[1].erase("role");
  loads[0]["at"] = json::array({json{{"m_tile", 128}}, 0});
  loads[1]["at"] = json::array({json{{"n_tile", 128}}, 0});
  j["program"]["smem"]["a"].erase("stages");
  j["program"]["smem"]["b"].erase("stages");
  j["program"]["ops"] = json::array({loads[0], loads[1],
                                     {{"op", "mma"}, {"a", "a"}, {"b", "b"}, {"d", "acc"}},
                                     {{"op", "commit"}, {"barrier", "done"}},
                                     {{"op", "wait"}, {"barrier", "done"}},
                                     {{"op", "tmem_load"}, {"src", "acc"}, {"regs", "r"}},
                                     {{"op", "store"}, {"regs", "r"}, {"dst", "D"}, {"at", {{{"m_tile", 128}}, {{"n_tile", 128}}}}}});
  // As is: one K block of each tile, by TMA, emitted and assembled.
  {
    const plan::Plan p = support::plan_of(support::checked_spec(j.dump()));
    CHECK(p.launch.x == 2);
    CHECK(p.launch.y == 2);
  }
  Diagnostics d;
  json plain = j;
  plain["program"]["ops"][0].erase("via");
  rules::parse_and_check(plain.dump(), d);
  REQUIRE(d.has_errors());
  CHECK(d.list().front().rule == "LOAD-TMA");
  CHECK(d.list().front().pointer == "/program/ops/0/via");
  Diagnostics d2;
  json step = j;
  step["program"]["ops"][0]["at"][1] = {{"m_tile", 4}};  // 4 bf16 = 8 bytes a tile further on
  rules::parse_and_check(step.dump(), d2);
  REQUIRE(d2.has_errors());
  CHECK(d2.list().front().rule == "LOAD-ALIGN");
  CHECK(d2.list().front().pointer == "/program/ops/0/at/1");
  // A's columns are k, which the tile row does not walk: the step contradicts the grid too.
  CHECK(d2.fired("PROGRAM-COVERAGE"));
}
}
