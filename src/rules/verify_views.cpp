// Tensor-memory views: each chain of slices, casts and aliases ends at an allocation through names
// that exist, without a cycle, each slice inside what it slices, each packing one the element type
// has (§9.7.16.10.4), each layout one its lanes can hold, each row count a split of the columns.
// The cells come from the planner's resolution (ir::resolve_views, a narrow call): it names the
// fault where a chain stops, and this verifier says it under its rule.
#include "verify.hpp"

#include "ptxgen/spec.hpp"

namespace ptxgen::rules::verify {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

std::string list(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ", ") + s(x);
  return out;
}

std::string label(const ir::TmemView& v) { return v.name.empty() ? "(inline view at " + v.ptr + ")" : v.name; }

void report(Ctx& c, const ir::ViewFault& f) {
  using F = ir::ViewFault;
  using spec::TmemLayout;
  const auto& views = c.k.views;
  const ir::TmemView& v = views[f.view];
  const ir::ResolvedView* p = f.cells ? &*f.cells : nullptr;
  switch (f.kind) {
    case F::unknown_parent:
      c.problem("NAME-UNKNOWN", v.of.ptr, "no tensor-memory view named \"" + v.of.name + "\"",
                {"declare it under /program/tmem, or use one of the names declared there"});
      return;
    case F::cycle: {
      std::string cycle;
      for (size_t i : f.ring) cycle += label(views[i]) + " -> ";
      cycle += label(views[f.ring.front()]);
      c.problem("VIEW-CYCLE", v.of.ptr, "the views form a cycle: " + cycle,
                {"every chain of slices, casts and aliases must end at an allocation ({\"columns\": N})"});
      return;
    }
    case F::packing: {
      const bool alloc = v.kind == ir::TmemView::Kind::alloc;
      const isa::DType t = v.dtype ? *v.dtype : alloc || !p ? isa::DType::f32 : p->dtype;
      const int packing = v.packing ? *v.packing : alloc || !p ? 1 : p->packing;
      const auto ok = isa::tmem_packings(t);
      c.problem("VIEW-PACKING", alloc || v.packing ? v.packing_ptr : v.dtype_ptr,
                std::string(isa::name(t)) + " elements pack " + list(ok) + " to a 32-bit tensor-memory column, not " + s(packing),
                {"use \"packing\": " + list(ok) + " (1 is unpacked, as the accumulator D is; the A operand is packed)"});
      return;
    }
    case F::lanes_outside: {
      const std::array<int64_t, 2> lanes = v.lanes ? *v.lanes : std::array<int64_t, 2>{0, p->lanes};
      c.problem("VIEW-SLICE-RANGE", v.lanes_ptr,
                "lanes [" + s(lanes[0]) + ", " + s(lanes[1]) + ") are not inside the " + s(p->lanes) +
                    " lanes of the view sliced (" + p->describe() + ")",
                {"slice lanes [a, b) with 0 <= a < b <= " + s(p->lanes)});
      return;
    }
    case F::columns_outside: {
      const std::array<int64_t, 2> cols = v.cols ? *v.cols : std::array<int64_t, 2>{0, p->columns};
      c.problem("VIEW-SLICE-RANGE", v.cols_ptr,
                "columns [" + s(cols[0]) + ", " + s(cols[1]) + ") are not inside the " + s(p->columns) +
                    " columns of the view sliced (" + p->describe() + ")",
                {"slice columns [c, d) with 0 <= c < d <= " + s(p->columns) +
                 " (columns are 32-bit tensor-memory columns, not elements)"});
      return;
    }
    case F::lane_slice_replicated:
      c.problem("VIEW-LAYOUT", v.lanes_ptr,
                "a " + std::string(isa::name(p->layout)) +
                    (spec::layout_f_alignment(p->layout) >= 0
                         ? " view holds its rows in a 16-lane piece of every 32-lane sub-partition; a lane slice "
                           "of it is no range of lanes"
                         : " view holds each row in several 32-lane sub-partitions; slicing its lanes would keep "
                           "some replicas of a row and drop others"),
                {"slice the lanes before the layout cast, or slice columns only"});
      return;
    case F::layout_partial:
      c.problem("VIEW-LAYOUT", v.layout_ptr,
                "layout " + std::string(isa::name(*v.layout)) +
                    " places rows in all four 32-lane sub-partitions (and layout F's lane alignment counts from lane 0); "
                    "the view cast has lanes " +
                    s(p->lane) + "-" + s(p->lane + p->lanes - 1),
                {"cast a view of all 128 lanes (slice columns only before the cast)"});
      return;
    case F::rows_split: {
      const int rpb = p->rows_per_block();
      c.problem("VIEW-ROWS", v.rows_ptr,
                s(*v.rows) + " rows do not split into blocks of " + s(rpb) + " rows (the " + std::string(isa::name(p->layout)) +
                    " layout over " + s(p->lanes) + " lanes) over equal parts of the " + s(p->columns) + " columns",
                {"use a multiple of " + s(rpb) + " rows whose block count divides the columns"});
      return;
    }
  }
}

}  // namespace

void views(Ctx& c) {
  ir::ViewResolution r = ir::resolve_views(c.k.views);
  for (const auto& f : r.faults) report(c, f);
  c.views = std::move(r.views);
}

}  // namespace ptxgen::rules::verify
