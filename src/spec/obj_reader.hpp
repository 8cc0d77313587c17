// The reader the spec parser (parse.cpp) and the program-level parser (parse_program.cpp) share:
// members of one JSON object read with their types and ranges checked, unknown members reported
// with the nearest known name, every diagnostic at the member's JSON pointer.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ptxgen/diag.hpp"
#include "ptxgen/isa.hpp"
#include "json_reader.hpp"

namespace ptxgen::spec {

using nlohmann::json;

// Edits from a to b, a swap of two adjacent characters counting as one (the commonest typo:
// "stagse" is one edit from "stages", two from "sparse").
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// What "did you mean" offers for `s` among `candidates`: a candidate equal to it but for case
// first (BF16 -> bf16, M -> m); then the names other tools give (PyTorch, JAX, CUTLASS, ONNX:
// bfloat16 -> bf16, float8_e4m3fn -> e4m3, fp8 -> e4m3 or e5m2; a_src -> a_source, source -> src);
// else the nearest by edit distance, case aside (fewer than 3 edits). Only names that are
// candidates are offered.
inline std::vector<std::string> suggestions(std::string_view s, const std::vector<std::string>& candidates) {
  const std::string ls = lower(s);
  for (const auto& c : candidates)
    if (lower(c) == ls) return {c};
  static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> kAliases = {
      // element types
      {"bfloat16", {"bf16"}}, {"bfloat", {"bf16"}}, {"float16", {"f16"}}, {"half", {"f16"}}, {"fp16", {"f16"}},
      {"float32", {"f32"}}, {"float", {"f32"}}, {"fp32", {"f32"}}, {"single", {"f32"}}, {"tfloat32", {"tf32"}},
      {"fp8", {"e4m3", "e5m2"}}, {"float8", {"e4m3", "e5m2"}}, {"f8", {"e4m3", "e5m2"}},
      {"float8_e4m3fn", {"e4m3"}}, {"float8_e4m3", {"e4m3"}}, {"float8e4m3fn", {"e4m3"}}, {"e4m3fn", {"e4m3"}},
      {"float8_e4m3fnuz", {"e4m3"}}, {"fp8_e4m3", {"e4m3"}}, {"float_e4m3_t", {"e4m3"}},
      {"float8_e5m2", {"e5m2"}}, {"float8e5m2", {"e5m2"}}, {"float8_e5m2fnuz", {"e5m2"}}, {"fp8_e5m2", {"e5m2"}},
      {"float_e5m2_t", {"e5m2"}}, {"fp6", {"e2m3", "e3m2"}}, {"float6_e2m3fn", {"e2m3"}}, {"float6_e3m2fn", {"e3m2"}},
      {"fp4", {"e2m1"}}, {"float4", {"e2m1"}}, {"float4_e2m1fn", {"e2m1"}}, {"float4_e2m1fn_x2", {"e2m1"}},
      {"nvfp4", {"e2m1"}}, {"mxfp4", {"e2m1"}}, {"float8_e8m0fnu", {"ue8m0"}}, {"e8m0", {"ue8m0"}},
      {"int8", {"s8"}}, {"i8", {"s8"}}, {"char", {"s8"}}, {"uint8", {"u8"}}, {"byte", {"u8", "b8"}},
      {"int32", {"s32"}}, {"i32", {"s32"}}, {"int", {"s32"}},
      // members
      {"a_src", {"a_source"}}, {"asource", {"a_source"}}, {"source", {"src"}}, {"from", {"src"}},
      {"destination", {"dst"}}, {"dest", {"dst"}}, {"to", {"dst"}}, {"register", {"regs"}},
      {"registers", {"regs"}}, {"type", {"dtype"}}, {"datatype", {"dtype"}}, {"data_type", {"dtype"}},
      {"dims", {"shape"}}, {"size", {"shape"}}, {"swizzling", {"swizzle"}}, {"ctagroup", {"cta_group"}},
      {"cta", {"cta_group"}}, {"stage", {"stages"}}, {"acc", {"accumulator"}}, {"accum", {"accumulator"}},
  };
  std::vector<std::string> out;
  for (const auto& [alias, targets] : kAliases) {
    if (alias != ls) continue;
    for (auto t : targets)
      for (const auto& c : candidates)
        if (c == t) out.push_back(c);
  }
  if (!out.empty()) return out;
  size_t best_d = 3;
  std::string best;
  for (const auto& c : candidates) {
    const size_t e = edit_distance(ls, lower(c));
    if (e < best_d) best_d = e, best = c;
  }
  if (!best.empty()) out.push_back(best);
  return out;
}

// "did you mean "a"?" or "did you mean "a" or "b"?"; empty when there is nothing to offer.
inline std::string did_you_mean(const std::vector<std::string>& s) {
  if (s.empty()) return "";
  std::string out = "did you mean ";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? " or \"" : "\"") + s[i] + "\"";
  return out + "?";
}

inline std::string json_type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

inline std::string quote(const std::string& s) { return "\"" + s + "\""; }

// Reads the members of one JSON object, remembering which were used so the rest can be reported
// as unknown keys (with the nearest known key suggested).
class ObjReader {
 public:
  // `literals`: the number literals the JSON reader kept (json_reader.hpp), for messages.
  ObjReader(const json& obj, std::string at, Diagnostics& d, const Literals* literals = nullptr)
      : obj_(obj), at_(std::move(at)), d_(d), lits_(literals) {}
  // A member object of `parent`'s, reporting where the parent does.
  ObjReader(const json& obj, std::string at, const ObjReader& parent)
      : obj_(obj), at_(std::move(at)), d_(parent.d_), lits_(parent.lits_) {}

  Diagnostics& diags() const { return d_; }
  const Literals* literals() const { return lits_; }
  // A number as the spec writes it (its literal when the reader kept one).
  std::string shown(const json& v, const std::string& p) const { return shown(v, p, lits_); }
  static std::string shown(const json& v, const std::string& p, const Literals* lits) {
    if (lits && v.is_number_float()) {
      auto it = lits->find(p);
      if (it != lits->end()) return it->second;
    }
    return v.dump();
  }

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
    return check_integer(*v, ptr(key), std::string(key), lo, hi);
  }

  // An integer in [lo, hi]. A number written with a fraction or an exponent is no integer literal:
  // the message says which it is, with the literal as written: not an integer (64.5, 1e-400), out
  // of the range (1e400, 5e9 for an int32 field), or an integer to write without them (128.0: 128).
  std::optional<int64_t> check_integer(const json& v, const std::string& p, const std::string& what, int64_t lo,
                                       int64_t hi) const {
    return check_integer(v, p, what, lo, hi, d_, lits_);
  }
  static std::optional<int64_t> check_integer(const json& v, const std::string& p, const std::string& what, int64_t lo,
                                              int64_t hi, Diagnostics& d, const Literals* lits) {
    const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (v.is_number_float()) {
      const double x = v.get<double>();
      const std::string lit = shown(v, p, lits);
      if (!std::isfinite(x) || std::floor(x) != x) {
        d.error("SPEC-TYPE", p, quote(what) + " must be an integer, not " + lit);
        return std::nullopt;
      }
      // 2^63 and beyond are outside every int64 range (double(INT64_MAX) rounds up to 2^63).
      if (x >= 0x1p63 || x < -0x1p63 || x < static_cast<double>(lo) || x > static_cast<double>(hi)) {
        d.error("SPEC-INT-RANGE", p, quote(what) + " = " + lit + " is outside " + range);
        return std::nullopt;
      }
      const std::string n = std::to_string(static_cast<int64_t>(x));
      d.error("SPEC-TYPE", p, quote(what) + " must be an integer literal, not " + lit + " (a number with a fraction or an exponent)")
          .help.push_back("write " + n);
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
    std::vector<std::string> names;
    for (const auto& [n, v] : choices) names.push_back(n);
    if (auto dym = did_you_mean(suggestions(*s, names)); !dym.empty()) diag.help.push_back(dym);
    return std::nullopt;
  }

  // A member users write for a feature ptxgen does not build yet (SPEC-NOT-BUILT): refused as such,
  // with the nearest thing that is built, instead of as an unknown member (whose "did you mean"
  // would send "c" to "a").
  void not_built(std::initializer_list<const char*> keys, const std::string& what, const std::vector<std::string>& nearest) {
    for (const char* k : keys) not_built_[k] = {what, nearest};
  }

  void finish() {
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      if (known_.count(it.key())) continue;
      if (auto nb = not_built_.find(it.key()); nb != not_built_.end()) {
        d_.error("SPEC-NOT-BUILT", ptr(it.key()), quote(it.key()) + ": " + nb->second.first).help = nb->second.second;
        continue;
      }
      auto& diag = d_.error("SPEC-UNKNOWN-KEY", ptr(it.key()),
                            "unknown member " + quote(it.key()) + " in " + (at_.empty() ? "/" : at_));
      if (auto dym = did_you_mean(suggestions(it.key(), {known_.begin(), known_.end()})); !dym.empty())
        diag.help.push_back(dym);
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      diag.help.push_back("the members allowed here are: " + list);
    }
  }

 private:
  const json& obj_;
  std::string at_;
  Diagnostics& d_;
  const Literals* lits_ = nullptr;
  std::set<std::string> known_;
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> not_built_;
};

template <typename T>
using Choices = std::vector<std::pair<std::string, T>>;

inline Choices<isa::DType> dtype_choices(std::initializer_list<isa::DType> ts) {
  Choices<isa::DType> c;
  for (auto t : ts) c.emplace_back(std::string(isa::name(t)), t);
  return c;
}

inline std::optional<isa::Swizzle> swizzle_value(const json& v, const std::string& p, const ObjReader& r) {
  Diagnostics& d = r.diags();
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
  d.error("SPEC-ENUM", p, "swizzle " + r.shown(v, p) + " is not one of: 0 (or 16), 32, 64, 128, \"128_base32b\"");
  return std::nullopt;
}

}  // namespace ptxgen::spec
