// What the gemm template chooses where a spec is silent (src/spec/defaults.cpp) must pass the
// template's own rules. Over a grid of template options (targets, types and block scaling,
// cta_group, schedule, epilogue, tiles), each combination the rules accept with every choosable
// member written is checked again with each chosen member left out, one at a time (and tile and
// stages together, the common case): the spec still passes, or the diagnostic says that ptxgen
// chose the value and points at a member the spec has (issue 32: MXFP8/MXFP4/NVFP4, persistent, TMA
// epilogue, stages left out were refused with SMEM-BUDGET at /gemm/stages, which the spec lacked).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support.hpp"

using namespace ptxgen;

namespace {

struct Types {
  const char* name;
  const char* a;
  const char* b;
  const char* scale;  // nullptr: none; else the factors' type
  int vec;
  int tile_k;         // 128 bytes of a row (two e2m1 a byte for the block-scaled fp4 kinds; twice with sparse A)
  bool sparse = false;
};

nlohmann::json base_doc(const char* target, const Types& t, int cta, bool persistent, bool tma, int tm, int tn) {
  nlohmann::json j = nlohmann::json::parse(rules::example_base());
  j["target"] = target;
  auto& g = j["gemm"];
  g["a"]["dtype"] = t.a;
  g["b"]["dtype"] = t.b;
  if (t.scale) g["scale"] = {{"dtype", t.scale}, {"vec", t.vec}};
  g["cta_group"] = cta;
  g["cluster"] = {cta, 1, 1};
  g["schedule"] = persistent ? "persistent" : "data_parallel";
  g["epilogue"] = tma ? "tma" : "direct";
  g["tile"] = {{"m", tm}, {"n", tn}, {"k", t.tile_k}};
  if (t.sparse) g["sparse"] = true;
  if (std::string(target) == "sm_90a") {
    // What the planner chooses with the tile there: the consumers and their register budgets.
    g["consumers"] = persistent && tn == 128 ? "pingpong" : "cooperative";
    g["registers"] = {{"producer", 40}, {"consumer", 232}};
  }
  return j;
}

// The first error as "RULE at POINTER: message", or "" when the spec passes.
std::string first_error(const nlohmann::json& j, Diagnostics& d) {
  rules::parse_and_check(j.dump(), d);
  for (const auto& x : d.list())
    if (x.severity == Severity::error) return x.rule + " at " + x.pointer + ": " + x.message;
  return {};
}

bool has_member(const nlohmann::json& j, const std::string& pointer) {
  return pointer.empty() || j.contains(nlohmann::json::json_pointer(pointer));
}

}  // namespace

TEST_SUITE("rules") {
TEST_CASE("every accepted template combination passes with each chosen member left out") {
  const Types types[] = {{"bf16", "bf16", "bf16", nullptr, 0, 64},
                         {"e4m3", "e4m3", "e4m3", nullptr, 0, 128},
                         {"mxf8", "e4m3", "e4m3", "ue8m0", 32, 128},
                         {"mxf4", "e2m1", "e2m1", "ue8m0", 32, 256},
                         {"nvf4", "e2m1", "e2m1", "ue4m3", 16, 256},
                         {"f8f6f4 e2m1", "e2m1", "e2m1", nullptr, 0, 128},  // 4-bit types in 8-bit containers
                         {"sparse bf16", "bf16", "bf16", nullptr, 0, 128, true},
                         {"sparse mxf8", "e4m3", "e4m3", "ue8m0", 64, 256, true}};
  // The members defaults.cpp chooses when left out (tile and stages also together).
  const std::vector<std::vector<std::string>> removals = {{"stages"}, {"tile"},  {"tile", "stages"}, {"cluster"},
                                                          {"schedule"}, {"epilogue"}, {"consumers"}, {"registers"}};
  int combinations = 0, variants = 0, refused_chosen = 0;
  std::vector<std::string> failures;
  for (const char* target : {"sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_90a"})
    for (const Types& t : types)
      for (int cta : {1, 2})
        for (bool persistent : {false, true})
          for (bool tma : {false, true})
            for (int tn : {128, 256}) {
              const int tm = 128 * cta;
              nlohmann::json full = base_doc(target, t, cta, persistent, tma, tm, tn);
              // The deepest pipeline the rules accept with every member written; none: a combination
              // the rules refuse, not swept.
              bool accepted = false;
              for (int stages = 4; stages >= 1 && !accepted; --stages) {
                full["gemm"]["stages"] = stages;
                Diagnostics d;
                accepted = first_error(full, d).empty();
              }
              if (!accepted) continue;
              ++combinations;
              const std::string where = std::string(target) + " " + t.name + " cta_group " + std::to_string(cta) +
                                        (persistent ? " persistent" : " data_parallel") + (tma ? " tma" : " direct") + " tile " +
                                        std::to_string(tm) + "x" + std::to_string(tn);
              for (const auto& removed : removals) {
                nlohmann::json j = full;
                std::string what;
                bool present = false;
                for (const auto& m : removed) {
                  present = present || j["gemm"].contains(m);
                  j["gemm"].erase(m);
                  what += (what.empty() ? "" : "+") + m;
                }
                if (!present) continue;
                ++variants;
                Diagnostics d;
                const std::string e = first_error(j, d);
                if (e.empty()) continue;
                // Refused: acceptable only when every error points at a member the spec has and,
                // where ptxgen chose what was left out, says the value was its choice.
                Diagnostics quiet;
                const auto parsed = spec::parse(j.dump(), quiet);
                bool chosen = false;
                for (const auto& m : removed) chosen = chosen || (parsed.spec && spec::chosen_note(*parsed.spec->gemm, m));
                bool explained = true;
                for (const auto& x : d.list()) {
                  if (x.severity != Severity::error) continue;
                  std::string text = x.message;
                  for (const auto& h : x.help) text += "\n" + h;
                  if (!has_member(j, x.pointer) || (chosen && text.find("chosen by ptxgen") == std::string::npos)) explained = false;
                }
                if (explained) ++refused_chosen;
                else failures.push_back(where + ", " + what + " left out: " + e);
              }
            }
  MESSAGE(combinations << " combinations, " << variants << " specs with a chosen member left out, " << refused_chosen
                       << " refused at a member the spec has, saying what ptxgen chose, " << failures.size() << " failed");
  CHECK(combinations >= 200);
  std::string shown;
  for (size_t i = 0; i < failures.size() && i < 40; ++i) shown += failures[i] + "\n";
  CHECK_MESSAGE(failures.empty(), failures.size() << " failed:\n" << shown);
}

TEST_CASE("SMEM-BUDGET about stages ptxgen chose says so and points at the tile that drove the choice") {
  // Issue 32: block-scaled, persistent, TMA epilogue, stages left out: passes with the stage's
  // factor tiles counted.
  for (const Types& t : {Types{"mxf8", "e4m3", "e4m3", "ue8m0", 32, 128}, Types{"mxf4", "e2m1", "e2m1", "ue8m0", 32, 256},
                         Types{"nvf4", "e2m1", "e2m1", "ue4m3", 16, 256}}) {
    CAPTURE(t.name);
    nlohmann::json j = base_doc("sm_100a", t, 1, true, true, 128, 256);
    j["gemm"].erase("stages");
    Diagnostics d;
    CHECK(first_error(j, d) == "");
  }
  // sm_90a: one stage of 128 x 256 x 256 bf16 beside its f32 staging tile does not fit.
  nlohmann::json j = base_doc("sm_90a", {"bf16", "bf16", "bf16", nullptr, 0, 256}, 1, true, true, 128, 256);
  j["gemm"].erase("stages");
  j["gemm"]["d"]["dtype"] = "f32";
  Diagnostics d;
  rules::parse_and_check(j.dump(), d);
  REQUIRE(d.list().size() == 1u);
  const Diagnostic& x = d.list()[0];
  CHECK(x.rule == "SMEM-BUDGET");
  CHECK(x.pointer == "/gemm/tile");
  CHECK(x.message.find("1 stage was chosen by ptxgen (the spec leaves \"stages\" out: as many as shared memory holds") != std::string::npos);
}
}

// Beyond the grid above (bf16 D, no activation, 4096^3): D's types, a gated activation, skinny M
// (tile.n 128 chosen), an epilogue written or left out, with everything choosable left out. Each
// spec passes, or every error says ptxgen chose the value and points at a member the spec has.
TEST_SUITE("rules") {
TEST_CASE("chosen values over D's types, gated activations and skinny M pass, or their errors say chosen") {
  int specs = 0;
  std::vector<std::string> failures;
  for (const char* target : {"sm_100a", "sm_90a"})
    for (const char* d : {"bf16", "f32", "e4m3"})
      for (const char* act : {"", "swiglu"})
        for (int cta : {1, 2})
          for (const char* epi : {"", "tma", "direct"})
            for (int m : {128, 4096}) {
              if (cta == 2 && std::string(target) == "sm_90a") continue;
              nlohmann::json j = nlohmann::json::parse(rules::example_base());
              j["target"] = target;
              auto& g = j["gemm"];
              for (const char* k : {"tile", "stages", "swizzle"}) g.erase(k);
              g["m"] = m;
              g["n"] = 1024;
              g["d"] = {{"dtype", d}};
              if (*act) g["activation"] = act;
              if (cta == 2) g["cta_group"] = 2;
              if (*epi) g["epilogue"] = epi;
              const std::string where = std::string(target) + " D " + d + (*act ? " swiglu" : "") + " cta_group " + std::to_string(cta) +
                                        " epilogue " + (*epi ? epi : "left out") + " m " + std::to_string(m);
              ++specs;
              Diagnostics diags;
              const std::string e = first_error(j, diags);
              if (e.empty()) continue;
              // Refused: every error at a member the spec has, saying what ptxgen chose; and no tile
              // the chooser could have taken (tile.n 128 or 256 at its tile.m and tile.k, 1 to 4
              // stages) passes, else the choice itself was wrong.
              for (const auto& x : diags.list()) {
                std::string text = x.message;
                for (const auto& h : x.help) text += "\n" + h;
                if (x.severity == Severity::error && (!has_member(j, x.pointer) || text.find("chosen by ptxgen") == std::string::npos))
                  failures.push_back(where + ": " + e);
              }
              Diagnostics quiet;
              const auto parsed = spec::parse(j.dump(), quiet);
              REQUIRE(parsed.spec);
              const spec::Gemm chose = *parsed.spec->gemm;  // the parser runs the chooser
              for (int tn : {128, 256})
                for (int stages = 1; stages <= 4; ++stages) {
                  nlohmann::json w = j;
                  w["gemm"]["tile"] = {{"m", chose.tile.m}, {"n", tn}, {"k", chose.tile.k}};
                  w["gemm"]["stages"] = stages;
                  Diagnostics other;
                  if (first_error(w, other).empty())
                    failures.push_back(where + ": refused (" + e + ") where tile.n " + std::to_string(tn) + " with " + std::to_string(stages) +
                                       " stages passes");
                }
            }
  MESSAGE(specs << " specs, " << failures.size() << " failed");
  std::string shown;
  for (size_t i = 0; i < failures.size() && i < 40; ++i) shown += failures[i] + "\n";
  CHECK_MESSAGE(failures.empty(), failures.size() << " failed:\n" << shown);
}
}

// Each rule the sweeps found firing on a value ptxgen chose: the rule at a member the spec has, the
// message saying the value was chosen, and the value its help names passing.
TEST_SUITE("rules") {
TEST_CASE("diagnostics about chosen values say chosen, at a member the spec has; the value the help names passes") {
  const auto doc = [](const char* patch) {
    nlohmann::json j = nlohmann::json::parse(rules::example_base());
    j.merge_patch(nlohmann::json::parse(patch));
    j["gemm"].erase("tile");
    j["gemm"].erase("stages");
    return j;
  };
  const auto only = [](const nlohmann::json& j, const char* rule, const char* pointer) {
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    REQUIRE(d.list().size() == 1u);
    const Diagnostic& x = d.list()[0];
    CHECK(x.rule == rule);
    CHECK(x.pointer == pointer);
    CHECK_MESSAGE(x.message.find("chosen by ptxgen") != std::string::npos, x.message);
    return x;
  };
  const auto passes = [](const nlohmann::json& j) {
    Diagnostics d;
    return first_error(j, d);
  };
  {  // SPARSE-K: k not a multiple of the chosen tile.k (128 bf16 elements with sparse A)
    nlohmann::json j = doc(R"({"gemm": {"sparse": true, "k": 4000}})");
    const Diagnostic x = only(j, "SPARSE-K", "/gemm/k");
    CHECK(x.message.find("tile.k = 128") != std::string::npos);
    CHECK(x.message.find("(the tile 128 x 256 x 128 was chosen by ptxgen: the spec leaves \"tile\" out)") != std::string::npos);
    CHECK(x.help.at(0) == "pad K to a multiple of 128 (zero values of A and B, valid metadata)");
    j["gemm"]["k"] = 4096;
    CHECK(passes(j) == "");
  }
  {  // LAUNCH-GRID: 65536 tiles of the chosen tile.m 128 along M (on sm_90a ptxgen chooses a persistent grid)
    nlohmann::json j = doc(R"({"gemm": {"m": 8388481}})");
    const Diagnostic x = only(j, "LAUNCH-GRID", "/gemm/m");
    CHECK(x.message.find("/ tile.m 128") != std::string::npos);
    REQUIRE(x.help.at(0) == "use a tile.m of 192 (at least 129)");
    Diagnostics quiet;
    const spec::Gemm chose = *spec::parse(j.dump(), quiet).spec->gemm;
    j["gemm"]["tile"] = {{"m", 192}, {"n", chose.tile.n}, {"k", chose.tile.k}};
    CHECK(passes(j) == "");
  }
  {  // GROUPS-ALIGN: segments on 32 rows, which no tile.m the grouped kernels take divides
    nlohmann::json j = doc(R"({"target": "sm_90a", "gemm": {"groups": {"layout": "contiguous", "count": 4, "align": 32}}})");
    const Diagnostic x = only(j, "GROUPS-ALIGN", "/gemm/groups/align");
    CHECK(x.help.at(0) == "use \"align\": 128 (the next multiple of tile.m; DeepGEMM's 128 for tile.m 64 or 128)");
    j["gemm"]["groups"]["align"] = 128;
    CHECK(passes(j) == "");
    // on 64 rows ptxgen chooses tiles of 64 rows, which the segments hold whole
    j["gemm"]["groups"]["align"] = 64;
    CHECK(passes(j) == "");
    Diagnostics quiet;
    const spec::Gemm chose = *spec::parse(j.dump(), quiet).spec->gemm;
    CHECK(chose.tile.m == 64);
    CHECK(spec::chosen_note(chose, "tile")->find("tile.m 64, which divides the groups' align 64") != std::string::npos);
  }
  {  // SCHEDULE-PERSISTENT: the schedule ptxgen chose walks tiles a cluster's z cannot take
    nlohmann::json j = doc(R"({"target": "sm_90a", "gemm": {"cluster": [1, 1, 2]}})");
    const Diagnostic x = only(j, "SCHEDULE-PERSISTENT", "/gemm/cluster/2");
    CHECK(x.message.find("the schedule persistent was chosen by ptxgen") != std::string::npos);
    REQUIRE(x.help.at(0).rfind("use \"cluster\": [1, 1, 1]", 0) == 0);
    j["gemm"]["cluster"] = {1, 1, 1};
    CHECK(passes(j) == "");
  }
  for (const char* target : {"sm_90a", "sm_100a"}) {  // a gated activation's 8-bit D through TMA: tile.n stays 256 at skinny M
    CAPTURE(std::string(target));
    nlohmann::json j = doc(R"({"gemm": {"m": 128, "n": 1024, "d": {"dtype": "e4m3"}, "activation": "swiglu", "epilogue": "tma"}})");
    j["target"] = target;
    CHECK(passes(j) == "");
    Diagnostics quiet;
    const spec::Gemm chose = *spec::parse(j.dump(), quiet).spec->gemm;
    CHECK(chose.tile.n == 256);
  }
}
}
