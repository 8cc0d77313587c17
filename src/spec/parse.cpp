// Spec parsing: JSON document -> typed Spec. See docs/spec.md for the format.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "json_reader.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::spec {

using nlohmann::json;

int64_t leading_dimension(const Operand& op, int64_t contiguous_extent) {
  if (op.ld > 0) return op.ld;
  const int64_t bits = isa::value_bits(op.dtype);
  return (contiguous_extent * bits + 127) / 128 * 128 / bits;
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

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string json_type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// Reads the members of one JSON object, remembering which were used so the rest can be reported
// as unknown keys (with the nearest known key suggested).
class ObjReader {
 public:
  ObjReader(const json& obj, std::string at, Diagnostics& d) : obj_(obj), at_(std::move(at)), d_(d) {}

  const std::string& at() const { return at_; }
  std::string ptr(std::string_view key) const { return ptr_join(at_, key); }

  // Marks `key` as known; true when present.
  bool has(std::string_view key) {
    known_.insert(std::string(key));
    return obj_.contains(std::string(key));
  }
  // Marks `key` as known; the raw value or nullptr, with no type check.
  const json* any(std::string_view key) {
    known_.insert(std::string(key));
    auto it = obj_.find(std::string(key));
    return it == obj_.end() ? nullptr : &*it;
  }

  // nullptr when absent (reported if required) or of the wrong type (reported).
  const json* get(std::string_view key, bool required, json::value_t want, const char* want_name) {
    known_.insert(std::string(key));
    auto it = obj_.find(std::string(key));
    if (it == obj_.end()) {
      if (required)
        d_.error("SPEC-MISSING-KEY", ptr(key), "required member " + quote(std::string(key)) + " is missing")
            .help.push_back("add \"" + std::string(key) + "\": <" + want_name + "> to the object at " +
                            (at_.empty() ? "/" : at_));
      return nullptr;
    }
    const json& v = *it;
    bool ok = v.type() == want;
    if (want == json::value_t::number_integer) ok = v.is_number();
    if (!ok) {
      d_.error("SPEC-TYPE", ptr(key),
               quote(std::string(key)) + " must be " + want_name + ", not " + json_type_name(v));
      return nullptr;
    }
    return &v;
  }

  std::optional<int64_t> integer(std::string_view key, bool required, int64_t lo, int64_t hi) {
    const json* v = get(key, required, json::value_t::number_integer, "an integer");
    if (!v) return std::nullopt;
    return check_integer(*v, ptr(key), std::string(key), lo, hi, d_);
  }

  static std::optional<int64_t> check_integer(const json& v, const std::string& p,
                                              const std::string& what, int64_t lo, int64_t hi,
                                              Diagnostics& d) {
    const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (v.is_number_float()) {
      const double x = v.get<double>();
      if (!std::isfinite(x) || std::floor(x) != x) {
        d.error("SPEC-TYPE", p, quote(what) + " must be an integer, not " + v.dump());
        return std::nullopt;
      }
      d.error("SPEC-INT-RANGE", p, quote(what) + " = " + v.dump() + " is outside " + range);
      return std::nullopt;
    }
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      d.error("SPEC-INT-RANGE", p, quote(what) + " = " + v.dump() + " is outside " + range);
      return std::nullopt;
    }
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) {
      d.error("SPEC-INT-RANGE", p, quote(what) + " = " + std::to_string(x) + " is outside " + range);
      return std::nullopt;
    }
    return x;
  }

  std::optional<std::string> string(std::string_view key, bool required) {
    const json* v = get(key, required, json::value_t::string, "a string");
    if (!v) return std::nullopt;
    return v->get<std::string>();
  }

  const json* object(std::string_view key, bool required) {
    return get(key, required, json::value_t::object, "an object");
  }

  // One of `choices` (by name); reports SPEC-ENUM with the list.
  template <typename T>
  std::optional<T> choice(std::string_view key, bool required,
                          const std::vector<std::pair<std::string, T>>& choices,
                          const char* rule = "SPEC-ENUM") {
    auto s = string(key, required);
    if (!s) return std::nullopt;
    for (const auto& [n, v] : choices)
      if (n == *s) return v;
    std::string list;
    for (const auto& [n, v] : choices) list += (list.empty() ? "" : ", ") + n;
    auto& diag = d_.error(rule, ptr(key), quote(std::string(key)) + " = " + quote(*s) + " is not one of: " + list);
    if (auto best = nearest(*s, choices)) diag.help.push_back("did you mean " + quote(*best) + "?");
    return std::nullopt;
  }

  void finish() {
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      if (known_.count(it.key())) continue;
      auto& diag = d_.error("SPEC-UNKNOWN-KEY", ptr(it.key()),
                            "unknown member " + quote(it.key()) + " in " + (at_.empty() ? "/" : at_));
      std::string best;
      size_t best_d = 3;
      for (const auto& k : known_) {
        const size_t e = edit_distance(it.key(), k);
        if (e < best_d) best_d = e, best = k;
      }
      if (!best.empty()) diag.help.push_back("did you mean " + quote(best) + "?");
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      diag.help.push_back("the members allowed here are: " + list);
    }
  }

 private:
  template <typename T>
  static std::optional<std::string> nearest(const std::string& s,
                                            const std::vector<std::pair<std::string, T>>& choices) {
    std::optional<std::string> best;
    size_t best_d = 3;
    for (const auto& [n, v] : choices) {
      const size_t e = edit_distance(s, n);
      if (e < best_d) best_d = e, best = n;
    }
    return best;
  }

  const json& obj_;
  std::string at_;
  Diagnostics& d_;
  std::set<std::string> known_;
};

template <typename T>
using Choices = std::vector<std::pair<std::string, T>>;

Choices<isa::DType> dtype_choices(std::initializer_list<isa::DType> ts) {
  Choices<isa::DType> c;
  for (auto t : ts) c.emplace_back(std::string(isa::name(t)), t);
  return c;
}

const std::initializer_list<isa::DType> kInputTypes = {
    isa::DType::f16,  isa::DType::bf16, isa::DType::tf32, isa::DType::e4m3, isa::DType::e5m2,
    isa::DType::e2m3, isa::DType::e3m2, isa::DType::e2m1, isa::DType::s8,   isa::DType::u8};

constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 1;

void parse_operand(ObjReader& parent, std::string_view key, char mn_letter, Operand& out, bool& ok,
                   Diagnostics& d) {
  const json* o = parent.object(key, true);
  if (!o) {
    ok = false;
    return;
  }
  ObjReader r(*o, parent.ptr(key), d);
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

std::optional<isa::Swizzle> swizzle_value(const json& v, const std::string& p, Diagnostics& d) {
  // Bytes: 0 (none; 16 is its synonym, as some tools spell it), 32, 64, 128; or the string
  // "128_base32b" for 128-byte swizzling with 32-byte atomicity (tf32 MN-major operands).
  if (v.is_string()) {
    if (v.get<std::string>() == "128_base32b") return isa::Swizzle::b128_base32b;
  } else if (v.is_number_integer()) {
    switch (v.get<int64_t>()) {
      case 0:
      case 16: return isa::Swizzle::none;
      case 32: return isa::Swizzle::b32;
      case 64: return isa::Swizzle::b64;
      case 128: return isa::Swizzle::b128;
      default: break;
    }
  }
  d.error("SPEC-ENUM", p, "swizzle " + v.dump() + " is not one of: 0 (or 16), 32, 64, 128, \"128_base32b\"");
  return std::nullopt;
}

std::optional<Gemm> parse_gemm(const json& o, Diagnostics& d) {
  ObjReader r(o, "/gemm", d);
  Gemm g;
  bool ok = true;
  auto need = [&](auto opt, auto& dst) {
    if (opt) dst = *opt;
    else ok = false;
  };
  need(r.integer("m", true, 1, kMaxExtent), g.m);
  need(r.integer("n", true, 1, kMaxExtent), g.n);
  need(r.integer("k", true, 1, kMaxExtent), g.k);
  parse_operand(r, "a", 'm', g.a, ok, d);
  parse_operand(r, "b", 'n', g.b, ok, d);
  if (const json* dd = r.object("d", true)) {
    ObjReader rd(*dd, r.ptr("d"), d);
    need(rd.choice("dtype", true,
                   dtype_choices({isa::DType::f32, isa::DType::f16, isa::DType::bf16, isa::DType::s32})),
         g.d);
    rd.finish();
  } else {
    ok = false;
  }
  need(r.choice("accumulator", true, dtype_choices({isa::DType::f32, isa::DType::f16, isa::DType::s32})),
       g.accumulator);
  if (const json* t = r.object("tile", true)) {
    ObjReader rt(*t, r.ptr("tile"), d);
    need(rt.integer("m", true, 1, 1024), g.tile.m);
    need(rt.integer("n", true, 1, 1024), g.tile.n);
    need(rt.integer("k", true, 1, 1024), g.tile.k);
    rt.finish();
  } else {
    ok = false;
  }
  if (r.has("stages")) need(r.integer("stages", false, 1, 32), g.stages);
  if (const json* s = r.object("swizzle", false)) {
    ObjReader rs(*s, r.ptr("swizzle"), d);
    for (auto [key, dst] : {std::pair<const char*, isa::Swizzle*>{"a", &g.swizzle_a}, {"b", &g.swizzle_b}}) {
      if (const json* v = rs.any(key)) {
        if (auto sw = swizzle_value(*v, rs.ptr(key), d)) *dst = *sw;
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
    auto v = cg ? ObjReader::check_integer(*cg, r.ptr("cta_group"), "cta_group", 1, 2, d) : std::nullopt;
    if (v) g.cta_group = static_cast<int>(*v);
    else ok = false;
  }
  g.cluster = {g.cta_group, 1, 1};
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
        auto v = ObjReader::check_integer((*c)[i], p, "cluster[" + std::to_string(i) + "]", 1, 16, d);
        if (v) g.cluster[i] = *v;
        else ok = false;
      }
    }
  }
  r.finish();
  if (!ok || d.has_errors()) return std::nullopt;
  return g;
}

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

}  // namespace

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
  ObjReader r(root, "", d);
  Spec s;
  if (auto v = r.integer("ptxgen", true, INT64_MIN, INT64_MAX)) {
    if (*v != 1)
      d.error("SPEC-VERSION", "/ptxgen", "spec format version " + std::to_string(*v) +
                                             " is not supported; this ptxgen reads version 1")
          .help.push_back("write \"ptxgen\": 1 and follow docs/spec.md");
  }
  if (auto n = r.string("name", true)) {
    if (!valid_name(*n))
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
    if (const json* g = r.object("gemm", true)) s.gemm = parse_gemm(*g, d);
  } else {
    r.object("program", true);  // parsed by the program level (docs/spec.md)
    d.error("SPEC-TEMPLATE", "/program", "the \"program\" level is not available in this build")
        .help.push_back("use the \"gemm\" template");
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
    o["accumulator"] = std::string(isa::name(g.accumulator));
    o["tile"] = {{"m", g.tile.m}, {"n", g.tile.n}, {"k", g.tile.k}};
    o["stages"] = g.stages;
    o["swizzle"] = {{"a", swz(g.swizzle_a)}, {"b", swz(g.swizzle_b)}};
    o["a_source"] = std::string(name(g.a_source));
    o["cta_group"] = g.cta_group;
    o["cluster"] = g.cluster;
    j["gemm"] = o;
  }
  return j.dump(2);
}

}  // namespace ptxgen::spec
