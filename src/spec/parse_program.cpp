// The program level of the spec: JSON -> spec::Program (docs/spec.md, "The program level").
//
// This stage checks the JSON shape only (members, types, ranges, names of choices) and reports
// the SPEC-* rules; names, views, shapes and the order of ops are the rule table's business
// (the verifiers of the lowered kernel, src/rules/verify*.cpp).
#include "parse_program.hpp"

#include <functional>
#include <set>

#include "obj_reader.hpp"

namespace ptxgen::spec {

std::string_view name(OpKind k) {
  switch (k) {
    case OpKind::load: return "load";
    case OpKind::copy: return "copy";
    case OpKind::mma: return "mma";
    case OpKind::tmem_load: return "tmem_load";
    case OpKind::tmem_store: return "tmem_store";
    case OpKind::store: return "store";
    case OpKind::commit: return "commit";
    case OpKind::wait: return "wait";
    case OpKind::math: return "math";
    case OpKind::read: return "read";
    case OpKind::reduce: return "reduce";
    case OpKind::amax: return "amax";
    case OpKind::quantize: return "quantize";
    case OpKind::fill: return "fill";
    case OpKind::loop: return "loop";
  }
  return "?";
}

namespace {

constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 1;

Choices<isa::DType> all_dtypes() {
  return dtype_choices({isa::DType::f16, isa::DType::bf16, isa::DType::tf32, isa::DType::f32, isa::DType::e4m3,
                        isa::DType::e5m2, isa::DType::e2m3, isa::DType::e3m2, isa::DType::e2m1, isa::DType::s8,
                        isa::DType::u8, isa::DType::s32, isa::DType::ue8m0, isa::DType::ue4m3, isa::DType::b8});
}

const Choices<SubByte> kFormats = {{"padded", SubByte::padded}, {"packed", SubByte::packed}};
const Choices<Place> kPlaces = {{"rows", Place::rows},
                                {"layout_f::0", Place::layout_f_0},
                                {"layout_f::16", Place::layout_f_16},
                                {"layout_f", Place::layout_f}};
const Choices<TmemLayout> kLayouts = {{"rows", TmemLayout::rows},
                                      {"warpx2::02_13", TmemLayout::warpx2_02_13},
                                      {"warpx2::01_23", TmemLayout::warpx2_01_23},
                                      {"warpx4", TmemLayout::warpx4},
                                      {"layout_f::0", TmemLayout::layout_f_0},
                                      {"layout_f::16", TmemLayout::layout_f_16},
                                      {"layout_b", TmemLayout::layout_b}};

class Parser {
 public:
  Parser(Diagnostics& d, const Literals* literals) : d_(d), lits_(literals) {}

  std::optional<Program> program(const json& o) {
    ObjReader r(o, "/program", d_, lits_);
    p_.threads_ptr = r.ptr("threads");
    if (r.has("threads"))
      if (auto v = r.integer("threads", false, 32, 1024)) p_.threads = static_cast<int>(*v);
    p_.cta_group_ptr = r.ptr("cta_group");
    if (r.has("cta_group"))
      if (auto v = r.integer("cta_group", false, 1, 2)) p_.cta_group = static_cast<int>(*v);
    p_.sizes_ptr = r.ptr("sizes");
    if (const json* z = r.object("sizes", false)) sizes(*z, r.ptr("sizes"), r);
    if (const json* g = r.object("grid", false)) grid(*g, r.ptr("grid"), r);
    p_.roles_ptr = r.ptr("roles");
    if (const json* ro = r.object("roles", false)) each(*ro, r.ptr("roles"), [&](const std::string& n, const json& v, const std::string& at) { role(n, v, at); });
    if (const json* g = r.object("globals", false)) each(*g, r.ptr("globals"), [&](const std::string& n, const json& v, const std::string& at) { global(n, v, at); });
    if (const json* s = r.object("smem", false)) each(*s, r.ptr("smem"), [&](const std::string& n, const json& v, const std::string& at) { tile(n, v, at); });
    if (const json* t = r.object("tmem", false)) each(*t, r.ptr("tmem"), [&](const std::string& n, const json& v, const std::string& at) { view_entry(n, v, at); });
    if (const json* ops = r.get("ops", true, json::value_t::array, "an array of ops")) {
      for (size_t i = 0; i < ops->size(); ++i)
        if (auto o = op((*ops)[i], ptr_join(r.ptr("ops"), i))) p_.ops.push_back(std::move(*o));
    }
    r.finish();
    if (d_.has_errors()) return std::nullopt;
    return std::move(p_);
  }

 private:
  template <typename F>
  void each(const json& obj, const std::string& at, F f) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const std::string p = ptr_join(at, it.key());
      if (!it->is_object()) {
        d_.error("SPEC-TYPE", p, quote(it.key()) + " must be an object, not " + json_type_name(*it));
        continue;
      }
      f(it.key(), *it, p);
    }
  }

  // [a, b] of two integers in [lo, hi].
  std::optional<std::array<int64_t, 2>> pair(ObjReader& r, std::string_view key, int64_t lo, int64_t hi) {
    const json* v = r.get(key, false, json::value_t::array, "an array of 2 integers");
    if (!v) return std::nullopt;
    if (v->size() != 2) {
      d_.error("SPEC-TYPE", r.ptr(key),
               quote(std::string(key)) + " must be an array of 2 integers, not " + std::to_string(v->size()) + " elements");
      return std::nullopt;
    }
    std::array<int64_t, 2> out{};
    for (size_t i = 0; i < 2; ++i) {
      const std::string p = ptr_join(r.ptr(key), i);
      if (!(*v)[i].is_number()) {
        d_.error("SPEC-TYPE", p, quote(std::string(key)) + " holds integers, not " + json_type_name((*v)[i]));
        return std::nullopt;
      }
      auto x = r.check_integer((*v)[i], p, std::string(key) + "[" + std::to_string(i) + "]", lo, hi);
      if (!x) return std::nullopt;
      out[i] = *x;
    }
    return out;
  }

  void global(const std::string& n, const json& v, const std::string& at) {
    ObjReader r(v, at, d_, lits_);
    GlobalTensor g;
    g.name = n;
    g.ptr = at;
    if (auto t = r.choice("dtype", true, all_dtypes())) g.dtype = *t;
    g.format_ptr = r.ptr("format");
    if (r.has("format"))
      if (auto f = r.choice("format", false, kFormats)) g.format = *f;
    extents(r, g);
    r.finish();
    p_.globals.push_back(g);
  }

  // "sizes": {"m": 4096, ...}: the .u32 parameters, each with the spec's value.
  // A derived size: {"of": SIZE, "div": D, "mul": M}, ceil(of / D) * M with M <= D, so that it
  // stays within the range of the size it comes from (PROGRAM-SIZE checks `of`).
  void sizes(const json& obj, const std::string& at, ObjReader& parent) {
    ObjReader r(obj, at, parent);
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const std::string p = ptr_join(at, it.key());
      if (it->is_object()) {
        const json* o = r.object(it.key(), true);
        ObjReader rd(*o, p, r);
        Size z{it.key(), p, 0, ref(rd, "of", true), 1, 1, false, {}};
        if (rd.has("div"))
          if (auto d = rd.integer("div", false, 1, 1 << 16)) z.div = *d;
        if (rd.has("mul"))
          if (auto m = rd.integer("mul", false, 1, 1 << 16)) z.mul = *m;
        z.exact_ptr = rd.ptr("exact");
        if (const json* e = rd.get("exact", false, json::value_t::boolean, "a boolean")) z.exact = e->get<bool>();
        if (z.mul > z.div)
          d_.error("SPEC-INT-RANGE", rd.ptr("mul"),
                   "\"mul\" = " + std::to_string(z.mul) + " is more than \"div\" = " + std::to_string(z.div) +
                       ": a derived size is at most the size it comes from, rounded up to whole \"div\"s")
              .help.push_back("use a \"mul\" of at most \"div\"");
        rd.finish();
        p_.sizes.push_back(z);
        continue;
      }
      if (auto v = r.integer(it.key(), true, 1, kMaxExtent)) p_.sizes.push_back({it.key(), p, *v, {}, 1, 1, false, {}});
    }
    r.finish();
    // Derived values from the spec's values of the sizes they come from (a base of its own: one
    // level, PROGRAM-SIZE).
    for (auto& z : p_.sizes)
      if (z.of)
        for (const auto& b : p_.sizes)
          if (b.name == z.of.name && !b.of) z.value = (b.value + z.div - 1) / z.div * z.mul;
  }

  const Size* size(const std::string& n) const {
    for (const auto& z : p_.sizes)
      if (z.name == n) return &z;
    return nullptr;
  }

  // A global's "shape": two extents, each an integer or the name of a size (its value here, the
  // kernel's at run time). A name no size declares is PROGRAM-SIZE (rules/check_pipeline.cpp).
  // An array of exactly two entries under `key` ("an array of 2 `what`"), each given to
  // `each(i, value, pointer)`.
  template <typename F>
  void two(ObjReader& r, std::string_view key, bool required, const std::string& what, F each) {
    const json* v = r.get(key, required, json::value_t::array, ("an array of 2 " + what).c_str());
    if (!v) return;
    if (v->size() != 2) {
      d_.error("SPEC-TYPE", r.ptr(key),
               quote(std::string(key)) + " must be an array of 2 " + what + ", not " + std::to_string(v->size()) + " elements");
      return;
    }
    for (size_t i = 0; i < 2; ++i) each(i, (*v)[i], ptr_join(r.ptr(key), i));
  }

  void extents(ObjReader& r, GlobalTensor& g) {
    two(r, "shape", true, "extents", [&](size_t i, const json& x, const std::string& p) {
      int64_t& ext = i ? g.cols : g.rows;
      std::string& named = i ? g.cols_size : g.rows_size;
      if (x.is_string()) {
        named = x.get<std::string>();
        if (const Size* z = size(named)) ext = z->value;
      } else if (!x.is_number()) {
        d_.error("SPEC-TYPE", p, "an extent is an integer or the name of a size, not " + json_type_name(x));
      } else if (auto n = r.check_integer(x, p, "shape[" + std::to_string(i) + "]", 1, kMaxExtent)) {
        ext = *n;
      }
    });
  }

  void grid(const json& obj, const std::string& at, ObjReader& parent) {
    ObjReader r(obj, at, parent);
    Grid g;
    g.ptr = at;
    g.tile_ptr = r.ptr("tile");
    if (auto t = pair(r, "tile", 1, 1024)) g.tile_m = (*t)[0], g.tile_n = (*t)[1];
    else if (!r.has("tile")) r.get("tile", true, json::value_t::array, "an array of 2 integers");
    g.m = ref(r, "m", false);
    g.n = ref(r, "n", false);
    if (!g.m) g.m = {"m", g.ptr};
    if (!g.n) g.n = {"n", g.ptr};
    g.raster_ptr = r.ptr("raster");
    if (r.has("raster"))
      if (auto v = r.integer("raster", false, 1, 64)) g.raster = static_cast<int>(*v);
    r.finish();
    p_.grid = g;
  }

  void role(const std::string& n, const json& v, const std::string& at) {
    ObjReader r(v, at, d_, lits_);
    Role x;
    x.name = n;
    x.ptr = at;
    x.warps_ptr = r.ptr("warps");
    x.warps = warp_list(r, true);
    r.finish();
    p_.roles.push_back(x);
  }

  // "warps": [w, ...] of warp numbers 0 .. 31.
  std::vector<int> warp_list(ObjReader& r, bool required) {
    std::vector<int> out;
    const json* w = r.get("warps", required, json::value_t::array, "an array of warp numbers");
    if (!w) return out;
    for (size_t i = 0; i < w->size(); ++i) {
      const std::string p = ptr_join(r.ptr("warps"), i);
      if (!(*w)[i].is_number()) {
        d_.error("SPEC-TYPE", p, "warp numbers are integers, not " + json_type_name((*w)[i]));
        continue;
      }
      if (auto x = r.check_integer((*w)[i], p, "warps[" + std::to_string(i) + "]", 0, 31)) out.push_back(static_cast<int>(*x));
    }
    return out;
  }

  std::optional<std::array<int64_t, 2>> shape(ObjReader& r) {
    if (!r.has("shape")) {
      r.get("shape", true, json::value_t::array, "an array of 2 integers");
      return std::nullopt;
    }
    return pair(r, "shape", 1, kMaxExtent);
  }

  void tile(const std::string& n, const json& v, const std::string& at) {
    ObjReader r(v, at, d_, lits_);
    SmemTile t;
    t.name = n;
    t.ptr = at;
    if (auto x = r.choice("dtype", true, all_dtypes())) t.dtype = *x;
    if (auto s = shape(r)) {
      if ((*s)[0] > 65536 || (*s)[1] > 65536)
        d_.error("SPEC-INT-RANGE", r.ptr("shape"), "a shared-memory tile is at most 65536 x 65536 elements");
      t.rows = static_cast<int>(std::min<int64_t>((*s)[0], 65536));
      t.cols = static_cast<int>(std::min<int64_t>((*s)[1], 65536));
    }
    t.major_ptr = r.ptr("major");
    if (r.has("major"))
      if (auto m = r.choice<isa::Major>("major", false, {{"k", isa::Major::k}, {"mn", isa::Major::mn}})) t.major = *m;
    t.swizzle_ptr = r.ptr("swizzle");
    if (const json* s = r.any("swizzle"))
      if (auto sw = swizzle_value(*s, r.ptr("swizzle"), r)) t.swizzle = *sw;
    t.align_ptr = r.ptr("align");
    if (r.has("align"))
      if (auto a = r.integer("align", false, 1, 1 << 20)) t.align = static_cast<uint32_t>(*a);
    t.format_ptr = r.ptr("format");
    if (r.has("format"))
      if (auto f = r.choice("format", false, kFormats)) t.format = *f;
    t.stages_ptr = r.ptr("stages");
    if (r.has("stages"))
      if (auto n = r.integer("stages", false, 1, 32)) t.stages = static_cast<int>(*n);
    r.finish();
    p_.smem.push_back(t);
  }

  // A named view: registered under its name.
  void view_entry(const std::string& n, const json& v, const std::string& at) {
    const int idx = view(v, at);
    if (idx >= 0) p_.views[static_cast<size_t>(idx)].name = n;
  }

  // One view object; returns its index in p_.views (or -1).
  int view(const json& v, const std::string& at) {
    ObjReader r(v, at, d_, lits_);
    TmemView x;
    x.ptr = at;
    const bool is_alloc = v.contains("columns");
    int kinds = is_alloc + v.contains("slice") + v.contains("cast") + v.contains("alias");
    if (kinds != 1) {
      d_.error("SPEC-VIEW", at,
               kinds == 0 ? "a tensor-memory view needs one of \"columns\" (an allocation), \"slice\", \"cast\" or \"alias\""
                          : "a tensor-memory view has exactly one of \"columns\", \"slice\", \"cast\" and \"alias\"")
          .help.push_back("write {\"columns\": 256} for an allocation, {\"slice\": {\"of\": ...}}, {\"cast\": {\"of\": ...}} or {\"alias\": NAME}");
      return -1;
    }
    if (is_alloc) {
      x.kind = TmemView::Kind::alloc;
      x.columns_ptr = r.ptr("columns");
      if (auto c = r.integer("columns", true, 1, 1 << 16)) x.columns = static_cast<int>(*c);
      cast_fields(r, x, false);
      r.finish();
    } else if (const json* s = r.any("slice")) {
      x.kind = TmemView::Kind::slice;
      if (!s->is_object()) return type_error(r.ptr("slice"), "\"slice\"", "an object", *s);
      ObjReader rs(*s, r.ptr("slice"), r);
      link(rs, x);
      x.lanes_ptr = rs.ptr("lanes");
      x.cols_ptr = rs.ptr("columns");
      if (rs.has("lanes")) x.lanes = pair(rs, "lanes", 0, 1 << 16);
      if (rs.has("columns")) x.cols = pair(rs, "columns", 0, 1 << 16);
      rs.finish();
      r.finish();
    } else if (const json* c = r.any("cast")) {
      x.kind = TmemView::Kind::cast;
      if (!c->is_object()) return type_error(r.ptr("cast"), "\"cast\"", "an object", *c);
      ObjReader rc(*c, r.ptr("cast"), r);
      link(rc, x);
      cast_fields(rc, x, true);
      rc.finish();
      r.finish();
    } else {
      x.kind = TmemView::Kind::alias;
      const json* a = r.any("alias");
      x.of.ptr = r.ptr("alias");
      link_value(*a, x);
      r.finish();
    }
    p_.views.push_back(x);
    return static_cast<int>(p_.views.size() - 1);
  }

  int type_error(const std::string& p, const std::string& what, const char* want, const json& v) {
    d_.error("SPEC-TYPE", p, what + " must be " + want + ", not " + json_type_name(v));
    return -1;
  }

  void link(ObjReader& r, TmemView& x) {
    x.of.ptr = r.ptr("of");
    const json* of = r.any("of");
    if (!of) {
      r.get("of", true, json::value_t::string, "a view name or a view object");
      return;
    }
    link_value(*of, x);
  }

  // "of" / "alias": a name or an inline view (chains nest as deep as the input limits allow).
  void link_value(const json& v, TmemView& x) {
    if (v.is_string()) {
      x.of.name = v.get<std::string>();
      if (x.of.name.empty()) d_.error("SPEC-TYPE", x.of.ptr, "a view name must not be empty");
    } else if (v.is_object()) {
      if (v.contains("columns")) {
        d_.error("SPEC-VIEW", x.of.ptr, "an allocation cannot be written inline: it needs a name")
            .help.push_back("declare the allocation under /program/tmem and refer to it by name");
        return;
      }
      x.of_inline = view(v, x.of.ptr);
    } else {
      d_.error("SPEC-TYPE", x.of.ptr, "a view reference is a name or a view object, not " + json_type_name(v));
    }
  }

  void cast_fields(ObjReader& r, TmemView& x, bool with_layout) {
    x.dtype_ptr = r.ptr("dtype");
    x.packing_ptr = r.ptr("packing");
    if (r.has("dtype"))
      if (auto t = r.choice("dtype", false, all_dtypes())) x.dtype = *t;
    if (r.has("packing"))
      if (auto p = r.integer("packing", false, 1, 8)) x.packing = static_cast<int>(*p);
    if (!with_layout) return;
    x.layout_ptr = r.ptr("layout");
    x.rows_ptr = r.ptr("rows");
    if (r.has("layout"))
      if (auto l = r.choice("layout", false, kLayouts)) x.layout = *l;
    if (r.has("rows"))
      if (auto n = r.integer("rows", false, 1, 1 << 16)) x.rows = static_cast<int>(*n);
  }

  Ref ref(ObjReader& r, std::string_view key, bool required) {
    Ref out;
    out.ptr = r.ptr(key);
    if (auto s = r.string(key, required)) {
      out.name = *s;
      if (out.name.empty()) d_.error("SPEC-TYPE", out.ptr, quote(std::string(key)) + " must name something");
    }
    return out;
  }

  std::optional<Op> op(const json& v, const std::string& at) {
    if (!v.is_object()) {
      d_.error("SPEC-TYPE", at, "an op is an object, not " + json_type_name(v));
      return std::nullopt;
    }
    ObjReader r(v, at, d_, lits_);
    Op o;
    o.ptr = at;
    const Choices<OpKind> kinds = {{"load", OpKind::load},           {"copy", OpKind::copy},
                                   {"mma", OpKind::mma},             {"tmem_load", OpKind::tmem_load},
                                   {"tmem_store", OpKind::tmem_store}, {"store", OpKind::store},
                                   {"commit", OpKind::commit},       {"wait", OpKind::wait},
                                   {"read", OpKind::read},           {"reduce", OpKind::reduce},
                                   {"amax", OpKind::amax},           {"quantize", OpKind::quantize},
                                   {"fill", OpKind::fill},           {"loop", OpKind::loop}};
    Choices<OpKind> all = kinds;
    for (const auto& f : math_fns()) all.emplace_back(std::string(f.name), OpKind::math);
    for (const auto& a : activations()) all.emplace_back(std::string(a.name), OpKind::math);
    for (const Glu g : {Glu::swiglu, Glu::geglu}) all.emplace_back(std::string(name(g)), OpKind::math);
    // Arithmetic on register sets is the next step of the IR (docs/spec.md, "Not built (yet)").
    // The elementwise f32 functions (comparisons and select among them), the activations (gated
    // ones included), the row reductions, amax and block quantization are built (docs/spec.md,
    // "Arithmetic"); the rest is not. A conversion to packed 16-bit pairs is a function ("convert",
    // "dtype": "bf16x2"); one to a narrower type is a store's.
    static const std::set<std::string> kArithmetic = {"softmax"};
    if (const auto* op = v.contains("op") && v.at("op").is_string() ? v.at("op").get_ptr<const std::string*>() : nullptr;
        op && kArithmetic.count(*op)) {
      d_.error("SPEC-NOT-BUILT", at + "/op",
               "\"op\": \"" + *op + "\": arithmetic on register sets beyond the elementwise functions, activations, row reductions, "
               "amax and block quantization (softmax as one op) is not built yet")
          .help = {"nearest built: the elementwise f32 functions, activations and row reductions (docs/spec.md, \"Arithmetic\") over tmem_load'ed "
                   "registers: a softmax is reduce max, sub, exp2, reduce sum, rcp and mul (specs/prog_reduce_softmax_f32.json)"};
      return std::nullopt;
    }
    auto k = r.choice("op", true, all);
    if (!k) {
      for (auto it = v.begin(); it != v.end(); ++it) r.any(it.key());  // no cascade of unknown keys
      r.finish();
      return std::nullopt;
    }
    o.kind = *k;
    if (o.kind != OpKind::loop) o.role = ref(r, "role", false);
    switch (o.kind) {
      case OpKind::load:
      case OpKind::store:
      case OpKind::read:
      case OpKind::amax:
      case OpKind::quantize:
        if (o.kind == OpKind::load || o.kind == OpKind::read) o.src = ref(r, "src", true);
        if (o.kind != OpKind::load && o.kind != OpKind::amax) o.regs = ref(r, "regs", true);
        if (o.kind == OpKind::amax || o.kind == OpKind::quantize) {
          // {"op": "amax", "a": x, "dst": SCALAR, "of": D, "at": ...}; {"op": "quantize", "regs": q,
          // "a": x, "format": "mxfp8", "dst": FACTORS, "of": D, "at": ...}
          o.a = ref(r, "a", true);
          o.of = ref(r, "of", true);
        }
        if (o.kind == OpKind::quantize) {
          o.quantize_ptr = r.ptr("format");
          o.quantize = r.choice("format", true,
                                Choices<Quantize>{{"mxfp8", Quantize::mxfp8}, {"mxfp4", Quantize::mxfp4}, {"nvfp4", Quantize::nvfp4}});
        }
        if (o.kind == OpKind::read) o.like = ref(r, "like", true);
        else o.dst = ref(r, "dst", true);
        o.at_ptr = r.ptr("at");
        o.has_at = r.has("at");
        if (o.has_at) position(r, o);
        o.per_cta_ptr = r.ptr("per_cta");
        if (r.has("per_cta"))
          if (auto a = pair(r, "per_cta", 0, kMaxExtent)) {
            o.per_cta = *a;
            o.has_per_cta = true;
          }
        if (o.kind == OpKind::load) {
          o.via_ptr = r.ptr("via");
          if (auto v = r.choice("via", false, Choices<bool>{{"ld", false}, {"tma", true}})) o.tma = *v;
          if (r.has("place"))
            if (auto v = r.choice("place", false, kPlaces)) o.place = *v, o.place_ptr = r.ptr("place");
        }
        if (o.kind == OpKind::store) {
          // "via": "tma" through the staging tile "stage" (docs/spec.md, "TMA stores"); "st",
          // the default, each thread's st.global of its elements.
          o.via_ptr = r.ptr("via");
          if (auto v = r.choice("via", false, Choices<bool>{{"st", false}, {"tma", true}})) o.tma = *v;
          o.stage = ref(r, "stage", o.tma);
        }
        break;
      case OpKind::copy:
        o.src = ref(r, "src", true);
        o.dst = ref(r, "dst", true);
        o.rows_ptr = r.ptr("rows");
        o.cols_ptr = r.ptr("cols");
        if (r.has("rows")) o.rows = pair(r, "rows", 0, 1 << 16);
        if (r.has("cols")) o.cols = pair(r, "cols", 0, 1 << 16);
        break;
      case OpKind::mma: mma(r, o); break;
      case OpKind::tmem_load:
      case OpKind::tmem_store:
      case OpKind::fill: ldst(r, o); break;
      case OpKind::commit:
      case OpKind::wait: o.barrier = ref(r, "barrier", true); break;
      case OpKind::math: math(r, o, v.at("op").get<std::string>()); break;
      case OpKind::reduce: {
        // {"op": "reduce", "fn": "max" | "sum" | "absmax", "regs": y, "a": x}
        Choices<ReduceFn> fns;
        for (size_t i = 0; i < kReduceNames.size(); ++i) fns.emplace_back(std::string(kReduceNames[i]), static_cast<ReduceFn>(i));
        o.reduce_fn_ptr = r.ptr("fn");
        if (auto f = r.choice("fn", true, fns)) o.reduce_fn = *f;
        o.regs = ref(r, "regs", true);
        o.a = ref(r, "a", true);
        break;
      }
      case OpKind::loop: loop(r, o); break;
    }
    // Not an unknown member like any other: say why an op has none.
    if (r.any("cta_group"))
      d_.error("SPEC-UNKNOWN-KEY", r.ptr("cta_group"),
               "an op has no \"cta_group\": .cta_group is one value per kernel (PTX ISA 9.1 §9.7.16.9.2, §9.7.16.10.9.1, "
               "§9.7.16.12.1: all tcgen05 instructions within a kernel must specify the same value for .cta_group)")
          .help.push_back("set it once for the whole program: \"cta_group\": 2 at /program/cta_group (1, the default, "
                          "is one CTA; 2 a CTA pair)");
    r.finish();
    return o;
  }

  // "at": [row, col], each an integer or {"base": b, "m_tile": x, "n_tile": y, "k_block": z}:
  // b + x * (the CTA's tile row) + y * (its tile column) + z * (the loop's iteration).
  void position(ObjReader& r, Op& o) {
    two(r, "at", false, "positions", [&](size_t i, const json& x, const std::string& p) {
      if (x.is_object()) {
        ObjReader ra(x, p, r);
        auto term = [&](const char* key, int64_t& out) {
          if (ra.has(key))
            if (auto n = ra.integer(key, false, 0, kMaxExtent)) out = *n;
        };
        term("base", o.at[i]);
        term("m_tile", o.at_step[i].m_tile);
        term("n_tile", o.at_step[i].n_tile);
        term("k_block", o.at_step[i].k_block);
        ra.finish();
      } else if (!x.is_number()) {
        d_.error("SPEC-TYPE", p, "a position is an integer or an object {\"base\", \"m_tile\", \"n_tile\", \"k_block\"}, not " +
                                     json_type_name(x));
      } else if (auto n = r.check_integer(x, p, "at[" + std::to_string(i) + "]", 0, kMaxExtent)) {
        o.at[i] = *n;
      }
    });
  }

  // {"op": "loop", "over": SIZE, "block": B, "ops": [...]} or {"op": "loop", "trips": N, ...}.
  void loop(ObjReader& r, Op& o) {
    o.over = ref(r, "over", false);
    o.block_ptr = r.ptr("block");
    o.trips_ptr = r.ptr("trips");
    if (r.has("block"))
      if (auto b = r.integer("block", false, 1, 1 << 16)) o.block = *b;
    if (r.has("trips"))
      if (auto t = r.integer("trips", false, 1, 1 << 20)) o.trips = *t;
    o.body_ptr = r.ptr("ops");
    if (const json* ops = r.get("ops", true, json::value_t::array, "an array of ops")) {
      // A loop inside a loop is parsed (so its pointer can be reported) but refused (PROGRAM-LOOP);
      // the input's depth limit bounds the recursion.
      for (size_t i = 0; i < ops->size(); ++i)
        if (auto b = op((*ops)[i], ptr_join(r.ptr("ops"), i))) o.body.push_back(std::move(*b));
    }
  }

  // {"op": FN, "regs": y, "a": x[, "b": w[, "c": z]][, "approx": true]}: y = FN(x, w, z) element by
  // element; an operand is a register set's name or a number (a constant, MATH-DTYPE judges its
  // range, MATH-OPERANDS an op of constants only). An activation takes "a" only.
  void math(ObjReader& r, Op& o, const std::string& fn) {
    for (const auto& f : math_fns())
      if (f.name == fn) o.fn = f.fn;
    for (const auto& a : activations())
      if (a.name == fn) o.activation = a.a;
    for (const Glu g : {Glu::swiglu, Glu::geglu})
      if (name(g) == fn) o.glu = g, o.activation = glu_gate(g);
    // A gated activation takes the gate "a" and up "b"; another activation "a" only.
    const int operands = o.glu ? 2 : o.activation ? 1 : info(o.fn).operands;
    o.regs = ref(r, "regs", true);
    auto operand = [&](const char* key, Ref& out, std::optional<double>& value) {
      const json* v = r.any(key);
      if (v && v->is_number()) {
        out.ptr = r.ptr(key);
        value = v->get<double>();
        return;
      }
      if (v && !v->is_string()) {
        d_.error("SPEC-TYPE", r.ptr(key), quote(std::string(key)) + " must name a register set or be a number, not " + json_type_name(*v));
        out.ptr = r.ptr(key);
        return;
      }
      out = ref(r, key, true);
    };
    operand("a", o.a, o.value[0]);
    if (operands >= 2) operand("b", o.b, o.value[1]);
    if (operands >= 3) operand("c", o.c, o.value[2]);
    o.approx_ptr = r.ptr("approx");
    if (const json* a = r.get("approx", false, json::value_t::boolean, "a boolean")) o.approx = a->get<bool>();
    // convert: to packed pairs of a 16-bit float (docs/spec.md, "Packed half-precision
    // arithmetic"); a conversion to a narrower type for memory is the store's.
    if (!o.activation && o.fn == MathFn::convert) {
      o.dtype_ptr = r.ptr("dtype");
      if (auto t = r.choice<isa::DType>("dtype", true, {{"bf16x2", isa::DType::bf16}, {"f16x2", isa::DType::f16}})) o.convert_to = *t;
    }
  }

  void mma(ObjReader& r, Op& o) {
    o.a = ref(r, "a", true);
    o.b = ref(r, "b", true);
    o.d = ref(r, "d", true);
    o.accumulate_ptr = r.ptr("accumulate");
    if (const json* acc = r.any("accumulate")) {
      if (acc->is_boolean()) o.accumulate = acc->get<bool>();
      else if (acc->is_string() && acc->get<std::string>() == "after_first") o.accumulate_after_first = true;
      else
        d_.error("SPEC-TYPE", o.accumulate_ptr,
                 "\"accumulate\" is true, false or \"after_first\" (in a loop: D = A x B in the first iteration, += after), not " +
                     (acc->is_string() ? quote(acc->get<std::string>()) : json_type_name(*acc)));
    }
    o.scale_ptr = r.ptr("scale");
    if (const json* s = r.object("scale", false)) {
      ObjReader rs(*s, r.ptr("scale"), r);
      o.scale_a = ref(rs, "a", true);
      o.scale_b = ref(rs, "b", true);
      o.vec_ptr = rs.ptr("vec");
      if (rs.has("vec"))
        if (auto v = rs.integer("vec", false, 1, 1024)) o.vec = static_cast<int>(*v);
      rs.finish();
    }
    o.sparse_ptr = r.ptr("sparse");
    if (const json* s = r.object("sparse", false)) {
      ObjReader rs(*s, r.ptr("sparse"), r);
      o.metadata = ref(rs, "metadata", true);
      rs.finish();
    }
    o.kind_ptr = r.ptr("kind");
    if (r.has("kind")) {
      Choices<isa::Kind> ks;
      for (auto k : {isa::Kind::f16, isa::Kind::tf32, isa::Kind::f8f6f4, isa::Kind::i8, isa::Kind::mxf8f6f4,
                     isa::Kind::mxf4, isa::Kind::mxf4nvf4})
        ks.emplace_back(std::string(isa::name(k)), k);
      o.kind_override = r.choice("kind", false, ks);
    }
  }

  // tmem_load, tmem_store; and fill ({"op": "fill", "regs": m, "like": VIEW, "value": v, "shape"...}),
  // whose registers are those a tmem_load of the view with the same members would fill.
  void ldst(ObjReader& r, Op& o) {
    if (o.kind == OpKind::fill) {
      o.like = ref(r, "like", true);
      o.regs = ref(r, "regs", true);
      o.a.ptr = r.ptr("value");
      if (const json* v = r.get("value", true, json::value_t::number_integer, "a number")) o.value[0] = v->get<double>();
    } else if (o.kind == OpKind::tmem_load) {
      o.src = ref(r, "src", true);
      o.regs = ref(r, "regs", true);
    } else {
      o.dst = ref(r, "dst", true);
      o.regs = ref(r, "regs", true);
    }
    o.shape_ptr = r.ptr("shape");
    if (r.has("shape")) {
      Choices<isa::LdShape> shapes;
      for (auto s : isa::all_ld_shapes()) shapes.emplace_back(std::string(isa::info(s).name), s);
      o.shape = r.choice("shape", false, shapes);
    }
    o.num_ptr = r.ptr("num");
    if (r.has("num"))
      if (auto n = r.integer("num", false, 1, 128)) o.num = static_cast<int>(*n);
    o.warps_ptr = r.ptr("warps");
    o.warps = warp_list(r, false);
    if (o.kind == OpKind::fill) return;  // a fill holds f32 elements (no .pack::16b)
    const char* pk = o.kind == OpKind::tmem_load ? "pack" : "unpack";
    o.pack_ptr = r.ptr(pk);
    if (const json* p = r.get(pk, false, json::value_t::boolean, "a boolean")) o.pack = p->get<bool>();
  }

  Diagnostics& d_;
  const Literals* lits_ = nullptr;
  Program p_;
};

}  // namespace

std::optional<Program> parse_program(const json& program, Diagnostics& d, const Literals* literals) {
  return Parser(d, literals).program(program);
}

std::string program_to_json(const Program& p) {
  using oj = nlohmann::ordered_json;
  auto dt = [](isa::DType t) { return std::string(isa::name(t)); };
  oj j;
  j["threads"] = p.threads;
  if (p.cta_group != 1) j["cta_group"] = p.cta_group;
  if (!p.sizes.empty()) {
    oj z = oj::object();
    for (const auto& x : p.sizes) {
      if (x.of) {
        z[x.name] = {{"of", x.of.name}, {"div", x.div}, {"mul", x.mul}};
        if (x.exact) z[x.name]["exact"] = true;
      } else {
        z[x.name] = x.value;
      }
    }
    j["sizes"] = z;
  }
  if (p.grid) j["grid"] = {{"tile", {p.grid->tile_m, p.grid->tile_n}}, {"m", p.grid->m.name}, {"n", p.grid->n.name}, {"raster", p.grid->raster}};
  if (!p.roles.empty()) {
    oj ro = oj::object();
    for (const auto& x : p.roles) ro[x.name] = {{"warps", x.warps}};
    j["roles"] = ro;
  }
  oj g = oj::object();
  for (const auto& x : p.globals) {
    auto extent = [](int64_t v, const std::string& n) { return n.empty() ? oj(v) : oj(n); };
    g[x.name] = {{"dtype", dt(x.dtype)}, {"shape", {extent(x.rows, x.rows_size), extent(x.cols, x.cols_size)}}};
    if (isa::value_bits(x.dtype) < 8) g[x.name]["format"] = x.format == SubByte::packed ? "packed" : "padded";
  }
  j["globals"] = g;
  oj s = oj::object();
  for (const auto& t : p.smem) {
    oj o = {{"dtype", dt(t.dtype)}, {"shape", {t.rows, t.cols}}, {"major", t.major == isa::Major::k ? "k" : "mn"}};
    if (t.swizzle == isa::Swizzle::b128_base32b) o["swizzle"] = "128_base32b";
    else o["swizzle"] = t.swizzle == isa::Swizzle::none ? 0 : isa::bytes(t.swizzle);
    if (t.align) o["align"] = t.align;
    if (isa::value_bits(t.dtype) < 8) o["format"] = t.format == SubByte::packed ? "packed" : "padded";
    if (t.stages != 1) o["stages"] = t.stages;
    s[t.name] = o;
  }
  j["smem"] = s;
  // Views: named ones at top level, inline ones nested where they were written.
  std::function<oj(const TmemView&)> view = [&](const TmemView& v) -> oj {
    oj of;
    if (v.of_inline >= 0) of = view(p.views[static_cast<size_t>(v.of_inline)]);
    else of = v.of.name;
    oj cast = oj::object();
    if (v.dtype) cast["dtype"] = dt(*v.dtype);
    if (v.packing) cast["packing"] = *v.packing;
    if (v.layout) cast["layout"] = std::string(name(*v.layout));
    if (v.rows) cast["rows"] = *v.rows;
    switch (v.kind) {
      case TmemView::Kind::alloc: {
        oj a = {{"columns", v.columns}};
        a.update(cast);
        return a;
      }
      case TmemView::Kind::slice: {
        oj sl = {{"of", of}};
        if (v.lanes) sl["lanes"] = {(*v.lanes)[0], (*v.lanes)[1]};
        if (v.cols) sl["columns"] = {(*v.cols)[0], (*v.cols)[1]};
        return {{"slice", sl}};
      }
      case TmemView::Kind::cast: {
        oj c = {{"of", of}};
        c.update(cast);
        return {{"cast", c}};
      }
      case TmemView::Kind::alias: return {{"alias", of}};
    }
    return oj();
  };
  std::map<std::string, oj> named;
  for (const auto& v : p.views)
    if (!v.name.empty()) named[v.name] = view(v);
  oj t = oj::object();
  for (auto& [n, v] : named) t[n] = v;
  j["tmem"] = t;
  std::function<oj(const Op&)> op = [&](const Op& o) -> oj {
    oj x = {{"op", std::string(name(o.kind))}};
    auto put = [&](const char* k, const Ref& r) {
      if (r) x[k] = r.name;
    };
    put("role", o.role);
    switch (o.kind) {
      case OpKind::load:
      case OpKind::store:
      case OpKind::read:
      case OpKind::amax:
      case OpKind::quantize: {
        put("src", o.src);
        put("regs", o.regs);
        put("a", o.a);
        put("like", o.like);
        put("dst", o.dst);
        put("of", o.of);
        if (o.quantize) x["format"] = std::string(name(*o.quantize));
        oj at = oj::array();
        for (size_t i = 0; i < 2; ++i) {
          const AtStep& st = o.at_step[i];
          if (!st.any()) {
            at.push_back(o.at[i]);
            continue;
          }
          at.push_back({{"base", o.at[i]}, {"m_tile", st.m_tile}, {"n_tile", st.n_tile}, {"k_block", st.k_block}});
        }
        x["at"] = at;
        if (o.has_per_cta) x["per_cta"] = {o.per_cta[0], o.per_cta[1]};
        if (o.tma) x["via"] = "tma";
        put("stage", o.stage);
        if (!o.place_ptr.empty())
          for (const auto& [n, v] : kPlaces)
            if (v == o.place) x["place"] = n;
        break;
      }
      case OpKind::copy:
        put("src", o.src);
        put("dst", o.dst);
        if (o.rows) x["rows"] = {(*o.rows)[0], (*o.rows)[1]};
        if (o.cols) x["cols"] = {(*o.cols)[0], (*o.cols)[1]};
        break;
      case OpKind::mma:
        put("a", o.a);
        put("b", o.b);
        put("d", o.d);
        if (o.accumulate_after_first) x["accumulate"] = "after_first";
        else x["accumulate"] = o.accumulate;
        if (o.scale_a) x["scale"] = {{"a", o.scale_a.name}, {"b", o.scale_b.name}, {"vec", o.vec}};
        if (o.metadata) x["sparse"] = {{"metadata", o.metadata.name}};
        if (o.kind_override) x["kind"] = std::string(isa::name(*o.kind_override));
        break;
      case OpKind::tmem_load:
      case OpKind::tmem_store:
        put("src", o.src);
        put("dst", o.dst);
        put("regs", o.regs);
        if (o.shape) x["shape"] = std::string(isa::info(*o.shape).name);
        if (o.num) x["num"] = *o.num;
        x[o.kind == OpKind::tmem_load ? "pack" : "unpack"] = o.pack;
        if (!o.warps.empty()) x["warps"] = o.warps;
        break;
      case OpKind::fill:
        put("like", o.like);
        put("regs", o.regs);
        if (o.value[0]) x["value"] = *o.value[0];
        if (o.shape) x["shape"] = std::string(isa::info(*o.shape).name);
        if (o.num) x["num"] = *o.num;
        if (!o.warps.empty()) x["warps"] = o.warps;
        break;
      case OpKind::commit:
      case OpKind::wait: put("barrier", o.barrier); break;
      case OpKind::math:
        x["op"] = std::string(math_name(o));
        put("regs", o.regs);
        put("a", o.a);
        put("b", o.b);
        put("c", o.c);
        for (size_t k = 0; k < 3; ++k)  // a constant operand is its number
          if (o.value[k]) x[std::string(1, static_cast<char>('a' + k))] = *o.value[k];
        if (o.approx) x["approx"] = true;
        if (!o.activation && o.fn == MathFn::convert) x["dtype"] = std::string(isa::name(o.convert_to)) + "x2";
        break;
      case OpKind::reduce:
        x["fn"] = std::string(kReduceNames[static_cast<size_t>(o.reduce_fn)]);
        put("regs", o.regs);
        put("a", o.a);
        break;
      case OpKind::loop: {
        put("over", o.over);
        if (o.block) x["block"] = o.block;
        if (o.trips) x["trips"] = o.trips;
        oj body = oj::array();
        for (const auto& b : o.body) body.push_back(op(b));
        x["ops"] = body;
        break;
      }
    }
    return x;
  };
  oj ops = oj::array();
  for (const auto& o : p.ops) ops.push_back(op(o));
  j["ops"] = ops;
  return j.dump();
}

}  // namespace ptxgen::spec
