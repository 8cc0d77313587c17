// PROGRAM-COVERAGE inside one step (docs/spec.md, "Coverage"): the loads and stores of a program
// whose positions step with the grid's tile or the loop's iteration cover their tensor step by
// step. check_pipeline.cpp has compared each step with the grid's tile and the loop's block on the
// spec; here, with the extents only the lowered kernel knows (a load's tile, a store's registers),
// the ops of one global are laid over one step of it -- the step's rows x columns along a dimension
// that steps, the whole extent along one that does not -- and every element of that cell must be
// written by exactly one store (none: never written; two: written twice, by neighbouring CTAs or
// iterations too, as an op reaching past its step overlaps the next step's), and read by some load
// (none: never read); a load reaching past its step of the loop reads K elements that the next
// iteration reads again, which the MMAs would sum twice. Judged on a kernel every op of which passed.
#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "ptxgen/diag.hpp"
#include "verify.hpp"

namespace ptxgen::rules::verify {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

constexpr std::array<const char*, 3> kPer = {"tile row", "tile column", "iteration"};

// Which walker a position steps with along one dimension (0 m_tile, 1 n_tile, 2 k_block; -1 none)
// and by how much. check_pipeline.cpp refused a dimension with two.
std::pair<int, int64_t> walker(const ir::Affine& a) {
  if (a.m_tile) return {0, a.m_tile};
  if (a.n_tile) return {1, a.n_tile};
  if (a.k_block) return {2, a.k_block};
  return {-1, 0};
}

struct Rect {
  const ir::Op* op;
  std::array<int64_t, 2> lo, hi;  // [lo, hi) rows and columns, from the step's origin
};

struct Group {
  const ir::Global* g = nullptr;
  bool store = false;
  std::array<std::pair<int, int64_t>, 2> steps{std::pair<int, int64_t>{-1, 0}, {-1, 0}};
  std::vector<const ir::Op*> ops;
  std::vector<Rect> rects;
};

const ir::Position& position(const ir::Op& op) {
  if (const ir::Load* l = op.as<ir::Load>()) return l->pos;
  return op.as<ir::Store>()->pos;
}

std::string at_ptr(const ir::Op& op, size_t dim) { return ptr_join(position(op).at_ptr, dim); }

}  // namespace

void coverage(Ctx& c) {
  if (c.k.source != "program" || !c.problems.empty()) return;
  std::map<std::pair<std::string, bool>, Group> groups;
  std::vector<std::pair<std::string, bool>> order;  // groups in the order of their first op
  for (const ir::Op* op : all_ops(c.k)) {
    const ir::Load* l = op->as<ir::Load>();
    const ir::Store* st = op->as<ir::Store>();
    if ((!l && !st) || c.refused.count(op)) continue;
    const std::string name = l ? l->src.name : st->dst.name;
    const auto gi = c.globals.find(name);
    if (gi == c.globals.end()) continue;
    const ir::Position& pos = l ? l->pos : st->pos;
    const std::array<std::pair<int, int64_t>, 2> steps = {walker(pos.at[0]), walker(pos.at[1])};
    const bool stepping = steps[0].first >= 0 || steps[1].first >= 0;
    // A load at a fixed place reads what it reads; a store at a fixed place into a tensor that
    // other stores write step by step writes the same elements from every CTA (below).
    if (l && !stepping) continue;
    std::array<int64_t, 2> extent{};
    if (l) {
      const auto t = c.placed.find(l->dst.name);
      if (t == c.placed.end()) continue;
      const bool kmaj = t->second.layout.major == isa::Major::k;
      extent = {l->tile_row0 >= 0 ? l->load_rows : (kmaj ? t->second.layout.mn : t->second.layout.k),
                kmaj ? t->second.layout.k : t->second.layout.mn};
    } else {
      const auto e = c.stored.find(op);
      if (e == c.stored.end()) continue;
      extent = e->second;
    }
    const std::pair<std::string, bool> key{name, st != nullptr};
    Group& gr = groups[key];
    if (!gr.g) {
      gr.g = gi->second;
      gr.store = st != nullptr;
      order.push_back(key);
    }
    gr.ops.push_back(op);
    if (stepping && gr.steps[0].first < 0 && gr.steps[1].first < 0) gr.steps = steps;
    for (int r = 0; r < c.k.cta_group; ++r) {
      Rect x{op, {}, {}};
      for (size_t i = 0; i < 2; ++i) {
        x.lo[i] = pos.at[i].base + r * pos.at[i].rank;
        x.hi[i] = x.lo[i] + extent[i];
      }
      gr.rects.push_back(x);
    }
  }
  for (const auto& key : order) {
    Group& gr = groups.at(key);
    if (gr.steps[0].first < 0 && gr.steps[1].first < 0) continue;  // stores at fixed places only
    const std::string what = gr.store ? "store" : "load";
    const std::string into = "\"" + gr.g->name + "\"";
    // Every op of the group steps as the first stepping one: a store that steps otherwise (or not
    // at all) writes what neighbouring CTAs or iterations write too.
    bool alike = true;
    for (const ir::Op* op : gr.ops) {
      const ir::Position& pos = position(*op);
      for (size_t i = 0; i < 2 && alike; ++i) {
        const auto w = walker(pos.at[i]);
        if (w == gr.steps[i]) continue;
        alike = false;
        const auto& want = gr.steps[i];
        c.problem("PROGRAM-COVERAGE", at_ptr(*op, i),
                  "this " + what + " of " + into + " steps " +
                      (w.first < 0 ? std::string("with nothing") : s(w.second) + " per " + kPer[static_cast<size_t>(w.first)]) + " along its " +
                      (i ? "columns" : "rows") + ", and the other " + what + "s of it " +
                      (want.first < 0 ? std::string("with nothing") : s(want.second) + " per " + kPer[static_cast<size_t>(want.first)]) +
                      (gr.store ? ": the CTAs (iterations) then write the same elements of it twice (a race), or leave some unwritten"
                                : ": each step would read parts of it that belong to other steps"),
                  {"step every " + what + " of " + into + " alike"});
      }
    }
    if (!alike) continue;
    // The cell of one step: the step along a dimension that steps, the whole extent along one
    // that does not (the spec's value of a size).
    std::array<int64_t, 2> cell{};
    for (size_t i = 0; i < 2; ++i) cell[i] = gr.steps[i].first >= 0 ? gr.steps[i].second : (i ? gr.g->cols : gr.g->rows);
    if (cell[0] <= 0 || cell[1] <= 0) continue;
    // Each rectangle folded into the cell: along a dimension that steps, its parts past the step
    // land in the next steps' cells, at the same place of the cell (the pieces overlap there).
    struct Piece {
      const ir::Op* op;
      std::array<int64_t, 2> lo, hi;
    };
    std::vector<Piece> pieces;
    bool self_overlap_k = false;
    const ir::Op* overlap_op = nullptr;
    for (const Rect& x : gr.rects) {
      std::array<std::vector<std::pair<int64_t, int64_t>>, 2> runs;
      for (size_t i = 0; i < 2; ++i) {
        const int64_t lo = x.lo[i], hi = x.hi[i];
        if (gr.steps[i].first < 0) {
          if (std::min(hi, cell[i]) > lo) runs[i].push_back({lo, std::min(hi, cell[i])});
          continue;
        }
        if (!gr.store && gr.steps[i].first == 2 && hi - lo > cell[i] && !overlap_op) self_overlap_k = true, overlap_op = x.op;
        // At most two folds matter: an op longer than two steps overlaps itself anyway.
        const int64_t len = std::min(hi - lo, 2 * cell[i] + 1);
        int64_t a = lo % cell[i], left = len;
        while (left > 0) {
          const int64_t n = std::min(left, cell[i] - a);
          runs[i].push_back({a, a + n});
          left -= n;
          a = 0;
        }
      }
      for (const auto& r : runs[0])
        for (const auto& q : runs[1]) pieces.push_back({x.op, {r.first, q.first}, {r.second, q.second}});
    }
    if (self_overlap_k) {
      const size_t i = gr.steps[0].first == 2 ? 0 : 1;
      c.problem("PROGRAM-COVERAGE", at_ptr(*overlap_op, i),
                "the load of " + into + " reads more of its " + (i ? "columns" : "rows") + " than it steps per iteration (" +
                    s(cell[i]) + "): the next iteration reads the same elements again, and the MMAs of both sum them",
                {"step the load by the rows (columns) its tile holds along them, or give the tile as many as it steps"});
      continue;
    }
    // Count the pieces over the cell's elementary rectangles (the pieces' edges cut it).
    std::array<std::vector<int64_t>, 2> cut;
    for (size_t i = 0; i < 2; ++i) {
      std::set<int64_t> e = {0, cell[i]};
      for (const Piece& p : pieces) e.insert(p.lo[i]), e.insert(p.hi[i]);
      cut[i].assign(e.begin(), e.end());
    }
    bool reported = false;
    for (size_t a = 0; a + 1 < cut[0].size() && !reported; ++a)
      for (size_t b = 0; b + 1 < cut[1].size() && !reported; ++b) {
        int n = 0;
        const ir::Op* second = nullptr;
        for (const Piece& p : pieces)
          if (p.lo[0] <= cut[0][a] && cut[0][a + 1] <= p.hi[0] && p.lo[1] <= cut[1][b] && cut[1][b + 1] <= p.hi[1]) {
            ++n;
            if (n == 2) second = p.op;
          }
        const std::string where = "rows " + s(cut[0][a]) + ".." + s(cut[0][a + 1] - 1) + " and columns " + s(cut[1][b]) + ".." +
                                  s(cut[1][b + 1] - 1);
        std::string step;
        for (size_t i = 0; i < 2; ++i)
          if (gr.steps[i].first >= 0)
            step += std::string(step.empty() ? "" : " and ") + s(cell[i]) + (i ? " columns" : " rows") + " per " + kPer[static_cast<size_t>(gr.steps[i].first)];
        if (n == 0) {
          reported = true;
          c.problem("PROGRAM-COVERAGE", position(*gr.ops.front()).at_ptr,
                    "the " + what + "s of " + into + " step " + step + ", and within each step " + where + " (counted from the step's start) " +
                        (gr.store ? "are never written: that part of the output is left as it was"
                                  : "are never read: that part of the input never reaches the MMAs"),
                    {gr.store ? "store registers that cover the whole step (another store, or a wider view)"
                              : "load a tile that covers the whole step, or step by what the tile covers"});
        } else if (n > 1 && gr.store) {
          reported = true;
          c.problem("PROGRAM-COVERAGE", position(*second).at_ptr,
                    "the stores of " + into + " step " + step + ", and within each step " + where + " (counted from the step's start) "
                    "are written twice, by this store and another one, or by the CTAs (iterations) of neighbouring steps: which value "
                    "lands there is a race",
                    {"store each element of a step once: stores no larger than the step, side by side"});
        }
      }
  }
}

void lane_order(Ctx& c) {
  if (c.k.source != "program" || !c.problems.empty()) return;
  const std::vector<const ir::Op*> ops = all_ops(c.k);
  std::set<const ir::Op*> told;
  for (const ir::Op* op : ops) {
    const ir::Mma* m = op->as<ir::Mma>();
    const auto a = m ? c.views.find(m->a.name) : c.views.end();
    if (a == c.views.end() || ir::layout_f_alignment(a->second.layout) < 0) continue;
    const int align = ir::layout_f_alignment(a->second.layout);
    const ir::Region ra = ir::region_of(a->second);
    // The copies that fill A's cells (into a rows view the layout-F view casts), and the loads
    // into their tiles that fill rows in order without saying so.
    for (const ir::Op* cp : ops) {
      const ir::Copy* y = cp->as<ir::Copy>();
      const auto v = y ? c.views.find(y->dst.name) : c.views.end();
      if (v == c.views.end() || !ir::overlap(ir::region_of(v->second), ra)) continue;
      for (const ir::Op* ld : ops) {
        const ir::Load* l = ld->as<ir::Load>();
        if (!l || l->dst.name != y->src.name || l->tile_row0 >= 0 || !l->place_ptr.empty() || !told.insert(ld).second) continue;
        c.warnings.push_back(
            {"OP-MMA-A-ORDER", ld->ptr,
             "the M = 64 mma (" + op->ptr + ") reads A in data-path layout F at alignment " + std::to_string(align) + ", copied from \"" +
                 l->dst.name + "\", which this load fills in row order: row r of A is the tile's row 32 (r / 16) + r % 16 + " +
                 std::to_string(align) + " (§9.7.16.10.5.6), so a naturally ordered \"" + l->src.name + "\" gives D permuted rows",
             {"add \"place\": \"layout_f::" + std::to_string(align) + "\" (or \"layout_f\" for both alignments) to place its rows where "
              "layout F reads them",
              "or \"place\": \"rows\" if \"" + l->src.name + "\" already holds A in that lane order"}});
      }
    }
  }
}

}  // namespace ptxgen::rules::verify
