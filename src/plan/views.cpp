// Tensor-memory view resolution: every view of a program resolves, through its chain of slices,
// casts and aliases, to (allocation, lanes, columns, element type, packing, row layout, rows), or
// to the reason it cannot: a name that is not declared, a cycle, a slice out of range, a packing
// the element type does not have, a layout the lanes cannot hold (rules NAME-UNKNOWN, VIEW-CYCLE,
// VIEW-SLICE-RANGE, VIEW-PACKING, VIEW-LAYOUT, VIEW-ROWS).
//
// Tensor memory is 128 lanes by (up to) 512 columns of 32-bit cells (§9.7.16.1); addresses are
// lane << 16 | column (§9.7.16.1.1). Slices count lanes and 32-bit columns; casts reinterpret the
// same cells with another element type and packing (elements per column, §9.7.16.10.4) or another
// row layout.
#include <functional>
#include <set>

#include "ptxgen/plan.hpp"

namespace ptxgen::plan {

using spec::TmemLayout;
using spec::TmemView;

int ResolvedView::rows_per_block() const {
  switch (layout) {
    case TmemLayout::rows: return static_cast<int>(lanes);
    case TmemLayout::warpx2_02_13:
    case TmemLayout::warpx2_01_23: return 64;
    case TmemLayout::warpx4: return 32;
    case TmemLayout::layout_f_0:
    case TmemLayout::layout_f_16:
    case TmemLayout::layout_b: return 64;
  }
  return static_cast<int>(lanes);
}

std::vector<uint32_t> ResolvedView::lanes_of_row(int r) const {
  const uint32_t rr = static_cast<uint32_t>(r % rows_per_block());
  switch (layout) {
    case TmemLayout::rows: return {lane + rr};
    case TmemLayout::warpx2_02_13: return {rr, rr + 64};
    case TmemLayout::warpx2_01_23: return rr < 32 ? std::vector<uint32_t>{rr, rr + 32} : std::vector<uint32_t>{rr + 32, rr + 64};
    case TmemLayout::warpx4: return {rr, rr + 32, rr + 64, rr + 96};
    case TmemLayout::layout_f_0:
    case TmemLayout::layout_f_16:  // §9.7.16.10.5.6: 16 rows per 32-lane quarter, after the alignment
      return {32 * (rr / 16) + rr % 16 + static_cast<uint32_t>(spec::layout_f_alignment(layout))};
    case TmemLayout::layout_b: return {rr, rr + 64};  // §9.7.16.10.5.2: the two halves of the row
  }
  return {};
}

int ResolvedView::row_of_lane(uint32_t l) const {
  switch (layout) {
    case TmemLayout::rows: return (l >= lane && l < lane + lanes) ? static_cast<int>(l - lane) : -1;
    case TmemLayout::warpx2_02_13: return static_cast<int>(l % 64);
    case TmemLayout::warpx2_01_23: return static_cast<int>(l % 32 + 32 * (l / 64));
    case TmemLayout::warpx4: return static_cast<int>(l % 32);
    case TmemLayout::layout_f_0:
    case TmemLayout::layout_f_16: {
      const uint32_t a = static_cast<uint32_t>(spec::layout_f_alignment(layout));
      return (l < 128 && l % 32 >= a && l % 32 < a + 16) ? static_cast<int>(16 * (l / 32) + l % 32 - a) : -1;
    }
    case TmemLayout::layout_b: return l < 128 ? static_cast<int>(l % 64) : -1;
  }
  return -1;
}

std::string ResolvedView::describe() const {
  return alloc + " lanes " + std::to_string(lane) + "-" + std::to_string(lane + lanes - 1) + " columns " +
         std::to_string(column) + "-" + std::to_string(column + columns - 1) + ", " + std::string(isa::name(dtype)) +
         " x" + std::to_string(packing) + " per column, " + std::string(spec::name(layout)) + " layout, " +
         std::to_string(rows) + " rows" + (blocks() > 1 ? " in " + std::to_string(blocks()) + " column blocks" : "");
}

namespace {

// §9.7.16.10.4: elements per 32-bit tensor-memory cell. 16-bit D is unpacked (one per cell,
// §9.7.16.10.4.1) and 16-bit A packed (two); 8-bit and 8-bit-container 4/6-bit types four
// (§9.7.16.10.4.3); e2m1 may also pack two per byte (§9.7.16.10.4.5).
std::vector<int> packings(isa::DType t) {
  const int bits = isa::value_bits(t);
  if (bits == 32) return {1};
  if (bits == 16) return {1, 2};
  if (bits == 8 || bits == 6) return {1, 4};
  return {1, 4, 8};
}

std::string list(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

class Resolver {
 public:
  explicit Resolver(const std::vector<TmemView>& views) : views_(views) {
    for (size_t i = 0; i < views.size(); ++i)
      if (!views[i].name.empty()) named_[views[i].name] = static_cast<int>(i);
    memo_.resize(views.size());
    state_.assign(views.size(), 0);
  }

  ViewResolution run() {
    for (const auto& [n, i] : named_) {
      if (const auto& v = resolve(i)) {
        ResolvedView& r = out_.views[n] = *v;
        r.name = n;
      }
    }
    return std::move(out_);
  }

 private:
  void problem(const std::string& rule, const std::string& ptr, const std::string& msg, std::vector<std::string> help) {
    if (reported_.insert(rule + "@" + ptr).second) out_.problems.push_back({rule, ptr, msg, std::move(help)});
  }

  std::string label(int i) const {
    const auto& v = views_[static_cast<size_t>(i)];
    return v.name.empty() ? "(inline view at " + v.ptr + ")" : v.name;
  }

  // Resolves view i and every view its chain goes through, each once (memoized), without
  // recursion: a chain as long as the input limits allow (thousands of links) costs time and
  // memory linear in its length, and no stack.
  const std::optional<ResolvedView>& resolve(int i) {
    std::vector<int> path;  // views entered, i first; each one's parent after it
    std::optional<ResolvedView> none;
    const std::optional<ResolvedView>* base = &none;  // what the last view of the path derives from
    for (int cur = i;;) {
      const size_t u = static_cast<size_t>(cur);
      if (state_[u] == 2) {
        base = &memo_[u];
        break;
      }
      if (state_[u] == 1) {  // back on the path: the link of path.back() closes a cycle
        std::string cycle;
        bool in = false;
        for (int s : path) {
          in = in || s == cur;
          if (in) cycle += label(s) + " -> ";
        }
        cycle += label(cur);
        problem("VIEW-CYCLE", views_[static_cast<size_t>(path.back())].of.ptr, "the views form a cycle: " + cycle,
                {"every chain of slices, casts and aliases must end at an allocation ({\"columns\": N})"});
        break;
      }
      state_[u] = 1;
      path.push_back(cur);
      const TmemView& v = views_[u];
      if (v.kind == TmemView::Kind::alloc) break;
      cur = parent_index(v);
      if (cur < 0) break;
    }
    // Down the path: each view from its parent's resolution (the allocation from nothing).
    for (size_t k = path.size(); k-- > 0;) {
      const size_t u = static_cast<size_t>(path[k]);
      const std::optional<ResolvedView>& parent = k + 1 < path.size() ? memo_[static_cast<size_t>(path[k + 1])] : *base;
      const TmemView& v = views_[u];
      memo_[u] = v.kind == TmemView::Kind::alloc ? link(v, none) : parent ? link(v, parent) : std::nullopt;
      state_[u] = 2;
    }
    return memo_[static_cast<size_t>(i)];
  }

  // The index of the view `v` is of, or -1 (reported: no such name).
  int parent_index(const TmemView& v) {
    if (v.of_inline >= 0) return v.of_inline;
    auto it = named_.find(v.of.name);
    if (it == named_.end()) {
      problem("NAME-UNKNOWN", v.of.ptr, "no tensor-memory view named \"" + v.of.name + "\"",
              {"declare it under /program/tmem, or use one of the names declared there"});
      return -1;
    }
    return it->second;
  }

  // View `v` from its parent's resolution `p` (unused for an allocation).
  std::optional<ResolvedView> link(const TmemView& v, const std::optional<ResolvedView>& p) {
    if (v.kind == TmemView::Kind::alloc) {
      // An allocation TMEM-ALLOC refuses (declarations) resolves to nothing, reported there: the
      // views of it would only repeat that its columns are wrong.
      const bool pow2 = v.columns > 0 && (v.columns & (v.columns - 1)) == 0;
      if (!pow2 || v.columns < 32 || v.columns > 512) return std::nullopt;
      ResolvedView r;
      r.alloc = v.name;
      r.columns = static_cast<uint32_t>(v.columns);
      r.dtype = v.dtype.value_or(isa::DType::f32);
      r.packing = v.packing.value_or(1);
      r.chain.push_back(v.name + ": allocation of " + std::to_string(v.columns) + " columns");
      if (!packing_ok(r.dtype, r.packing, v.packing_ptr)) return std::nullopt;
      return r;
    }
    if (!p) return std::nullopt;
    ResolvedView r = *p;
    // A named parent's own links stay with it: this view keeps its name and starts a new chain.
    if (v.of_inline < 0) {
      r.of = v.of.name;
      r.chain.clear();
    }
    const std::string who = v.name.empty() ? "" : v.name + ": ";
    switch (v.kind) {
      case TmemView::Kind::alloc: break;
      case TmemView::Kind::alias: r.chain.push_back(who + "alias"); return r;
      case TmemView::Kind::slice: {
        std::array<int64_t, 2> lanes{0, p->lanes}, cols{0, p->columns};
        if (v.lanes) lanes = *v.lanes;
        if (v.cols) cols = *v.cols;
        if (lanes[0] >= lanes[1] || lanes[1] > p->lanes) {
          problem("VIEW-SLICE-RANGE", v.lanes_ptr,
                  "lanes [" + std::to_string(lanes[0]) + ", " + std::to_string(lanes[1]) + ") are not inside the " +
                      std::to_string(p->lanes) + " lanes of the view sliced (" + p->describe() + ")",
                  {"slice lanes [a, b) with 0 <= a < b <= " + std::to_string(p->lanes)});
          return std::nullopt;
        }
        if (cols[0] >= cols[1] || cols[1] > p->columns) {
          problem("VIEW-SLICE-RANGE", v.cols_ptr,
                  "columns [" + std::to_string(cols[0]) + ", " + std::to_string(cols[1]) + ") are not inside the " +
                      std::to_string(p->columns) + " columns of the view sliced (" + p->describe() + ")",
                  {"slice columns [c, d) with 0 <= c < d <= " + std::to_string(p->columns) +
                   " (columns are 32-bit tensor-memory columns, not elements)"});
          return std::nullopt;
        }
        if (p->layout != TmemLayout::rows && (lanes[0] != 0 || lanes[1] != p->lanes)) {
          problem("VIEW-LAYOUT", v.lanes_ptr,
                  "a " + std::string(spec::name(p->layout)) +
                      (spec::layout_f_alignment(p->layout) >= 0
                           ? " view holds its rows in a 16-lane piece of every 32-lane sub-partition; a lane slice "
                             "of it is no range of lanes"
                           : " view holds each row in several 32-lane sub-partitions; slicing its lanes would keep "
                             "some replicas of a row and drop others"),
                  {"slice the lanes before the layout cast, or slice columns only"});
          return std::nullopt;
        }
        r.lane = p->lane + static_cast<uint32_t>(lanes[0]);
        r.lanes = static_cast<uint32_t>(lanes[1] - lanes[0]);
        r.column = p->column + static_cast<uint32_t>(cols[0]);
        r.columns = static_cast<uint32_t>(cols[1] - cols[0]);
        r.rows = p->layout == TmemLayout::rows ? static_cast<int>(r.lanes) : r.rows_per_block();
        r.chain.push_back(who + "slice lanes [" + std::to_string(lanes[0]) + ", " + std::to_string(lanes[1]) +
                          ") columns [" + std::to_string(cols[0]) + ", " + std::to_string(cols[1]) + ")");
        return r;
      }
      case TmemView::Kind::cast: {
        std::string what;
        if (v.dtype) {
          r.dtype = *v.dtype;
          what += " " + std::string(isa::name(r.dtype));
        }
        if (v.packing) {
          r.packing = *v.packing;
          what += " packing " + std::to_string(r.packing);
        }
        if (!packing_ok(r.dtype, r.packing, v.packing ? v.packing_ptr : v.dtype_ptr)) return std::nullopt;
        if (v.layout && *v.layout != p->layout) {
          if (*v.layout != TmemLayout::rows && (p->lane != 0 || p->lanes != 128)) {
            problem("VIEW-LAYOUT", v.layout_ptr,
                    "layout " + std::string(spec::name(*v.layout)) +
                        " places rows in all four 32-lane sub-partitions (and layout F's lane alignment counts from lane 0); "
                        "the view cast has lanes " +
                        std::to_string(p->lane) + "-" + std::to_string(p->lane + p->lanes - 1),
                    {"cast a view of all 128 lanes (slice columns only before the cast)"});
            return std::nullopt;
          }
          r.layout = *v.layout;
          r.rows = r.rows_per_block();
          what += " layout " + std::string(spec::name(r.layout));
        }
        if (v.rows) {
          const int rpb = r.rows_per_block();
          if (*v.rows % rpb != 0 || r.columns % static_cast<uint32_t>(*v.rows / rpb) != 0) {
            problem("VIEW-ROWS", v.rows_ptr,
                    std::to_string(*v.rows) + " rows do not split into blocks of " + std::to_string(rpb) +
                        " rows (the " + std::string(spec::name(r.layout)) + " layout over " + std::to_string(r.lanes) +
                        " lanes) over equal parts of the " + std::to_string(r.columns) + " columns",
                    {"use a multiple of " + std::to_string(rpb) + " rows whose block count divides the columns"});
            return std::nullopt;
          }
          r.rows = *v.rows;
          what += " rows " + std::to_string(r.rows);
        }
        r.chain.push_back(who + "cast" + what);
        return r;
      }
    }
    return r;
  }

  bool packing_ok(isa::DType t, int packing, const std::string& ptr) {
    const auto ok = packings(t);
    for (int x : ok)
      if (x == packing) return true;
    problem("VIEW-PACKING", ptr,
            std::string(isa::name(t)) + " elements pack " + list(ok) + " to a 32-bit tensor-memory column, not " +
                std::to_string(packing),
            {"use \"packing\": " + list(ok) + " (1 is unpacked, as the accumulator D is; the A operand is packed)"});
    return false;
  }

  const std::vector<TmemView>& views_;
  std::map<std::string, int> named_;
  std::vector<std::optional<ResolvedView>> memo_;
  std::vector<int> state_;  // 0 new, 1 on the path being resolved, 2 done
  std::set<std::string> reported_;
  ViewResolution out_;
};

}  // namespace

ViewResolution resolve_views(const std::vector<TmemView>& views) { return Resolver(views).run(); }

}  // namespace ptxgen::plan
