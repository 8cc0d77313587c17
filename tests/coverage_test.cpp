// What a program's stepping loads and stores cover of their tensors against the grid and the loop
// (PROGRAM-COVERAGE, docs/spec.md "Coverage"; issue 32, defect 2): each way of contradicting the
// grid or the loop refused at the member to change, and every shipped program spec accepted
// without a word.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

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

TEST_CASE("every shipped program spec covers its tensors: no PROGRAM-COVERAGE, no warning") {
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

}
