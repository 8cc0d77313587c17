// ptxgen/program_plan.hpp — the plan of a program-level spec.
//
// Views resolved through their chains (plan/views.cpp), memory placed, and every op planned into
// steps of instructions with each descriptor, tensor-memory address, shape and register resolved
// (plan/plan_program.cpp); the syncs and waits the ISA's memory model needs (§9.7.16.6) are steps
// too, each saying why it is there. `analyze_program` is also what the rule table runs: every
// reason a program has no plan is a Problem under a rule id of the table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ptxgen/isa.hpp"
#include "ptxgen/program.hpp"

namespace ptxgen::spec {
struct Spec;
}

namespace ptxgen::plan {

// A tensor-memory view resolved through its chain of slices, casts and aliases.
struct ResolvedView {
  std::string name;                    // "" for an inline view
  std::string alloc;                   // the allocation it lies in
  uint32_t lane = 0, lanes = 128;      // physical lanes [lane, lane + lanes)
  uint32_t column = 0, columns = 0;    // physical 32-bit columns, relative to the allocation base
  isa::DType dtype = isa::DType::f32;  // element type
  int packing = 1;                     // elements per 32-bit column
  spec::TmemLayout layout = spec::TmemLayout::rows;
  int rows = 128;                      // logical rows (several blocks of rows_per_block(), side by side)
  std::vector<std::string> chain;      // allocation first, one entry per link

  int rows_per_block() const;          // lanes (rows layout), 64 (warpx2), 32 (warpx4)
  int blocks() const { return rows / rows_per_block(); }
  uint32_t block_columns() const { return columns / static_cast<uint32_t>(blocks()); }
  // Layout B holds a row in two lane halves: twice the elements of its columns.
  int64_t row_elements() const { return int64_t{block_columns()} * packing * (layout == spec::TmemLayout::layout_b ? 2 : 1); }
  // Elements of a row before its second lane half (layout B: lanes 64-127); 0 for other layouts.
  int64_t half_elements() const { return layout == spec::TmemLayout::layout_b ? int64_t{block_columns()} * packing : 0; }
  // Allocation lanes holding logical row `r` (every replica); its block is r / rows_per_block().
  std::vector<uint32_t> lanes_of_row(int r) const;
  // Logical row (within its block) that allocation lane `l` holds, or -1.
  int row_of_lane(uint32_t l) const;
  std::string describe() const;        // "t lanes 0-127 columns 0-127, f32 x1, rows, 128 rows"
};

struct Problem {
  std::string rule;     // rule id of the table
  std::string pointer;  // where in the spec
  std::string message;
  std::vector<std::string> help;
};

struct ViewResolution {
  std::map<std::string, ResolvedView> views;  // named views that resolve
  std::vector<Problem> problems;
};
ViewResolution resolve_views(const spec::Program& p);

// ---- Memory --------------------------------------------------------------------------------
struct GlobalParam {  // a .param .u64 pointer, in name order (named param_name(name))
  std::string name;
  isa::DType dtype = isa::DType::f32;
  int bits = 32;      // storage bits per element
  int64_t rows = 0, cols = 0;
};

// The kernel parameter holding a global tensor's address (the emitter and the manifest agree).
inline std::string param_name(const std::string& global) { return "p_" + global; }

struct SmemPlacement {
  std::string name;
  isa::DType dtype = isa::DType::bf16;
  int bits = 16;                       // storage bits per element
  isa::TileLayout layout;              // mn = rows, k = cols
  uint32_t offset = 0;                 // from the aligned dynamic base
  uint32_t align = 16;
};

struct AllocPlacement {  // one tcgen05.alloc, in issue order (column counts never increase)
  std::string name;
  uint32_t columns = 0;
  uint32_t slot_offset = 0;  // shared-memory word tcgen05.alloc writes the address to
};

struct BarrierPlacement {
  std::string name;
  uint32_t offset = 0;
};

// ---- Steps ---------------------------------------------------------------------------------
enum class StepKind : uint8_t { load, sync, cp, mma, tmem_ld, tmem_st, wait_ld, wait_st, store, commit, wait };
std::string_view name(StepKind k);

// The names the planner gives the barriers and register sets it adds: "ptxgen_" + what (+ the op's
// index), e.g. ptxgen_done, ptxgen_load3, ptxgen_st5. A spec may not use the prefix (PROGRAM-NAME).
inline constexpr std::string_view kPlannerPrefix = "ptxgen_";
std::string planner_name(std::string_view what, int op = -1);

// The tensor map a TMA load reads through: a `.param .align 64 .b8 PARAM[128]` kernel parameter the
// host encodes with cuTensorMapEncodeTiled as the manifest says. The global tensor is seen as
// `dim_outer` rows of `dim_inner` elements of `unit` bytes (a byte copy, whatever the dtype: loads
// move storage bytes, rule LOAD-DTYPE), boxes of `box_inner` x `box_outer`.
struct ProgramTensorMap {
  std::string param, global;
  int unit = 1;                      // 1 (UINT8), or 4 (UINT32) for the 32-byte-atom swizzle
  int64_t dim_inner = 0, dim_outer = 0, stride_bytes = 0;
  int box_inner = 0, box_outer = 0;
  isa::Swizzle swizzle = isa::Swizzle::none;
};

// One cp.async.bulk.tensor of a TMA load: the box lands `smem` bytes from the aligned base; its
// first element is at tensor-map coordinates (c0 elements of the map, c1 rows).
struct TmaBox {
  uint32_t smem = 0;
  int64_t c0 = 0, c1 = 0;
};

// Global -> shared memory with plain loads: each thread moves 16-byte chunks. A chunk is a
// 16-byte piece of a row of the box arrangement TMA would write (§9.7.16.3.3 canonical layouts):
// `box_rows` rows of `row_bytes` bytes, boxes of `box_bytes` bytes side by side.
struct LoadStep {
  std::string global, tile;
  int64_t row0 = 0, col0 = 0;      // first global row / column
  int64_t global_row_bytes = 0;    // bytes between global rows
  int64_t col0_bytes = 0;
  int64_t cta_bytes = 0;           // a CTA pair: CTA r reads from r * cta_bytes further on (per_cta)
  uint32_t tile_offset = 0;
  int box_rows = 0;                // rows of the arrangement (tile rows if K-major, tile cols if MN-major)
  int row_bytes = 0;               // bytes of one such row
  int box_bytes = 16;              // swizzle width (16 without swizzle)
  isa::Swizzle swizzle = isa::Swizzle::none;
  uint32_t chunks = 0;             // 16-byte chunks in all
  // "via": "tma": thread 0 (of each CTA) arms `barrier` with the tile's bytes and issues `boxes`;
  // every thread waits for phase 0 of `barrier`. The same arrangement, written by the hardware.
  bool tma = false;
  ProgramTensorMap map;
  std::string barrier;
  std::vector<TmaBox> boxes;
  int64_t cta_c0 = 0, cta_c1 = 0;  // a CTA pair: CTA r's coordinates are r * (cta_c0, cta_c1) further on
};

struct CpInstr {
  isa::CpShape shape = isa::CpShape::s128x256b;
  isa::CpDecompress decompress = isa::CpDecompress::none;
  isa::SmemDesc src;               // start relative to the aligned shared-memory base
  std::string alloc;
  uint32_t taddr = 0;              // relative to the allocation base
  int src_row = 0;                 // first source row (in the tile)
  int src_col = 0;                 // first source element column (in the tile)
  int dst_row = 0;                 // first logical destination row, block included
  int64_t dst_elem = 0;            // first logical destination element column (within the row block)
};

struct MmaInstr {
  int mi = 0, ni = 0, ki = 0;
  int m = 0, n = 0, k = 0;
  isa::InstrDesc idesc;
  bool a_tmem = false;
  isa::SmemDesc a_desc;
  std::string a_alloc;
  uint32_t a_taddr = 0;
  isa::SmemDesc b_desc;
  std::string d_alloc;
  uint32_t d_taddr = 0;
  bool enable_input_d = true;
  // block scaling
  std::string sfa_alloc, sfb_alloc;
  uint32_t sfa_taddr = 0, sfb_taddr = 0;
  // sparsity
  std::string meta_alloc;
  uint32_t meta_taddr = 0;
};

struct MmaStep {
  isa::Kind kind = isa::Kind::f16;
  bool sparse = false;
  bool scaled = false;
  std::string scale_qualifier;  // ".scale_vec::1X" / ".block32" ...
  int factors_per_instr = 0;    // scale factors per row per instruction
  isa::DType scale_dtype = isa::DType::ue8m0;
  std::vector<MmaInstr> instrs;  // issue order: K step outermost, then M group, then N group
};

// One tcgen05.ld / tcgen05.st instruction of one warp. Thread t's register `first_reg + j` moves
// the cell isa::ld_cell(shape, t, j) relative to taddr (two columns with .pack/.unpack).
struct LdInstr {
  int warp = 0;
  isa::LdShape shape = isa::LdShape::s32x32b;
  int num = 1;
  bool pack = false;     // .pack::16b / .unpack::16b
  int split = 0;         // .16x32bx2: immHalfSplitoff in columns
  std::string alloc;
  uint32_t taddr = 0;    // lane << 16 | column, relative to the allocation base; the lane is in the warp's quarter
  int first_reg = 0;
  int regs = 0;
  int row0 = 0;          // logical row (block included) at taddr's lane
  int64_t elem0 = 0;     // logical element column at taddr's column
};

// The registers of a register set, as the tcgen05.ld instructions of a tmem_load defined them.
struct RegDef {
  std::string name;
  isa::DType dtype = isa::DType::f32;
  int elems_per_reg = 1;    // elements each 32-bit register holds
  int elem_bits = 32;       // bits of one element in the register (16 when two 16-bit values share it)
  int regs = 0;             // registers per thread
  int rows = 0;             // logical shape of the view it was loaded from
  int64_t row_elements = 0;
  int view_packing = 1;     // packing of the view (elements per column)
  std::vector<LdInstr> frags;
};

// tcgen05.st source: element e of store register j is element `elem` of set register `reg`,
// converted when the types differ.
struct StSource {
  int reg = 0;
  int elem = 0;
};

struct TmemStStep {
  RegDef src;                              // the register set stored
  RegDef dst;                              // the tcgen05.st instructions (frags) and their layout
  std::vector<std::vector<std::vector<StSource>>> sources;  // [store instruction][register][element]
  bool convert = false;                     // f32 -> f16/bf16 (cvt.rn)
  bool direct = false;                      // every register moves as loaded: tcgen05.st takes the set's own registers
};

struct StoreStep {
  RegDef src;
  std::string global;
  int64_t row0 = 0, col0 = 0;
  int64_t cta_row = 0, cta_col = 0;  // a CTA pair: CTA r writes at (row0, col0) + r * (cta_row, cta_col)
  isa::DType to = isa::DType::f32;
  int64_t global_cols = 0;
};

struct BarrierStep {
  std::string barrier;
  uint32_t offset = 0;
  int parity = 0;  // wait: the phase parity it waits for
};

struct Step {
  StepKind kind = StepKind::sync;
  int op = -1;            // the op it implements; -1 when the planner inserted it
  std::string why;        // what the step does and, for inserted steps, why the ISA needs it
  bool proxy_fence = false;  // sync: generic-proxy shared-memory writes precede it (fence.proxy.async)
  LoadStep load;
  std::vector<CpInstr> cps;
  MmaStep mma;
  RegDef ld;              // tmem_ld: the register set loaded
  TmemStStep st;
  StoreStep store;
  BarrierStep bar;
};

struct ProgramPlan {
  int threads = 128;
  int cta_group = 1;                      // 2: a CTA pair, one cluster of two CTAs (.cta_group::2)
  std::vector<GlobalParam> globals;
  std::vector<SmemPlacement> smem;
  std::vector<AllocPlacement> allocs;
  std::vector<BarrierPlacement> barriers;
  std::vector<ProgramTensorMap> tensor_maps;  // kernel parameters after the globals' addresses, in op order
  std::map<std::string, ResolvedView> views;
  std::map<std::string, int> reg_counts;  // registers per thread of each register set (largest definition)
  uint32_t smem_align = 16;               // the dynamic base is rounded up to this at run time
  uint32_t smem_bytes = 0;                // dynamic shared memory the launch requests
  uint32_t tmem_columns = 0;              // sum of the allocations
  int ptx_version = 86;                   // major * 10 + minor
  std::vector<Step> steps;
  int mma_instructions() const;
};

struct ProgramAnalysis {
  std::vector<Problem> problems;   // non-empty: no plan
  std::optional<ProgramPlan> plan;
};
ProgramAnalysis analyze_program(const spec::Spec& s);

}  // namespace ptxgen::plan
