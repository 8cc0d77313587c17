// The spec parser on well-formed and hostile input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ptxgen/rules.hpp"
#include "ptxgen/spec.hpp"

using namespace ptxgen;

namespace {
Diagnostics parse(const std::string& text) {
  Diagnostics d;
  spec::parse(text, d);
  return d;
}
Diagnostic only(const Diagnostics& d) {
  REQUIRE(d.list().size() == 1);
  return d.list()[0];
}
// The example program with `op` appended (as op 8).
nlohmann::json program_with(const nlohmann::json& op) {
  auto m = nlohmann::json::parse(rules::example_program_base());
  m["program"]["ops"].push_back(op);
  return m;
}
// The spec of `doc`, which must parse without a diagnostic.
spec::Spec clean(const nlohmann::json& doc) {
  Diagnostics d;
  auto r = spec::parse(doc.dump(), d);
  REQUIRE(r.spec);
  CHECK_FALSE(d.has_errors());
  return *r.spec;
}
std::string with_gemm(const std::string& gemm_member) {
  std::string base(rules::example_base());
  const auto at = base.find("\"m\": 4096");
  return base.substr(0, at) + gemm_member + ", " + base.substr(at);
}
}  // namespace

TEST_SUITE("spec") {
TEST_CASE("the example parses, and to_json round-trips it") {
  Diagnostics d;
  auto r = spec::parse(rules::example_base(), d);
  REQUIRE(r.spec);
  CHECK(r.spec->gemm->tile.n == 256);
  CHECK(r.spec->gemm->cluster == std::array<int64_t, 3>{1, 1, 1});
  Diagnostics d2;
  auto again = spec::parse(spec::to_json(*r.spec), d2);
  REQUIRE(again.spec);
  CHECK(spec::to_json(*again.spec) == spec::to_json(*r.spec));
}

TEST_CASE("features not built yet: SPEC-NOT-BUILT at the member or op, naming what is built") {
  // Issue 28: "c" was SPEC-UNKNOWN-KEY with "did you mean a?", "op": "softmax" SPEC-ENUM.
  for (const char* key : {"batch"}) {  // "groups" is parsed (rules_test: grouped GEMM)
    CAPTURE(key);
    const Diagnostic x = only(parse(with_gemm("\"" + std::string(key) + "\": {}")));
    CHECK(x.rule == "SPEC-NOT-BUILT");
    CHECK(x.pointer == "/gemm/" + std::string(key));
    REQUIRE_FALSE(x.help.empty());
    CHECK(x.help[0].rfind("nearest built: ", 0) == 0);
  }
  // MXFP8, MXFP4 and NVFP4 are built (each parses and round-trips); another name is an enum error.
  const Diagnostic e = only(parse(with_gemm("\"quantize\": \"fp8\"")));
  CHECK(e.rule == "SPEC-ENUM");
  CHECK(e.pointer == "/gemm/quantize");
  for (const auto& qw : {std::pair{"mxfp8", spec::Quantize::mxfp8}, std::pair{"mxfp4", spec::Quantize::mxfp4},
                         std::pair{"nvfp4", spec::Quantize::nvfp4}}) {
    const std::string q = qw.first;  // (no structured binding: CAPTURE's lambda, which clang before 16 refuses)
    const spec::Quantize want = qw.second;
    CAPTURE(q);
    Diagnostics d;
    auto r = spec::parse(with_gemm("\"quantize\": \"" + q + "\""), d);
    REQUIRE(r.spec);
    CHECK_FALSE(d.has_errors());
    CHECK(r.spec->gemm->quantize == want);
    Diagnostics d2;
    auto again = spec::parse(spec::to_json(*r.spec), d2);
    REQUIRE(again.spec);
    CHECK(again.spec->gemm->quantize == want);
  }
  // The fused epilogue's bias and activation are built (docs/spec.md, "Epilogues"), gelu's erf
  // form (Activation::gelu) beside its tanh form.
  {
    Diagnostics d;
    auto r = spec::parse(with_gemm("\"bias\": {\"dtype\": \"f16\", \"along\": \"m\"}, \"activation\": \"silu\""), d);
    REQUIRE(r.spec);
    CHECK_FALSE(d.has_errors());
    REQUIRE(r.spec->gemm->bias);
    CHECK(r.spec->gemm->bias->dtype == isa::DType::f16);
    CHECK(r.spec->gemm->bias->along_m);
    CHECK(r.spec->gemm->activation == Activation::silu);
    Diagnostics d2;
    auto again = spec::parse(spec::to_json(*r.spec), d2);
    REQUIRE(again.spec);
    CHECK(spec::to_json(*again.spec) == spec::to_json(*r.spec));
    for (const auto& nw : {std::pair<const char*, Activation>{"gelu", Activation::gelu}, {"gelu_tanh", Activation::gelu_tanh}}) {
      // (No structured binding: clang 14 cannot capture one in CAPTURE's lambda.)
      const std::string name = nw.first;
      const Activation want = nw.second;
      CAPTURE(name);
      Diagnostics dg;
      auto g = spec::parse(with_gemm("\"activation\": \"" + name + "\""), dg);
      REQUIRE(g.spec);
      CHECK_FALSE(dg.has_errors());
      CHECK(g.spec->gemm->activation == want);
      CHECK(nlohmann::json::parse(spec::to_json(*g.spec))["gemm"]["activation"] == name);
    }
    CHECK(only(parse(with_gemm("\"bias\": {\"dtype\": \"e4m3\"}"))).pointer == "/gemm/bias/dtype");
  }
  // alpha, beta with c, and the residual are built too, and kept through to_json.
  {
    Diagnostics d;
    auto r = spec::parse(with_gemm("\"alpha\": 0.5, \"c\": {\"dtype\": \"f32\"}, \"beta\": 2, \"residual\": {\"dtype\": \"bf16\"}"), d);
    REQUIRE(r.spec);
    CHECK_FALSE(d.has_errors());
    CHECK(r.spec->gemm->alpha == 0.5);
    CHECK(r.spec->gemm->beta == 2.0);
    CHECK(r.spec->gemm->c == isa::DType::f32);
    CHECK(r.spec->gemm->residual == isa::DType::bf16);
    const auto j = nlohmann::json::parse(spec::to_json(*r.spec));
    CHECK(j["gemm"]["alpha"] == 0.5);
    CHECK(j["gemm"]["c"]["dtype"] == "f32");
    CHECK(j["gemm"]["beta"] == 2.0);
    CHECK(j["gemm"]["residual"]["dtype"] == "bf16");
    Diagnostics d2;
    auto jb = nlohmann::json::parse(rules::example_base());
    jb["gemm"]["amax"] = true;
    jb["gemm"]["d"] = {{"dtype", "e4m3"}, {"scale", true}};
    auto q = spec::parse(jb.dump(), d2);
    REQUIRE(q.spec);
    CHECK(q.spec->gemm->amax);
    CHECK(q.spec->gemm->d_scale);
    const auto jq = nlohmann::json::parse(spec::to_json(*q.spec));
    CHECK(jq["gemm"]["amax"] == true);
    CHECK(jq["gemm"]["d"]["scale"] == true);
  }
  // "alpha": "input", "beta": "input": kernel inputs in place of constants, kept through to_json.
  {
    Diagnostics d;
    auto r = spec::parse(with_gemm("\"alpha\": \"input\", \"c\": {\"dtype\": \"bf16\"}, \"beta\": \"input\""), d);
    REQUIRE(r.spec);
    CHECK_FALSE(d.has_errors());
    CHECK(r.spec->gemm->alpha_input);
    CHECK(r.spec->gemm->beta_input);
    CHECK_FALSE(r.spec->gemm->alpha);
    CHECK_FALSE(r.spec->gemm->beta);
    const auto j = nlohmann::json::parse(spec::to_json(*r.spec));
    CHECK(j["gemm"]["alpha"] == "input");
    CHECK(j["gemm"]["beta"] == "input");
  }
  // The gated activations (docs/spec.md, "Epilogues"): their own field, not an activation of the
  // elementwise kind, and written back as they were read; a name neither kind has lists both.
  for (const char* name : {"swiglu", "geglu"}) {
    CAPTURE(name);
    Diagnostics d;
    auto r = spec::parse(with_gemm(std::string("\"activation\": \"") + name + "\""), d);
    REQUIRE(r.spec);
    CHECK_FALSE(d.has_errors());
    REQUIRE(r.spec->gemm->glu);
    CHECK(spec::name(*r.spec->gemm->glu) == name);
    CHECK_FALSE(r.spec->gemm->activation);
    CHECK(spec::glu_gate(*r.spec->gemm->glu) == (std::string(name) == "swiglu" ? Activation::silu : Activation::gelu_tanh));
    CHECK(spec::to_json(*r.spec).find(std::string("\"activation\": \"") + name + "\"") != std::string::npos);
  }
  {
    const Diagnostic x = only(parse(with_gemm("\"activation\": \"reglu\"")));
    CHECK(x.rule == "SPEC-ENUM");
    CHECK(x.pointer == "/gemm/activation");
    CHECK(x.message.find("relu, sigmoid, silu, gelu_tanh, gelu, swiglu, geglu") != std::string::npos);
  }
  auto doc = nlohmann::json::parse(rules::example_program_base());
  {
    doc["program"]["ops"][1] = {{"op", "softmax"}, {"regs", "r"}};
    const Diagnostic x = only(parse(doc.dump()));
    CHECK(x.rule == "SPEC-NOT-BUILT");
    CHECK(x.pointer == "/program/ops/1/op");
    CHECK(x.message.find("arithmetic on register sets") != std::string::npos);
    REQUIRE_FALSE(x.help.empty());
    CHECK(x.help[0].rfind("nearest built: ", 0) == 0);
  }
  // "convert" is to packed 16-bit pairs only (docs/spec.md, "Packed half-precision arithmetic"): its
  // "dtype" is required and bf16x2 or f16x2 (a narrower type for memory is the store's).
  {
    doc["program"]["ops"][1] = {{"op", "convert"}, {"regs", "h"}, {"a", "r"}, {"dtype", "e4m3"}};
    const Diagnostic x = only(parse(doc.dump()));
    CHECK(x.rule == "SPEC-ENUM");
    CHECK(x.pointer == "/program/ops/1/dtype");
    CHECK(x.message.find("bf16x2, f16x2") != std::string::npos);
    doc["program"]["ops"][1].erase("dtype");
    const Diagnostic y = only(parse(doc.dump()));
    CHECK(y.pointer == "/program/ops/1/dtype");
  }
  // amax, quantize and the gated activations are built: their members kept through to_json; a
  // quantize's format is required and one of three (SPEC-ENUM at /format).
  {
    auto m = program_with({{"op", "amax"}, {"a", "r"}, {"dst", "amax"}, {"of", "D"}, {"at", {0, 32}}});
    spec::Spec sp = clean(m);
    CHECK(sp.program->ops.back().kind == spec::OpKind::amax);
    CHECK(sp.program->ops.back().of.name == "D");
    CHECK(sp.program->ops.back().of.ptr == "/program/ops/8/of");
    auto j = nlohmann::json::parse(spec::to_json(sp))["program"]["ops"][8];
    CHECK(j["op"] == "amax");
    CHECK(j["a"] == "r");
    CHECK(j["of"] == "D");
    CHECK(j["at"] == nlohmann::json({0, 32}));
    m = program_with({{"op", "quantize"}, {"regs", "q"}, {"a", "r"}, {"format", "nvfp4"}, {"dst", "SF"}, {"of", "D"}});
    sp = clean(m);
    REQUIRE(sp.program->ops.back().quantize);
    CHECK(*sp.program->ops.back().quantize == spec::Quantize::nvfp4);
    j = nlohmann::json::parse(spec::to_json(sp))["program"]["ops"][8];
    CHECK(j["format"] == "nvfp4");
    CHECK(j["dst"] == "SF");
    m["program"]["ops"].back()["format"] = "mxfp6";
    Diagnostic x = only(parse(m.dump()));
    CHECK(x.rule == "SPEC-ENUM");
    CHECK(x.pointer == "/program/ops/8/format");
    m["program"]["ops"].back().erase("format");
    x = only(parse(m.dump()));
    CHECK(x.rule == "SPEC-MISSING-KEY");
    CHECK(x.pointer == "/program/ops/8/format");
    m = program_with({{"op", "geglu"}, {"regs", "y"}, {"a", "r"}, {"b", "r"}, {"approx", true}});
    sp = clean(m);
    REQUIRE(sp.program->ops.back().glu);
    CHECK(*sp.program->ops.back().glu == spec::Glu::geglu);
    CHECK(sp.program->ops.back().activation == Activation::gelu_tanh);
    CHECK(sp.program->ops.back().b.name == "r");
    CHECK(nlohmann::json::parse(spec::to_json(sp))["program"]["ops"][8]["op"] == "geglu");
  }
  // Row reductions are built: {"op": "reduce", "fn", "regs", "a"}, kept through to_json; an
  // unknown fn is SPEC-ENUM at /fn.
  {
    auto m = program_with({{"op", "reduce"}, {"fn", "absmax"}, {"regs", "y"}, {"a", "r"}});
    const spec::Spec sp = clean(m);
    CHECK(sp.program->ops.back().kind == spec::OpKind::reduce);
    CHECK(sp.program->ops.back().reduce_fn == ReduceFn::absmax);
    CHECK(nlohmann::json::parse(spec::to_json(sp))["program"]["ops"][8]["fn"] == "absmax");
    m["program"]["ops"].back()["fn"] = "min";
    const Diagnostic x = only(parse(m.dump()));
    CHECK(x.rule == "SPEC-ENUM");
    CHECK(x.pointer == "/program/ops/8/fn");
  }
  // The activations are built (docs/spec.md, "Activations"): "a" and "approx" (where the
  // composition is approximate), round-tripping through to_json; no "b".
  for (const auto& a : activations()) {
    CAPTURE(a.name);
    nlohmann::json op = {{"op", std::string(a.name)}, {"regs", "y"}, {"a", "r"}};
    if (a.approx) op["approx"] = true;
    auto m = program_with(op);
    const spec::Spec sp = clean(m);
    const auto& last = sp.program->ops.back();
    CHECK(last.kind == spec::OpKind::math);
    REQUIRE(last.activation);
    CHECK(*last.activation == a.a);
    CHECK(last.a.name == "r");
    CHECK(last.a.ptr == "/program/ops/8/a");
    CHECK(last.approx == a.approx);
    CHECK(spec::math_name(last) == a.name);
    const auto out = nlohmann::json::parse(spec::to_json(sp));
    CHECK(out["program"]["ops"][8] == op);
    CHECK(spec::to_json(clean(nlohmann::json::parse(spec::to_json(sp)))) == spec::to_json(sp));  // round-trips
    // A constant "a" parses (the rules refuse it: MATH-OPERANDS) and round-trips as its number.
    m["program"]["ops"].back()["a"] = -2.5;
    Diagnostics d3;
    auto k = spec::parse(m.dump(), d3);
    REQUIRE(k.spec);
    CHECK(k.spec->program->ops.back().value[0] == -2.5);
    CHECK(nlohmann::json::parse(spec::to_json(*k.spec))["program"]["ops"][8]["a"] == -2.5);
    // One operand: "b" is no member of an activation.
    m["program"]["ops"].back()["a"] = "r";
    m["program"]["ops"].back()["b"] = "r";
    const Diagnostic x = only(parse(m.dump()));
    CHECK(x.rule == "SPEC-UNKNOWN-KEY");
    CHECK(x.pointer == "/program/ops/8/b");
  }
  // The elementwise f32 functions are built (docs/spec.md, "Arithmetic"): they parse, and
  // round-trip through to_json.
  for (const auto& f : math_fns()) {
    CAPTURE(f.name);
    nlohmann::json op = {{"op", std::string(f.name)}, {"regs", "y"}, {"a", "r"}};
    if (f.operands >= 2) op["b"] = "r";
    if (f.operands >= 3) op["c"] = "r";
    if (!f.exact) op["approx"] = true;
    if (f.fn == MathFn::convert) op["dtype"] = "f16x2";
    auto m = program_with(op);
    const spec::Spec sp = clean(m);
    const auto& last = sp.program->ops.back();
    CHECK(last.kind == spec::OpKind::math);
    CHECK(last.fn == f.fn);
    CHECK(last.approx == !f.exact);
    CHECK(spec::to_json(clean(nlohmann::json::parse(spec::to_json(sp)))) == spec::to_json(sp));  // round-trips
  }
  // A constant operand (docs/spec.md, "Arithmetic"): a number instead of a register set's name,
  // kept through to_json; anything else is SPEC-TYPE at the operand.
  {
    auto m = program_with({{"op", "fma"}, {"regs", "y"}, {"a", "r"}, {"b", 0.5}, {"c", -3}});
    const spec::Spec sp = clean(m);
    const auto& last = sp.program->ops.back();
    CHECK(last.a.name == "r");
    CHECK_FALSE(last.value[0]);
    CHECK(last.value[1] == 0.5);
    CHECK(last.value[2] == -3.0);
    CHECK(last.c.ptr == "/program/ops/8/c");
    CHECK(nlohmann::json::parse(spec::to_json(sp))["program"]["ops"][8]["b"] == 0.5);
    m["program"]["ops"].back()["b"] = true;
    const Diagnostic x = only(parse(m.dump()));
    CHECK(x.rule == "SPEC-TYPE");
    CHECK(x.pointer == "/program/ops/8/b");
  }
  // A name that is neither built nor planned stays SPEC-ENUM.
  doc["program"]["ops"][1] = {{"op", "transpose"}};
  CHECK(only(parse(doc.dump())).rule == "SPEC-ENUM");
}

TEST_CASE("syntax errors carry line and column") {
  const Diagnostic x = only(parse("{\n  \"ptxgen\": 1,\n  \"name\": \"a\" \"target\"\n}"));
  CHECK(x.rule == "SPEC-JSON");
  CHECK(x.message == "expected ',' or '}' in object");
  CHECK(x.line == 3);
  CHECK(x.column == 15);
}

TEST_CASE("hostile input: each a diagnostic, never a crash") {
  CHECK(only(parse("")).rule == "SPEC-JSON");
  CHECK(only(parse("{")).rule == "SPEC-JSON");
  CHECK(only(parse("[1,]")).rule == "SPEC-JSON");
  CHECK(only(parse("{\"a\":\"\xff\"}")).rule == "SPEC-JSON");           // invalid UTF-8
  CHECK(only(parse("{\"a\":\"\xc0\xaf\"}")).rule == "SPEC-JSON");       // overlong UTF-8
  CHECK(only(parse("{\"a\":\"\\ud800\"}")).rule == "SPEC-JSON");        // lone surrogate
  CHECK(only(parse("{\"a\":1e}")).rule == "SPEC-JSON");
  CHECK(only(parse("{\"a\":01}")).rule == "SPEC-JSON");
  CHECK(only(parse("{} x")).rule == "SPEC-JSON");
  CHECK(only(parse(std::string(40, '[') + std::string(40, ']'))).rule == "SPEC-LIMIT-DEPTH");
  CHECK(only(parse("{\"a\":\"" + std::string(300, 'x') + "\"}")).rule == "SPEC-LIMIT-STRING");
  CHECK(only(parse(std::string(2 << 20, ' '))).rule == "SPEC-LIMIT-SIZE");
  CHECK(only(parse("{\"a\":1,\"a\":2}")).rule == "SPEC-DUPLICATE-KEY");
  CHECK(only(parse("[]")).rule == "SPEC-TYPE");
}

TEST_CASE("hostile input: the position table stays bounded however deep and wide the document") {
  // 30 levels of 254-byte keys, then arrays of zeros up to 1 MiB: ~520000 values whose pointers are
  // ~7.7 KB each. Keeping a position for each took 12 s and 4 GB (found while fuzzing); the reader
  // keeps at most 65536 positions and 4 MiB of pointer text.
  std::string doc;
  for (int i = 0; i < 30; ++i) doc += "{\"" + std::string(252, 'k') + (i < 10 ? "0" : "") + std::to_string(i) + "\":";
  std::string zeros = "[0";
  for (int i = 1; i < 4000; ++i) zeros += ",0";
  zeros += "]";
  std::string body = "[" + zeros;
  const size_t room = spec::Limits{}.max_bytes - doc.size() - 31;
  while (body.size() + zeros.size() + 1 < room) body += "," + zeros;
  doc += body + "]" + std::string(30, '}');
  REQUIRE(doc.size() <= spec::Limits{}.max_bytes);
  Diagnostics d;
  const spec::ParseResult r = spec::parse(doc, d);
  CHECK(r.positions.size() <= 65536);
  size_t bytes = 0;
  for (const auto& [ptr, pos] : r.positions) bytes += ptr.size();
  CHECK(bytes <= (size_t{4} << 20));
  CHECK(d.fired("SPEC-MISSING-KEY"));  // still read to the end and checked
  CHECK(d.fired("SPEC-UNKNOWN-KEY"));
  CHECK(r.positions.count("") == 1);
}

TEST_CASE("hostile input: control characters from the spec are printed as escapes") {
  Diagnostic x{"SPEC-NAME", Severity::error, "/a\x1b", "name \"x\x1b[2J\xc2\x9b\n\x7f\"", {"h\r"}, 1, 2};
  CHECK(format_text(x, "f\x07.json", nullptr) ==
        "error[SPEC-NAME]: name \"x\\u001b[2J\\u009b\\n\\u007f\"\n"
        "  --> f\\u0007.json:1:2 at /a\\u001b\n"
        "  = help: h\\r\n"
        "  = see: ptxgen explain SPEC-NAME\n");
}

TEST_CASE("integers: range-checked before use, floats and giants refused") {
  auto gemm_k = [](const std::string& v) {
    std::string base(rules::example_base());
    const auto at = base.find("\"k\": 4096");
    return base.substr(0, at) + "\"k\": " + v + base.substr(at + 9);
  };
  CHECK(only(parse(gemm_k("0"))).rule == "SPEC-INT-RANGE");
  CHECK(only(parse(gemm_k("-5"))).rule == "SPEC-INT-RANGE");
  CHECK(only(parse(gemm_k("2147483648"))).rule == "SPEC-INT-RANGE");
  CHECK(only(parse(gemm_k("18446744073709551615"))).rule == "SPEC-INT-RANGE");
  CHECK(only(parse(gemm_k("99999999999999999999999999"))).rule == "SPEC-INT-RANGE");
  CHECK(only(parse(gemm_k("1e400"))).rule == "SPEC-INT-RANGE");
  CHECK(only(parse(gemm_k("64.5"))).rule == "SPEC-TYPE");
  CHECK(only(parse(gemm_k("\"64\""))).rule == "SPEC-TYPE");
  CHECK(only(parse(gemm_k("null"))).rule == "SPEC-TYPE");
  const Diagnostic x = only(parse(gemm_k("0")));
  CHECK(x.pointer == "/gemm/k");
  CHECK(x.message == "\"k\" = 0 is outside [1, 2147483647]");
}

TEST_CASE("unknown keys: reported with the nearest known key") {
  const Diagnostic x = only(parse(with_gemm("\"stagse\": 3")));
  CHECK(x.rule == "SPEC-UNKNOWN-KEY");
  CHECK(x.pointer == "/gemm/stagse");
  CHECK(x.help.at(0) == "did you mean \"stages\"?");
}

TEST_CASE("names, targets and enums") {
  std::string base(rules::example_base());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  CHECK(only(parse(with("\"example\"", "\"a-b\""))).rule == "SPEC-NAME");
  CHECK(parse(with("\"example\"", "\"" + std::string(64, 'a') + "\"")).list().empty());
  const Diagnostic len = only(parse(with("\"example\"", "\"" + std::string(65, 'a') + "\"")));
  CHECK(len.rule == "SPEC-NAME-LENGTH");
  CHECK(len.message == "the name is 65 bytes long; at most 64 are allowed");
  const Diagnostic t = only(parse(with("sm_100a", "sm_100")));
  CHECK(t.rule == "SPEC-TARGET");
  CHECK(t.help.at(0) == "did you mean \"sm_100a\"?");
  const Diagnostic e = only(parse(with("\"dtype\": \"bf16\", \"major\": \"k\"}", "\"dtype\": \"bf61\", \"major\": \"k\"}")));
  CHECK(e.rule == "SPEC-ENUM");
  CHECK(e.pointer == "/gemm/a/dtype");
  CHECK(e.help.at(0) == "did you mean \"bf16\"?");
  CHECK(only(parse(with("\"major\": \"k\"}", "\"major\": \"n\"}"))).pointer == "/gemm/a/major");  // A is m or k
  CHECK(only(parse(with("\"a\": 128", "\"a\": 48"))).pointer == "/gemm/swizzle/a");
}

TEST_CASE("key order does not matter") {
  const std::string a = R"({"ptxgen":1,"name":"x","target":"sm_100a","gemm":{"m":64,"n":64,"k":64,
    "a":{"dtype":"bf16","major":"k"},"b":{"major":"k","dtype":"bf16"},"d":{"dtype":"bf16"},"accumulator":"f32",
    "tile":{"m":128,"n":64,"k":64}}})";
  const std::string b = R"({"gemm":{"tile":{"k":64,"n":64,"m":128},"accumulator":"f32","d":{"dtype":"bf16"},
    "b":{"dtype":"bf16","major":"k"},"a":{"major":"k","dtype":"bf16"},"k":64,"n":64,"m":64},"target":"sm_100a",
    "name":"x","ptxgen":1})";
  Diagnostics d1, d2;
  auto r1 = spec::parse(a, d1);
  auto r2 = spec::parse(b, d2);
  REQUIRE(r1.spec);
  REQUIRE(r2.spec);
  CHECK(spec::to_json(*r1.spec) == spec::to_json(*r2.spec));
}
}

// gemm.tile and gemm.stages left out: chosen by the documented rule (docs/spec.md, "Chosen when
// left out"), each choice recorded with its reason; an explicit field always wins.
TEST_SUITE("spec") {
TEST_CASE("tile and stages left out are chosen per target, types and problem shape") {
  struct Case {
    const char* target;
    const char* a;
    int cta_group;
    int64_t m, n;
    bool keep_stages;
    int64_t tm, tn, tk, stages;
    // sm_90a, the tile chosen: what else is chosen (schedule, epilogue, consumers, registers).
    std::vector<std::string> also;
  };
  const std::vector<std::string> wgmma = {"schedule persistent", "epilogue auto", "registers 40 / 232"};
  const std::vector<std::string> pingpong = {"schedule persistent", "epilogue auto", "consumers pingpong", "registers 40 / 232"};
  for (const Case& c : {Case{"sm_90a", "bf16", 1, 4096, 8192, false, 128, 256, 64, 4, wgmma},  // beside two 16 KB staging subtiles:
                        // (232448 - 2048 - 32768) / 49152 = 4 (beside the whole 64 KB tile: 3)
                        Case{"sm_90a", "bf16", 1, 128, 16384, false, 128, 128, 64, 5, pingpong},  // skinny M: ping-pong
                        Case{"sm_90a", "bf16", 1, 256, 16384, false, 128, 256, 64, 4,  // 128 tiles: one wave, data-parallel
                             {"schedule data_parallel", "epilogue auto", "registers 40 / 232"}},
                        Case{"sm_90a", "e4m3", 1, 4096, 8192, false, 128, 256, 128, 4, wgmma},  // a bf16 D: stages of 16 + 32 KB beside 32 KB too
                        Case{"sm_90a", "tf32", 1, 4096, 8192, false, 128, 256, 32, 2, wgmma},  // f32 D: a 128 KB staging tile
                        Case{"sm_100a", "bf16", 2, 4096, 8192, false, 256, 256, 64, 4, {}},
                        Case{"sm_100a", "bf16", 1, 4096, 8192, true, 128, 256, 64, 2, {}}}) {
    CAPTURE(c.target);
    CAPTURE(c.a);
    CAPTURE(c.m);
    auto j = nlohmann::ordered_json::parse(rules::example_base());
    j["target"] = c.target;
    auto& g = j["gemm"];
    g.erase("tile");
    if (c.keep_stages) g["stages"] = 2;
    else g.erase("stages");
    g["m"] = c.m;
    g["n"] = c.n;
    g["a"]["dtype"] = c.a;
    g["b"]["dtype"] = c.a;
    if (std::string(c.a) == "tf32") g["d"]["dtype"] = "f32";
    if (c.cta_group == 2) g["cta_group"] = 2, g["cluster"] = {2, 1, 1};
    Diagnostics d;
    const auto r = spec::parse(j.dump(), d);
    const std::string why = d.list().empty() ? std::string() : d.list()[0].message;
    REQUIRE_MESSAGE(r.spec, why);
    const spec::Gemm& x = *r.spec->gemm;
    CHECK(x.tile.m == c.tm);
    CHECK(x.tile.n == c.tn);
    CHECK(x.tile.k == c.tk);
    CHECK(x.stages == c.stages);
    // The tile, what else the target chooses with it, the cluster (unless the pair's is given), the
    // stages (unless kept).
    REQUIRE(x.chosen.size() == 1u + c.also.size() + (c.cta_group == 2 ? 0u : 1u) + (c.keep_stages ? 0u : 1u));
    CHECK(x.chosen[0].rfind("tile " + std::to_string(c.tm) + " x " + std::to_string(c.tn) + " x " + std::to_string(c.tk), 0) == 0);
    for (size_t i = 0; i < c.also.size(); ++i) CHECK(x.chosen[1 + i].rfind(c.also[i], 0) == 0);
    if (c.cta_group != 2) CHECK(x.chosen[1 + c.also.size()].rfind("cluster [1, 1, 1]: the CTA alone", 0) == 0);
    if (c.tn == 128) CHECK(x.chosen[0].find("would give 64 tiles for 132 multiprocessors (fewer than half a wave)") != std::string::npos);
    const bool tc = std::string(c.target) != "sm_90a";
    CHECK(x.schedule == (tc || c.m == 256 ? spec::Schedule::data_parallel : spec::Schedule::persistent));
    CHECK(x.epilogue == (tc ? spec::Epilogue::direct : spec::Epilogue::automatic));
    CHECK(x.consumers == (c.tn == 128 ? spec::Consumers::pingpong : spec::Consumers::cooperative));
    CHECK(x.registers.has_value() == !tc);
    // What the planner chose passes the rules (registers, shared memory with the staging tiles).
    Diagnostics all;
    rules::parse_and_check(j.dump(), all);
    CHECK_MESSAGE(!all.has_errors(), (all.list().empty() ? std::string() : all.list()[0].rule + ": " + all.list()[0].message));
  }
  // sm_90a: a field the spec gives wins over the planner's choice that comes with the tile.
  {
    auto j = nlohmann::ordered_json::parse(rules::example_base());
    j["target"] = "sm_90a";
    j["gemm"].erase("tile");
    j["gemm"].erase("stages");
    j["gemm"]["m"] = 128;
    j["gemm"]["n"] = 16384;
    j["gemm"]["schedule"] = "data_parallel";
    j["gemm"]["epilogue"] = "direct";
    Diagnostics d;
    const auto r = spec::parse(j.dump(), d);
    REQUIRE(r.spec);
    CHECK(r.spec->gemm->schedule == spec::Schedule::data_parallel);
    CHECK(r.spec->gemm->epilogue == spec::Epilogue::direct);
    CHECK(r.spec->gemm->consumers == spec::Consumers::cooperative);  // ping-pong needs the persistent schedule
    CHECK(r.spec->gemm->stages == 4);
  }
  // sm_90a, a gated activation (swiglu): D's staging tile is tile.n / 2 wide (128 x 128, 32 KB), so
  // the persistent 128 x 256 kernel keeps 4 stages beside it; gelu_tanh's 16-bit D of 256 columns
  // goes through two subtile buffers of 128 x 64 (32 KB: 4 stages, 3 beside the whole 64 KB
  // tile), and the rules accept what was chosen.
  for (const char* act : {"swiglu", "gelu_tanh"}) {
    CAPTURE(act);
    auto j = nlohmann::ordered_json::parse(rules::example_base());
    j["target"] = "sm_90a";
    j["gemm"].erase("tile");
    j["gemm"].erase("stages");
    j["gemm"]["n"] = 16384;
    j["gemm"]["activation"] = act;
    Diagnostics d;
    const auto r = spec::parse(j.dump(), d);
    REQUIRE(r.spec);
    CHECK(r.spec->gemm->tile.n == 256);
    CHECK(r.spec->gemm->schedule == spec::Schedule::persistent);
    CHECK(r.spec->gemm->stages == 4);
    Diagnostics all;
    rules::parse_and_check(j.dump(), all);
    CHECK_MESSAGE(!all.has_errors(), (all.list().empty() ? std::string() : all.list()[0].rule + ": " + all.list()[0].message));
  }
  // Tile and stages given: only the cluster is chosen; with the cluster given too, nothing.
  Diagnostics d;
  const auto r = spec::parse(rules::example_base(), d);
  REQUIRE(r.spec);
  CHECK(r.spec->gemm->chosen == std::vector<std::string>{"cluster [1, 1, 1]: the CTA alone"});
  auto given = nlohmann::json::parse(rules::example_base());
  given["gemm"]["cluster"] = {1, 1, 1};
  const auto r2 = spec::parse(given.dump(), d);
  REQUIRE(r2.spec);
  CHECK(r2.spec->gemm->chosen.empty());
}
}

// The gemm template's "scale" (docs/spec.md, "Block scaling"): the defaults of vec, the kind as
// written, what the parser refuses at which pointer, and to_json's round trip.
TEST_SUITE("spec") {
TEST_CASE("scale: vec from the dtype, kind as written, members checked, round trip") {
  auto gemm = [](const std::string& member) {
    Diagnostics d;
    auto r = spec::parse(with_gemm(member), d);
    return std::make_pair(r.spec, d);
  };
  {
    auto [s, d] = gemm(R"("scale": {"dtype": "ue4m3"})");
    REQUIRE(s);
    REQUIRE(s->gemm->scale);
    CHECK(s->gemm->scale->vec == 16);
    CHECK(!s->gemm->scale->kind);
    Diagnostics d2;
    auto again = spec::parse(spec::to_json(*s), d2);
    REQUIRE(again.spec);
    CHECK(spec::to_json(*again.spec) == spec::to_json(*s));
    CHECK(spec::to_json(*s).find(R"("scale": {
      "dtype": "ue4m3",
      "vec": 16
    })") != std::string::npos);
  }
  {
    auto [s, d] = gemm(R"("scale": {"dtype": "ue8m0", "kind": "mxf4nvf4"})");
    REQUIRE(s);
    CHECK(s->gemm->scale->vec == 32);
    CHECK(s->gemm->scale->kind == isa::Kind::mxf4nvf4);
  }
  struct Bad {
    const char* member;
    const char* rule;
    const char* pointer;
  };
  for (const Bad& b : {Bad{R"("scale": {"dtype": "e4m3"})", "SPEC-ENUM", "/gemm/scale/dtype"},
                       Bad{R"("scale": {"vec": 32})", "SPEC-MISSING-KEY", "/gemm/scale/dtype"},
                       Bad{R"("scale": {"dtype": "ue8m0", "vec": 0})", "SPEC-INT-RANGE", "/gemm/scale/vec"},
                       Bad{R"("scale": {"dtype": "ue8m0", "kind": "f8f6f4"})", "SPEC-ENUM", "/gemm/scale/kind"},
                       Bad{R"("scale": {"dtype": "ue8m0", "block": 32})", "SPEC-UNKNOWN-KEY", "/gemm/scale/block"},
                       Bad{R"("scale": {"dtype": "f32", "partials": 3})", "SPEC-INT-RANGE", "/gemm/scale/partials"},
                       Bad{R"("scale": {"dtype": "f32", "partials": "2"})", "SPEC-TYPE", "/gemm/scale/partials"},
                       Bad{R"("scale": "ue8m0")", "SPEC-TYPE", "/gemm/scale"}}) {
    CAPTURE(b.member);
    auto [s, d] = gemm(b.member);
    CHECK(!s);
    const Diagnostic x = only(d);
    CHECK(x.rule == b.rule);
    CHECK(x.pointer == b.pointer);
  }
}
}

TEST_SUITE("spec") {
TEST_CASE("sparse: a boolean, written back by to_json when true") {
  Diagnostics d;
  auto r = spec::parse(with_gemm(R"("sparse": true)"), d);
  REQUIRE(r.spec);
  CHECK(r.spec->gemm->sparse);
  CHECK(spec::to_json(*r.spec).find("\"sparse\": true") != std::string::npos);
  Diagnostics d2;
  auto plain = spec::parse(rules::example_base(), d2);
  REQUIRE(plain.spec);
  CHECK(spec::to_json(*plain.spec).find("sparse") == std::string::npos);
  const Diagnostic x = only(parse(with_gemm(R"("sparse": "2:4")")));
  CHECK(x.rule == "SPEC-TYPE");
  CHECK(x.pointer == "/gemm/sparse");
}
}
