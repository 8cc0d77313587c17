// The program level's tensor-memory views resolved from the spec alone (docs/spec.md "Views"),
// for the reference models (src/sim/program.cpp, tests/refmodel_program.cpp): not the planner's
// resolution, which tests/refmodel_program.cpp checks against this one.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ptxgen/program.hpp"

namespace ptxgen::sim {

using ptxgen::isa::DType;
using ptxgen::spec::TmemLayout;

// ---- views, resolved here from the spec (docs/spec.md "Views") ------------------------------
struct View {
  std::string alloc;
  int lane = 0, lanes = 128, col = 0, cols = 0;
  ptxgen::isa::DType dtype = ptxgen::isa::DType::f32;
  int packing = 1;
  TmemLayout layout = TmemLayout::rows;
  int rows = 128;
  int rpb() const {
    return layout == TmemLayout::rows ? lanes : (layout == TmemLayout::warpx4 ? 32 : 64);  // layout F: 64 rows
  }
  // Elements of a row's block of columns; layout B (§9.7.16.10.5.2, docs/architecture.md item 7)
  // holds a row in two lane halves at the same columns: twice as many.
  int64_t block_elems() const { return int64_t{cols} / (rows / rpb()) * packing; }
  int64_t row_elems() const { return block_elems() * (layout == TmemLayout::layout_b ? 2 : 1); }
  // Every lane holding element e of row r, and the column / bit of element e.
  std::vector<int> lanes_of(int r, int64_t e) const {
    const int x = r % rpb();
    switch (layout) {
      case TmemLayout::rows: return {lane + x};
      case TmemLayout::warpx2_02_13: return {x, x + 64};  // §9.7.16.9.2 .warpx2::02_13 (CUTLASS lw0213)
      case TmemLayout::warpx2_01_23: return x < 32 ? std::vector<int>{x, x + 32} : std::vector<int>{x + 32, x + 64};
      case TmemLayout::warpx4: return {x, x + 32, x + 64, x + 96};
      // §9.7.16.10.5.6 (docs/architecture.md item 7): rows in 16-lane pieces, one per quarter.
      case TmemLayout::layout_f_0: return {x % 16 + 32 * (x / 16)};
      case TmemLayout::layout_f_16: return {x % 16 + 32 * (x / 16) + 16};
      // §9.7.16.10.5.2 (docs/architecture.md item 7): the first half of a row at lane r, the second at 64 + r.
      case TmemLayout::layout_b: return {x + (e >= block_elems() ? 64 : 0)};
    }
    return {};
  }
  int column_of(int r, int64_t e) const {
    const int64_t in_half = layout == TmemLayout::layout_b ? e % block_elems() : e;
    return col + r / rpb() * (cols / (rows / rpb())) + static_cast<int>(in_half / packing);
  }
  int bit_of(int64_t e) const { return static_cast<int>(e % packing) * (32 / packing); }
};

class Views {
 public:
  explicit Views(const ptxgen::spec::Program& p) : p_(p) {
    for (size_t i = 0; i < p.views.size(); ++i)
      if (!p.views[i].name.empty()) idx_[p.views[i].name] = static_cast<int>(i);
  }
  View get(const std::string& n) const { return at(idx_.at(n)); }
  bool has(const std::string& n) const { return idx_.count(n) != 0; }
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& [n, i] : idx_) v.push_back(n);
    return v;
  }

 private:
  View at(int i) const {
    const auto& v = p_.views[static_cast<size_t>(i)];
    if (v.kind == ptxgen::spec::TmemView::Kind::alloc) {
      View r;
      r.alloc = v.name;
      r.cols = v.columns;
      r.dtype = v.dtype.value_or(ptxgen::isa::DType::f32);
      r.packing = v.packing.value_or(1);
      return r;
    }
    View r = at(v.of_inline >= 0 ? v.of_inline : idx_.at(v.of.name));
    if (v.kind == ptxgen::spec::TmemView::Kind::slice) {
      const int a = v.lanes ? static_cast<int>((*v.lanes)[0]) : 0, b = v.lanes ? static_cast<int>((*v.lanes)[1]) : r.lanes;
      const int c = v.cols ? static_cast<int>((*v.cols)[0]) : 0, d = v.cols ? static_cast<int>((*v.cols)[1]) : r.cols;
      r.lane += a;
      r.lanes = b - a;
      r.col += c;
      r.cols = d - c;
      r.rows = r.layout == TmemLayout::rows ? r.lanes : r.rpb();
    } else if (v.kind == ptxgen::spec::TmemView::Kind::cast) {
      if (v.dtype) r.dtype = *v.dtype;
      if (v.packing) r.packing = *v.packing;
      if (v.layout && *v.layout != r.layout) {
        r.layout = *v.layout;
        r.rows = r.rpb();
      }
      if (v.rows) r.rows = *v.rows;
    }
    return r;
  }
  const ptxgen::spec::Program& p_;
  std::map<std::string, int> idx_;
};

}  // namespace ptxgen::sim
