// The verifiers: every reason the planner cannot take a lowered kernel, found over the IR per
// buffer and per op, each a Problem under its rule id of the table with the pointer of the field
// to change. The table's check of each rule reports that rule's problems (check_program.cpp), so a
// rule's id, explanation, examples and check stay bound in one record.
//
// Where a verifier needs a number only the planner computes (a view's cells, a tile's alignment),
// it makes a narrow call into plan/ (plan.hpp, "narrow calls") and words the answer itself; the
// planner issues no diagnostics for these rules.
#pragma once

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ptxgen/ir.hpp"
#include "ptxgen/isa.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::rules::verify {

// A reason the kernel cannot be planned: a rule of the table, where in the spec, the words.
struct Problem {
  std::string rule;
  std::string pointer;
  std::string message;
  std::vector<std::string> help;
};

struct Ctx {
  const ir::Kernel& k;
  const isa::TargetInfo& target;
  std::vector<Problem> problems;
  std::vector<Problem> warnings;  // what can be intended, and the spec can say so (not refused)
  std::set<std::string> reported;

  std::map<std::string, const ir::Global*> globals;
  std::set<std::string> oversized;                    // globals GLOBAL-SIZE refused
  std::map<std::string, const ir::Tile*> tiles;
  std::map<std::string, plan::SmemPlacement> placed;  // tiles kernel() accepts: layout made, alignment (no offset)
  std::set<std::string> view_names;                   // every declared view
  std::map<std::string, ir::ResolvedView> views;    // views that resolve (views())
  // Ops a verifier refused (the later verifiers do not judge what depends on them).
  std::set<const ir::Op*> refused;
  std::set<std::string> refused_copies;  // views a refused copy was to fill (copies())
  std::map<const ir::Op*, plan::MmaShape> mma_shapes;  // accepted tcgen05 mma ops' shapes (mmas())
  std::map<const ir::Op*, std::array<int64_t, 2>> stored;  // accepted stores: the rows x columns they write (registers())

  explicit Ctx(const ir::Kernel& kernel);
  void problem(const std::string& rule, const std::string& ptr, const std::string& msg,
               std::vector<std::string> help = {});

  // Operand lookups for the op verifiers: NAME-UNKNOWN for names declared nowhere, OP-OPERAND for
  // the wrong kind; nullptr without a report for names whose own declaration is already in error.
  const ir::Global* global(const ir::Ref& r, const std::string& role);
  const plan::SmemPlacement* tile(const ir::Ref& r, const std::string& role);
  const ir::ResolvedView* view(const ir::Ref& r, const std::string& role);
  std::string kind_of(const std::string& name) const;  // "a global tensor", ... or ""
  bool pair() const { return k.cta_group == 2; }
};

// Every op of every role, in order, loop bodies included (once each).
std::vector<const ir::Op*> all_ops(const ir::Kernel& k);

// The kernel and its buffers (verify_kernel.cpp): target, threads, a pair's per_cta, names,
// global sizes, 4-bit formats, tiles' canonical layouts and alignment, allocations.
void kernel(Ctx& c);
// Tensor-memory views through their chains (verify_views.cpp): unknown names, cycles, slices,
// packings, layouts, rows.
void views(Ctx& c);
// Global loads (verify_ops.cpp): operands, dtypes, bounds, 16-byte chunks, TMA maps and boxes.
void loads(Ctx& c);
// tcgen05.cp copies (verify_ops.cpp): operands, the source range, widths, formats, shapes.
void copies(Ctx& c);

// The mma op on tcgen05 (verify_mma.cpp): operands, kind, target, accumulator, D's layout, majors,
// swizzles, instruction shapes, A / scale factors / metadata in tensor memory, overlap.
void mmas(Ctx& c);

// The ops that define and use register sets, in program order (verify_regs.cpp): tmem_load and
// tmem_store (tcgen05.ld/st warps, shapes, .num, packing, what each thread holds, types), stores
// (types, bounds, a pair's overlap), the wgmma op's tiles; operands' names. After mmas() so that an
// operand's NAME-UNKNOWN / OP-OPERAND follow those of the mma ops, as the planner reported them.
void registers(Ctx& c);

// A store by TMA (verify_store.cpp, called by registers() once the store's type passed): STORE-TMA,
// what the staging path takes of the registers, the global and the staging tile; false if refused.
bool tma_store(Ctx& c, const ir::Op& op, const plan::RegDef& src, const ir::Global& g);

// The order rules of a role the planner orders (verify_order.cpp): ORDER-UNWRITTEN,
// ORDER-INCOMPLETE, ORDER-BARRIER, CP-MULTICAST-OVERLAP, over the ops as listed.
void order(Ctx& c);

// What the stepping loads and stores of a program cover of their tensors inside one step of the
// grid and the loop (verify_coverage.cpp): PROGRAM-COVERAGE, judged once every op passed.
void coverage(Ctx& c);
// An M = 64 MMA reading A in layout F from a copy of a tile that a load filled in row order,
// without "place" (verify_coverage.cpp): OP-MMA-A-ORDER, a warning, since the global may hold A in
// lane order already ("place": "rows" says so).
void lane_order(Ctx& c);

// Every op of the kernel in program order: each role's nodes, loop bodies in place.
std::vector<const ir::Op*> all_ops(const ir::Kernel& k);

// Every verifier, in the order above: the problems, and the ops refused.
struct Verdict {
  std::vector<Problem> problems;
  std::set<const ir::Op*> refused;
  size_t buffer_problems = 0;  // the first problems, of the kernel's buffers (kernel(), views())
  std::vector<Problem> warnings;  // what can be intended (not refused)
};
Verdict run(const ir::Kernel& k);

}  // namespace ptxgen::rules::verify
