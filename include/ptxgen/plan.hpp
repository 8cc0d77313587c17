// ptxgen/plan.hpp — the plan: a checked spec with every choice made and every address resolved.
//
// Planning runs in four visible steps (Mosaic GPU's order): (1) shapes and types, (2) instruction
// shapes, (3) descriptors, (4) issue order; then the kernel around them (TMA boxes, pipeline,
// epilogue map, launch geometry). Steps 1-2 plus the memory maps form the `Shapes` that the rule
// table's budget checks also read, so the two can never disagree.
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

// tcgen05.mma (sm_100a family, accumulators in tensor memory) or wgmma.mma_async (sm_90a,
// accumulators in registers).
enum class Engine : uint8_t { tcgen05, wgmma };

// One operand's tile in shared memory (per CTA, per stage).
struct OperandTile {
  char name = 'A';            // 'A' or 'B'
  isa::DType dtype = isa::DType::bf16;
  isa::TileLayout layout;     // rows along M (A) or N (B) held by this CTA, K columns
};

struct SmemMap {
  uint32_t align = 1024;                // the dynamic base is rounded up to this at run time
  std::vector<uint32_t> a_offset;       // per stage, from the aligned base
  std::vector<uint32_t> b_offset;
  uint32_t stage_bytes = 0;
  uint32_t barriers_offset = 0;         // mbarriers (8 B each) after the stages:
  int barriers = 0;                     //   full[stages], empty[stages], accumulator-ready, A-free
  uint32_t tmem_slot_offset = 0;        // where tcgen05.alloc writes the TMEM address
  uint32_t dynamic_bytes = 0;           // what the launch must request (includes align slack)
  uint32_t full_bar(int s) const { return barriers_offset + 8u * static_cast<uint32_t>(s); }
  uint32_t empty_bar(int s) const { return barriers_offset + 8u * static_cast<uint32_t>(stages() + s); }
  uint32_t acc_bar() const { return barriers_offset + 8u * static_cast<uint32_t>(2 * stages()); }
  uint32_t a_free_bar() const { return barriers_offset + 8u * static_cast<uint32_t>(2 * stages() + 1); }
  int stages() const { return static_cast<int>(a_offset.size()); }
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
  Engine engine = Engine::tcgen05;
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
  bool a_in_registers = false;  // wgmma: A fragments loaded from shared memory into registers
  SmemMap smem;
  TmemMap tmem;                 // tcgen05 only
  int acc_registers = 0;        // wgmma: 32-bit accumulator registers per thread
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
  isa::SmemDesc a_desc;        // when A is in shared memory (start relative to the aligned base, stage 0)
  uint32_t a_tmem_addr = 0;    // when A is in tensor memory (relative to the allocation base)
  isa::SmemDesc b_desc;
  uint32_t d_tmem = 0;         // tcgen05: relative to the allocation base
  int acc_reg = 0;             // wgmma: first accumulator register of this N group
  int idesc = 0;               // tcgen05: index into Plan::idescs
  bool first = false;          // first K step of its accumulator (D = A*B on the first K block)
};

// ---- The kernel around the MMAs -------------------------------------------------------------

// A TMA tensor map the host creates (cuTensorMapEncodeTiled) and passes by value.
struct TensorMap {
  std::string param;           // kernel parameter name
  char tensor = 'A';           // 'A' or 'B'
  isa::DType dtype = isa::DType::bf16;
  bool k_contiguous = true;    // the global tensor's contiguous dimension is K
  int64_t dim_inner = 0;       // elements along the contiguous dimension
  int64_t dim_outer = 0;
  int64_t stride_bytes = 0;    // between consecutive outer indices
  int box_inner = 0;           // box, in elements
  int box_outer = 0;
  isa::Swizzle swizzle = isa::Swizzle::none;
};

// One cp.async.bulk.tensor per stage: a box placed at `smem_offset` of the operand's stage tile,
// whose global coordinates are the CTA tile's origin plus (inner, outer) in elements.
struct TmaLoad {
  char tensor = 'A';
  uint32_t smem_offset = 0;
  int inner = 0;
  int outer = 0;
};

// tcgen05 epilogue: one tcgen05.ld.32x32b.xN by every epilogue warp (warp w reads lanes
// 32w..32w+31 of its quarter, PTX ISA 9.1 §9.7.16.8.1), thread t of warp w receiving lane 32w+t.
struct EpilogueLoad {
  int region = 0;              // index into tmem.regions of the first D region read
  uint32_t column = 0;         // TMEM column (relative to the allocation) of the first value
  int num = 0;                 // columns = registers per thread (.xN)
  // Where lane 32w+t, register j lands in this CTA's tile of D:
  //   layout D/A: row = row_base + 32w + t, col = col_base + j
  //   layout F:   t < 16: row = row_base + 16w + t; t >= 16: row = row_base2 + 16w + t - 16
  //   layout B:   warps 0-1: row = 32w + t, col = col_base + j; warps 2-3: row = 32(w-2) + t, col = col_base2 + j
  int row_base = 0, row_base2 = -1;  // row_base2 < 0: lanes 16-31 (layout F) hold nothing
  int col_base = 0, col_base2 = 0;
};

enum class Layout : uint8_t { D, A, F, B };  // the data-path layout of the accumulator

struct Kernel {
  int threads = 0;
  int consumer_warpgroups = 0;     // wgmma: warpgroups 0..n-1 each own 64 rows
  int producer_warp = 0;           // issues the TMA loads (one thread)
  int mma_warp = -1;               // tcgen05: issues tcgen05.cp/mma (one thread), allocates TMEM
  int max_registers = 255;         // .maxnreg
  std::array<int, 3> cluster{1, 1, 1};
  std::vector<TensorMap> tensor_maps;
  std::vector<TmaLoad> loads;      // per stage, issue order
  uint32_t tx_bytes = 0;           // bytes the loads of one stage bring into one CTA
  Layout layout = Layout::D;       // tcgen05
  std::vector<EpilogueLoad> epilogue;
};

struct Plan {
  spec::Spec spec;
  Shapes shapes;
  std::vector<isa::InstrDesc> idescs;
  std::vector<Copy> copies;  // issue order, before the MMAs that read them
  std::vector<Mma> mmas;     // issue order (step 4)
  Kernel kernel;
  std::optional<ProgramPlan> program;  // program-level specs: the whole plan (the members above stay empty)
};

// The launch grid of the gemm kernel: one CTA per output tile (cta_group CTAs per tile along M);
// x = tiles along N times cta_group, y = tiles along M, z = the cluster's z, each rounded up to whole clusters (a
// grid is made of whole clusters). 64-bit: M and N reach 2^31-1, so an extent can pass 32 bits
// before the rule LAUNCH-GRID refuses it.
struct Grid {
  int64_t x = 1, y = 1, z = 1;
};
Grid grid(const spec::Gemm& g);

// Plans a spec that passed the rule check. Throws std::logic_error on internal inconsistencies.
Plan make_plan(const spec::Spec& s);
// make_plan for a program-level spec (plan/plan_program.cpp).
Plan make_program_plan(const spec::Spec& s);

// The launch grid of a plan: the gemm's above; one CTA for a program (plan/plan_program.cpp).
Grid grid(const Plan& p);

// `ptxgen plan` text and `--json`; the launch manifest.
std::string to_text(const Plan& p);
std::string to_json(const Plan& p);
std::string manifest(const Plan& p);
// The same for a program-level plan (plan/print_program.cpp); manifest() and grid() dispatch to
// them.
std::string program_text(const Plan& p);
std::string program_json(const Plan& p);
std::string program_manifest(const Plan& p);

// Encoded words.
uint64_t encoded(const isa::SmemDesc& d);
uint32_t encoded(const isa::InstrDesc& d);

}  // namespace ptxgen::plan
