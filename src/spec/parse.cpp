// Spec parsing: JSON document -> typed Spec. See docs/spec.md for the format.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "json_reader.hpp"
#include "obj_reader.hpp"
#include "parse_program.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::spec {

using nlohmann::json;

int64_t leading_dimension(const Operand& op, int64_t contiguous_extent) {
  if (op.ld > 0) return op.ld;
  const int64_t bits = isa::value_bits(op.dtype);
  return (contiguous_extent * bits + 127) / 128 * 128 / bits;
}

std::string_view name(Schedule s) { return s == Schedule::persistent ? "persistent" : "data_parallel"; }
std::string_view name(Epilogue e) { return e == Epilogue::tma ? "tma" : e == Epilogue::automatic ? "auto" : "direct"; }
std::string_view name(Consumers c) { return c == Consumers::pingpong ? "pingpong" : "cooperative"; }

std::string_view name(GroupsLayout l) {
  switch (l) {
    case GroupsLayout::masked: return "masked";
    case GroupsLayout::contiguous: return "contiguous";
    case GroupsLayout::k_grouped: return "k_grouped";
  }
  return "?";
}

std::string_view name(ASource s) {
  switch (s) {
    case ASource::smem: return "smem";
    case ASource::tmem: return "tmem";
    case ASource::registers: return "registers";
  }
  return "?";
}

namespace {

const std::initializer_list<isa::DType> kInputTypes = {
    isa::DType::f16,  isa::DType::bf16, isa::DType::tf32, isa::DType::e4m3, isa::DType::e5m2,
    isa::DType::e2m3, isa::DType::e3m2, isa::DType::e2m1, isa::DType::s8,   isa::DType::u8};

constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 1;

void parse_operand(ObjReader& parent, std::string_view key, char mn_letter, Operand& out, bool& ok) {
  const json* o = parent.object(key, true);
  if (!o) {
    ok = false;
    return;
  }
  ObjReader r(*o, parent.ptr(key), parent);
  auto t = r.choice("dtype", true, dtype_choices(kInputTypes));
  const std::string mn(1, mn_letter);
  auto m = r.choice<isa::Major>("major", true, {{"k", isa::Major::k}, {mn, isa::Major::mn}});
  if (r.has("ld")) {
    auto ld = r.integer("ld", false, 1, kMaxExtent);
    if (ld) out.ld = *ld;
    else ok = false;
  }
  r.finish();
  if (!t || !m) {
    ok = false;
    return;
  }
  out.dtype = *t;
  out.major = *m;
}


std::optional<Gemm> parse_gemm(const json& o, const ObjReader& root) {
  Diagnostics& d = root.diags();
  ObjReader r(o, "/gemm", root);
  Gemm g;
  bool ok = true;
  auto need = [&](auto opt, auto& dst) {
    if (opt) dst = *opt;
    else ok = false;
  };
  need(r.integer("m", true, 1, kMaxExtent), g.m);
  need(r.integer("n", true, 1, kMaxExtent), g.n);
  need(r.integer("k", true, 1, kMaxExtent), g.k);
  parse_operand(r, "a", 'm', g.a, ok);
  parse_operand(r, "b", 'n', g.b, ok);
  if (const json* dd = r.object("d", true)) {
    ObjReader rd(*dd, r.ptr("d"), r);
    need(rd.choice("dtype", true,
                   dtype_choices({isa::DType::f32, isa::DType::f16, isa::DType::bf16, isa::DType::s32, isa::DType::e4m3, isa::DType::e5m2,
                                  isa::DType::e2m1})),
         g.d);
    if (const json* sc = rd.get("scale", false, json::value_t::boolean, "a boolean")) g.d_scale = sc->get<bool>();
    rd.finish();
  } else {
    ok = false;
  }
  need(r.choice("accumulator", true, dtype_choices({isa::DType::f32, isa::DType::f16, isa::DType::s32})),
       g.accumulator);
  if (const json* t = r.object("tile", false)) {
    ObjReader rt(*t, r.ptr("tile"), r);
    need(rt.integer("m", true, 1, 1024), g.tile.m);
    need(rt.integer("n", true, 1, 1024), g.tile.n);
    need(rt.integer("k", true, 1, 1024), g.tile.k);
    rt.finish();
  } else if (r.has("tile")) {
    ok = false;
  }
  if (r.has("stages")) need(r.integer("stages", false, 1, 32), g.stages);
  if (r.has("raster")) need(r.integer("raster", false, 1, 64), g.raster);
  if (r.has("schedule"))
    need(r.choice<Schedule>("schedule", false, {{"data_parallel", Schedule::data_parallel}, {"persistent", Schedule::persistent}}),
         g.schedule);
  if (r.has("epilogue"))
    need(r.choice<Epilogue>("epilogue", false, {{"direct", Epilogue::direct}, {"tma", Epilogue::tma}, {"auto", Epilogue::automatic}}),
         g.epilogue);
  if (r.has("consumers"))
    need(r.choice<Consumers>("consumers", false, {{"cooperative", Consumers::cooperative}, {"pingpong", Consumers::pingpong}}),
         g.consumers);
  if (const json* s = r.object("swizzle", false)) {
    ObjReader rs(*s, r.ptr("swizzle"), r);
    for (auto [key, dst] : {std::pair<const char*, isa::Swizzle*>{"a", &g.swizzle_a}, {"b", &g.swizzle_b}}) {
      if (const json* v = rs.any(key)) {
        if (auto sw = swizzle_value(*v, rs.ptr(key), rs)) *dst = *sw;
        else ok = false;
      }
    }
    rs.finish();
  }
  if (r.has("a_source"))
    need(r.choice<ASource>("a_source", false,
                           {{"smem", ASource::smem}, {"tmem", ASource::tmem}, {"registers", ASource::registers}}),
         g.a_source);
  if (r.has("cta_group")) {
    const json* cg = r.get("cta_group", false, json::value_t::number_integer, "an integer");
    auto v = cg ? r.check_integer(*cg, r.ptr("cta_group"), "cta_group", 1, 2) : std::nullopt;
    if (v) g.cta_group = static_cast<int>(*v);
    else ok = false;
  }
  const json* sc_obj = r.object("scale", false);
  if (const json* sc = sc_obj) {
    ObjReader rs(*sc, r.ptr("scale"), r);
    Scale x;
    // f32: block-wise factors (A's per row and 128 of K, B's per 128 x 128), not a block-scaled kind.
    need(rs.choice("dtype", true, dtype_choices({isa::DType::ue8m0, isa::DType::ue4m3, isa::DType::f32})), x.dtype);
    x.vec = x.dtype == isa::DType::ue4m3 ? 16 : x.dtype == isa::DType::f32 ? 128 : 32;
    if (rs.has("vec")) {
      if (auto v = rs.integer("vec", false, 1, 1024)) x.vec = static_cast<int>(*v);
      else ok = false;
    }
    if (rs.has("kind"))
      x.kind = rs.choice<isa::Kind>("kind", false,
                                    {{"mxf8f6f4", isa::Kind::mxf8f6f4}, {"mxf4", isa::Kind::mxf4}, {"mxf4nvf4", isa::Kind::mxf4nvf4}});
    if (rs.has("kind") && !x.kind) ok = false;
    // Block-wise f32 factors: the consumers' sets of partial sums (SCALE-BLOCK-PARTIALS judges them).
    if (rs.has("partials")) {
      if (auto v = rs.integer("partials", false, 1, 2)) x.partials = static_cast<int>(*v);
      else ok = false;
    }
    rs.finish();
    g.scale = x;
  } else if (r.has("scale")) {
    ok = false;
  }
  if (const json* rg = r.object("registers", false)) {
    ObjReader rr(*rg, r.ptr("registers"), r);
    Gemm::Registers x;
    need(rr.integer("producer", true, 24, 256), x.producer);
    need(rr.integer("consumer", true, 24, 256), x.consumer);
    rr.finish();
    g.registers = x;
  } else if (r.has("registers")) {
    ok = false;
  }
  if (r.has("sparse")) {
    if (const json* sp = r.get("sparse", false, json::value_t::boolean, "a boolean")) g.sparse = sp->get<bool>();
    else ok = false;
  }
  // A sparse MMA's factors each cover twice the elements of K (isa::stored_scale_vec): the default
  // block doubles with it (ue8m0 per 64, ue4m3 per 32), as CUTLASS's sparse block-scaled MMAs take.
  if (g.scale && g.sparse && !(sc_obj && sc_obj->contains("vec"))) g.scale->vec *= 2;
  g.cluster = {g.cta_group, 1, 1};
  g.cluster_given = r.has("cluster");
  g.schedule_given = r.has("schedule");
  g.epilogue_given = r.has("epilogue");
  g.consumers_given = r.has("consumers");
  if (const json* c = r.get("cluster", false, json::value_t::array, "an array of 3 integers")) {
    if (c->size() != 3) {
      d.error("SPEC-TYPE", r.ptr("cluster"), "\"cluster\" must be an array of 3 integers, not " +
                                                 std::to_string(c->size()) + " elements");
      ok = false;
    } else {
      for (size_t i = 0; i < 3; ++i) {
        const std::string p = ptr_join(r.ptr("cluster"), i);
        if (!(*c)[i].is_number()) {
          d.error("SPEC-TYPE", p, "cluster dimensions must be integers");
          ok = false;
          continue;
        }
        auto v = r.check_integer((*c)[i], p, "cluster[" + std::to_string(i) + "]", 1, 16);
        if (v) g.cluster[i] = *v;
        else ok = false;
      }
    }
  }
  // The fused epilogue (docs/spec.md, "Epilogues"): "alpha": NUMBER | "input", "c": {"dtype": T},
  // "beta": NUMBER | "input", "bias": {"dtype": T[, "along": "n" | "m"]}, "activation": NAME, "residual": {"dtype": T}.
  // A constant's range is MATH-DTYPE's (the f32 it becomes), judged on the lowered kernel.
  // Or the string "input": the kernel input of the member's name, one f32 (spec::Gemm::alpha_input);
  // any other string is SPEC-ENUM at the member.
  auto constant = [&](const char* key, std::optional<double>& out, bool& input) {
    if (const json* v = r.any(key); v && v->is_string()) {
      if (r.choice(key, false, Choices<bool>{{"input", true}})) input = true;
      else ok = false;
    } else if (const json* n = r.get(key, false, json::value_t::number_integer, "a number or \"input\"")) {
      out = n->get<double>();  // any number
    }
  };
  constant("alpha", g.alpha, g.alpha_input);
  constant("beta", g.beta, g.beta_input);
  auto tensor = [&](const char* key, std::optional<isa::DType>& out) {
    if (const json* t = r.object(key, false)) {
      ObjReader rt(*t, r.ptr(key), r);
      if (auto x = rt.choice("dtype", true, dtype_choices({isa::DType::f32, isa::DType::f16, isa::DType::bf16}))) out = *x;
      else ok = false;
      rt.finish();
    }
  };
  tensor("c", g.c);
  tensor("residual", g.residual);
  if (const json* a = r.get("amax", false, json::value_t::boolean, "a boolean")) g.amax = a->get<bool>();
  if ((g.beta || g.beta_input) && !g.c && !r.has("c"))
    d.error("SPEC-MISSING-KEY", r.ptr("beta"), "\"beta\" scales the kernel input C (D = alpha A x B + beta C), and the gemm has no \"c\"")
        .help = {"give C's type: \"c\": {\"dtype\": \"bf16\"} (or f16, f32)", "or leave \"beta\" out"};
  if (const json* b = r.object("bias", false)) {
    ObjReader rb(*b, r.ptr("bias"), r);
    spec::Gemm::Bias x;
    need(rb.choice("dtype", true, dtype_choices({isa::DType::f32, isa::DType::f16, isa::DType::bf16})), x.dtype);
    if (auto a = rb.choice("along", false, Choices<bool>{{"n", false}, {"m", true}})) x.along_m = *a;
    rb.finish();
    g.bias = x;
  }
  {
    // The activations of "Activations" (an index into activations()), then the gated ones, which
    // pair B's two halves (kGlu + Glu).
    constexpr int kGlu = 100;
    Choices<int> acts;
    for (const auto& a : activations()) acts.emplace_back(std::string(a.name), static_cast<int>(a.a));
    for (Glu x : {Glu::swiglu, Glu::geglu}) acts.emplace_back(std::string(name(x)), kGlu + static_cast<int>(x));
    if (r.has("activation")) {
      if (auto a = r.choice("activation", false, acts)) {
        if (*a >= kGlu) g.glu = static_cast<Glu>(*a - kGlu);
        else g.activation = static_cast<Activation>(*a);
      }
    }
  }
  if (r.has("quantize")) {
    if (auto q = r.choice("quantize", false,
                          Choices<spec::Quantize>{
                              {"mxfp8", spec::Quantize::mxfp8}, {"mxfp4", spec::Quantize::mxfp4}, {"nvfp4", spec::Quantize::nvfp4}}))
      g.quantize = *q;
  }
  // Grouped GEMM (docs/spec.md, "Grouped GEMM"): the layout and the spec's group count, each
  // checked here; what is built of them is the rules' (check_groups).
  if (const json* gr = r.object("groups", false)) {
    ObjReader rg(*gr, r.ptr("groups"), r);
    Gemm::Groups x;
    need(rg.choice("layout", true,
                   Choices<GroupsLayout>{{"masked", GroupsLayout::masked},
                                         {"contiguous", GroupsLayout::contiguous},
                                         {"k_grouped", GroupsLayout::k_grouped}}),
         x.layout);
    // At most 65535: the groups are a grid dimension (y and z take 65535 CTAs).
    need(rg.integer("count", true, 1, 65535), x.count);
    if (rg.has("align")) {
      x.align_given = true;
      need(rg.integer("align", false, 1, 1024), x.align);
    }
    rg.finish();
    g.groups = x;
  } else if (r.has("groups")) {
    ok = false;
  }
  r.not_built({"batch"}, "batched GEMM is not built yet (nor a member of its own)",
              {"nearest built: one launch of this kernel per batch entry (the launch header takes m, n and k at run time)",
               "batched GEMM is the masked grouped layout with every group full: \"groups\": {\"layout\": \"masked\", "
               "\"count\": B}, every masked_m[g] = m (docs/spec.md, \"Grouped GEMM\")"});
  r.finish();
  if (!ok || d.has_errors()) return std::nullopt;
  return g;
}

// The name becomes the .entry name and the default file names NAME.ptx / NAME.cubin.
constexpr size_t kMaxName = 64;

}  // namespace

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxName) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

ParseResult parse(std::string_view text, Diagnostics& d, const Limits& limits) {
  ParseResult out;
  JsonRead doc = read_json(text, limits, d);
  out.positions = std::move(doc.positions);
  if (!doc.value) return out;
  const json& root = *doc.value;
  if (!root.is_object()) {
    d.error("SPEC-TYPE", "", "a spec is a JSON object, not " + json_type_name(root));
    return out;
  }
  ObjReader r(root, "", d, &doc.literals);
  Spec s;
  if (auto v = r.integer("ptxgen", true, INT64_MIN, INT64_MAX)) {
    if (*v != 1)
      d.error("SPEC-VERSION", "/ptxgen", "spec format version " + std::to_string(*v) +
                                             " is not supported; this ptxgen reads version 1")
          .help.push_back("write \"ptxgen\": 1 and follow docs/spec.md");
  }
  if (auto n = r.string("name", true)) {
    if (n->size() > kMaxName)
      d.error("SPEC-NAME-LENGTH", "/name",
              "the name is " + std::to_string(n->size()) + " bytes long; at most " + std::to_string(kMaxName) +
                  " are allowed")
          .help.push_back("shorten the name; the plan and the PTX header record the kernel's parameters");
    else if (!valid_name(*n))
      d.error("SPEC-NAME", "/name",
              "name " + quote(*n) + " is not a PTX entry name: [A-Za-z_][A-Za-z0-9_]*, at most 64 characters");
    s.name = *n;
  }
  Choices<isa::Arch> targets;
  for (auto a : isa::all_archs()) targets.emplace_back(std::string(isa::target_info(a).name), a);
  if (auto t = r.choice("target", true, targets, "SPEC-TARGET")) s.target = *t;
  const bool has_gemm = root.contains("gemm");
  const bool has_program = root.contains("program");
  if (has_gemm == has_program) {
    d.error("SPEC-TEMPLATE", "", has_gemm ? "a spec has exactly one of \"gemm\" or \"program\", not both"
                                          : "a spec needs one of \"gemm\" or \"program\"");
  } else if (has_gemm) {
    if (const json* g = r.object("gemm", true)) s.gemm = parse_gemm(*g, r);
    if (s.gemm && !d.has_errors()) choose_gemm_defaults(*s.gemm, s.target);
  } else {
    if (const json* p = r.object("program", true)) s.program = parse_program(*p, d, &doc.literals);
  }
  r.finish();
  if (d.has_errors()) return out;
  out.spec = std::move(s);
  return out;
}

std::string to_json(const Spec& s) {
  nlohmann::ordered_json j;
  j["ptxgen"] = s.version;
  j["name"] = s.name;
  j["target"] = std::string(isa::target_info(s.target).name);
  if (s.gemm) {
    const Gemm& g = *s.gemm;
    auto major = [](isa::Major m, const char* mn) { return m == isa::Major::k ? std::string("k") : std::string(mn); };
    auto swz = [](isa::Swizzle w) -> nlohmann::ordered_json {
      if (w == isa::Swizzle::b128_base32b) return "128_base32b";
      return w == isa::Swizzle::none ? 0 : isa::bytes(w);
    };
    nlohmann::ordered_json o;
    o["m"] = g.m;
    o["n"] = g.n;
    o["k"] = g.k;
    o["a"] = {{"dtype", std::string(isa::name(g.a.dtype))}, {"major", major(g.a.major, "m")}};
    o["b"] = {{"dtype", std::string(isa::name(g.b.dtype))}, {"major", major(g.b.major, "n")}};
    if (g.a.ld) o["a"]["ld"] = g.a.ld;
    if (g.b.ld) o["b"]["ld"] = g.b.ld;
    o["d"] = {{"dtype", std::string(isa::name(g.d))}};
    if (g.d_scale) o["d"]["scale"] = true;
    o["accumulator"] = std::string(isa::name(g.accumulator));
    o["tile"] = {{"m", g.tile.m}, {"n", g.tile.n}, {"k", g.tile.k}};
    o["stages"] = g.stages;
    o["raster"] = g.raster;
    o["schedule"] = std::string(name(g.schedule));
    o["epilogue"] = std::string(name(g.epilogue));
    o["consumers"] = std::string(name(g.consumers));
    o["swizzle"] = {{"a", swz(g.swizzle_a)}, {"b", swz(g.swizzle_b)}};
    o["a_source"] = std::string(name(g.a_source));
    o["cta_group"] = g.cta_group;
    o["cluster"] = g.cluster;
    if (g.sparse) o["sparse"] = true;
    if (g.alpha) o["alpha"] = *g.alpha;
    if (g.alpha_input) o["alpha"] = "input";
    if (g.c) o["c"] = {{"dtype", std::string(isa::name(*g.c))}};
    if (g.beta) o["beta"] = *g.beta;
    if (g.beta_input) o["beta"] = "input";
    if (g.bias) o["bias"] = {{"dtype", std::string(isa::name(g.bias->dtype))}, {"along", g.bias->along_m ? "m" : "n"}};
    if (g.activation) o["activation"] = std::string(info(*g.activation).name);
    if (g.glu) o["activation"] = std::string(name(*g.glu));
    if (g.residual) o["residual"] = {{"dtype", std::string(isa::name(*g.residual))}};
    if (g.amax) o["amax"] = true;
    if (g.quantize) o["quantize"] = std::string(name(*g.quantize));
    if (g.registers) o["registers"] = {{"producer", g.registers->producer}, {"consumer", g.registers->consumer}};
    if (g.groups) {
      o["groups"] = {{"layout", std::string(name(g.groups->layout))}, {"count", g.groups->count}};
      if (g.groups->align_given) o["groups"]["align"] = g.groups->align;
    }
    if (g.scale) {
      o["scale"] = {{"dtype", std::string(isa::name(g.scale->dtype))}, {"vec", g.scale->vec}};
      if (g.scale->kind) o["scale"]["kind"] = std::string(isa::name(*g.scale->kind));
      if (g.scale->partials) o["scale"]["partials"] = g.scale->partials;
    }
    j["gemm"] = o;
  }
  if (s.program) j["program"] = nlohmann::ordered_json::parse(program_to_json(*s.program));
  return j.dump(2);
}

}  // namespace ptxgen::spec
