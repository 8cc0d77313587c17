// The negative suite comes from the rule table: every rule has a failing example that must produce
// exactly that rule id at exactly that pointer, and a fixed example that passes every check.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>

#include "ptxgen/ir.hpp"
#include "support.hpp"

using namespace ptxgen;

namespace {
// The diagnostics of the example spec patched (a JSON merge patch).
Diagnostics diags(const std::string& patch) {
  nlohmann::json j = nlohmann::json::parse(rules::example_base());
  j.merge_patch(nlohmann::json::parse(patch));
  Diagnostics d;
  rules::parse_and_check(j.dump(), d);
  return d;
}
// The diagnostics of the example program with `op` inserted before its store of r.
Diagnostics with_program_op(const nlohmann::json& op) {
  nlohmann::json j = nlohmann::json::parse(rules::example_program_base());
  j["program"]["ops"].insert(j["program"]["ops"].end() - 1, op);
  Diagnostics d;
  rules::parse_and_check(j.dump(), d);
  return d;
}
}  // namespace

TEST_SUITE("rules") {
TEST_CASE("every rule: its failing example fires it at its pointer; its fix passes") {
  std::set<std::string_view> ids;
  for (const auto& r : rules::table()) {
    CAPTURE(r.id);
    CHECK_MESSAGE(ids.insert(r.id).second, "duplicate rule id");
    REQUIRE_MESSAGE(!r.bad.empty(), "rule has no failing example");
    CHECK(!r.title.empty());
    CHECK(!r.isa.empty());
    CHECK(!r.means.empty());
    CHECK(!r.when.empty());
    CHECK(!r.fixes.empty());

    Diagnostics bad;
    const auto checked = rules::parse_and_check(rules::bad_document(r), bad);
    // A rule about ptxas's report: the example passes the check, and the report ptxas gave for it
    // (the cli suite assembles it) fires the rule.
    if (!r.ptxas_report.empty()) {
      CHECK_MESSAGE(bad.list().empty(), "the example of a rule about ptxas's report must pass the check");
      REQUIRE(checked.parsed.spec);
      rules::check_ptxas_report(*checked.parsed.spec, r.ptxas_report, bad);
    }
    bool hit = false;
    std::string got;
    for (const auto& d : bad.list()) {
      got += d.rule + " at " + d.pointer + ": " + d.message + "\n";
      if (d.rule == r.id && d.pointer == r.bad_pointer) hit = true;
    }
    CHECK_MESSAGE(hit, "expected " << r.id << " at " << r.bad_pointer << ", got:\n" << got);
    for (const auto& d : bad.list()) CHECK_MESSAGE(rules::find(d.rule) != nullptr, "diagnostic with unknown rule " << d.rule);

    Diagnostics good;
    auto c = rules::parse_and_check(rules::good_document(r), good);
    std::string gotg;
    for (const auto& d : good.list()) gotg += d.rule + " at " + d.pointer + ": " + d.message + "\n";
    CHECK_MESSAGE(c.ok, "the fixed example fails:\n" << gotg);
    // The fix is a fix of a warning too (OP-MMA-A-ORDER, PLAN-*).
    CHECK_MESSAGE(!good.fired(r.id), "the fixed example still draws " << r.id << ":\n" << gotg);
  }
  CHECK(rules::table().size() >= 30);
}

TEST_CASE("explain: long form carries the example's real message") {
  for (const auto& r : rules::table()) {
    CAPTURE(r.id);
    const std::string e = rules::explain(r);
    // A warning rule (what can be intended; OP-MMA-A-ORDER) shows its example as a warning.
    CHECK((e.find("error[" + std::string(r.id) + "]") != std::string::npos || e.find("warning[" + std::string(r.id) + "]") != std::string::npos));
    CHECK(e.find("What it means") != std::string::npos);
    CHECK(e.find("How to fix it") != std::string::npos);
    // A program rule shows the whole passing document (it printed the patch, often
    // {"program": {}}), and that document passes the rule.
    if (!r.make_bad && !r.bad_is_document && rules::uses_program_base(r)) {
      const std::string lead = "  passes (changes to the program example spec; the whole document):\n";
      const size_t at = e.find(lead);
      REQUIRE(at != std::string::npos);
      CHECK(e.find("{\"program\": {}}") == std::string::npos);
      Diagnostics d;
      CHECK(rules::parse_and_check(e.substr(at + lead.size()), d).ok);
      CHECK_FALSE(d.fired(r.id));
    }
  }
}

TEST_CASE("docs/rules.md is generated from the table and current") {
  CHECK_MESSAGE(support::slurp(support::source_root() + "/docs/rules.md") == rules::rules_markdown(),
                "docs/rules.md is stale: run tools/update-golden (it regenerates docs/rules.md)");
}

TEST_CASE("gemm epilogue alpha, beta with c, residual, amax, D's scale: each mistake its rule at the member written") {
  // Built: the whole list passes on both engines (f32 accumulators), also beside a gated activation
  // where it applies to D.
  for (const char* ok : {R"({"gemm": {"alpha": 0.5, "c": {"dtype": "f16"}, "beta": -2, "bias": {"dtype": "f32"}, "activation": "relu", "residual": {"dtype": "bf16"}}})",
                         R"({"target": "sm_90a", "gemm": {"alpha": 3, "c": {"dtype": "f32"}, "residual": {"dtype": "f16"}}})",
                         R"({"target": "sm_90a", "gemm": {"d": {"dtype": "e4m3", "scale": true}, "epilogue": "direct", "amax": true}})",
                         R"({"gemm": {"activation": "swiglu", "residual": {"dtype": "bf16"}, "amax": true, "d": {"dtype": "bf16", "scale": true}}})",
                         // alpha and beta as kernel inputs, on both engines, beside every other member.
                         R"({"gemm": {"alpha": "input", "c": {"dtype": "f16"}, "beta": "input", "bias": {"dtype": "f32"}, "activation": "relu", "residual": {"dtype": "bf16"}, "d": {"dtype": "bf16", "scale": true}}})",
                         R"({"target": "sm_90a", "gemm": {"alpha": "input", "c": {"dtype": "f32"}, "beta": "input", "schedule": "persistent", "consumers": "pingpong", "tile": {"n": 128}}})"}) {
    CAPTURE(ok);
    CHECK(diags(ok).list().empty());
  }
  struct Case {
    const char* patch;
    const char* rule;
    const char* pointer;
  };
  for (const Case& c : {
           // beta scales C: without c it is a missing member, at beta (what was written).
           Case{R"({"gemm": {"beta": 2}})", "SPEC-MISSING-KEY", "/gemm/beta"},
           // alpha and beta become f32 immediates: beyond f32's range is MATH-DTYPE at the member.
           Case{R"({"gemm": {"alpha": 1e39}})", "MATH-DTYPE", "/gemm/alpha"},
           Case{R"({"gemm": {"c": {"dtype": "bf16"}, "beta": -4e38}})", "MATH-DTYPE", "/gemm/beta"},
           // A number, or the string "input" (the kernel input alpha or beta): another string is no
           // choice there, another type is the wrong type.
           Case{R"({"gemm": {"alpha": "2"}})", "SPEC-ENUM", "/gemm/alpha"},
           Case{R"({"gemm": {"alpha": "inptu"}})", "SPEC-ENUM", "/gemm/alpha"},
           Case{R"({"gemm": {"c": {"dtype": "bf16"}, "beta": "Input"}})", "SPEC-ENUM", "/gemm/beta"},
           Case{R"({"gemm": {"alpha": true}})", "SPEC-TYPE", "/gemm/alpha"},
           Case{R"({"gemm": {"c": {"dtype": "bf16"}, "beta": ["input"]}})", "SPEC-TYPE", "/gemm/beta"},
           // An input beta scales C as a constant one does.
           Case{R"({"gemm": {"beta": "input"}})", "SPEC-MISSING-KEY", "/gemm/beta"},
           Case{R"({"gemm": {"activation": "geglu", "alpha": "input"}})", "GLU-LAYOUT", "/gemm/alpha"},
           // C and the residual are read as f32, bf16 or f16.
           Case{R"({"gemm": {"c": {"dtype": "e4m3"}}})", "SPEC-ENUM", "/gemm/c/dtype"},
           Case{R"({"gemm": {"residual": {"dtype": "s32"}}})", "SPEC-ENUM", "/gemm/residual/dtype"},
           Case{R"({"gemm": {"c": {}}})", "SPEC-MISSING-KEY", "/gemm/c/dtype"},
           // The amax and D's scale are booleans.
           Case{R"({"gemm": {"d": {"dtype": "bf16", "scale": "yes"}}})", "SPEC-TYPE", "/gemm/d/scale"},
           Case{R"({"gemm": {"amax": 1}})", "SPEC-TYPE", "/gemm/amax"},
           // A gated activation: alpha and C (before the activation) are refused.
           Case{R"({"gemm": {"activation": "swiglu", "alpha": 2}})", "GLU-LAYOUT", "/gemm/alpha"},
           Case{R"({"gemm": {"activation": "geglu", "c": {"dtype": "bf16"}}})", "GLU-LAYOUT", "/gemm/c"},
       }) {
    CAPTURE(c.patch);
    const Diagnostics d = diags(c.patch);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == c.rule);
    CHECK(d.list()[0].pointer == c.pointer);
  }
  CHECK(diags(R"({"gemm": {"beta": 2}})").list().at(0).help.at(0) == "give C's type: \"c\": {\"dtype\": \"bf16\"} (or f16, f32)");
  CHECK(diags(R"({"gemm": {"alpha": "inptu"}})").list().at(0).message == "\"alpha\" = \"inptu\" is not one of: input");
}

TEST_CASE("block-wise f32 scale factors (sm_90a): built beside the epilogues; each mistake its rule at the member written") {
  // The examples patch the sm_100a base: an sm_90a e4m3 x e4m3 kernel of 128 x 128 x 128 tiles.
  const std::string fp8 = R"("target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, )";
  auto spec = [&](const std::string& rest) { return "{" + fp8 + rest + "}}"; };
  for (const std::string& ok : std::vector<std::string>{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"})"),
                                R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e5m2"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "vec": 128}, "d": {"dtype": "f32"}}})",
                                spec(R"("tile": {"m": 64, "n": 128, "k": 128}, "scale": {"dtype": "f32"}, "schedule": "persistent", "consumers": "pingpong")"),
                                spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}, "bias": {"dtype": "bf16"}, "activation": "gelu_tanh", "alpha": "input", "amax": true, "d": {"dtype": "e4m3", "scale": true})"),
                                // Left out, the tile is chosen: 128 x 128 x 128, cooperative consumers.
                                R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": null, "stages": null, "scale": {"dtype": "f32"}}})"}) {
    CAPTURE(ok);
    CHECK(diags(ok).list().empty());
  }
  struct Case {
    std::string patch;
    const char* rule;
    const char* pointer;
  };
  for (const Case& c : {
           // FP8 operands, an f32 accumulator.
           Case{R"({"target": "sm_90a", "gemm": {"tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})", "SCALE-BLOCK-TYPE", "/gemm/a/dtype"},
           Case{R"({"target": "sm_90a", "gemm": {"a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "accumulator": "s32", "d": {"dtype": "s32"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})", "SCALE-BLOCK-TYPE", "/gemm/a/dtype"},
           Case{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}, "accumulator": "f16", "d": {"dtype": "f16"})"), "SCALE-BLOCK-TYPE", "/gemm/accumulator"},
           // 128 of K per factor, no kind.
           Case{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "vec": 32})"), "SCALE-BLOCK-VEC", "/gemm/scale/vec"},
           Case{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "kind": "mxf8f6f4"})"), "SCALE-BLOCK-VEC", "/gemm/scale/kind"},
           // One factor block per K block, one of B's factors per tile, two accumulators that fit.
           Case{spec(R"("tile": {"n": 128, "k": 64}, "swizzle": {"a": 64, "b": 64}, "scale": {"dtype": "f32"})"), "SCALE-BLOCK-TILE", "/gemm/tile/k"},
           Case{spec(R"("tile": {"n": 256, "k": 128}, "scale": {"dtype": "f32"})"), "SCALE-BLOCK-TILE", "/gemm/tile/n"},
           Case{spec(R"("tile": {"n": 64, "k": 128}, "scale": {"dtype": "f32"})"), "SCALE-BLOCK-TILE", "/gemm/tile/n"},
           Case{spec(R"("tile": {"m": 128, "n": 128, "k": 128}, "scale": {"dtype": "f32"}, "schedule": "persistent", "consumers": "pingpong")"),
                "SCALE-BLOCK-TILE", "/gemm/consumers"},
           // Two sets of partial sums only where they fit (issue 30): a consumer budget of 232, two
           // stages; and only of block-wise f32 factors.
           Case{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "partials": 2})"), "SCALE-BLOCK-PARTIALS", "/gemm/scale/partials"},
           Case{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "partials": 2}, "registers": {"producer": 40, "consumer": 224})"),
                "SCALE-BLOCK-PARTIALS", "/gemm/scale/partials"},
           Case{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "partials": 2}, "registers": {"producer": 40, "consumer": 232}, "stages": 1)"),
                "SCALE-BLOCK-PARTIALS", "/gemm/scale/partials"},
           Case{R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "ue8m0", "partials": 1}}})",
                "SCALE-BLOCK-PARTIALS", "/gemm/scale/partials"},
           // Not built on tcgen05; another factor type is no choice.
           Case{R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})", "SPEC-NOT-BUILT", "/gemm/scale/dtype"},
           Case{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f16"})"), "SPEC-ENUM", "/gemm/scale/dtype"},
           // A gated activation remaps B's rows, as with any scale.
           Case{spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}, "activation": "swiglu")"), "GLU-LAYOUT", "/gemm/scale"},
       }) {
    CAPTURE(c.patch);
    const Diagnostics d = diags(c.patch);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == c.rule);
    CHECK(d.list()[0].pointer == c.pointer);
  }
  // scale.partials: 2 where two sets fit, chosen so where the spec leaves it out (the chosen tile's
  // 40 / 232 budgets), 1 without a budget for them; as written otherwise.
  for (const auto& chosen : std::vector<std::pair<std::string, int>>{
           {R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": null, "stages": null, "scale": {"dtype": "f32"}}})", 2},
           {spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"})"), 1},
           {spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}, "registers": {"producer": 40, "consumer": 232}, "stages": 1)"), 1},
           {spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "partials": 1}, "registers": {"producer": 40, "consumer": 232})"), 1},
           {spec(R"("tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32", "partials": 2}, "registers": {"producer": 40, "consumer": 232})"), 2}}) {
    const std::string& text = chosen.first;
    CAPTURE(text);
    Diagnostics d;
    nlohmann::json j = nlohmann::json::parse(rules::example_base());
    j.merge_patch(nlohmann::json::parse(text));
    const auto c = rules::parse_and_check(j.dump(), d);
    REQUIRE(c.ok);
    CHECK(c.parsed.spec->gemm->scale->partials == chosen.second);
  }
  // e4m3 x bf16: no wgmma either (WGMMA-TYPES), both at B's dtype.
  const Diagnostics mixed = diags(R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "bf16"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})");
  REQUIRE(mixed.list().size() == 2);
  CHECK(mixed.list()[0].rule == "SCALE-BLOCK-TYPE");
  CHECK(mixed.list()[0].pointer == "/gemm/b/dtype");
  CHECK(mixed.list()[1].rule == "WGMMA-TYPES");
  const Diagnostics tc = diags(R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"}}})");
  CHECK(tc.list().at(0).help.at(0) == "target sm_90a for block-wise f32 factors (docs/spec.md, \"Block scaling\")");
}

TEST_CASE("grouped GEMM (issue 30): \"groups\" parsed and range-checked, each mistake its rule at its member; the masked and contiguous layouts built, K-grouped SPEC-NOT-BUILT") {
  struct Case {
    std::string patch;
    const char* rule;
    const char* pointer;
  };
  auto groups = [](const std::string& members) {
    return R"({"target": "sm_90a", "gemm": {"groups": )" + members + "}}";
  };
  for (const Case& c : {
           // The parser: an object of a layout, a count of 1 .. 65535 (a grid dimension), an align of 1 .. 1024.
           Case{groups("[128, 256]"), "SPEC-TYPE", "/gemm/groups"},
           Case{groups(R"({"count": 4})"), "SPEC-MISSING-KEY", "/gemm/groups/layout"},
           Case{groups(R"({"layout": "masked"})"), "SPEC-MISSING-KEY", "/gemm/groups/count"},
           Case{groups(R"({"layout": "ragged", "count": 4})"), "SPEC-ENUM", "/gemm/groups/layout"},
           Case{groups(R"({"layout": "masked", "count": 0})"), "SPEC-INT-RANGE", "/gemm/groups/count"},
           Case{groups(R"({"layout": "masked", "count": 65536})"), "SPEC-INT-RANGE", "/gemm/groups/count"},
           Case{groups(R"({"layout": "masked", "count": 4.0})"), "SPEC-TYPE", "/gemm/groups/count"},
           Case{groups(R"({"layout": "contiguous", "count": 4, "align": 0})"), "SPEC-INT-RANGE", "/gemm/groups/align"},
           Case{groups(R"({"layout": "contiguous", "count": 4, "align": 1025})"), "SPEC-INT-RANGE", "/gemm/groups/align"},
           Case{groups(R"({"layout": "masked", "count": 4, "masked_m": [1, 2]})"), "SPEC-UNKNOWN-KEY", "/gemm/groups/masked_m"},
           // A batch of its own is no member: batched GEMM is the masked layout with every group full.
           Case{R"({"target": "sm_90a", "gemm": {"batch": 8}})", "SPEC-NOT-BUILT", "/gemm/batch"},
           // The K-grouped layout parses and is refused at the layout, until its kernel is built.
           Case{groups(R"({"layout": "k_grouped", "count": 8})"), "SPEC-NOT-BUILT", "/gemm/groups/layout"},
       }) {
    CAPTURE(c.patch);
    const Diagnostics d = diags(c.patch);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == c.rule);
    CHECK(d.list()[0].pointer == c.pointer);
    if (std::string(c.rule) == "SPEC-NOT-BUILT") {
      REQUIRE_FALSE(d.list()[0].help.empty());
      CHECK(d.list()[0].help[0].rfind("nearest built: one launch of this kernel per ", 0) == 0);
    }
  }
  // The masked and contiguous layouts are built, data-parallel and persistent (cooperative or
  // ping-pong consumers), on both engines, with a bias per group, activations and alpha: a count
  // from 1 to 65535.
  for (const char* patch : {R"({"target": "sm_90a", "gemm": {"groups": {"layout": "masked", "count": 1}}})",
                            R"({"target": "sm_90a", "gemm": {"groups": {"layout": "contiguous", "count": 8}}})",
                            R"({"gemm": {"groups": {"layout": "contiguous", "count": 65535, "align": 256}}})",
                            R"({"target": "sm_90a", "gemm": {"groups": {"layout": "masked", "count": 65535}}})",
                            R"({"gemm": {"groups": {"layout": "masked", "count": 8}}})",
                            R"({"target": "sm_90a", "gemm": {"groups": {"layout": "masked", "count": 8}, "epilogue": "direct"}})",
                            R"({"target": "sm_90a", "gemm": {"groups": {"layout": "masked", "count": 8}, "schedule": "persistent"}})",
                            R"({"target": "sm_90a", "gemm": {"groups": {"layout": "contiguous", "count": 8}, "schedule": "persistent"}})",
                            R"({"target": "sm_90a", "gemm": {"groups": {"layout": "masked", "count": 8}, "schedule": "persistent", "consumers": "pingpong", "tile": {"m": 128, "n": 128, "k": 64}}})",
                            R"({"gemm": {"groups": {"layout": "contiguous", "count": 8}, "schedule": "persistent"}})",
                            R"({"target": "sm_90a", "gemm": {"groups": {"layout": "masked", "count": 8}, "bias": {"dtype": "f32", "along": "m"}, "activation": "gelu"}})",
                            R"({"gemm": {"groups": {"layout": "contiguous", "count": 8}, "bias": {"dtype": "bf16"}, "activation": "swiglu"}})",
                            R"({"gemm": {"groups": {"layout": "contiguous", "count": 8}, "bias": {"dtype": "f32", "along": "m"}, "activation": "silu", "alpha": 0.5}})"}) {
    CAPTURE(patch);
    CHECK(diags(patch).list().empty());
  }
  // What the masked and contiguous kernels do not build, refused at the member that asks for it
  // (SPEC-NOT-BUILT), and a group's plane a tensor map cannot stride (GROUPS-PLANE: A, B and D masked,
  // B contiguous).
  auto masked = [](const std::string& more, const char* target = "sm_90a") {
    return std::string(R"({"target": ")") + target + R"(", "gemm": {"groups": {"layout": "masked", "count": 4})" + more + "}}";
  };
  for (const Case& c : {
           Case{masked(R"(, "schedule": "persistent", "cluster": [2, 1, 1])"), "SPEC-NOT-BUILT", "/gemm/cluster"},
           Case{masked(R"(, "cluster": [1, 2, 1])"), "SPEC-NOT-BUILT", "/gemm/cluster"},
           Case{masked(R"(, "cta_group": 2, "tile": {"m": 256, "n": 256, "k": 64})", "sm_100a"), "SPEC-NOT-BUILT", "/gemm/cta_group"},
           Case{masked(R"(, "a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"n": 128, "k": 128}, "scale": {"dtype": "f32"})"),
                "SPEC-NOT-BUILT", "/gemm/scale"},
           Case{masked(R"(, "sparse": true)", "sm_100a"), "SPEC-NOT-BUILT", "/gemm/sparse"},
           Case{masked(R"(, "c": {"dtype": "bf16"})"), "SPEC-NOT-BUILT", "/gemm/c"},
           Case{masked(R"(, "residual": {"dtype": "bf16"})"), "SPEC-NOT-BUILT", "/gemm/residual"},
           Case{masked(R"(, "d": {"dtype": "e4m3"}, "quantize": "mxfp8")"), "SPEC-NOT-BUILT", "/gemm/quantize"},
           Case{masked(R"(, "amax": true)"), "SPEC-NOT-BUILT", "/gemm/amax"},
           Case{masked(R"(, "a": {"dtype": "e2m1"}, "b": {"dtype": "e2m1"}, "d": {"dtype": "e2m1"}, "scale": {"dtype": "ue8m0"})", "sm_100a"),
                "SPEC-NOT-BUILT", "/gemm/d/dtype"},
           Case{masked(R"(, "m": 1024, "k": 1073741824)"), "GROUPS-PLANE", "/gemm/groups"},
           Case{masked(R"(, "m": 64, "n": 1073741824, "k": 1024)"), "GROUPS-PLANE", "/gemm/groups"},
           Case{R"({"target": "sm_90a", "gemm": {"groups": {"layout": "contiguous", "count": 4}, "n": 1073741824, "k": 1024}})",
                "GROUPS-PLANE", "/gemm/groups"},
       }) {
    CAPTURE(c.patch);
    const Diagnostics d = diags(c.patch);
    const auto it = std::find_if(d.list().begin(), d.list().end(), [&](const auto& x) { return x.rule == c.rule && x.pointer == c.pointer; });
    const std::string first = d.list().empty() ? std::string("no diagnostic") : d.list()[0].rule + " at " + d.list()[0].pointer;
    CHECK_MESSAGE(it != d.list().end(), first);
  }
  // The contiguous layout's A and D are one GEMM's rows: no group stride to refuse.
  CHECK(diags(R"({"target": "sm_90a", "gemm": {"groups": {"layout": "contiguous", "count": 4}, "m": 8388480, "n": 256, "k": 131072, "tile": {"m": 128, "n": 256, "k": 64}}})")
            .list()
            .empty());
  CHECK(diags(masked(R"(, "m": 1024, "k": 1073741824)")).list().at(0).message ==
        "a group of A spans 2^40 bytes or more at the spec's sizes: the tensor map addressing every group takes its group stride only "
        "below 2^40 bytes");
  // GROUPS-ALIGN, beside the layout's SPEC-NOT-BUILT: "align" is the contiguous layout's, and a
  // multiple of tile.m (128 here), so that no tile takes rows of two groups.
  {
    const Diagnostics d = diags(groups(R"({"layout": "masked", "count": 4, "align": 128})"));
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "GROUPS-ALIGN");
    CHECK(d.list()[0].pointer == "/gemm/groups/align");
  }
  for (const Case& c : {
           Case{groups(R"({"layout": "k_grouped", "count": 4, "align": 128})"), "GROUPS-ALIGN", "/gemm/groups/align"},
           Case{groups(R"({"layout": "contiguous", "count": 4, "align": 64})"), "GROUPS-ALIGN", "/gemm/groups/align"},
           Case{groups(R"({"layout": "contiguous", "count": 4, "align": 192})"), "GROUPS-ALIGN", "/gemm/groups/align"},
       }) {
    CAPTURE(c.patch);
    const Diagnostics d = diags(c.patch);
    const bool k_grouped = c.patch.find("k_grouped") != std::string::npos;  // its layout refused besides
    REQUIRE(d.list().size() == (k_grouped ? 2u : 1u));
    CHECK(d.list()[0].rule == c.rule);
    CHECK(d.list()[0].pointer == c.pointer);
    if (k_grouped) {
      CHECK(d.list()[1].rule == "SPEC-NOT-BUILT");
      CHECK(d.list()[1].pointer == "/gemm/groups/layout");
    }
  }
  // Its second help names a tile.m that divides align, and the spec then passes.
  CHECK(diags(groups(R"({"layout": "contiguous", "count": 4, "align": 192})")).list().at(0).help.at(1) ==
        "or \"tile\": {\"m\": 64, ...}, which divides 192");
  CHECK(diags(R"({"target": "sm_90a", "gemm": {"groups": {"layout": "contiguous", "count": 4, "align": 192}, "tile": {"m": 64, "n": 128, "k": 64}}})")
            .list()
            .empty());
  CHECK(diags(groups(R"({"layout": "contiguous", "count": 4, "align": 96})")).list().at(0).help.size() == 1);  // no tile.m divides 96
  CHECK(diags(groups(R"({"layout": "contiguous", "count": 4, "align": 192})")).list().at(0).help.at(0) ==
        "use \"align\": 256 (the next multiple of tile.m; DeepGEMM's 128 for tile.m 64 or 128)");
  CHECK(diags(groups(R"({"layout": "contiguous", "count": 4, "align": 64})")).list().at(0).message ==
        "segments aligned to 64 rows are not whole tiles of tile.m = 128: a tile would take rows of two groups, each of "
        "which multiplies its own B");
  // The spec round-trips: the layout, the count, and align where written.
  for (const char* members : {R"({"layout": "masked", "count": 3})", R"({"layout": "contiguous", "count": 5, "align": 256})",
                              R"({"layout": "k_grouped", "count": 2})"}) {
    CAPTURE(members);
    nlohmann::json j = nlohmann::json::parse(rules::example_base());
    j.merge_patch(nlohmann::json::parse(groups(members)));
    Diagnostics d1;
    auto r = spec::parse(j.dump(), d1);
    REQUIRE(r.spec);
    CHECK(nlohmann::json::parse(spec::to_json(*r.spec))["gemm"]["groups"] == nlohmann::json::parse(members));
    Diagnostics d2;
    auto again = spec::parse(spec::to_json(*r.spec), d2);
    REQUIRE(again.spec);
    CHECK(spec::to_json(*again.spec) == spec::to_json(*r.spec));
  }
}

TEST_CASE("constant operands of elementwise functions: MATH-DTYPE beyond f32, MATH-OPERANDS without a register set") {
  const auto with = with_program_op;
  // 3.4028235e38 rounds to f32's largest finite value, 3.4028236e38 (past half an ulp beyond it) to infinity.
  CHECK(with({{"op", "fma"}, {"regs", "r"}, {"a", "r"}, {"b", 3.4028235e38}, {"c", -1e-45}}).list().empty());
  CHECK(with({{"op", "fma"}, {"regs", "r"}, {"a", "r"}, {"b", 1}, {"c", 3.4028236e38}}).list().at(0).pointer == "/program/ops/7/c");
  {
    Diagnostics d = with({{"op", "mul"}, {"regs", "r"}, {"a", "r"}, {"b", -3.41e38}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-DTYPE");
    CHECK(d.list()[0].pointer == "/program/ops/7/b");
    CHECK(d.list()[0].message == "\"mul\" computes in f32; the constant -3.41e+38 is beyond f32's largest finite value (3.4028235e38)");
  }
  {
    Diagnostics d = with({{"op", "add"}, {"regs", "r"}, {"a", 1}, {"b", 2}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-OPERANDS");
    CHECK(d.list()[0].pointer == "/program/ops/7/a");
  }
}

// Packed half-precision arithmetic (docs/spec.md, "Packed half-precision arithmetic"): a convert
// of .32x32b f32 registers to bf16x2 / f16x2 pairs, the functions of §9.7.4 on them; the rest
// refused at the field to change.
TEST_CASE("packed pairs: convert and the packed functions; MATH-PACKED, MATH-PACKED-FN, MATH-DTYPE, MATH-APPROX at their fields") {
  auto with = [](std::vector<nlohmann::json> ops) {  // inserted after tmem_load r (ops/6), from ops/7 on
    nlohmann::json j = nlohmann::json::parse(rules::example_program_base());
    for (auto& o : ops) j["program"]["ops"].insert(j["program"]["ops"].end() - 1, o);
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    return d;
  };
  auto one = [](const Diagnostics& d, const std::string& rule, const std::string& pointer) {
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == rule);
    CHECK(d.list()[0].pointer == pointer);
    return d.list()[0];
  };
  using J = nlohmann::json;
  const J h = {{"op", "convert"}, {"regs", "h"}, {"a", "r"}, {"dtype", "bf16x2"}};
  const J f = {{"op", "convert"}, {"regs", "f"}, {"a", "r"}, {"dtype", "f16x2"}};
  CHECK(with({h, f, {{"op", "fma"}, {"regs", "y"}, {"a", "h"}, {"b", 1.5}, {"c", -0.75}}, {{"op", "max"}, {"regs", "y"}, {"a", "y"}, {"b", 0}},
              {{"op", "exp2"}, {"regs", "y"}, {"a", "y"}, {"approx", true}}, {{"op", "tanh"}, {"regs", "g"}, {"a", "f"}, {"approx", true}},
              {{"op", "sub"}, {"regs", "g"}, {"a", "g"}, {"b", "f"}}, {{"op", "neg"}, {"regs", "g"}, {"a", "g"}}})
            .list()
            .empty());
  // One type per instruction: bf16 pairs with f16 pairs, or with the f32 set they came from.
  CHECK(one(with({h, f, {{"op", "add"}, {"regs", "y"}, {"a", "h"}, {"b", "f"}}}), "MATH-PACKED", "/program/ops/9/b").message ==
        "\"add\" computes in one type: \"h\" holds packed bf16x2 pairs, \"f\" packed f16x2 pairs");
  one(with({h, {{"op", "mul"}, {"regs", "y"}, {"a", "r"}, {"b", "h"}}}), "MATH-PACKED", "/program/ops/8/b");
  // Functions PTX has in f32 only: the help names the f32 instruction to use before the convert.
  const Diagnostic rcp = one(with({h, {{"op", "rcp"}, {"regs", "y"}, {"a", "h"}, {"approx", true}}}), "MATH-PACKED-FN", "/program/ops/8/op");
  CHECK(rcp.help.at(0) == "compute \"rcp\" on the f32 set before its \"convert\" (rcp.rn.f32 (§9.7.3.13))");
  one(with({h, {{"op", "relu"}, {"regs", "y"}, {"a", "h"}}}), "MATH-PACKED-FN", "/program/ops/8/op");
  one(with({h, {{"op", "gt"}, {"regs", "y"}, {"a", "h"}, {"b", 0}}}), "MATH-PACKED-FN", "/program/ops/8/op");
  // Approximate only, as in f32; a constant beyond f16's range (65504: 65520 rounds to infinity).
  CHECK(one(with({h, {{"op", "exp2"}, {"regs", "y"}, {"a", "h"}}}), "MATH-APPROX", "/program/ops/8/op").message ==
        "\"exp2\" is ex2.approx.ftz.bf16x2 (§9.7.4.10), an approximate instruction (relative error 2^-7); the PTX ISA has no exact "
        "packed form of it");
  CHECK(with({f, {{"op", "mul"}, {"regs", "y"}, {"a", "f"}, {"b", 65519}}}).list().empty());
  one(with({f, {{"op", "mul"}, {"regs", "y"}, {"a", "f"}, {"b", 65520}}}), "MATH-DTYPE", "/program/ops/8/b");
  // convert takes f32 registers whose neighbours are a row's neighbouring columns (.32x32b, even .num).
  one(with({h, {{"op", "convert"}, {"regs", "y"}, {"a", "h"}, {"dtype", "f16x2"}}}), "MATH-DTYPE", "/program/ops/8/a");
  one(with({{{"op", "tmem_load"}, {"src", "acc"}, {"regs", "s"}, {"shape", "16x256b"}}, {{"op", "convert"}, {"regs", "y"}, {"a", "s"}, {"dtype", "bf16x2"}}}),
      "MATH-PACKED", "/program/ops/8/a");
  one(with({{{"op", "tmem_load"}, {"src", "acc"}, {"regs", "s"}, {"num", 1}}, {{"op", "convert"}, {"regs", "y"}, {"a", "s"}, {"dtype", "bf16x2"}}}),
      "MATH-PACKED", "/program/ops/8/a");
}

TEST_CASE("fill: the registers of an f32 view's tcgen05.ld, each a finite f32 (MATH-DTYPE, LD-WARPS); exact sizes (PROGRAM-SIZE)") {
  const auto with = with_program_op;
  // r's elements: a fill like the view r was loaded from is an operand of the same elements.
  CHECK(with({{"op", "fill"}, {"regs", "z"}, {"like", "acc"}, {"value", -3.4028234663852886e38}}).list().empty());
  {
    nlohmann::json j = nlohmann::json::parse(rules::example_program_base());
    auto& ops = j["program"]["ops"];
    ops.insert(ops.end() - 1, nlohmann::json{{"op", "fill"}, {"regs", "z"}, {"like", "acc"}, {"value", 2}});
    ops.insert(ops.end() - 1, nlohmann::json{{"op", "mul"}, {"regs", "r"}, {"a", "r"}, {"b", "z"}});
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    CHECK(d.list().empty());
  }
  auto one = [](const Diagnostics& d, const std::string& rule, const std::string& pointer) {
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == rule);
    CHECK(d.list()[0].pointer == pointer);
    return d.list()[0].message;
  };
  CHECK(one(with({{"op", "fill"}, {"regs", "z"}, {"like", "acc"}, {"value", 1e39}}), "MATH-DTYPE", "/program/ops/7/value") ==
        "fill writes f32 registers; the constant 1e+39 is beyond f32's largest finite value (3.4028235e38)");
  CHECK(one(with({{"op", "fill"}, {"regs", "z"}, {"like", "a_t"}, {"value", 0}}), "MATH-DTYPE", "/program/ops/7/like") ==
        "fill gives the registers of an f32 view, one element each; \"a_t\" holds bf16 elements packed 2 per column");
  one(with({{"op", "fill"}, {"regs", "z"}, {"like", "acc"}, {"value", 0}, {"warps", {9}}}), "LD-WARPS", "/program/ops/7/warps/0");
  one(with({{"op", "fill"}, {"regs", "z"}, {"like", "acc"}}), "SPEC-MISSING-KEY", "/program/ops/7/value");
  // An exact derived size: the spec's value of the size it divides must be a multiple.
  nlohmann::json a = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/prog_attention_fwd_bf16.json"));
  {
    Diagnostics d;
    rules::parse_and_check(a.dump(), d);
    CHECK(d.list().empty());
  }
  a["program"]["sizes"]["l"] = 500;
  Diagnostics d;
  rules::parse_and_check(a.dump(), d);
  CHECK(one(d, "PROGRAM-SIZE", "/program/sizes/l") == "\"l\" = 500 is not a multiple of 128, which the exact derived size \"l_blocks\" asks of it");
}

TEST_CASE("comparisons and select: built, exact (MATH-APPROX), select's condition a register set (MATH-OPERANDS)") {
  const auto with = with_program_op;
  for (const char* fn : {"lt", "le", "gt", "ge", "eq", "ne"}) {
    CAPTURE(fn);
    CHECK(with({{"op", fn}, {"regs", "r"}, {"a", "r"}, {"b", 0.5}}).list().empty());
    CHECK(with({{"op", fn}, {"regs", "r"}, {"a", -2}, {"b", "r"}}).list().empty());
    const Diagnostics d = with({{"op", fn}, {"regs", "r"}, {"a", "r"}, {"b", "r"}, {"approx", true}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-APPROX");
    CHECK(d.list()[0].pointer == "/program/ops/7/approx");
    CHECK(d.list()[0].message == "\"" + std::string(fn) + "\" has no approximate instruction: set." + fn + ".f32.f32 (§9.7.6.1) is exact (no rounding)");
  }
  CHECK(with({{"op", "select"}, {"regs", "r"}, {"a", "r"}, {"b", 1.5}, {"c", "r"}}).list().empty());
  CHECK(with({{"op", "select"}, {"regs", "r"}, {"a", "r"}, {"b", 1.5}, {"c", -1}}).list().empty());
  {
    const Diagnostics d = with({{"op", "select"}, {"regs", "r"}, {"a", 0}, {"b", "r"}, {"c", 2}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-OPERANDS");
    CHECK(d.list()[0].pointer == "/program/ops/7/a");
    CHECK(d.list()[0].message == "\"select\" picks b where its condition a is nonzero and c elsewhere; a = 0 is a constant, so every element would be c");
    CHECK(d.list()[0].help.at(1) == "or use c itself");
  }
}

TEST_CASE("activations: MATH-APPROX once per op, at its \"op\" or \"approx\", naming the activation and its instructions") {
  const auto with = with_program_op;
  {
    Diagnostics d = with({{"op", "sigmoid"}, {"regs", "r"}, {"a", "r"}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-APPROX");
    CHECK(d.list()[0].pointer == "/program/ops/7/op");
    CHECK(d.list()[0].message ==
          "\"sigmoid\" (1 / (1 + exp(-x))) is computed with approximate instructions: ex2.approx.f32 (§9.7.3.21: 2 ulp from "
          "the correctly rounded result) and rcp.approx.f32 (§9.7.3.13: 1 ulp)");
  }
  {
    Diagnostics d = with({{"op", "gelu_tanh"}, {"regs", "y"}, {"a", "r"}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-APPROX");
    CHECK(d.list()[0].pointer == "/program/ops/7/op");
    CHECK(d.list()[0].message ==
          "\"gelu_tanh\" (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))) is computed with approximate instructions: "
          "tanh.approx.f32 (§9.7.3.22: relative error 2^-11)");
  }
  {  // gelu's erf form: its erf's rcp.approx and ex2.approx (docs/spec.md, "Activations")
    Diagnostics d = with({{"op", "gelu"}, {"regs", "y"}, {"a", "r"}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-APPROX");
    CHECK(d.list()[0].pointer == "/program/ops/7/op");
    CHECK(d.list()[0].message ==
          "\"gelu\" (0.5 x (1 + erf(x / sqrt(2)))) is computed with approximate instructions: rcp.approx.f32 (§9.7.3.13: 1 ulp) "
          "and ex2.approx.f32 (§9.7.3.21: 2 ulp from the correctly rounded result)");
  }
  {
    Diagnostics d = with({{"op", "relu"}, {"regs", "r"}, {"a", "r"}, {"approx", true}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-APPROX");
    CHECK(d.list()[0].pointer == "/program/ops/7/approx");
    CHECK(d.list()[0].message == "\"relu\" (max(x, 0)) has no approximate instruction: it is max.f32 (§9.7.3.12), exact");
    CHECK(d.list()[0].help == std::vector<std::string>{"drop \"approx\""});
  }
  // Accepted: each activation, in place too (its temporaries are none of the spec's names).
  for (const auto& a : activations()) {
    CAPTURE(a.name);
    nlohmann::json op = {{"op", std::string(a.name)}, {"regs", "r"}, {"a", "r"}};
    if (a.approx) op["approx"] = true;
    CHECK(with(op).list().empty());
  }
  // A constant operand: MATH-OPERANDS once, at "a", under the activation's name.
  {
    Diagnostics d = with({{"op", "silu"}, {"regs", "r"}, {"a", 2}, {"approx", true}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "MATH-OPERANDS");
    CHECK(d.list()[0].pointer == "/program/ops/7/a");
    CHECK(d.list()[0].message.rfind("every operand of \"silu\" is a constant", 0) == 0);
  }
  // Registers used before any op defines them: ORDER-UNWRITTEN once, though four steps read them.
  {
    Diagnostics d = with({{"op", "gelu_tanh"}, {"regs", "y"}, {"a", "q"}, {"approx", true}});
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "ORDER-UNWRITTEN");
    CHECK(d.list()[0].pointer == "/program/ops/7/a");
    CHECK(d.list()[0].message.rfind("gelu_tanh uses the registers \"q\"", 0) == 0);
  }
  // What the temporaries are named cannot be a spec's name.
  {
    Diagnostics d = with({{"op", "neg"}, {"regs", ir::activation_temporary("r", Activation::silu, 0)}, {"a", "r"}});
    CHECK(std::any_of(d.list().begin(), d.list().end(),
                      [](const Diagnostic& x) { return x.rule == "PROGRAM-NAME" && x.pointer == "/program/ops/7/regs"; }));
  }
}

TEST_CASE("amax, quantize, gated activations, 8- and 4-bit stores at the program level: each mistake its rule at its pointer") {
  // The example program with its globals patched and its last op (the store of r) replaced by `ops`.
  auto with = [](const nlohmann::json& globals, const nlohmann::json& ops) {
    nlohmann::json j = nlohmann::json::parse(rules::example_program_base());
    if (globals.is_object()) j["program"]["globals"].merge_patch(globals);
    j["program"]["ops"].erase(j["program"]["ops"].end() - 1);
    for (const auto& o : ops) j["program"]["ops"].push_back(o);
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    return d;
  };
  auto one = [](const Diagnostics& d, const std::string& rule, const std::string& pointer) {
    for (const auto& x : d.list()) MESSAGE(x.rule << " at " << x.pointer << ": " << x.message);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == rule);
    CHECK(d.list()[0].pointer == pointer);
    return d.list()[0].message;
  };
  const nlohmann::json store_r = {{"op", "store"}, {"regs", "r"}, {"dst", "D"}};
  // Gated activations: accepted in place; MATH-APPROX without "approx"; up never written.
  CHECK(with({}, {{{"op", "swiglu"}, {"regs", "r"}, {"a", "r"}, {"b", "r"}, {"approx", true}}, store_r}).list().empty());
  CHECK(one(with({}, {{{"op", "geglu"}, {"regs", "y"}, {"a", "r"}, {"b", "r"}}}), "MATH-APPROX", "/program/ops/7/op")
            .rfind("\"geglu\" (gelu_tanh(gate) * up, gelu_tanh = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))) is computed with "
                   "approximate instructions: tanh.approx.f32",
                   0) == 0);
  CHECK(one(with({}, {{{"op", "swiglu"}, {"regs", "y"}, {"a", "r"}, {"b", "q"}, {"approx", true}}}), "ORDER-UNWRITTEN", "/program/ops/7/b")
            .rfind("swiglu uses the registers \"q\"", 0) == 0);
  // amax: of a .16x128b set, READ-SHAPE at its "a"; into a bf16 scalar, AMAX-DST at its "dst".
  {
    nlohmann::json j = nlohmann::json::parse(rules::example_program_base());
    auto& ops = j["program"]["ops"];
    ops[6]["shape"] = "16x128b";
    const nlohmann::json amax = {{"op", "amax"}, {"a", "r"}, {"dst", "amax"}, {"of", "D"}};
    ops.insert(ops.end() - 1, amax);
    j["program"]["globals"]["amax"] = {{"dtype", "f32"}, {"shape", {1, 1}}};
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    one(d, "READ-SHAPE", "/program/ops/7/a");
  }
  const nlohmann::json amax_op = {{"op", "amax"}, {"a", "r"}, {"dst", "amax"}, {"of", "D"}};
  const std::string msg = one(with({{"amax", {{"dtype", "bf16"}, {"shape", {1, 1}}}}}, nlohmann::json::array({amax_op})),
                              "AMAX-DST", "/program/ops/7/dst");
  CHECK(msg == "amax raises one f32 (red.global.max.u32 of its bits, §9.7.13.6); \"amax\" is 1 x 1 bf16");
  // quantize: columns not whole blocks (QUANT-OF at the tensor's shape), a block off its column
  // (QUANT-TILE at "a"), nvfp4 into e4m3 (QUANT-OF at "of"), too few factor lines (QUANT-FACTORS).
  auto quantize = [](const char* format, const nlohmann::json& at) {
    return nlohmann::json{{"op", "quantize"}, {"regs", "q"}, {"a", "r"}, {"format", format}, {"dst", "SF"}, {"of", "D"}, {"at", at}};
  };
  auto store_q = [](const nlohmann::json& at) { return nlohmann::json{{"op", "store"}, {"regs", "q"}, {"dst", "D"}, {"at", at}}; };
  const nlohmann::json sf64 = {{"dtype", "ue8m0"}, {"shape", {64, 16}}};
  CHECK(one(with({{"D", {{"dtype", "e4m3"}, {"shape", {128, 144}}}}, {"SF", sf64}}, {quantize("mxfp8", {0, 0}), store_q({0, 0})}), "QUANT-OF",
            "/program/globals/D/shape")
            .find("144 columns, not a multiple of 32") != std::string::npos);
  one(with({{"D", {{"dtype", "e4m3"}, {"shape", {128, 160}}}}, {"SF", sf64}}, {quantize("mxfp8", {0, 16}), store_q({0, 16})}), "QUANT-TILE",
      "/program/ops/7/a");
  CHECK(with({{"D", {{"dtype", "e4m3"}, {"shape", {128, 160}}}}, {"SF", sf64}}, {quantize("mxfp8", {0, 32}), store_q({0, 32})}).list().empty());
  one(with({{"D", {{"dtype", "e4m3"}, {"shape", {128, 128}}}}, {"SF", {{"dtype", "ue4m3"}, {"shape", {64, 16}}}}}, {quantize("nvfp4", {0, 0}), store_q({0, 0})}),
      "QUANT-OF", "/program/ops/7/of");
  CHECK(one(with({{"D", {{"dtype", "e2m1"}, {"format", "packed"}, {"shape", {256, 128}}}}, {"SF", {{"dtype", "ue4m3"}, {"shape", {32, 16}}}}},
                 {quantize("nvfp4", {0, 0}), store_q({0, 0})}),
            "QUANT-FACTORS", "/program/ops/7/dst")
            .find("128 lines of 16 bytes") != std::string::npos);
  // Stores: e4m3 of fixed extents keeps STORE-BOUNDS; padded e2m1 has no store (STORE-DTYPE);
  // packed e2m1 at an odd column (STORE-DTYPE at "at").
  one(with({{"D", {{"dtype", "e4m3"}, {"shape", {128, 64}}}}}, nlohmann::json::array({store_r})), "STORE-BOUNDS", "/program/ops/7/at");
  one(with({{"D", {{"dtype", "e2m1"}, {"shape", {128, 128}}}}}, nlohmann::json::array({store_r})), "STORE-DTYPE", "/program/ops/7/dst");
  one(with({{"D", {{"dtype", "e2m1"}, {"format", "packed"}, {"shape", {128, 130}}}}}, nlohmann::json::array({nlohmann::json{{"op", "store"}, {"regs", "r"}, {"dst", "D"}, {"at", {0, 1}}}})),
      "STORE-DTYPE", "/program/ops/7/at");
  CHECK(with({{"D", {{"dtype", "e5m2"}, {"shape", {128, 128}}}}}, nlohmann::json::array({store_r})).list().empty());
}

TEST_CASE("independent errors in one run: a memory budget beside an op's error (issue 32, defect 8)") {
  // Two 512-column allocations (TMEM-ALLOC-TOTAL) and a tmem_load of a view nothing wrote
  // (ORDER-UNWRITTEN): before, the budget was judged only once the ops passed.
  nlohmann::json j = nlohmann::json::parse(rules::example_program_base());
  auto& p = j["program"];
  p["tmem"]["t"]["columns"] = 512;
  p["tmem"]["u"] = {{"columns", 512}};
  p["tmem"]["h"] = {{"slice", {{"of", "u"}, {"columns", {0, 128}}}}};
  const nlohmann::json load = {{"op", "tmem_load"}, {"src", "h"}, {"regs", "q"}}, store = {{"op", "store"}, {"regs", "q"}, {"dst", "D"}};
  p["ops"].insert(p["ops"].begin() + 7, load);
  p["ops"].push_back(store);
  Diagnostics d;
  rules::parse_and_check(j.dump(), d);
  std::string rules;
  for (const auto& x : d.list()) rules += x.rule + " " + x.pointer + "; ";
  CHECK(rules == "ORDER-UNWRITTEN /program/ops/7/src; TMEM-ALLOC-TOTAL /program/tmem; ");
  // A budget still waits for the buffers themselves: an allocation that is refused is not counted.
  p["tmem"]["u"]["columns"] = 500;
  Diagnostics d2;
  rules::parse_and_check(j.dump(), d2);
  for (const auto& x : d2.list()) CHECK(x.rule != "TMEM-ALLOC-TOTAL");
}

TEST_CASE("messages carry the offending values") {
  {
    Diagnostics d = diags(R"({"gemm": {"tile": {"m": 96}}})");
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].message == "tile.m=96 is not a multiple of a legal instruction M (64 or 128 at cta_group::1)");
  }
  {
    Diagnostics d = diags(R"({"gemm": {"accumulator": "f16"}})");
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].message == "accumulator f16 is not available for bf16 inputs (.kind::f16)");
    CHECK(d.list()[0].help.at(0) == "use \"accumulator\": \"f32\"");
  }
  {
    Diagnostics d = diags(R"({"gemm": {"stages": 8}})");
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "SMEM-BUDGET");
    CHECK(d.list()[0].help.at(0) == "use \"stages\": 4 or fewer");
  }
  {
    Diagnostics none = diags(R"({"gemm": {"k": 1001}})");
    CHECK(none.list().empty());  // rows are padded to 16 bytes unless ld is given
    Diagnostics d = diags(R"({"gemm": {"k": 1001, "a": {"ld": 1001}, "b": {"ld": 1000}}})");
    REQUIRE(d.list().size() == 2);
    CHECK(d.list()[0].pointer == "/gemm/a/ld");
    CHECK(d.list()[0].message ==
          "A's rows are 1001 bf16 elements = 2002 bytes apart; a TMA tensor's row stride must be a multiple of 16 bytes");
    CHECK(d.list()[0].help.at(0) == "pad the rows: ld=1008 (or leave ld out, which pads to 16 bytes)");
    CHECK(d.list()[1].message == "B.ld=1000 is shorter than a row: k=1001");
  }
  {  // block scaling: NVFP4 factors (ue4m3) with the MXFP4 block size
    Diagnostics d = diags(R"({"gemm": {"a": {"dtype": "e2m1"}, "b": {"dtype": "e2m1"}, "tile": {"k": 256},
                              "scale": {"dtype": "ue4m3", "vec": 32}}})");
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "SCALE-TYPE");
    CHECK(d.list()[0].pointer == "/gemm/scale/vec");
    CHECK(d.list()[0].message ==
          ".kind::mxf4nvf4 has no block size 32 with ue4m3 scale factors (Table 57): it takes ue8m0 scales with vec 32 "
          "(.scale_vec::2X / .block32), ue8m0 or ue4m3 scales with vec 16 (.scale_vec::4X / .block16)");
    CHECK(d.list()[0].help.at(0) == "use \"vec\": 16 (what .kind::mxf4nvf4 takes)");
  }
  {
    Diagnostics d = diags(R"({"gemm": {"k": 4100, "a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "tile": {"k": 128},
                              "scale": {"dtype": "ue8m0"}}})");
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].message ==
          "k = 4100 is not a multiple of the scale vector (32 elements of K per scale factor): the last block of every row would be partial");
  }
}

// Sparse A of .kind::f16 and .kind::tf32 (docs/spec.md, "Sparse A"): each constraint the template
// adds is one rule at one pointer, its message carrying the kind's numbers (the tf32 atom holds 64
// elements of K, the 2:4 kinds' 128). Swizzle 64 keeps A's short K extents whole swizzle atoms, so
// that each spec breaks one rule only.
TEST_CASE("sparse A of .kind::f16 and .kind::tf32: each constraint its rule, pointer and numbers") {
  struct Case {
    const char* patch;
    const char* rule;
    const char* pointer;
    const char* message;
  };
  static const Case kCases[] = {
      {R"({"gemm": {"sparse": true, "tile": {"m": 128, "n": 128, "k": 64}, "swizzle": {"a": 64}}})", "SPARSE-TILE", "/gemm/tile/k",
       "tile.k = 64 is not whole metadata atoms: the metadata of .kind::f16 comes in atoms of 128 rows by 128 elements of K (16 "
       "bytes a row: 4 bits per chunk of 4), one tcgen05.cp.128x128b each"},
      {R"({"gemm": {"sparse": true, "a": {"dtype": "tf32"}, "b": {"dtype": "tf32"}, "d": {"dtype": "f32"}, "tile": {"m": 128, "n": 128, "k": 32}, "swizzle": {"a": 64, "b": 64}}})",
       "SPARSE-TILE", "/gemm/tile/k",
       "tile.k = 32 is not whole metadata atoms: the metadata of .kind::tf32 comes in atoms of 128 rows by 64 elements of K (16 "
       "bytes a row: 4 bits per chunk of 2), one tcgen05.cp.128x128b each"},
      {R"({"gemm": {"sparse": true, "k": 4032, "a": {"dtype": "tf32"}, "b": {"dtype": "tf32"}, "d": {"dtype": "f32"}, "tile": {"m": 128, "n": 128, "k": 128}, "stages": 2}})",
       "SPARSE-K", "/gemm/k",
       "k = 4032 is not a multiple of tile.k = 128: the MMAs read every K block's metadata whole, and the zero fill TMA gives past k "
       "is no valid metadata (each 4-bit index is 0b0100 or 0b1110, §9.7.16.10.8.1)"},
      {R"({"gemm": {"sparse": true, "k": 4032, "tile": {"m": 128, "n": 128, "k": 128}, "stages": 2}})", "SPARSE-K", "/gemm/k",
       "k = 4032 is not a multiple of tile.k = 128: the MMAs read every K block's metadata whole, and the zero fill TMA gives past k "
       "is no valid metadata (each 4-bit index pair is one of seven values, §9.7.16.10.8.2)"},
      {R"({"gemm": {"sparse": true, "a": {"dtype": "tf32", "major": "m"}, "b": {"dtype": "tf32"}, "d": {"dtype": "f32"}, "tile": {"m": 128, "n": 128, "k": 64}, "swizzle": {"a": "128_base32b"}}})",
       "SPARSE-TILE", "/gemm/a/major",
       "sparse A is stored K-major: each row keeps one of every two of its elements along K, and its metadata follows the rows "
       "(§9.7.16.10.8)"},
      {R"({"gemm": {"sparse": true, "a_source": "tmem", "tile": {"m": 128, "n": 128, "k": 128}}})", "SPARSE-TILE", "/gemm/a_source",
       "sparse A is read from shared memory; ptxgen does not copy it into tensor memory"},
  };
  for (const Case& c : kCases) {
    CAPTURE(c.patch);
    const Diagnostics d = diags(c.patch);
    std::string got;
    for (const auto& x : d.list()) got += x.rule + " at " + x.pointer + ": " + x.message + "\n";
    REQUIRE_MESSAGE(d.list().size() == 1, got);
    CHECK(d.list()[0].rule == c.rule);
    CHECK(d.list()[0].pointer == c.pointer);
    CHECK(d.list()[0].message == c.message);
  }
  // Their fixes pass: bf16 and tf32 at whole atoms, M = 64 on one CTA (layout F) and a pair's M = 128 (layout C), k a
  // multiple of tile.k, A K-major from shared memory.
  for (const char* ok : {R"({"gemm": {"sparse": true, "tile": {"m": 128, "n": 128, "k": 128}}})",
                         R"({"gemm": {"sparse": true, "tile": {"m": 64, "n": 128, "k": 128}}})",
                         R"({"gemm": {"sparse": true, "cta_group": 2, "tile": {"m": 128, "n": 128, "k": 128}}})",
                         R"({"gemm": {"sparse": true, "a": {"dtype": "tf32"}, "b": {"dtype": "tf32"}, "d": {"dtype": "f32"}, "tile": {"m": 128, "n": 128, "k": 64}}})",
                         R"({"gemm": {"sparse": true, "k": 4032, "a": {"dtype": "tf32"}, "b": {"dtype": "tf32"}, "d": {"dtype": "f32"}, "tile": {"m": 256, "n": 64, "k": 64}, "cta_group": 2}})"}) {
    CAPTURE(ok);
    const Diagnostics d = diags(ok);
    std::string got;
    for (const auto& x : d.list()) got += x.rule + " at " + x.pointer + ": " + x.message + "\n";
    CHECK_MESSAGE(d.list().empty(), got);
  }
}
}

TEST_SUITE("rules") {
// An 8-bit D takes the TMA epilogue on both engines (boxes of 128 one-byte columns, EPILOGUE-TMA
// counting them); a 4-bit D (e2m1) is refused it (D-FP8), with the message and help that say why.
TEST_CASE("8- and 4-bit D with the TMA epilogue: D-FP8 refuses e2m1 only, EPILOGUE-TMA boxes 128 one-byte columns") {
  struct Case {
    const char* patch;
    const char* rule;
    const char* pointer;
    const char* message;
    std::vector<std::string> help;
  };
  const Case kCases[] = {
      {R"({"gemm": {"d": {"dtype": "e2m1"}, "quantize": "mxfp4", "epilogue": "tma"}})", "D-FP8", "/gemm/epilogue",
       "D in e2m1 (4 bits, two elements a byte) is stored directly from the registers: the TMA epilogue stages 8-, 16- and 32-bit D only",
       {"use \"epilogue\": \"direct\" (or leave it out)", "or an 8-bit D (\"quantize\": \"mxfp8\", e4m3 or e5m2) with \"epilogue\": \"tma\""}},
      {R"({"gemm": {"d": {"dtype": "e2m1", "scale": true}, "quantize": "nvfp4", "schedule": "persistent", "epilogue": "tma"}})", "D-FP8",
       "/gemm/epilogue",
       "D in e2m1 (4 bits, two elements a byte) is stored directly from the registers: the TMA epilogue stages 8-, 16- and 32-bit D only",
       {"use \"epilogue\": \"direct\" (or leave it out)", "or an 8-bit D (\"quantize\": \"mxfp8\", e4m3 or e5m2) with \"epilogue\": \"tma\""}},
      {R"({"gemm": {"d": {"dtype": "e4m3"}, "epilogue": "tma", "tile": {"n": 192}}})", "EPILOGUE-TMA", "/gemm/tile/n",
       "tile.n = 192: the TMA epilogue stores D in boxes of 128 e4m3 columns (128 bytes, the swizzle's row), so a tile is whole boxes "
       "wide; a partial box would write into the next tile's columns",
       {"use a tile.n that is a multiple of 128", "or \"epilogue\": \"direct\""}},
      {R"({"target": "sm_90a", "gemm": {"d": {"dtype": "e5m2"}, "epilogue": "auto", "tile": {"m": 128, "n": 64, "k": 64}}})", "EPILOGUE-TMA",
       "/gemm/tile/n",
       "tile.n = 64: the TMA epilogue stores D in boxes of 128 e5m2 columns (128 bytes, the swizzle's row), so a tile is whole boxes "
       "wide; a partial box would write into the next tile's columns",
       {"use a tile.n that is a multiple of 128", "or \"epilogue\": \"direct\""}},
  };
  for (const Case& c : kCases) {
    CAPTURE(c.patch);
    const Diagnostics d = diags(c.patch);
    std::string got;
    for (const auto& x : d.list()) got += x.rule + " at " + x.pointer + ": " + x.message + "\n";
    REQUIRE_MESSAGE(d.list().size() == 1, got);
    CHECK(d.list()[0].rule == c.rule);
    CHECK(d.list()[0].pointer == c.pointer);
    CHECK(d.list()[0].message == c.message);
    CHECK(d.list()[0].help == c.help);
  }
  // Accepted: an 8-bit D by TMA on each engine, with MXFP8, the amax and D's scale, persistent,
  // a CTA pair, M = 64, ping-pong and a cluster; an e2m1 D stored directly.
  for (const char* ok : {R"({"gemm": {"d": {"dtype": "e4m3"}, "epilogue": "tma"}})",
                         R"({"gemm": {"d": {"dtype": "e5m2", "scale": true}, "amax": true, "quantize": "mxfp8", "schedule": "persistent", "epilogue": "tma"}})",
                         R"({"gemm": {"d": {"dtype": "e4m3"}, "quantize": "mxfp8", "cta_group": 2, "tile": {"m": 256}, "epilogue": "tma"}})",
                         R"({"gemm": {"d": {"dtype": "e4m3"}, "tile": {"m": 64}, "epilogue": "tma"}})",
                         R"({"gemm": {"d": {"dtype": "e2m1"}, "quantize": "mxfp4", "epilogue": "direct"}})",
                         R"({"target": "sm_90a", "gemm": {"d": {"dtype": "e4m3"}, "quantize": "mxfp8", "epilogue": "auto", "tile": {"m": 128, "n": 128, "k": 64}, "schedule": "persistent", "consumers": "pingpong"}})",
                         R"({"target": "sm_90a", "gemm": {"d": {"dtype": "e4m3"}, "epilogue": "tma", "tile": {"m": 128, "n": 128, "k": 64}, "cluster": [1, 2, 1]}})"}) {
    CAPTURE(ok);
    const Diagnostics d = diags(ok);
    std::string got;
    for (const auto& x : d.list()) got += x.rule + " at " + x.pointer + ": " + x.message + "\n";
    CHECK_MESSAGE(!d.has_errors(), got);
  }
  // SMEM-BUDGET counts an 8-bit D's staging tile in bytes: 128 x 256 is 32768 (a bf16 D's whole
  // tile 65536), which leaves a persistent sm_90a kernel room for 4 stages of 49152 (4 x 49152 +
  // 32768 + 1104 = 230480 <= 232448); 5 need 5 x 49152 + 32768 + 1104 = 279632. A bf16 D stages
  // through two subtile buffers of 128 x 64 (2 x 16384 = 32768, ir::d_staging): 4 stages too; with a
  // residual (read element by element) it keeps the whole tile: 4 x 49152 + 65536 > 232448.
  {
    const char* persistent = R"({"target": "sm_90a", "gemm": {"d": {"dtype": "e4m3"}, "schedule": "persistent", "epilogue": "tma", "stages": 5}})";
    const Diagnostics d = diags(persistent);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == "SMEM-BUDGET");
    CHECK(d.list()[0].message ==
          "5 stages of 49152 bytes (a 16384 + b 32768), the TMA epilogue's staging tile of 32768 bytes, plus 1104 bytes of barriers and "
          "alignment need 279632 bytes of shared memory; a CTA on sm_90a gets at most 232448");
    CHECK(d.list()[0].help.at(0) == "use \"stages\": 4 or fewer");
    CHECK(!diags(R"({"target": "sm_90a", "gemm": {"d": {"dtype": "e4m3"}, "schedule": "persistent", "epilogue": "tma", "stages": 4}})").has_errors());
    CHECK(!diags(R"({"target": "sm_90a", "gemm": {"schedule": "persistent", "epilogue": "tma", "stages": 4}})").has_errors());
    CHECK(diags(R"({"target": "sm_90a", "gemm": {"schedule": "persistent", "epilogue": "tma", "stages": 5}})").list().at(0).message ==
          d.list()[0].message);
    CHECK(diags(R"({"target": "sm_90a", "gemm": {"schedule": "persistent", "epilogue": "tma", "stages": 4, "residual": {"dtype": "bf16"}}})")
              .list()
              .at(0)
              .rule == "SMEM-BUDGET");
  }
  // Where ptxgen picks the epilogue (sm_90a, the tile left out), an 8-bit D gets a bf16 D's: auto.
  for (const char* d : {"bf16", "e4m3", "e5m2"}) {
    CAPTURE(d);
    nlohmann::json j = nlohmann::json::parse(rules::example_base());
    j.merge_patch(nlohmann::json::parse(R"({"target": "sm_90a", "gemm": {"tile": null, "stages": null, "swizzle": null}})"));
    j["gemm"]["d"] = {{"dtype", d}};
    const spec::Spec s = support::checked_spec(j.dump());
    CHECK(s.gemm->epilogue == spec::Epilogue::automatic);
    bool noted = false;
    for (const auto& note : s.gemm->chosen) noted = noted || note.rfind("epilogue auto: ", 0) == 0;
    CHECK(noted);
  }
}

// A help that names a value names one that passes: MMA-M's multiple, for every kind and cta_group
// (it once said 64 for the block-scaled kinds, whose only M at cta_group::1 is 128, Table 39).
TEST_CASE("MMA-M: the tile.m its help names passes, for every kind and cta_group") {
  const char* kinds[] = {
      R"("a": {"dtype": "bf16"}, "b": {"dtype": "bf16"}, "d": {"dtype": "f32"}, "accumulator": "f32")",
      R"("a": {"dtype": "tf32"}, "b": {"dtype": "tf32"}, "d": {"dtype": "f32"}, "accumulator": "f32")",
      R"("a": {"dtype": "e4m3"}, "b": {"dtype": "e5m2"}, "d": {"dtype": "f32"}, "accumulator": "f32", "tile": {"k": 128})",
      R"("a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "d": {"dtype": "s32"}, "accumulator": "s32", "tile": {"k": 128})",
      R"("a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "d": {"dtype": "f32"}, "accumulator": "f32", "tile": {"k": 128}, "scale": {"dtype": "ue8m0"})",
      R"("a": {"dtype": "e2m1"}, "b": {"dtype": "e2m1"}, "d": {"dtype": "f32"}, "accumulator": "f32", "tile": {"k": 256}, "scale": {"dtype": "ue8m0"})",
      R"("a": {"dtype": "e2m1"}, "b": {"dtype": "e2m1"}, "d": {"dtype": "f32"}, "accumulator": "f32", "tile": {"k": 256}, "scale": {"dtype": "ue4m3"})",
  };
  int checked = 0;
  for (const char* kind : kinds)
    for (int cta : {1, 2}) {
      const std::string base = std::string(R"({"gemm": {)") + kind + R"(, "cta_group": )" + std::to_string(cta);
      CAPTURE(base);
      Diagnostics bad = diags(base + R"(, "tile": {"m": 32}}})");
      const Diagnostic* m = nullptr;
      for (const auto& x : bad.list())
        if (x.rule == "MMA-M") m = &x;
      REQUIRE(m);
      REQUIRE(!m->help.empty());
      const std::string h = m->help[0], lead = "use a tile.m that is a multiple of ";
      REQUIRE(h.rfind(lead, 0) == 0);
      const int named = std::stoi(h.substr(lead.size()));
      Diagnostics good = diags(base + R"(, "tile": {"m": )" + std::to_string(named) + "}}}");
      for (const auto& x : good.list()) CHECK_MESSAGE(x.rule != "MMA-M", x.message);
      // and no smaller multiple of 32 passes: the help names the least
      if (named > 64) {
        Diagnostics less = diags(base + R"(, "tile": {"m": )" + std::to_string(named / 2) + "}}}");
        bool fired = false;
        for (const auto& x : less.list()) fired |= x.rule == "MMA-M";
        CHECK(fired);
      }
      ++checked;
    }
  CHECK(checked == 14);
}
}

// The performance warnings (src/rules/check_perf.cpp): each exactly, at the member that drove it,
// with the spec still accepted; what each help suggests then passes without it; and nothing for
// what the spec asked for itself.
TEST_SUITE("rules") {
TEST_CASE("performance warnings: PLAN-SINGLE-STAGE, PLAN-ACC-SINGLE-BUFFER, PTXAS-SPILL exactly; each help followed passes") {
  // The one diagnostic (a copy: `d` is often a temporary).
  auto only = [](const Diagnostics& d, const char* rule, const char* pointer) -> Diagnostic {
    REQUIRE(d.list().size() == 1);
    const Diagnostic x = d.list()[0];
    CHECK(x.severity == Severity::warning);
    CHECK(x.rule == rule);
    CHECK(x.pointer == pointer);
    CHECK_FALSE(d.has_errors());
    return x;
  };
  {
    const Diagnostic w = only(diags(R"({"gemm": {"tile": {"k": 256}, "stages": null}})"), "PLAN-SINGLE-STAGE", "/gemm/tile");
    CHECK(w.message ==
          "ptxgen chose 1 stage (the spec leaves \"stages\" out): one stage of 196608 bytes (tile 128 x 256 x 256) is all sm_100a's shared "
          "memory holds, so each of the 16 K blocks is loaded only after the MMAs have read the one before: no load overlaps an MMA");
    CHECK(w.help == std::vector<std::string>{"write a smaller tile: tile.k 128 leaves room for 2 stages", "or write \"stages\": 1 to say that one stage is meant"});
    // Followed: tile.k 128 gets 2 stages and no warning; "stages": 1 written is what the spec asked for.
    CHECK(diags(R"({"gemm": {"tile": {"k": 128}, "stages": null}})").list().empty());
    CHECK(diags(R"({"gemm": {"tile": {"k": 256}, "stages": 1}})").list().empty());
    // One K block: nothing to overlap.
    CHECK(diags(R"({"gemm": {"k": 256, "tile": {"k": 256}, "stages": null}})").list().empty());
    // sm_90a's wgmma pipeline the same.
    only(diags(R"({"target": "sm_90a", "gemm": {"tile": {"k": 256}, "stages": null}})"), "PLAN-SINGLE-STAGE", "/gemm/tile");
  }
  {
    const Diagnostic w = only(diags(R"({"gemm": {"a_source": "tmem", "schedule": "persistent"}})"), "PLAN-ACC-SINGLE-BUFFER", "/gemm/tile/n");
    CHECK(w.message ==
          "the persistent kernel's accumulator is single-buffered in tensor memory: one buffer of 256 tensor-memory columns (two and A's 32 "
          "would need 544 of 512): the next tile's MMAs wait until the epilogue has read this one");
    CHECK(w.help == std::vector<std::string>{"a smaller tile.n: each buffer takes D's tile.n columns (two of tile.n 128 take 256 of the 512)",
                                             "or A in shared memory, whose columns in tensor memory then hold the second buffer"});
    CHECK(diags(R"({"gemm": {"a_source": "tmem", "schedule": "persistent", "tile": {"n": 128}}})").list().empty());
    CHECK(diags(R"({"gemm": {"schedule": "persistent"}})").list().empty());
    // Not persistent: one buffer is all a data-parallel CTA has use for.
    CHECK(diags(R"({"gemm": {"a_source": "tmem"}})").list().empty());
    // MXFP8's factors take columns too (the rule's example), whose help has no A to move.
    const Diagnostic x = only(diags(R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "ue8m0"}, "tile": {"k": 128}, "schedule": "persistent"}})"),
                               "PLAN-ACC-SINGLE-BUFFER", "/gemm/tile/n");
    CHECK(x.help.size() == 1);
  }
  {
    // From ptxas's report: the recorded one of the rule's example, exactly; none without spills.
    const rules::Rule* r = rules::find("PTXAS-SPILL");
    REQUIRE(r);
    Diagnostics parse;
    const auto checked = rules::parse_and_check(rules::bad_document(*r), parse);
    REQUIRE(checked.ok);
    Diagnostics d;
    rules::check_ptxas_report(*checked.parsed.spec, r->ptxas_report, d);
    const Diagnostic w = only(d, "PTXAS-SPILL", "/gemm");
    CHECK(w.message ==
          "ptxas spills registers to local memory in \"example\" for sm_90a: 1652 bytes of spill stores and 1956 bytes of spill loads "
          "(168 registers a thread), each a round trip through local memory where the kernel meant registers");
    CHECK(w.help == std::vector<std::string>{
                        "a smaller tile.n: fewer accumulator registers a thread (f32: tile.n / 2 for each 64 rows a consumer warpgroup holds)",
                        "or \"consumers\": \"cooperative\": each consumer warpgroup then holds 64 of the tile's rows, not all of them",
                        "or \"registers\": {\"producer\": 40, \"consumer\": 232}: the consumer warpgroups raise their budget (setmaxnreg)",
                        "or fuse less into the epilogue: C, the residual and the bias each hold registers beside the accumulators, as a quantized D's block maxima do"});
    Diagnostics none;
    rules::check_ptxas_report(*checked.parsed.spec,
                              "ptxas info    : Function properties for example\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                              "ptxas info    : Used 168 registers, used 1 barriers\n",
                              none);
    CHECK(none.list().empty());
    // A program's kernel: at /program, with a program's remedies.
    Diagnostics p;
    const auto program = rules::parse_and_check(rules::example_program_base(), p);
    REQUIRE(program.ok);
    rules::check_ptxas_report(*program.parsed.spec, "    8 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n", p);
    const Diagnostic q = only(p, "PTXAS-SPILL", "/program");
    CHECK(q.message.find(": 8 bytes of spill stores and 4 bytes of spill loads, each") != std::string::npos);
    CHECK(q.help.at(0).find("tmem_load") != std::string::npos);
  }
}

// LAYOUT-ATOM's help names the widest smaller swizzle whose atoms the tile fills, and the check
// passes with it (it said "use a smaller swizzle", which took a round per width); where none
// fills, no smaller swizzle passes. Swept over types, majors, tile extents and swizzles.
TEST_CASE("LAYOUT-ATOM: the swizzle its help names passes and is the widest that does") {
  auto fires = [](const Diagnostics& d, const std::string& ptr) {
    for (const auto& x : d.list())
      if (x.rule == "LAYOUT-ATOM" && x.pointer == ptr) return &x;
    return static_cast<const Diagnostic*>(nullptr);
  };
  const char* types[] = {R"("a": {"dtype": "bf16", "major": "%A"}, "b": {"dtype": "bf16", "major": "%B"})",
                         R"("a": {"dtype": "e4m3", "major": "%A"}, "b": {"dtype": "e4m3", "major": "%B"})",
                         R"("a": {"dtype": "tf32", "major": "%A"}, "b": {"dtype": "tf32", "major": "%B"})"};
  int refused = 0, named = 0;
  for (const char* ty : types)
    for (const char* majors : {"kk", "mn", "km"})
      for (int tk : {8, 16, 32, 64, 128})
        for (int tmn : {64, 128})
          for (int sw : {128, 64, 32}) {
            std::string t = ty;
            t.replace(t.find("%A"), 2, majors[0] == 'k' ? "k" : "m");
            t.replace(t.find("%B"), 2, majors[1] == 'k' ? "k" : "n");
            auto spec = [&](int swa, int swb) {
              return R"({"gemm": {)" + t + R"(, "tile": {"m": 128, "n": )" + std::to_string(tmn) + R"(, "k": )" +
                     std::to_string(tk) + R"(}, "swizzle": {"a": )" + std::to_string(swa) + R"(, "b": )" + std::to_string(swb) + "}}}";
            };
            for (const char* op : {"a", "b"}) {
              const bool is_a = op[0] == 'a';
              const std::string ptr = std::string("/gemm/swizzle/") + op;
              const std::string base = is_a ? spec(sw, 0) : spec(0, sw);
              CAPTURE(base);
              const Diagnostics bad = diags(base);
              const Diagnostic* x = fires(bad, ptr);
              if (!x) continue;
              ++refused;
              REQUIRE(!x->help.empty());
              const std::string lead = std::string("use \"swizzle\": {\"") + op + "\": ";
              if (x->help[0].rfind(lead, 0) != 0) {  // none fills: every smaller one is refused too
                for (int w : {64, 32, 0})
                  if (w < sw) CHECK(fires(diags(is_a ? spec(w, 0) : spec(0, w)), ptr));
                continue;
              }
              ++named;
              const int w = std::stoi(x->help[0].substr(lead.size()));
              CHECK(w < sw);
              CHECK_FALSE(fires(diags(is_a ? spec(w, 0) : spec(0, w)), ptr));
              for (int wider : {64, 32})  // no wider smaller swizzle passes
                if (wider > w && wider < sw) CHECK(fires(diags(is_a ? spec(wider, 0) : spec(0, wider)), ptr));
            }
          }
  CHECK(refused > 20);
  CHECK(named > 10);
}

// PROGRAM-SMEM-BUDGET, where a pipelined program's rings overflow: its help names the stage count
// that fits and the rings to set it on (it said "use smaller tiles", the wrong change for a ring of
// too many stages). The count named passes the rule and is the largest that does, over ring tile
// sizes and stage counts of the shipped pipelined program.
TEST_CASE("PROGRAM-SMEM-BUDGET: the stage count its help names passes and is the largest that does") {
  const nlohmann::json base = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/prog_pipelined_gemm_bf16.json"));
  auto budget_error = [&](int rows, int stages) -> std::optional<Diagnostic> {
    nlohmann::json j = base;
    for (const char* t : {"a", "b"}) j["program"]["smem"][t]["stages"] = stages;
    j["program"]["smem"]["b"]["shape"][0] = rows;
    j["program"]["sizes"]["n"] = 2 * rows;
    j["program"]["grid"]["tile"][1] = rows;
    j["program"]["tmem"]["acc"]["columns"] = rows;
    j["program"]["ops"][0]["ops"][1]["at"][0]["n_tile"] = rows;
    j["program"]["ops"][2]["at"][1]["n_tile"] = rows;
    Diagnostics d;
    const bool ok = rules::parse_and_check(j.dump(), d).ok;
    for (const auto& x : d.list())
      if (x.rule == "PROGRAM-SMEM-BUDGET") return x;
    REQUIRE_MESSAGE(ok, d.list().front().rule << " " << d.list().front().message);
    return std::nullopt;
  };
  int named = 0;
  for (int rows : {64, 128, 256})
    for (int stages : {4, 6, 9, 12, 14}) {
      CAPTURE(rows);
      CAPTURE(stages);
      const auto e = budget_error(rows, stages);
      if (!e) continue;
      CHECK(e->pointer == "/program/smem");
      REQUIRE(e->help.size() == 2);
      const std::string lead = "\"stages\": ";
      REQUIRE(e->help[0].rfind(lead, 0) == 0);
      CHECK(e->help[0].find(R"(on "a", "b" (/program/smem/a/stages))") != std::string::npos);
      const int fit = std::stoi(e->help[0].substr(lead.size()));
      CHECK(fit < stages);
      CHECK_FALSE(budget_error(rows, fit));
      CHECK(budget_error(rows, fit + 1));
      ++named;
    }
  CHECK(named == 9);  // 24, 32 and 48 KB a stage: 9, 7 and 4 stages fit (227 KB)
}

// SMEM-DESC-RANGE and SMEM-BUDGET where not one stage fits (defect 8: "reduce tile.k" for the
// descriptor's range led to SMEM-BUDGET in the next round): the help names a tile.k, the spec
// with it passes every rule, and the next larger halving (the one the search rejected) does not.
TEST_CASE("SMEM-DESC-RANGE, SMEM-BUDGET: the tile.k a help names passes every rule, twice it does not") {
  int named = 0;
  for (const char* target : {"sm_100a", "sm_90a"})
    for (int cta : {1, 2})
      for (int tn : {128, 256})
        for (int tk : {256, 512, 1024})
          for (int stages : {1, 3, 6}) {
            if (cta == 2 && std::string(target) == "sm_90a") continue;
            auto patch = [&](int k, int s = 0) {
              return std::string(R"({"target": ")") + target + R"(", "gemm": {"tile": {"m": )" + std::to_string(128 * cta) +
                     R"(, "n": )" + std::to_string(tn) + R"(, "k": )" + std::to_string(k) + R"(}, "cta_group": )" +
                     std::to_string(cta) + R"(, "stages": )" + std::to_string(s ? s : stages) + "}}";
            };
            CAPTURE(patch(tk));
            const Diagnostics bad = diags(patch(tk));
            const Diagnostic* x = nullptr;
            for (const auto& e : bad.list())
              if (e.rule == "SMEM-DESC-RANGE" || (e.rule == "SMEM-BUDGET" && e.help.at(0).find("one stage") != std::string::npos))
                x = &e;
            if (!x) continue;
            const std::string lead = R"(use "tile": {"k": )";
            REQUIRE(x->help.at(0).rfind(lead, 0) == 0);
            const int k = std::stoi(x->help[0].substr(lead.size()));
            // The spec's stages where they fit at some halving, else the count named beside tile.k.
            const size_t st = x->help[0].find(R"(and "stages": )");
            const int s = st == std::string::npos ? stages : std::stoi(x->help[0].substr(st + 14));
            CHECK(k < tk);
            CHECK(s <= stages);
            const Diagnostics fixed = diags(patch(k, s));
            CHECK_MESSAGE(fixed.list().empty(), fixed.list().front().rule);
            CHECK_FALSE(diags(patch(2 * k, s)).list().empty());  // the larger halving, rejected
            if (s < stages) CHECK_FALSE(diags(patch(k, s + 1)).list().empty());
            ++named;
          }
  CHECK(named >= 20);
}

// SCALE-TYPE's and SCALE-KIND's helps lead to a spec the block-scaling rules accept, in one round:
// each help that names a change (a "vec", a "dtype", a "kind", leaving "kind" out) is applied and
// neither rule fires again; no help offers a kind that refuses the operand types (e4m3 users were
// sent to "another kind", and only the e2m1 kinds take other factors).
TEST_CASE("SCALE-TYPE, SCALE-KIND: every change a help names passes both rules") {
  using J = nlohmann::json;
  auto block_rules = [](const J& patch) {
    std::vector<const char*> out;
    const Diagnostics d = diags(patch.dump());
    for (const auto& x : d.list())
      if (x.rule == "SCALE-TYPE" || x.rule == "SCALE-KIND") out.push_back(x.rule == "SCALE-TYPE" ? "SCALE-TYPE" : "SCALE-KIND");
    return out;
  };
  int fired = 0, applied = 0;
  for (const char* a : {"e4m3", "e2m1", "e5m2"})
    for (const char* b : {"e4m3", "e2m1"})
      for (const char* sdt : {"ue8m0", "ue4m3"})
        for (int vec : {16, 32})
          for (const char* kind : {"", "mxf8f6f4", "mxf4", "mxf4nvf4"}) {
            J p = J::parse(R"({"gemm": {"tile": {"k": 256}}})");
            p["gemm"]["a"] = {{"dtype", a}};
            p["gemm"]["b"] = {{"dtype", b}};
            p["gemm"]["scale"] = {{"dtype", sdt}, {"vec", vec}};
            if (*kind) p["gemm"]["scale"]["kind"] = kind;
            CAPTURE(p.dump());
            const Diagnostics d = diags(p.dump());
            for (const auto& x : d.list()) {
              if (x.rule != "SCALE-TYPE" && x.rule != "SCALE-KIND") continue;
              ++fired;
              for (const auto& h : x.help) {
                CAPTURE(h);
                J q = p;
                // Every member the help names, together (a kind and the factors it takes).
                bool changed = false;
                std::smatch m;
                if (std::regex_search(h, m, std::regex(R"re("vec": (\d+))re"))) q["gemm"]["scale"]["vec"] = std::stoi(m[1]), changed = true;
                if (std::regex_search(h, m, std::regex(R"re("dtype": "(\w+)")re"))) q["gemm"]["scale"]["dtype"] = m[1], changed = true;
                if (std::regex_search(h, m, std::regex(R"re("kind": "(\w+)")re"))) q["gemm"]["scale"]["kind"] = m[1], changed = true;
                else if (h.find("leave \"kind\" out") != std::string::npos) q["gemm"]["scale"].erase("kind"), changed = true;
                if (!changed) continue;
                ++applied;
                CHECK(block_rules(q).empty());
                CHECK(h.find("another kind") == std::string::npos);
              }
            }
          }
  CHECK(fired > 20);
  CHECK(applied > 20);
}
}

// A program's store by TMA (docs/spec.md, "TMA stores"; rule STORE-TMA): each way it can be wrong
// refused at the field to change. The example program with a 32-column slice of its accumulator
// (one box of f32 D) loaded and stored through the staging tile "d_stage".
TEST_SUITE("rules") {
TEST_CASE("a program's TMA store: each mistake STORE-TMA (or its own rule) at its pointer") {
  auto program = [] {
    nlohmann::json j = nlohmann::json::parse(rules::example_program_base());
    auto& p = j["program"];
    p["smem"]["d_stage"] = {{"dtype", "f32"}, {"shape", {128, 32}}, {"major", "k"}, {"swizzle", 128}};
    p["tmem"]["acc0"] = {{"slice", {{"of", "t"}, {"columns", {0, 32}}}}};
    p["ops"][6]["src"] = "acc0";
    p["ops"][7] = {{"op", "store"}, {"regs", "r"}, {"dst", "D"}, {"via", "tma"}, {"stage", "d_stage"}};
    return j;
  };
  auto one = [](const nlohmann::json& j, const std::string& rule, const std::string& pointer) {
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    for (const auto& x : d.list()) MESSAGE(x.rule << " at " << x.pointer << ": " << x.message);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].rule == rule);
    CHECK(d.list()[0].pointer == pointer);
    return d.list()[0].message;
  };
  {
    Diagnostics d;
    rules::parse_and_check(program().dump(), d);
    CHECK(d.list().empty());
  }
  auto tile = [&](const char* key, const nlohmann::json& v) {
    nlohmann::json j = program();
    j["program"]["smem"]["d_stage"][key] = v;
    return j;
  };
  {  // a bf16 staging tile (one box of bf16) for f32 D
    nlohmann::json j = tile("dtype", "bf16");
    j["program"]["smem"]["d_stage"]["shape"] = {128, 64};
    CHECK(one(j, "STORE-TMA", "/program/smem/d_stage/dtype").find("is bf16") != std::string::npos);
  }
  one(tile("swizzle", 64), "STORE-TMA", "/program/smem/d_stage/swizzle");
  one(tile("major", "mn"), "STORE-TMA", "/program/smem/d_stage/major");
  CHECK(one(tile("shape", {64, 32}), "STORE-TMA", "/program/smem/d_stage/shape").find("the box is 128 rows of 32 f32 columns") != std::string::npos);
  one(tile("shape", {128, 64}), "STORE-TMA", "/program/smem/d_stage/shape");
  {  // registers of two boxes (64 f32 columns)
    nlohmann::json j = program();
    j["program"]["tmem"]["acc0"]["slice"]["columns"] = {0, 64};
    CHECK(one(j, "STORE-TMA", "/program/ops/7/regs").find("holds 64") != std::string::npos);
  }
  {  // packed registers: a bf16 view of packing 2 (64 elements in 32 columns), into a bf16 D
    nlohmann::json j = program();
    j["program"]["tmem"]["acc0"] = {{"cast", {{"of", {{"slice", {{"of", "t"}, {"columns", {0, 32}}}}}}, {"dtype", "bf16"}, {"packing", 2}}}};
    j["program"]["globals"]["D"]["dtype"] = "bf16";
    j["program"]["smem"]["d_stage"] = {{"dtype", "bf16"}, {"shape", {128, 64}}, {"major", "k"}, {"swizzle", 128}};
    CHECK(one(j, "STORE-TMA", "/program/ops/7/regs").find("packs 2 elements") != std::string::npos);
  }
  {  // a 4-bit D (packed e2m1) has no staging
    nlohmann::json j = program();
    j["program"]["globals"]["D"] = {{"dtype", "e2m1"}, {"format", "packed"}, {"shape", {128, 128}}};
    one(j, "STORE-TMA", "/program/ops/7/dst");
  }
  {  // rows 4 bytes x 130 apart: no tensor map strides them
    nlohmann::json j = program();
    j["program"]["globals"]["D"]["shape"] = {128, 130};
    CHECK(one(j, "STORE-TMA", "/program/globals/D/shape").find("520 bytes apart") != std::string::npos);
  }
  {  // a second TMA store into D, of 64 rows (a 64-lane slice): D's one tensor map has boxes of 128
    nlohmann::json j = program();
    j["program"]["tmem"]["q_v"] = {{"slice", {{"of", "t"}, {"lanes", {0, 64}}, {"columns", {32, 64}}}}};
    j["program"]["ops"].push_back({{"op", "tmem_load"}, {"src", "q_v"}, {"regs", "q"}});
    j["program"]["ops"].push_back({{"op", "store"}, {"regs", "q"}, {"dst", "D"}, {"at", {0, 32}}, {"via", "tma"}, {"stage", "d_stage"}});
    CHECK(one(j, "STORE-TMA", "/program/ops/9/regs").find("whose box is 128 rows (the store at /program/ops/7)") != std::string::npos);
    j["program"]["tmem"]["q_v"]["slice"]["lanes"] = {0, 128};  // 128 rows: accepted, through the same map and stage
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    CHECK(d.list().empty());
  }
  {  // the staging tile also loaded into
    nlohmann::json j = program();
    j["program"]["globals"]["E"] = {{"dtype", "f32"}, {"shape", {128, 32}}};
    const nlohmann::json load = {{"op", "load"}, {"src", "E"}, {"dst", "d_stage"}};
    j["program"]["ops"].insert(j["program"]["ops"].begin(), load);
    CHECK(one(j, "STORE-TMA", "/program/ops/8/stage").find("also used by the op at /program/ops/0") != std::string::npos);
  }
  {  // "stage" on a direct store
    nlohmann::json j = program();
    j["program"]["ops"][7].erase("via");
    one(j, "STORE-TMA", "/program/ops/7/stage");
  }
  {  // the staging tile unknown, and "via": "tma" without one (a required member)
    nlohmann::json j = program();
    j["program"]["ops"][7]["stage"] = "nope";
    one(j, "NAME-UNKNOWN", "/program/ops/7/stage");
    j["program"]["ops"][7].erase("stage");
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    REQUIRE(d.list().size() == 1);
    CHECK(d.list()[0].pointer == "/program/ops/7/stage");
  }
  {  // a CTA pair: ptxgen's refusal (beside the example's MMA, which a pair makes N = 256 wide)
    nlohmann::json j = program();
    j["program"]["cta_group"] = 2;
    j["program"]["ops"][7]["per_cta"] = {0, 32};
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    std::string got;
    for (const auto& x : d.list()) got += x.rule + " " + x.pointer + "; ";
    CHECK(got == "STORE-TMA /program/ops/7/via; OP-MMA-SHAPE /program/ops/3/d; ");
  }
  {  // inside the loop (the worked example's tmem_load and TMA store moved into it): ptxgen's
     // refusal, beside the coverage of a store that does not step with the iteration
    nlohmann::json j = nlohmann::json::parse(support::slurp(support::source_root() + "/specs/prog_pipelined_epilogue_bf16_tma.json"));
    auto& ops = j["program"]["ops"];
    ops[0]["ops"].push_back(ops[1]);
    ops[0]["ops"].push_back(ops[5]);
    ops.erase(ops.begin() + 1, ops.end());
    Diagnostics d;
    rules::parse_and_check(j.dump(), d);
    std::string got;
    for (const auto& x : d.list()) got += x.rule + " " + x.pointer + "; ";
    CHECK(got == "STORE-TMA /program/ops/0/ops/4/via; PROGRAM-COVERAGE /program/ops/0/ops/4/at; ");
  }
}
}

// One-round helps (issue 32): for every rule whose help names a value, the value applied to a spec
// the rule refuses gives a spec that passes `check` (every rule, not only the one that fired). Each
// row is a failing spec, the rule and pointer expected, the help line's words before the value, and
// the member the value is written to (rounded up to it where the help names "a multiple of").
namespace {
struct HelpCase {
  const char* failing;  // a merge patch of the example spec
  const char* rule;
  const char* pointer;
  const char* lead;     // the help line's words just before the value it names
  const char* member;   // where the value goes (a JSON pointer into the document)
  bool multiple;        // the help names a multiple: the spec's value rounded up to it
};

// The length of the JSON value that starts `text`: a number, a string, an array or an object.
size_t value_length(const std::string& text) {
  if (text.empty()) return 0;
  if (text[0] == '"') return text.find('"', 1) + 1;
  size_t end = 0;
  if (text[0] == '[' || text[0] == '{') {
    for (int depth = 0; end < text.size(); ++end) {
      depth += text[end] == '[' || text[end] == '{';
      depth -= text[end] == ']' || text[end] == '}';
      if (depth == 0) return end + 1;
    }
    return end;
  }
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  return end;
}
nlohmann::json leading_value(const std::string& text) { return nlohmann::json::parse(text.substr(0, value_length(text)), nullptr, false); }

// Every "member": value a help line names, as a merge patch ("use \"quantize\": \"mxfp8\" with
// \"d\": {\"dtype\": \"e4m3\"}").
nlohmann::json named_members(const std::string& line) {
  nlohmann::json patch = nlohmann::json::object();
  static const std::regex key(R"re("([a-z_]+)": )re");
  std::smatch m;
  for (std::string rest = line; std::regex_search(rest, m, key);) {
    const std::string after = m.suffix();
    patch[m[1].str()] = leading_value(after);
    rest = after.substr(value_length(after));
  }
  return patch;
}
}  // namespace

TEST_SUITE("rules") {
TEST_CASE("one-round helps: the value each help names, written into the refused spec, passes every rule") {
  const HelpCase cases[] = {
      {R"({"gemm": {"tile": {"k": 24}, "swizzle": {"a": 0, "b": 0}}})", "MMA-K", "/gemm/tile/k", "use a tile.k that is a multiple of ", "/gemm/tile/k", true},
      {R"({"gemm": {"a": {"dtype": "s8"}, "b": {"dtype": "s8"}, "accumulator": "s32", "d": {"dtype": "s32"}, "cta_group": 2, "cluster": [2, 1, 1], "tile": {"m": 256, "n": 48, "k": 128}}})",
       "MMA-N", "/gemm/tile/n", "use a tile.n of ", "/gemm/tile/n", false},
      {R"({"gemm": {"accumulator": "f16"}})", "MMA-ACCUM", "/gemm/accumulator", "use \"accumulator\": ", "/gemm/accumulator", false},
      {R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "accumulator": "s32", "tile": {"k": 128}}})", "MMA-ACCUM", "/gemm/accumulator",
       "use \"accumulator\": ", "/gemm/accumulator", false},
      {R"({"gemm": {"epilogue": "tma", "tile": {"n": 96}}})", "EPILOGUE-TMA", "/gemm/tile/n", "use a tile.n that is a multiple of ", "/gemm/tile/n", true},
      {R"({"gemm": {"epilogue": "tma", "cta_group": 2, "cluster": [2, 1, 1], "tile": {"m": 256, "n": 192}}})", "EPILOGUE-TMA", "/gemm/tile/n",
       "(a multiple of ", "/gemm/tile/n", true},
      {R"({"gemm": {"epilogue": "auto"}})", "EPILOGUE-AUTO", "/gemm/epilogue", "use \"epilogue\": ", "/gemm/epilogue", false},
      {R"({"gemm": {"n": 4080, "d": {"dtype": "e4m3"}, "quantize": "mxfp8"}})", "QUANT-N", "/gemm/n", "a multiple of ", "/gemm/n", true},
      {R"({"gemm": {"tile": {"n": 48}, "d": {"dtype": "e4m3"}, "quantize": "mxfp8"}})", "QUANT-TILE", "/gemm/tile/n", "use a tile.n of ", "/gemm/tile/n", false},
      {R"({"gemm": {"tile": {"n": 96}, "activation": "swiglu", "d": {"dtype": "e4m3"}, "quantize": "mxfp8"}})", "QUANT-TILE", "/gemm/tile/n",
       "use a tile.n of ", "/gemm/tile/n", false},
      {R"({"gemm": {"quantize": "mxfp8"}})", "QUANT-DTYPE", "/gemm/d/dtype", "use \"d\": ", "/gemm/d", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128, "k": 64}, "d": {"dtype": "e2m1"}, "quantize": "mxfp4"}})", "QUANT-TARGET",
       "/gemm/quantize", "use ", "/gemm", false},
      {R"({"gemm": {"a": {"dtype": "f16"}, "b": {"dtype": "f16"}, "accumulator": "f16", "d": {"dtype": "e4m3"}}})", "D-FP8", "/gemm/d/dtype",
       "use \"accumulator\": ", "/gemm/accumulator", false},
      {R"({"gemm": {"d": {"dtype": "e2m1"}, "quantize": "mxfp4", "epilogue": "tma"}})", "D-FP8", "/gemm/epilogue", "use \"epilogue\": ", "/gemm/epilogue", false},
      {R"({"gemm": {"cta_group": 2, "tile": {"m": 256}, "cluster": [3, 1, 1]}})", "CLUSTER-PAIR", "/gemm/cluster/0", "e.g. \"cluster\": ", "/gemm/cluster", false},
      {R"({"gemm": {"cluster": [4, 4, 2]}})", "CLUSTER-SIZE", "/gemm/cluster", "use \"cluster\": ", "/gemm/cluster", false},
      {R"({"gemm": {"cluster": [1, 1, 2]}})", "CLUSTER-MULTICAST", "/gemm/cluster/2", "use \"cluster\": ", "/gemm/cluster", false},
      {R"({"gemm": {"schedule": "persistent", "cluster": [2, 1, 2]}})", "SCHEDULE-PERSISTENT", "/gemm/cluster/2", "use \"cluster\": ", "/gemm/cluster", false},
      {R"({"gemm": {"k": 1001, "a": {"ld": 1001}}})", "TMA-STRIDE", "/gemm/a/ld", "pad the rows: ld=", "/gemm/a/ld", false},
      {R"({"gemm": {"a": {"ld": 1000}}})", "TMA-STRIDE", "/gemm/a/ld", "use an ld of at least ", "/gemm/a/ld", false},
      {R"({"gemm": {"m": 8388481}})", "LAUNCH-GRID", "/gemm/m", "use a tile.m of ", "/gemm/tile/m", false},
      {R"({"target": "sm_90a", "gemm": {"m": 8388481, "tile": {"n": 128}}})", "LAUNCH-GRID", "/gemm/m", "use a tile.m of ", "/gemm/tile/m", false},
      {R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "ue8m0"}, "k": 4010, "tile": {"k": 128}}})", "SCALE-K", "/gemm/k",
       "pad K to a multiple of ", "/gemm/k", true},
      {R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "ue8m0"}, "tile": {"n": 192, "k": 128}}})", "SCALE-TILE", "/gemm/tile/n",
       "use a tile.n that is a multiple of ", "/gemm/tile/n", true},
      {R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "ue8m0", "vec": 32}, "tile": {"k": 64}, "swizzle": {"a": 64, "b": 64}}})",
       "SCALE-TILE", "/gemm/tile/k", "use a tile.k that is a multiple of ", "/gemm/tile/k", true},
      {R"({"gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "ue8m0"}, "cta_group": 2, "cluster": [2, 1, 1], "tile": {"m": 128, "k": 128}}})",
       "SCALE-TILE", "/gemm/tile/m", "a multiple of ", "/gemm/tile/m", true},
      {R"({"gemm": {"sparse": true, "tile": {"k": 64}, "stages": 2}})", "SPARSE-TILE", "/gemm/tile/k", "use a tile.k that is a multiple of ", "/gemm/tile/k", true},
      {R"({"gemm": {"sparse": true, "a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "ue8m0", "vec": 32}, "tile": {"k": 256}, "stages": 2}})", "SPARSE-KIND",
       "/gemm/scale/vec", "use \"vec\": ", "/gemm/scale/vec", false},
      {R"({"gemm": {"sparse": true, "k": 4000, "tile": {"k": 128}, "stages": 2}})", "SPARSE-K", "/gemm/k", "pad K to a multiple of ", "/gemm/k", true},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 96, "n": 128}}})", "WGMMA-M", "/gemm/tile/m", "use a tile.m of ", "/gemm/tile/m", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 124}}})", "WGMMA-N", "/gemm/tile/n", "use a tile.n of ", "/gemm/tile/n", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128, "k": 40}, "swizzle": {"a": 0, "b": 0}}})", "WGMMA-K", "/gemm/tile/k",
       "use a tile.k that is a multiple of ", "/gemm/tile/k", true},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "registers": {"producer": 40, "consumer": 230}}})", "REGISTERS-BUDGET",
       "/gemm/registers/consumer", "use ", "/gemm/registers/consumer", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "registers": {"producer": 41, "consumer": 232}}})", "REGISTERS-BUDGET",
       "/gemm/registers/producer", "use ", "/gemm/registers/producer", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "registers": {"producer": 40, "consumer": 248}}})", "REGISTERS-BUDGET",
       "/gemm/registers", "e.g. \"registers\": ", "/gemm/registers", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "consumers": "pingpong"}})", "CONSUMERS-PINGPONG", "/gemm/consumers",
       "add \"schedule\": ", "/gemm/schedule", false},
      {R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "f32"}, "tile": {"m": 128, "n": 128, "k": 64}}})",
       "SCALE-BLOCK-TILE", "/gemm/tile/k", "use tile.k ", "/gemm/tile/k", false},
      {R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "f32"}, "tile": {"m": 128, "n": 256, "k": 128}}})",
       "SCALE-BLOCK-TILE", "/gemm/tile/n", "use tile.n ", "/gemm/tile/n", false},
      {R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "f32", "partials": 2}, "tile": {"m": 128, "n": 128, "k": 128}, "stages": 1}})",
       "SCALE-BLOCK-PARTIALS", "/gemm/scale/partials", "use \"partials\": ", "/gemm/scale/partials", false},
      {R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "f32", "partials": 2}, "tile": {"m": 64, "n": 128, "k": 128}}})",
       "SCALE-BLOCK-PARTIALS", "/gemm/scale/partials", "or \"registers\": ", "/gemm/registers", false},
      {R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "f32", "partials": 2}, "tile": {"m": 128, "n": 128, "k": 128}}})",
       "SCALE-BLOCK-PARTIALS", "/gemm/scale/partials", "or \"registers\": ", "/gemm/registers", false},
      {R"({"gemm": {"n": 4095, "activation": "swiglu"}})", "GLU-N", "/gemm/n", "use \"n\": ", "/gemm/n", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "accumulator": "f16"}})", "WGMMA-ACCUM", "/gemm/accumulator", "use \"accumulator\": ",
       "/gemm/accumulator", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "a_source": "tmem"}})", "TARGET-A-TMEM", "/gemm/a_source", "read A from ",
       "/gemm/a_source", false},
      {R"({"gemm": {"a_source": "registers"}})", "TARGET-A-REGISTERS", "/gemm/a_source", "use \"a_source\": ", "/gemm/a_source", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 128, "n": 128}, "schedule": "persistent", "consumers": "pingpong", "a_source": "registers"}})",
       "CONSUMERS-PINGPONG", "/gemm/a_source", "use \"a_source\": ", "/gemm/a_source", false},
      {R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "f32"}, "tile": {"m": 128, "n": 128, "k": 128}, "schedule": "persistent", "consumers": "pingpong"}})",
       "SCALE-BLOCK-TILE", "/gemm/consumers", "use \"consumers\": ", "/gemm/consumers", false},
      {R"({"target": "sm_90a", "gemm": {"a": {"dtype": "e4m3"}, "b": {"dtype": "e4m3"}, "scale": {"dtype": "f32"}, "tile": {"m": 128, "n": 128, "k": 128}, "accumulator": "f16"}})",
       "SCALE-BLOCK-TYPE", "/gemm/accumulator", "use \"accumulator\": ", "/gemm/accumulator", false},
      {R"({"gemm": {"tile": {"m": 256, "n": 512}, "stages": 2}})", "TMEM-BUDGET", "/gemm/tile/n", "use a tile.n of ", "/gemm/tile/n", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 256, "n": 256}}})", "WGMMA-REGISTERS", "/gemm/tile/n", "use a tile.n of ", "/gemm/tile/n", false},
      {R"({"target": "sm_90a", "gemm": {"tile": {"m": 256, "n": 256}, "epilogue": "tma"}})", "WGMMA-REGISTERS", "/gemm/tile/n", "use a tile.n of ", "/gemm/tile/n", false},
  };
  for (const HelpCase& t : cases) {
    CAPTURE(std::string(t.failing));
    nlohmann::json j = nlohmann::json::parse(rules::example_base());
    j.merge_patch(nlohmann::json::parse(t.failing));
    Diagnostics bad;
    rules::parse_and_check(j.dump(), bad);
    const Diagnostic* x = nullptr;
    for (const auto& e : bad.list())
      if (e.rule == t.rule && e.pointer == t.pointer && !x) x = &e;
    std::string got;
    for (const auto& e : bad.list()) got += e.rule + " at " + e.pointer + ": " + e.message + "\n";
    CHECK_MESSAGE(x, got);
    if (!x) continue;
    std::string line;
    for (const auto& h : x->help)
      if (line.empty() && h.find(t.lead) != std::string::npos) line = h;
    CHECK_MESSAGE(!line.empty(), x->help.front());
    if (line.empty()) continue;
    CAPTURE(line);
    nlohmann::json value = leading_value(line.substr(line.find(t.lead) + std::string(t.lead).size()));
    CHECK_MESSAGE(!value.is_discarded(), line);
    if (value.is_discarded()) continue;
    const nlohmann::json::json_pointer at(t.member);
    if (t.multiple) {
      const int64_t m = value.get<int64_t>(), had = j[at].get<int64_t>();
      value = (had + m - 1) / m * m;
    }
    if (t.member == std::string("/gemm")) j["gemm"].merge_patch(named_members(line));  // the members the line names
    else j[at] = value;
    Diagnostics good;
    rules::parse_and_check(j.dump(), good);
    std::string left;
    for (const auto& e : good.list())
      if (e.severity == Severity::error) left += e.rule + " at " + e.pointer + ": " + e.message + "\n";
    CHECK_MESSAGE(left.empty(), "after " << std::string(t.member) << " = " << value.dump() << ":\n" << left);
  }
}
}
