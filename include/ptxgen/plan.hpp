// ptxgen/plan.hpp — the plan: a checked spec with every choice made and every address resolved.
//
// Planning runs in four visible steps (Mosaic GPU's order): (1) shapes and types, (2) instruction
// shapes, (3) descriptors, (4) issue order. Steps 1-2 plus the memory maps form the `Shapes`
// that the rule table's budget checks also read, so the two can never disagree.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ptxgen/isa.hpp"
#include "ptxgen/program_plan.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::plan {

// One operand's tile in shared memory (per CTA, per stage).
struct OperandTile {
  char name = 'A';            // 'A' or 'B'
  isa::DType dtype = isa::DType::bf16;
  isa::TileLayout layout;     // rows along M (A) or N (B) held by this CTA, K columns
  int rows_used = 0;          // rows of the tile the MMAs read (layout.mn may pad to whole atoms)
};

struct SmemMap {
  uint32_t align = 1024;                // the dynamic base is rounded up to this at run time
  std::vector<uint32_t> a_offset;       // per stage, from the aligned base
  std::vector<uint32_t> b_offset;
  uint32_t stage_bytes = 0;
  uint32_t barriers_offset = 0;         // mbarriers (8 B each) after the stages
  int barriers = 0;
  uint32_t tmem_slot_offset = 0;        // where tcgen05.alloc writes the TMEM address
  uint32_t dynamic_bytes = 0;           // what the launch must request (includes align slack)
};

// A region of tensor memory: columns [column, column + columns) of lanes [lane, lane + lanes), or,
// for the half-datapath layout F (M=64, cta_group::1), of lanes [32q + lane, 32q + lane + 16) for
// q = 0..3 (lane is the layout's alignment, 0 or 16; PTX ISA 9.1 §9.7.16.10.5).
struct TmemRegion {
  std::string what;  // "D" or "A"
  int mi = 0, ni = 0, ki = 0;
  uint32_t lane = 0, lanes = 0, column = 0, columns = 0;
  bool half_datapath = false;
};
// The lanes a region touches, as a 128-bit set (bit i = lane i).
std::array<uint64_t, 2> lane_mask(const TmemRegion& r);

struct TmemMap {
  uint32_t used_columns = 0;   // highest column used + 1
  uint32_t alloc_columns = 0;  // power of two in [32, 512] for tcgen05.alloc (0: none needed)
  std::vector<TmemRegion> regions;
};

struct Shapes {
  isa::Kind kind = isa::Kind::f16;
  int cta_group = 1;
  int m_instr = 128;            // M of one instruction (the pair's M for cta_group::2)
  int m_groups = 1;             // instruction groups along the CTA tile's M
  int m_per_cta = 128;          // rows of D one CTA holds per M group
  std::vector<int> n_groups;    // N of each instruction group (pair N for cta_group::2)
  int k_instr = 16;             // K of one instruction (elements)
  int k_steps = 1;              // instructions along tile.k
  OperandTile a, b;
  bool a_in_tmem = false;
  SmemMap smem;
  TmemMap tmem;
  int threads = 128;
};

// Steps 1-2 and the memory maps. Returns a reason when the spec has no plan (the rule table
// reports that case first, with its own rule id).
struct Derived {
  std::optional<Shapes> shapes;
  std::string why_not;
};
Derived derive(const spec::Spec& s);

// Step 3 products.
struct Copy {  // tcgen05.cp of A into tensor memory
  int mi = 0, ki = 0;
  std::string shape;           // e.g. "128x256b"
  isa::SmemDesc src;           // start address relative to the aligned base, stage 0
  uint32_t dst_tmem = 0;       // relative to the allocation base
};

struct Mma {
  int mi = 0, ni = 0, ki = 0;  // M group, N group, K step
  int m = 0, n = 0, k = 0;     // instruction shape
  bool a_tmem = false;
  isa::SmemDesc a_desc;        // when A is in shared memory (start relative to the aligned base)
  uint32_t a_tmem_addr = 0;    // when A is in tensor memory (relative to the allocation base)
  isa::SmemDesc b_desc;
  uint32_t d_tmem = 0;         // relative to the allocation base
  int idesc = 0;               // index into Plan::idescs
  bool first = false;          // first K step of its accumulator: enable-input-d only for later K blocks
};

struct Plan {
  spec::Spec spec;
  Shapes shapes;
  std::vector<isa::InstrDesc> idescs;
  std::vector<Copy> copies;  // issue order, before the MMAs that read them
  std::vector<Mma> mmas;     // issue order (step 4)
  std::optional<ProgramPlan> program;  // program-level specs: the whole plan (the members above stay empty)
};

// Plans a spec that passed the rule check. Throws std::logic_error on internal inconsistencies.
Plan make_plan(const spec::Spec& s);
// make_plan for a program-level spec (plan/plan_program.cpp).
Plan make_program_plan(const spec::Spec& s);

// `ptxgen plan` text and `--json`.
std::string to_text(const Plan& p);
std::string to_json(const Plan& p);
// The same for a program-level plan (plan/print_program.cpp).
std::string program_text(const Plan& p);
std::string program_json(const Plan& p);

// Encoded 64-bit descriptor (start relative to the aligned base: add (base >> 4) at run time).
uint64_t encoded(const isa::SmemDesc& d);
uint32_t encoded(const isa::InstrDesc& d);

}  // namespace ptxgen::plan
