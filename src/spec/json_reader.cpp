// A recursive-descent JSON reader. It exists, rather than nlohmann::json::parse, because specs
// come from other programs: it must stop at the limits before recursing or allocating, refuse
// duplicate keys (which nlohmann silently overwrites), refuse invalid UTF-8 (which nlohmann only
// notices when dumping), and give every error a line, a column and a JSON pointer.
#include "json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>
#include <set>
#include <string>

namespace ptxgen::spec {

namespace {

// Source positions are kept per JSON pointer for diagnostics. A pointer is up to 32 levels of
// 256-byte keys, so keeping one for every value of a 1 MiB document would cost gigabytes (a fuzzed
// spec once took 12 s and 4 GB). The table is bounded instead: past these budgets a value is not
// recorded and its diagnostics point at the nearest recorded enclosing value. Real specs hold a
// few hundred values and stay far below both.
constexpr size_t kMaxPositions = 65536;
constexpr size_t kMaxPositionBytes = size_t{4} << 20;
// Longer number literals are refused before conversion: no integer or double needs more digits.
constexpr size_t kMaxNumber = 64;

class Reader {
 public:
  Reader(std::string_view text, const Limits& limits, Diagnostics& diags)
      : s_(text), lim_(limits), diags_(diags) {
    line_starts_.push_back(0);
    for (size_t j = 0; j < s_.size(); ++j)
      if (s_[j] == '\n') line_starts_.push_back(j + 1);
  }

  std::optional<nlohmann::json> document() {
    skip_ws();
    auto v = value(0);
    if (!v) return std::nullopt;
    skip_ws();
    if (i_ != s_.size()) return fail("SPEC-JSON", "unexpected text after the JSON document");
    return v;
  }

  SourceMap positions;
  Literals literals;

 private:
  std::string_view s_;
  size_t i_ = 0;
  const Limits& lim_;
  Diagnostics& diags_;

  std::vector<size_t> line_starts_;
  // The JSON pointer of the value being read: one buffer, extended and cut back on the way down
  // and up, so reading costs time linear in the input whatever the depth and key lengths.
  std::string path_;
  size_t position_bytes_ = 0;

  // Extends path_ by one segment for the lifetime of the guard.
  struct Descend {
    std::string& path;
    size_t old;
    Descend(std::string& p, std::string_view key) : path(p), old(p.size()) {
      path += '/';
      for (char c : key) {  // RFC 6901 escapes, as ptr_join writes them
        if (c == '~') path += "~0";
        else if (c == '/') path += "~1";
        else path += c;
      }
    }
    Descend(std::string& p, size_t index) : path(p), old(p.size()) {
      path += '/';
      path += std::to_string(index);
    }
    ~Descend() { path.resize(old); }
    Descend(const Descend&) = delete;
    Descend& operator=(const Descend&) = delete;
  };

  void record(size_t at) {
    if (positions.size() >= kMaxPositions || position_bytes_ + path_.size() > kMaxPositionBytes) return;
    if (positions.emplace(path_, pos_at(at)).second) position_bytes_ += path_.size();
  }
  // The literal of a number not kept exactly, under the same budget (64 characters each at most).
  void record_literal(std::string_view text) {
    if (literals.size() >= kMaxPositions || position_bytes_ + path_.size() + text.size() > kMaxPositionBytes) return;
    if (literals.emplace(path_, std::string(text)).second) position_bytes_ += path_.size() + text.size();
  }

  SourcePos pos_at(size_t at) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at);
    const size_t line = static_cast<size_t>(it - line_starts_.begin());  // 1-based
    return {static_cast<int>(line), static_cast<int>(at - line_starts_[line - 1] + 1)};
  }

  std::nullopt_t fail(const char* rule, const std::string& what) {
    const SourcePos p = pos_at(i_);
    Diagnostic& d = diags_.error(rule, path_, what);
    d.line = p.line;
    d.column = p.column;
    return std::nullopt;
  }

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) == word) {
      i_ += word.size();
      return true;
    }
    return false;
  }

  std::optional<nlohmann::json> value(int depth) {
    if (i_ >= s_.size()) return fail("SPEC-JSON", "unexpected end of input, expected a value");
    record(i_);  // a member's key position, recorded first, wins
    const char c = s_[i_];
    if (c == '{' || c == '[') {
      if (depth + 1 > lim_.max_depth)
        return fail("SPEC-LIMIT-DEPTH", "nesting deeper than " + std::to_string(lim_.max_depth) + " levels");
      return c == '{' ? object(depth + 1) : array(depth + 1);
    }
    if (c == '"') {
      auto str = string();
      if (!str) return std::nullopt;
      return nlohmann::json(std::move(*str));
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    if (literal("true")) return nlohmann::json(true);
    if (literal("false")) return nlohmann::json(false);
    if (literal("null")) return nlohmann::json(nullptr);
    return fail("SPEC-JSON", std::string("unexpected character '") + printable(c) + "'");
  }

  static std::string printable(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", u);
    return buf;
  }

  std::optional<nlohmann::json> object(int depth) {
    ++i_;  // '{'
    nlohmann::json obj = nlohmann::json::object();
    std::set<std::string> seen;
    skip_ws();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return obj;
    }
    for (;;) {
      skip_ws();
      if (i_ >= s_.size() || s_[i_] != '"') return fail("SPEC-JSON", "expected a member name in double quotes");
      const size_t key_at = i_;
      auto key = string();
      if (!key) return std::nullopt;
      if (seen.count(*key)) {
        i_ = key_at;
        Descend member(path_, *key);
        return fail("SPEC-DUPLICATE-KEY", "member \"" + *key + "\" appears twice");
      }
      if (seen.size() >= lim_.max_members)
        return fail("SPEC-LIMIT-MEMBERS", "more than " + std::to_string(lim_.max_members) + " members");
      seen.insert(*key);
      Descend member(path_, *key);
      record(key_at);
      skip_ws();
      if (i_ >= s_.size() || s_[i_] != ':') return fail("SPEC-JSON", "expected ':' after the member name");
      ++i_;
      skip_ws();
      auto v = value(depth);
      if (!v) return std::nullopt;
      obj[*key] = std::move(*v);
      skip_ws();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return obj;
      }
      path_.resize(member.old);  // the error is the object's, not the member's
      return fail("SPEC-JSON", "expected ',' or '}' in object");
    }
  }

  std::optional<nlohmann::json> array(int depth) {
    ++i_;  // '['
    nlohmann::json arr = nlohmann::json::array();
    skip_ws();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return arr;
    }
    for (size_t n = 0;; ++n) {
      if (n >= lim_.max_array)
        return fail("SPEC-LIMIT-ARRAY", "more than " + std::to_string(lim_.max_array) + " elements");
      skip_ws();
      {
        Descend element(path_, n);
        auto v = value(depth);
        if (!v) return std::nullopt;
        arr.push_back(std::move(*v));
      }
      skip_ws();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return arr;
      }
      return fail("SPEC-JSON", "expected ',' or ']' in array");
    }
  }

  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::optional<uint32_t> hex4() {
    if (i_ + 4 > s_.size()) return std::nullopt;
    uint32_t v = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = s_[i_ + j];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
      else return std::nullopt;
    }
    i_ += 4;
    return v;
  }

  // Length of a valid UTF-8 sequence starting at i_, or 0.
  size_t utf8_len() const {
    const auto b0 = static_cast<unsigned char>(s_[i_]);
    auto cont = [&](size_t k) {
      return i_ + k < s_.size() && (static_cast<unsigned char>(s_[i_ + k]) & 0xC0) == 0x80;
    };
    if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
      if (!cont(1) || !cont(2)) return 0;
      const auto b1 = static_cast<unsigned char>(s_[i_ + 1]);
      if (b0 == 0xE0 && b1 < 0xA0) return 0;  // overlong
      if (b0 == 0xED && b1 > 0x9F) return 0;  // surrogates
      return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return 0;
      const auto b1 = static_cast<unsigned char>(s_[i_ + 1]);
      if (b0 == 0xF0 && b1 < 0x90) return 0;
      if (b0 == 0xF4 && b1 > 0x8F) return 0;
      return 4;
    }
    return 0;
  }

  std::optional<std::string> string() {
    ++i_;  // opening quote
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) return fail("SPEC-JSON", "unterminated string");
      if (out.size() > lim_.max_string)
        return fail("SPEC-LIMIT-STRING", "string longer than " + std::to_string(lim_.max_string) + " bytes");
      const char c = s_[i_];
      const auto u = static_cast<unsigned char>(c);
      if (c == '"') {
        ++i_;
        return out;
      }
      if (u < 0x20) return fail("SPEC-JSON", "control character in string");
      if (c != '\\') {
        if (u < 0x80) {
          out += c;
          ++i_;
          continue;
        }
        const size_t n = utf8_len();
        if (n == 0) return fail("SPEC-JSON", "invalid UTF-8 in string");
        out.append(s_.substr(i_, n));
        i_ += n;
        continue;
      }
      ++i_;
      if (i_ >= s_.size()) return fail("SPEC-JSON", "unterminated escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          auto cp = hex4();
          if (!cp) return fail("SPEC-JSON", "bad \\u escape");
          if (*cp >= 0xD800 && *cp <= 0xDBFF) {
            if (!literal("\\u")) return fail("SPEC-JSON", "unpaired surrogate in \\u escape");
            auto lo = hex4();
            if (!lo || *lo < 0xDC00 || *lo > 0xDFFF) return fail("SPEC-JSON", "unpaired surrogate in \\u escape");
            *cp = 0x10000 + ((*cp - 0xD800) << 10) + (*lo - 0xDC00);
          } else if (*cp >= 0xDC00 && *cp <= 0xDFFF) {
            return fail("SPEC-JSON", "unpaired surrogate in \\u escape");
          }
          put_utf8(out, *cp);
          break;
        }
        default: return fail("SPEC-JSON", "unknown escape in string");
      }
    }
  }

  std::optional<nlohmann::json> number() {
    const size_t start = i_;
    bool is_int = true;
    if (s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
      return fail("SPEC-JSON", "malformed number");
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      is_int = false;
      ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
        return fail("SPEC-JSON", "malformed number");
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      is_int = false;
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
        return fail("SPEC-JSON", "malformed number");
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ - start > kMaxNumber) {
      i_ = start;
      return fail("SPEC-LIMIT-NUMBER", "number literal longer than " + std::to_string(kMaxNumber) + " characters");
    }
    const char* b = s_.data() + start;
    const char* e = s_.data() + i_;
    if (is_int) {
      int64_t v = 0;
      auto r = std::from_chars(b, e, v);
      if (r.ec == std::errc() && r.ptr == e) return nlohmann::json(v);
      uint64_t uv = 0;
      auto ru = std::from_chars(b, e, uv);
      if (ru.ec == std::errc() && ru.ptr == e) return nlohmann::json(uv);
    }
    // Non-integers, and integers beyond 64 bits, become doubles, their literal kept for messages;
    // the spec parser reports them as "not an integer" or "out of range". from_chars is
    // locale-independent. Beyond a double's range: an overflow (1e400) is kept as the largest
    // double of its sign (an integer, out of every range), an underflow (1e-400) as the smallest
    // non-zero one (not an integer), never as each other.
    double d = 0;
    auto rd = std::from_chars(b, e, d);
    if (rd.ptr != e) return fail("SPEC-JSON", "malformed number");
    if (rd.ec == std::errc::result_out_of_range) {
      const bool negative = *b == '-';
      const std::string_view lit(b, static_cast<size_t>(e - b));
      const size_t ex = lit.find_first_of("eE");
      const bool underflow = ex != std::string_view::npos && ex + 1 < lit.size() && lit[ex + 1] == '-';
      d = underflow ? std::numeric_limits<double>::denorm_min() : std::numeric_limits<double>::max();
      if (negative) d = -d;
    }
    record_literal(std::string_view(b, static_cast<size_t>(e - b)));
    return nlohmann::json(d);
  }
};

}  // namespace

JsonRead read_json(std::string_view text, const Limits& limits, Diagnostics& diags) {
  JsonRead r;
  if (text.size() > limits.max_bytes) {
    diags.error("SPEC-LIMIT-SIZE", "",
                "the spec is larger than " + std::to_string(limits.max_bytes) + " bytes (" +
                    std::to_string(text.size()) + " or more)");
    return r;
  }
  Reader rd(text, limits, diags);
  r.value = rd.document();
  r.positions = std::move(rd.positions);
  r.literals = std::move(rd.literals);
  return r;
}

}  // namespace ptxgen::spec
