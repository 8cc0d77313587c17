// Shared by the planner's files (not part of the stage's interface): the analysis context (what is
// declared, placed and resolved) and the per-op planners.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ptxgen/plan.hpp"

namespace ptxgen::plan::detail {

uint32_t round_up(uint32_t v, uint32_t a);

// The matrix descriptor of the sub-matrix of tile `t` from row `mn0` and K element `k0` (stage 0;
// base offset 0: every tile starts on its swizzle pattern, Table 41), in the sm_100 or sm_90 format.
isa::SmemDesc operand_desc(const SmemPlacement& t, isa::DescFormat f, int mn0, int k0);

struct Ctx {
  const ir::Kernel& k;
  const isa::TargetInfo& target;

  std::map<std::string, const ir::Global*> globals;
  std::set<std::string> oversized;                       // globals GLOBAL-SIZE refused: no offsets computed
  std::map<std::string, const ir::Tile*> tiles;
  std::map<std::string, SmemPlacement> placed;          // tiles with a canonical layout
  std::set<std::string> view_names;                      // every declared view
  std::map<std::string, ResolvedView> views;             // views that resolve
  std::map<std::string, RegDef> regs;                    // latest definition of each register set
  // Where each thread holds each element of a register set, built by tmem_store (plan.hpp) once per
  // definition of the set (a tmem_load erases it), so a long list of tmem_store ops costs each op
  // its own instructions only.
  std::map<std::string, Held> held;
  std::map<std::string, int> barrier_stages;             // declared barriers' ring sizes


  explicit Ctx(const ir::Kernel& kernel);

  // Operand lookups, silent: the op verifiers (src/rules/verify_ops.cpp, verify_mma.cpp,
  // verify_regs.cpp) report names declared nowhere or of the wrong kind.
  const ir::Global* find_global(const ir::Ref& r) const;
  const SmemPlacement* find_tile(const ir::Ref& r) const;
  const ResolvedView* find_view(const ir::Ref& r) const;
  std::string kind_of(const std::string& name) const;  // "a global tensor", ... or ""
  bool pair() const { return k.cta_group == 2; }
};

// Declarations checked and placed: names, global sizes, tile layouts and alignments, allocations,
// views (kernel.cpp).
void declarations(Ctx& c);
// The tiles placed in shared memory (memory_map's and the planner's placement).
std::map<std::string, SmemPlacement> place_tiles(const ir::Kernel& k);

// Each op of a role in order with its index in the role (loop bodies in place, once each): the
// index names the barriers and register sets the planner adds for an op.
template <typename F>
void each_op(const ir::Role& r, F&& f) {
  int i = 0;
  for (const auto& n : r.nodes)
    if (!n.is_loop) f(i++, n.op);
    else
      for (const auto& o : n.loop.body) f(i++, o);
}
// A load by TMA: asked for, or from a global with a typed map (`typed_maps`: their names).
std::set<std::string> typed_maps(const ir::Kernel& k);
bool by_tma(const std::set<std::string>& typed_maps, const ir::Op& o);
// The barrier a TMA load completes on: a pipeline's stage barrier, or one of its own.
std::string load_barrier(const ir::Load& o, int index);
// The role the planner orders ends with tcgen05.cp/mma work in flight, so the kernel commits and
// waits before tensor memory is deallocated (the final commit's barrier, planner_name("done")).
bool ends_in_flight(const ir::Kernel& k, const ir::Role& r);

std::optional<LoadStep> plan_load(Ctx& c, const ir::Load& o);
// tcgen05.cp instructions; `collateral` receives the lanes the multicast also writes outside the view.
std::optional<std::vector<CpInstr>> plan_copy(Ctx& c, const ir::Copy& o, std::vector<Region>& collateral);
std::optional<MmaStep> plan_mma(Ctx& c, const ir::Op& o);  // o: an mma
std::optional<MmaStep> plan_wgmma(Ctx& c, const ir::Mma& o);  // wgmma.cpp
// tcgen05.ld / tcgen05.st: the narrow calls tmem_lanes and tmem_store (plan.hpp) plan them.
std::optional<StoreStep> plan_store(Ctx& c, const ir::Store& o, const RegDef& src);
// How each wgmma TMA store among a role's ordered steps writes D into its staging tile
// (StoreStep::stmatrix, staging): ir::d_staging asked with the store's D and whether the role reads
// a tensor element by element anywhere (ops.cpp). A store whose lowering chose subtiles must get
// stmatrix.
void decide_staging(std::vector<Step>& steps);
// A TMA store of tcgen05.ld registers (one box of D through a stage of the staging ring; epilogue.cpp):
// `st` is the store planned so far.
std::optional<StoreStep> plan_box_store(Ctx& c, const ir::Store& o, const ir::Global& g, StoreStep st);
// D's tensor map for a TMA store of boxes of `box_cols` x `box_rows` elements (128-byte swizzled).
TensorMap store_map(const ir::Store& o, const ir::Global& g, int box_cols, int box_rows);

// Logical element column of element `e` of register `reg` (0-based within a fragment) for thread t.
struct Cell {
  int row = 0;
  int64_t elem = 0;  // first element column
  uint32_t lane = 0, column = 0;  // tensor-memory cell (allocation-relative) of the first element
};
Cell frag_cell(const LdInstr& f, int t, int reg, int elems_per_reg);

// The ops of every role in order, with the steps the ISA needs between them (order.cpp), and the
// register sets and tensor maps they need.
struct Ordered {
  std::vector<RolePlan> roles;
  std::vector<TensorMap> tensor_maps;
  std::map<std::string, int> reg_counts;
};
Ordered order(Ctx& c);

// The largest divisor of `extent` that is at most isa::kTmaBoxMax (a TMA box dimension's limit)
// and a multiple of `step`; 0 if none.
int box_extent(int extent, int step);

}  // namespace ptxgen::plan::detail
