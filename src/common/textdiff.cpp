// Unified diffs: Myers' O((N+M)D) shortest edit script over lines, grouped into `diff -u` hunks.
#include "ptxgen/textdiff.hpp"

#include <algorithm>
#include <vector>

namespace ptxgen {

namespace {

struct Lines {
  std::vector<std::string_view> text;
  bool final_newline = true;  // false when the last line has no '\n'
};

Lines split(std::string_view s) {
  Lines l;
  size_t start = 0;
  while (start < s.size()) {
    const size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      l.text.push_back(s.substr(start));
      l.final_newline = false;
      break;
    }
    l.text.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return l;
}

// Lines i of a and j of b are equal: the same text and, when either is its side's last line, the
// same ending (a last line without '\n' differs from the same text with one).
bool same_line(const Lines& a, size_t i, const Lines& b, size_t j) {
  const bool a_open = i + 1 == a.text.size() && !a.final_newline;
  const bool b_open = j + 1 == b.text.size() && !b.final_newline;
  return a.text[i] == b.text[j] && a_open == b_open;
}

enum class Op : char { same = ' ', del = '-', ins = '+' };
struct Edit {
  Op op;
  size_t a, b;  // line index in before (same/del) and after (same/ins); the other side's position
};

// Past this many edits a pair of texts is "completely different" and the middle is shown as one
// replacement: Myers keeps O(D^2) state, and the first differences are what a reader needs.
constexpr long kMaxEdits = 2000;

// The shortest edit script between a[a0..a1) and b[b0..b1), or one replacement past kMaxEdits.
void myers(const Lines& a, size_t a0, size_t a1, const Lines& b, size_t b0, size_t b1, std::vector<Edit>& out) {
  const long n = static_cast<long>(a1 - a0), m = static_cast<long>(b1 - b0);
  const long max = std::min(n + m, kMaxEdits);
  auto eq = [&](long x, long y) { return same_line(a, a0 + static_cast<size_t>(x), b, b0 + static_cast<size_t>(y)); };
  std::vector<long> v(static_cast<size_t>(2 * max + 3), 0);
  const long off = max + 1;
  std::vector<std::vector<long>> trace;  // trace[d][k + d] = furthest x on diagonal k before step d
  long found = -1;
  for (long d = 0; d <= max && found < 0; ++d) {
    trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      long y = x - k;
      while (x < n && y < m && eq(x, y)) ++x, ++y;
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) {  // too different: everything deleted, then everything inserted
    for (size_t i = a0; i < a1; ++i) out.push_back({Op::del, i, b0});
    for (size_t j = b0; j < b1; ++j) out.push_back({Op::ins, a1, j});
    return;
  }
  // Walk back from (n, m) through the saved rows, collecting edits in reverse.
  std::vector<Edit> rev;
  long x = n, y = m;
  for (long d = found; d >= 0; --d) {
    const auto& row = trace[static_cast<size_t>(d)];
    auto at = [&](long k) { return row[static_cast<size_t>(k + d)]; };
    const long k = x - y;
    long prev_k = k;
    if (d > 0) prev_k = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    const long prev_x = d > 0 ? at(prev_k) : 0, prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x, --y;
      rev.push_back({Op::same, a0 + static_cast<size_t>(x), b0 + static_cast<size_t>(y)});
    }
    if (d == 0) break;
    if (x == prev_x) rev.push_back({Op::ins, a0 + static_cast<size_t>(x), b0 + static_cast<size_t>(--y)});
    else rev.push_back({Op::del, a0 + static_cast<size_t>(--x), b0 + static_cast<size_t>(y)});
  }
  out.insert(out.end(), rev.rbegin(), rev.rend());
}

std::vector<Edit> edits(const Lines& a, const Lines& b) {
  auto same = [&](size_t i, size_t j) { return same_line(a, i, b, j); };
  size_t pre = 0;
  while (pre < a.text.size() && pre < b.text.size() && same(pre, pre)) ++pre;
  size_t suf = 0;
  while (suf < a.text.size() - pre && suf < b.text.size() - pre &&
         same(a.text.size() - 1 - suf, b.text.size() - 1 - suf))
    ++suf;
  std::vector<Edit> out;
  for (size_t i = 0; i < pre; ++i) out.push_back({Op::same, i, i});
  myers(a, pre, a.text.size() - suf, b, pre, b.text.size() - suf, out);
  for (size_t s = suf; s > 0; --s) out.push_back({Op::same, a.text.size() - s, b.text.size() - s});
  return out;
}

std::string range(size_t start, size_t count) {
  // diff -u: "start,count", the start is the line before the hunk when it has no lines on this side.
  const size_t shown = count == 0 ? start : start + 1;
  return std::to_string(shown) + (count == 1 ? "" : "," + std::to_string(count));
}

}  // namespace

size_t changed_lines(std::string_view before, std::string_view after) {
  if (before == after) return 0;
  size_t n = 0;
  for (const Edit& e : edits(split(before), split(after))) n += e.op != Op::same;
  return n;
}

std::string unified_diff(std::string_view before, std::string_view after, std::string_view before_name,
                         std::string_view after_name, size_t max_lines) {
  if (before == after) return "";
  const Lines a = split(before), b = split(after);
  const std::vector<Edit> es = edits(a, b);
  constexpr size_t kContext = 3;
  std::string out = "--- " + std::string(before_name) + "\n+++ " + std::string(after_name) + "\n";
  size_t budget = max_lines, total_changed = 0, shown_changed = 0;
  for (const Edit& e : es) total_changed += e.op != Op::same;

  size_t i = 0;
  while (i < es.size() && budget > 0) {
    while (i < es.size() && es[i].op == Op::same) ++i;
    if (i == es.size()) break;
    // A hunk: up to kContext lines before the first change, through changes whose gaps of equal
    // lines are at most 2*kContext, then up to kContext lines after.
    const size_t begin = i >= kContext ? i - kContext : 0;
    size_t end = i;
    for (size_t run = 0; end < es.size(); ++end) {
      run = es[end].op == Op::same ? run + 1 : 0;
      if (run > 2 * kContext) break;
    }
    // Trim trailing context to kContext.
    size_t last_change = end;
    while (es[last_change - 1].op == Op::same) --last_change;
    end = std::min(es.size(), last_change + kContext);
    // Cut the hunk short when the budget runs out (its header then counts what it shows).
    const size_t stop = std::min(end, begin + budget);
    std::string body;
    size_t a_count = 0, b_count = 0;
    for (size_t j = begin; j < stop; ++j) {
      const Edit& e = es[j];
      const bool from_a = e.op != Op::ins;
      const Lines& side = from_a ? a : b;
      const size_t idx = from_a ? e.a : e.b;
      body += static_cast<char>(e.op);
      body += side.text[idx];
      body += '\n';
      if (idx + 1 == side.text.size() && !side.final_newline) body += "\\ No newline at end of file\n";
      a_count += e.op != Op::ins;
      b_count += e.op != Op::del;
      shown_changed += e.op != Op::same;
    }
    const Edit& first = es[begin];
    out += "@@ -" + range(first.a, a_count) + " +" + range(first.b, b_count) + " @@\n" + body;
    budget -= stop - begin;
    i = stop;
  }
  if (shown_changed < total_changed)
    out += "... " + std::to_string(total_changed - shown_changed) + " more changed lines not shown\n";
  return out;
}

}  // namespace ptxgen
