// The reader the spec parser (parse.cpp) and the program-level parser (parse_program.cpp) share:
// members of one JSON object read with their types and ranges checked, unknown members reported
// with the nearest known name, every diagnostic at the member's JSON pointer.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "ptxgen/diag.hpp"
#include "ptxgen/isa.hpp"

namespace ptxgen::spec {

using nlohmann::json;

inline size_t edit_distance(std::string_view a, std::string_view b) {
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

inline Choices<isa::DType> dtype_choices(std::initializer_list<isa::DType> ts) {
  Choices<isa::DType> c;
  for (auto t : ts) c.emplace_back(std::string(isa::name(t)), t);
  return c;
}

inline std::optional<isa::Swizzle> swizzle_value(const json& v, const std::string& p, Diagnostics& d) {
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

}  // namespace ptxgen::spec
