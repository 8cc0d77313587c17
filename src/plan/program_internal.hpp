// Shared by the program planner's files: the analysis context (what is declared, placed and
// resolved, where problems go) and the per-op planners of plan_ops.cpp / plan_mma.cpp.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ptxgen/program_plan.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::plan::detail {

// A rectangle of one allocation's lanes x columns; a layout-F view's region keeps only the
// 16-lane piece of each 32-lane quarter at its alignment (so the two alignments share columns).
struct Region {
  std::string alloc;
  uint32_t lane0 = 0, lane1 = 0, col0 = 0, col1 = 0;
  int piece = -1;  // -1: every lane of [lane0, lane1); 0 or 16: lanes l with l % 32 in [piece, piece + 16)
  bool has_lane(uint32_t l) const {
    return l >= lane0 && l < lane1 && (piece < 0 || (l % 32 >= static_cast<uint32_t>(piece) && l % 32 < static_cast<uint32_t>(piece) + 16));
  }
};
bool overlap(const Region& a, const Region& b);
Region region_of(const ResolvedView& v);  // every lane the view's rows occupy (replicas included)
std::string describe(const Region& r);

struct Ctx {
  const spec::Spec& spec;
  const spec::Program& prog;
  const isa::TargetInfo& target;
  std::vector<Problem> problems;
  std::set<std::string> reported;

  std::map<std::string, const spec::GlobalTensor*> globals;
  std::set<std::string> oversized;                       // globals GLOBAL-SIZE refused: no offsets computed
  std::map<std::string, const spec::SmemTile*> tiles;
  std::map<std::string, SmemPlacement> placed;          // tiles with a canonical layout
  std::set<std::string> view_names;                      // every declared view
  std::map<std::string, ResolvedView> views;             // views that resolve
  std::map<std::string, RegDef> regs;                    // latest definition of each register set

  Ctx(const spec::Spec& s, const spec::Program& p);
  void problem(const std::string& rule, const std::string& ptr, const std::string& msg,
               std::vector<std::string> help = {});

  // Operand lookups: NAME-UNKNOWN for names declared nowhere, OP-OPERAND for the wrong kind;
  // nullptr without a report for names whose own declaration is already in error.
  const spec::GlobalTensor* global(const spec::Ref& r, const std::string& role);
  const SmemPlacement* tile(const spec::Ref& r, const std::string& role);
  const ResolvedView* view(const spec::Ref& r, const std::string& role);
  std::string kind_of(const std::string& name) const;  // "a global tensor", ... or ""
};

std::optional<LoadStep> plan_load(Ctx& c, const spec::Op& o);
// tcgen05.cp instructions; `collateral` receives the lanes the multicast also writes outside the view.
std::optional<std::vector<CpInstr>> plan_copy(Ctx& c, const spec::Op& o, std::vector<Region>& collateral);
std::optional<MmaStep> plan_mma(Ctx& c, const spec::Op& o);
// The tcgen05.ld (or .st) instructions covering a view: warps, shape, .num, (un)packing.
std::optional<RegDef> plan_lanes(Ctx& c, const spec::Op& o, const ResolvedView& v);
std::optional<TmemStStep> plan_tmem_store(Ctx& c, const spec::Op& o, const RegDef& src, const ResolvedView& v);
std::optional<StoreStep> plan_store(Ctx& c, const spec::Op& o, const RegDef& src);

// Logical element column of element `e` of register `reg` (0-based within a fragment) for thread t.
struct Cell {
  int row = 0;
  int64_t elem = 0;  // first element column
  uint32_t lane = 0, column = 0;  // tensor-memory cell (allocation-relative) of the first element
};
Cell frag_cell(const LdInstr& f, int t, int reg, int elems_per_reg);

}  // namespace ptxgen::plan::detail
