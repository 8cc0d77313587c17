// What a program's stepping loads and stores cover of their tensors against the grid and the loop
// (PROGRAM-COVERAGE, docs/spec.md "Coverage"), and loads that place the rows of an M = 64 A where
// layout F reads them (LOAD-PLACE, docs/spec.md "M = 64"; issue 32, defects 2 and 3): each way of
// contradicting the grid or the loop refused at the member to change, every shipped program spec
// accepted without a word, and a naturally ordered A in tensor memory simulated against float64.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ptxgen/emit.hpp"
#include "sim_program.hpp"
#include "support.hpp"

using namespace ptxgen;
using nlohmann::json;

namespace {

json spec_json(const std::string& stem) { return json::parse(support::slurp(support::source_root() + "/specs/" + stem + ".json")); }

Diagnostics diags(const json& j) {
  Diagnostics d;
  rules::parse_and_check(j.dump(), d);
  return d;
}

// The one diagnostic of `rule` at `pointer` (there may be others: a spec can contradict itself
// in more than one place); its message, for the words a test asserts.
std::string at(const Diagnostics& d, const std::string& rule, const std::string& pointer) {
  std::string got;
  for (const auto& x : d.list()) {
    got += x.rule + " at " + x.pointer + ": " + x.message + "\n";
    if (x.rule == rule && x.pointer == pointer) return x.message;
  }
  FAIL_CHECK("expected " << rule << " at " << pointer << ", got:\n" << got);
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("program") {
TEST_CASE("PROGRAM-COVERAGE: positions that contradict the grid or the loop are refused at the member to change") {
  // specs/prog_pipelined_gemm_bf16.json: grid tiles of 128 x 128, a loop over k in blocks of 64,
  // A at [m_tile 128, k_block 64], B at [n_tile 128, k_block 64], D stored at [m_tile 128, n_tile 128].
  const json base = spec_json("prog_pipelined_gemm_bf16");
  REQUIRE(diags(base).list().empty());
  SUBCASE("a store stepping less than a CTA's tile: neighbouring CTAs race on the same elements") {
    json j = base;
    j["program"]["ops"][2]["at"][0]["m_tile"] = 64;
    const std::string m = at(diags(j), "PROGRAM-COVERAGE", "/program/ops/2/at/0");
    CHECK(contains(m, "the store steps 64 of \"D\"'s rows per tile row"));
    CHECK(contains(m, "a race"));
  }
  SUBCASE("a loop block larger than the loads' K step: part of K is never read") {
    json j = base;
    j["program"]["ops"][0]["block"] = 128;
    const std::string m = at(diags(j), "PROGRAM-COVERAGE", "/program/ops/0/block");
    CHECK(contains(m, "the loop's block is 128"));
    CHECK(contains(m, "steps 64 per iteration"));
    CHECK(contains(m, "the rest is never read"));
  }
  SUBCASE("A's rows stepping differently from D's") {
    json j = base;
    j["program"]["ops"][0]["ops"][0]["at"][0]["m_tile"] = 256;
    const std::string m = at(diags(j), "PROGRAM-COVERAGE", "/program/ops/0/ops/0/at/0");
    CHECK(contains(m, "the load steps 256 of \"A\"'s rows per tile row"));
  }
  SUBCASE("a grid tile larger than what every load and store steps") {
    json j = base;
    j["program"]["grid"]["tile"][0] = 256;
    const std::string m = at(diags(j), "PROGRAM-COVERAGE", "/program/grid/tile/0");
    CHECK(contains(m, "the grid's tile is 256 rows"));
    CHECK(contains(m, "steps 128 per tile row"));
  }
  SUBCASE("a grid tile larger than what the loads and stores cover of each step: part of D never computed") {
    // Everything steps 256 rows per tile row, as the grid's tile says, but A's tile and D's
    // registers hold 128 rows of each 256.
    json j = base;
    j["program"]["grid"]["tile"][0] = 256;
    j["program"]["ops"][0]["ops"][0]["at"][0]["m_tile"] = 256;
    j["program"]["ops"][2]["at"][0]["m_tile"] = 256;
    const Diagnostics d = diags(j);
    const std::string a = at(d, "PROGRAM-COVERAGE", "/program/ops/0/ops/0/at");
    CHECK(contains(a, "within each step rows 128..255 and columns 0..63 (counted from the step's start) are never read"));
    const std::string s = at(d, "PROGRAM-COVERAGE", "/program/ops/2/at");
    CHECK(contains(s, "within each step rows 128..255 and columns 0..127 (counted from the step's start) are never written"));
  }
  SUBCASE("a load holding more of K than it steps: the next iteration reads it again") {
    json j = base;
    for (const char* t : {"a", "b"}) j["program"]["smem"][t]["shape"][1] = 128;
    const std::string m = at(diags(j), "PROGRAM-COVERAGE", "/program/ops/0/ops/0/at/1");
    CHECK(contains(m, "the MMAs of both sum them"));
  }
  SUBCASE("a load stepping along an extent the walker does not walk") {
    json j = base;
    j["program"]["ops"][0]["ops"][1]["at"][0] = {{"m_tile", 128}};  // B's rows are n
    const std::string m = at(diags(j), "PROGRAM-COVERAGE", "/program/ops/0/ops/1/at/0");
    CHECK(contains(m, "whose extent is the size \"n\""));
  }
}

TEST_CASE("PROGRAM-COVERAGE: stores that write the same elements from every tile or every iteration") {
  SUBCASE("a grid of two tile columns and a store that does not step with the tile column") {
    json j = spec_json("prog_chain_qk_pv_bf16");
    j["program"]["sizes"]["n"] = 128;  // two 64-column tiles; O is stored at column 0 by both
    std::string store;
    for (size_t i = 0; i < j["program"]["ops"].size(); ++i)
      if (j["program"]["ops"][i]["op"] == "store") store = "/program/ops/" + std::to_string(i) + "/at";
    const std::string m = at(diags(j), "PROGRAM-COVERAGE", store);
    CHECK(contains(m, "the grid has 2 tile columns at the spec's sizes"));
  }
  SUBCASE("a store in the loop that does not step with the iteration") {
    json j = spec_json("prog_pipelined_pair_chain_s_bf16");
    std::string store;
    auto& body = j["program"]["ops"];
    for (size_t i = 0; i < body.size(); ++i)
      if (body[i]["op"] == "loop")
        for (size_t b = 0; b < body[i]["ops"].size(); ++b)
          if (body[i]["ops"][b]["op"] == "store") {
            body[i]["ops"][b]["at"][1] = 0;
            store = "/program/ops/" + std::to_string(i) + "/ops/" + std::to_string(b) + "/at";
          }
    REQUIRE(!store.empty());
    const std::string m = at(diags(j), "PROGRAM-COVERAGE", store);
    CHECK(contains(m, "writes the same elements of \"S\" again"));
  }
}

TEST_CASE("every shipped program spec covers its tensors: no PROGRAM-COVERAGE or LOAD-PLACE, no warning") {
  int n = 0;
  std::vector<std::string> files = support::spec_files();
  for (const auto& e : std::filesystem::recursive_directory_iterator(support::source_root() + "/examples"))
    if (e.path().extension() == ".json" && e.path().parent_path().filename() == "specs") files.push_back(e.path().string());
  for (const auto& f : files) {
    const json j = json::parse(support::slurp(f));
    if (!j.contains("program")) continue;
    CAPTURE(f);
    const Diagnostics d = diags(j);
    std::string got;
    for (const auto& x : d.list()) got += x.rule + " at " + x.pointer + ": " + x.message + "\n";
    CHECK_MESSAGE(d.list().empty(), got);
    ++n;
  }
  CHECK(n >= 49);  // specs/prog_*.json (the examples hold gemm specs only)
}

TEST_CASE("LOAD-PLACE: an MN-major tile cannot be placed") {
  json j = spec_json("prog_m64_f16_a_tmem_placed");
  j["program"]["smem"]["a"]["major"] = "mn";
  const std::string m = at(diags(j), "LOAD-PLACE", "/program/ops/0/place");
  CHECK(contains(m, "\"a\" is MN-major"));
}

TEST_CASE("a placed load: 16-row pieces at layout F's lanes, one tensor map") {
  json j = spec_json("prog_m64_f16_a_tmem_placed");
  j["program"]["ops"][0]["via"] = j["program"]["ops"][1]["via"] = "tma";
  const plan::Plan p = support::plan_of(support::checked_spec(j.dump()));
  std::vector<int> rows;
  for (const auto& st : p.roles[0].steps)
    if (st.kind == plan::StepKind::load && st.load.global == "A") {
      CHECK(st.load.box_rows == 16);
      CHECK(st.load.map.param == "tmap_0");
      rows.push_back(st.load.tile_row0);
      CHECK(st.load.row0.base == 16 * static_cast<int64_t>(rows.size() - 1));
    }
  // Group 0's rows 16 q .. 16 q + 15 at lanes 32 q (alignment 0), group 1's at 32 q + 16.
  CHECK(rows == std::vector<int>{0, 32, 64, 96, 16, 48, 80, 112});
  CHECK(p.tensor_maps.size() == 2);  // A's (shared by its pieces) and B's
}
}

TEST_SUITE("sim") {
TEST_CASE("M = 64 A in tensor memory from a naturally ordered A: the placed load computes A·B, the unplaced one permuted rows") {
  // The kernel of specs/prog_m64_f16_a_tmem_placed.json (A's 128 rows in order, two M = 64 groups)
  // against the float64 evaluation of the spec, which places the rows as docs/spec.md says; and
  // against the same spec without "place", whose evaluation takes the tile's rows in order as
  // layout F's lanes: the simulator tells the two apart, and only the first is the kernel's.
  for (const bool tma : {false, true}) {
    CAPTURE(tma);
    json j = spec_json("prog_m64_f16_a_tmem_placed");
    if (tma) j["program"]["ops"][0]["via"] = j["program"]["ops"][1]["via"] = "tma";
    const spec::Spec s = support::checked_spec(j.dump());
    const plan::Plan p = support::plan_of(s);
    const auto manifest = json::parse(plan::manifest(p));
    const ksim::KernelPtr k = ksim::parse(emit::ptx(p));
    const simtest::ProgramResult ok = simtest::run_program(*k, *s.program, manifest, 5);
    CHECK_MESSAGE(ok.error.empty(), ok.error);
    CHECK(ok.checked == 128 * 64);
    CHECK(ok.worst <= 1.0);
    json unplaced = j;
    unplaced["program"]["ops"][0].erase("place");
    const spec::Spec u = support::checked_spec(unplaced.dump());
    const simtest::ProgramResult bad = simtest::run_program(*k, *u.program, manifest, 5);
    CHECK(bad.error.empty());
    CHECK(bad.worst > 1.0);
  }
}
}
