// Tensor-memory view resolution: every view of a program resolves, through its chain of slices,
// casts and aliases, to (allocation, lanes, columns, element type, packing, row layout, rows), or
// to the fault that stops it: a name that is not declared, a cycle, a slice out of range, a packing
// the element type does not have, a layout the lanes cannot hold. The faults are geometry, not
// diagnostics: the view verifier (src/rules/verify_views.cpp) reports them under their rules.
//
// Tensor memory is 128 lanes by (up to) 512 columns of 32-bit cells (§9.7.16.1); addresses are
// lane << 16 | column (§9.7.16.1.1). Slices count lanes and 32-bit columns; casts reinterpret the
// same cells with another element type and packing (elements per column, §9.7.16.10.4) or another
// row layout.
#include <algorithm>

#include "ptxgen/ir/views.hpp"

namespace ptxgen::ir {

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
      return {32 * (rr / 16) + rr % 16 + static_cast<uint32_t>(layout_f_alignment(layout))};
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
      const uint32_t a = static_cast<uint32_t>(layout_f_alignment(layout));
      return (l < 128 && l % 32 >= a && l % 32 < a + 16) ? static_cast<int>(16 * (l / 32) + l % 32 - a) : -1;
    }
    case TmemLayout::layout_b: return l < 128 ? static_cast<int>(l % 64) : -1;
  }
  return -1;
}

std::string ResolvedView::describe() const {
  return alloc + " lanes " + std::to_string(lane) + "-" + std::to_string(lane + lanes - 1) + " columns " +
         std::to_string(column) + "-" + std::to_string(column + columns - 1) + ", " + std::string(isa::name(dtype)) +
         " x" + std::to_string(packing) + " per column, " + std::string(isa::name(layout)) + " layout, " +
         std::to_string(rows) + " rows" + (blocks() > 1 ? " in " + std::to_string(blocks()) + " column blocks" : "") +
         (stages > 1 ? ", a ring of " + std::to_string(stages) + " every " + std::to_string(stage_columns) + " columns" : "");
}

namespace {

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
  void fault(ViewFault::Kind k, size_t view, const std::optional<ResolvedView>& parent = std::nullopt) {
    ViewFault f;
    f.kind = k;
    f.view = view;
    f.cells = parent;
    out_.faults.push_back(std::move(f));
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
        ViewFault f;
        f.kind = ViewFault::cycle;
        f.view = static_cast<size_t>(path.back());
        bool in = false;
        for (int s : path) {
          in = in || s == cur;
          if (in) f.ring.push_back(static_cast<size_t>(s));
        }
        out_.faults.push_back(std::move(f));
        break;
      }
      state_[u] = 1;
      path.push_back(cur);
      const TmemView& v = views_[u];
      if (v.kind == TmemView::Kind::alloc) break;
      cur = parent_index(u, v);
      if (cur < 0) break;
    }
    // Down the path: each view from its parent's resolution (the allocation from nothing).
    for (size_t k = path.size(); k-- > 0;) {
      const size_t u = static_cast<size_t>(path[k]);
      const std::optional<ResolvedView>& parent = k + 1 < path.size() ? memo_[static_cast<size_t>(path[k + 1])] : *base;
      const TmemView& v = views_[u];
      memo_[u] = v.kind == TmemView::Kind::alloc ? link(u, v, none) : parent ? link(u, v, parent) : std::nullopt;
      state_[u] = 2;
    }
    return memo_[static_cast<size_t>(i)];
  }

  // The index of the view `v` (index u) is of, or -1 (a fault: no such name).
  int parent_index(size_t u, const TmemView& v) {
    if (v.of_inline >= 0) return v.of_inline;
    auto it = named_.find(v.of.name);
    if (it == named_.end()) {
      fault(ViewFault::unknown_parent, u);
      return -1;
    }
    return it->second;
  }

  // View `v` (index u) from its parent's resolution `p` (unused for an allocation).
  std::optional<ResolvedView> link(size_t u, const TmemView& v, const std::optional<ResolvedView>& p) {
    if (v.kind == TmemView::Kind::alloc) {
      // An allocation of columns tcgen05.alloc cannot take resolves to nothing and is no fault
      // here: TMEM-ALLOC reports it with the buffers, and the views of it would only repeat that.
      if (!isa::alloc_columns_ok(v.columns)) return std::nullopt;
      ResolvedView r;
      r.alloc = v.name;
      r.columns = static_cast<uint32_t>(v.columns);
      r.dtype = v.dtype.value_or(isa::DType::f32);
      r.packing = v.packing.value_or(1);
      r.chain.push_back(v.name + ": allocation of " + std::to_string(v.columns) + " columns");
      if (!packing_ok(r.dtype, r.packing)) return fault(ViewFault::packing, u), std::nullopt;
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
        if (lanes[0] >= lanes[1] || lanes[1] > p->lanes) return fault(ViewFault::lanes_outside, u, p), std::nullopt;
        if (cols[0] >= cols[1] || cols[1] > p->columns) return fault(ViewFault::columns_outside, u, p), std::nullopt;
        // A ring's last copy must lie inside the parent too (a ring of a ring is not made).
        if (v.stages > 1 && (p->stages > 1 || v.stage_columns < cols[1] - cols[0] ||
                             cols[0] + int64_t{v.stages - 1} * v.stage_columns + (cols[1] - cols[0]) > p->columns))
          return fault(ViewFault::columns_outside, u, p), std::nullopt;
        if (p->layout != TmemLayout::rows && (lanes[0] != 0 || lanes[1] != p->lanes))
          return fault(ViewFault::lane_slice_replicated, u, p), std::nullopt;
        r.lane = p->lane + static_cast<uint32_t>(lanes[0]);
        r.lanes = static_cast<uint32_t>(lanes[1] - lanes[0]);
        r.column = p->column + static_cast<uint32_t>(cols[0]);
        r.columns = static_cast<uint32_t>(cols[1] - cols[0]);
        r.rows = p->layout == TmemLayout::rows ? static_cast<int>(r.lanes) : r.rows_per_block();
        r.chain.push_back(who + "slice lanes [" + std::to_string(lanes[0]) + ", " + std::to_string(lanes[1]) +
                          ") columns [" + std::to_string(cols[0]) + ", " + std::to_string(cols[1]) + ")");
        if (v.stages > 1) {
          r.stages = v.stages;
          r.stage_columns = static_cast<uint32_t>(v.stage_columns);
          r.chain.back() += ", a ring of " + std::to_string(v.stages) + " every " + std::to_string(v.stage_columns) + " columns";
        }
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
        if (!packing_ok(r.dtype, r.packing)) return fault(ViewFault::packing, u, p), std::nullopt;
        if (v.layout && *v.layout != p->layout) {
          if (*v.layout != TmemLayout::rows && (p->lane != 0 || p->lanes != 128))
            return fault(ViewFault::layout_partial, u, p), std::nullopt;
          r.layout = *v.layout;
          r.rows = r.rows_per_block();
          what += " layout " + std::string(isa::name(r.layout));
        }
        if (v.rows) {
          const int rpb = r.rows_per_block();
          if (*v.rows % rpb != 0 || *v.rows / rpb == 0 || r.columns % static_cast<uint32_t>(*v.rows / rpb) != 0) {
            ViewFault f;
            f.kind = ViewFault::rows_split;
            f.view = u;
            f.cells = r;  // the cells the rows would split (the cast's layout applied)
            out_.faults.push_back(std::move(f));
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

  static bool packing_ok(isa::DType t, int packing) {
    const auto ok = isa::tmem_packings(t);
    return std::find(ok.begin(), ok.end(), packing) != ok.end();
  }

  const std::vector<TmemView>& views_;
  std::map<std::string, int> named_;
  std::vector<std::optional<ResolvedView>> memo_;
  std::vector<int> state_;  // 0 new, 1 on the path being resolved, 2 done
  ViewResolution out_;
};

}  // namespace

ViewResolution resolve_views(const std::vector<TmemView>& views) { return Resolver(views).run(); }

bool overlap(const Region& a, const Region& b) {
  if (a.alloc != b.alloc || !(a.lane0 < b.lane1 && b.lane0 < a.lane1 && a.col0 < b.col1 && b.col0 < a.col1)) return false;
  if (a.piece < 0 && b.piece < 0) return true;
  for (uint32_t l = std::max(a.lane0, b.lane0); l < std::min(a.lane1, b.lane1); ++l)
    if (a.has_lane(l) && b.has_lane(l)) return true;
  return false;
}

Region region_of(const ResolvedView& v) {
  const bool replicated = v.layout != ir::TmemLayout::rows;
  // A ring covers every copy of it.
  const uint32_t end = v.column + static_cast<uint32_t>(v.stages - 1) * v.stage_columns + v.columns;
  return {v.alloc, replicated ? 0u : v.lane, replicated ? 128u : v.lane + v.lanes, v.column, end, ir::layout_f_alignment(v.layout)};
}

std::string describe(const Region& r) {
  auto s = [](int64_t v) { return std::to_string(v); };
  const std::string lanes = r.piece < 0 ? "lanes " + s(r.lane0) + "-" + s(r.lane1 - 1)
                                        : "lanes " + s(r.piece) + "-" + s(r.piece + 15) + " of each 32-lane quarter";
  return lanes + " of columns " + s(r.col0) + "-" + s(r.col1 - 1) + " of " + r.alloc;
}


}  // namespace ptxgen::ir
