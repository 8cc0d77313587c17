// ptxgen/plan.hpp — the planned kernel: an IR kernel (ptxgen/ir.hpp) with every choice made and
// every address resolved.
//
// The planner (src/plan/) resolves the tensor-memory views through their chains (views.cpp),
// places shared memory, tensor-memory allocations and mbarriers (kernel.cpp), plans each op into
// instructions with every descriptor, tensor-memory address, shape and register resolved
// (ops.cpp, mma.cpp, wgmma.cpp), and orders them (order.cpp): for the program level's single role
// it inserts the syncs and waits the ISA's memory model needs (§9.7.16.6), each saying why it is
// there. No PTX spelling lives here: the emitter's tables spell every instruction.
//
// The planner issues no diagnostics. The verifiers (src/rules/verify*.cpp) judge buffers, views
// and every op before it runs, through the narrow calls below, and it runs only on kernels they
// pass. What it plans is what the rules about the planned kernel read (docs/architecture.md):
// its memory map and grid (the budget rules, LAUNCH-GRID) and its size (OUTPUT-SIZE, where the
// size passed the bound: SizeCrossing).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ptxgen/ir.hpp"
#include "ptxgen/isa.hpp"

namespace ptxgen::plan {

// The IR's geometry (ptxgen/ir/views.hpp), as the planner and its narrow calls name it.
using ir::ResolvedView;
using ir::ViewFault;
using ir::ViewResolution;
using ir::Region;

// ---- Narrow calls: the numbers the verifiers (src/rules/verify*.cpp) and the planner share ------
// The tiles a TMA load writes, and the least alignment of a tile: 16 bytes, its swizzle pattern
// (base offset 0, Table 41), 128 bytes where TMA boxes land.
std::set<std::string> tma_destinations(const ir::Kernel& k);
uint32_t tile_alignment(const ir::Tile& t, bool tma_destination);
// A TMA load's map (plan_tma_load) for `rows` rows of boxes one `swizzle` width wide (16 bytes
// without swizzle): a byte map counts a row in bytes, or 4-byte words for the 32-byte-atom swizzle
// (unit 1 or 4), a typed map in elements (unit: their bytes, 0 below 8 bits); dim_inner is a row in
// those units, at most 2^31 - 1 (signed 32-bit coordinates). box_rows is the box height: the largest
// divisor of `rows` of at most isa::kTmaBoxMax that is a multiple of `step` rows, so that every box
// starts isa::kTmaSmemAlign-byte aligned; 0 if none.
struct TmaGeometry {
  int unit = 1;
  int64_t dim_inner = 0;
  int box_bytes = 16;
  int step = 1;
  int box_rows = 0;
};
TmaGeometry tma_geometry(const ir::Global& g, isa::Swizzle swizzle, int rows);
// tcgen05.cp's formats (§9.7.16.9.1): the bits of a tile of `dtype` (`bits` storage bits each) land
// as they are in a view of the same type (b8 and 8-bit types interchange) packed 32 / bits per
// column, except that padded 4/6-bit tiles decompress into 8-bit containers of a view packed 4.
struct CpFormat {
  isa::CpDecompress decompress = isa::CpDecompress::none;  // not none exactly for padded 4/6-bit tiles
  bool fits = false;
};
CpFormat cp_format(isa::DType dtype, int bits, const ResolvedView& v);
// tcgen05.cp's shapes (§9.7.16.9.2) for `rows` rows of `bits_per_row` bits into view `v`, from the
// rows and the lanes the view holds them in: per chunk the 256-bit shape, then the 128-bit one (or
// one shape for every chunk). A lane slice of 64 or 32 rows takes the multicast shape whose lanes
// hold row r at v.lane + r; `collateral` are the other lanes it writes, as ranges [first, end) (of
// the view's columns). Without a shape, `miss` says why none fits.
struct CpShapes {
  enum Miss { fits, four_rows, rows_differ, layout_b, layout_f, lane_set };
  std::vector<isa::CpShape> shapes;
  std::vector<std::pair<uint32_t, uint32_t>> collateral;
  Miss miss = fits;
};
CpShapes cp_shapes(const ResolvedView& v, int rows, int64_t bits_per_row);

// ---- Memory ------------------------------------------------------------------------------------
struct SmemPlacement {
  std::string name;
  isa::DType dtype = isa::DType::bf16;
  int bits = 16;                       // storage bits per element
  isa::TileLayout layout;              // mn = rows, k = cols
  uint32_t offset = 0;                 // stage 0, from the aligned dynamic base
  uint32_t align = 16;
  int stages = 1;
  uint32_t stage_bytes = 0;            // from one stage to the next
  std::string overlay;                 // placed over this tile's ring (ir::Tile::overlay); "" : its own memory
};

struct AllocPlacement {  // one tcgen05.alloc, in issue order (column counts never increase)
  std::string name;
  uint32_t columns = 0;
  uint32_t slot_offset = 0;  // shared-memory word tcgen05.alloc writes the address to
};

struct BarrierPlacement {
  std::string name;
  uint32_t offset = 0;  // stage s at offset + 8 s
  int count = 1;
  int stages = 1;
};

// The names the planner and the lowerings give the barriers, register sets and views they add:
// "ptxgen_" + what (+ an index), e.g. ptxgen_done, ptxgen_load3, ptxgen_st5. A spec may not use the
// prefix (PROGRAM-NAME).
inline constexpr std::string_view kPlannerPrefix = "ptxgen_";
std::string planner_name(std::string_view what, int index = -1);

// The kernel parameter holding a program-level global tensor's address.
inline std::string param_name(const std::string& global) { return "p_" + global; }

// ---- Steps -------------------------------------------------------------------------------------
enum class StepKind : uint8_t { load, sync, cp, mma, tmem_ld, tmem_st, wait_ld, wait_st, store, commit, wait, arrive,
                                expect_tx, mma_wait, loop, math, read, reduce, amax, quantize };
std::string_view name(StepKind k);

// The tensor map a TMA load reads through: a `.param .align 64 .b8 PARAM[128]` kernel parameter the
// host encodes with cuTensorMapEncodeTiled as the manifest says. The global tensor is seen as
// `dim_outer` rows of `dim_inner` elements of the map's data type (a byte copy, or 4-byte words for
// the 32-byte-atom swizzle; or the tensor's own type where the lowering asks for it), boxes of
// `box_inner` x `box_outer`.
struct TensorMap {
  std::string param, global;
  std::string tensor;                // what the manifest calls the tensor ("A", or the global's name)
  std::string data_type;             // the CUtensorMapDataType enumerator
  int unit = 1;                      // bytes per map element (0 for the 4- and 6-bit types)
  int64_t dim_inner = 0, dim_outer = 0, stride_bytes = 0;
  int box_inner = 0, box_outer = 0;
  isa::Swizzle swizzle = isa::Swizzle::none;
  // Rank 3 (a 3-D global, ir::Global::planes): `dim_planes` planes `plane_stride_bytes` apart,
  // boxes one plane deep.
  int rank = 2;
  int64_t dim_planes = 0, plane_stride_bytes = 0;
  // Read only when the tensor's rows are 16-byte multiples apart at run time: a wgmma TMA store
  // with a direct fallback ("epilogue": "auto") tests ld x element bytes and otherwise stores the
  // registers directly, clipped; the launcher then passes zeros for the map.
  bool optional = false;
};

// One cp.async.bulk.tensor of a TMA load: the box lands `smem` bytes from the aligned base (stage 0);
// its first element is at tensor-map coordinates (c0 elements of the map, c1 rows) plus the load's
// run-time origin.
struct TmaBox {
  uint32_t smem = 0;
  int64_t c0 = 0, c1 = 0;
  int part = 0;  // a multicast load: the place in the sharing row (column) of the CTA that issues it
};

// Global -> shared memory. Plain loads: each thread moves 16-byte chunks, each a 16-byte piece of a
// row of the box arrangement TMA would write (§9.7.16.3.3 canonical layouts): `box_rows` rows of
// `row_bytes` bytes, boxes of `box_bytes` bytes side by side. TMA: thread 0 (of each CTA) issues
// `boxes` through `map`, completing on `barrier`.
struct LoadStep {
  std::string global, tile;
  ir::Affine row0, col0;           // first global row / column (elements)
  int64_t global_row_bytes = 0;    // bytes between global rows
  int64_t col0_bytes = 0;          // of the constant part of col0
  int64_t cta_bytes = 0;           // plain loads in a pair: CTA r reads from r * cta_bytes further on
  uint32_t tile_offset = 0;        // the first byte written (stage 0)
  int tile_row0 = 0;               // first tile row written (a row-placed load; 0 for the whole tile)
  int box_rows = 0;                // rows of the arrangement (tile rows if K-major, tile cols if MN-major)
  int row_bytes = 0;               // bytes of one such row
  int box_bytes = 16;              // swizzle width (16 without swizzle)
  int column_bytes = 0;            // bytes of one box column of the whole tile (box_bytes x all its rows)
  isa::Swizzle swizzle = isa::Swizzle::none;
  uint32_t chunks = 0;             // 16-byte chunks in all
  bool tma = false;
  TensorMap map;
  std::string barrier;
  ir::Phase phase;                 // which stage of the barrier ring (the tile's ring)
  bool to_leader = false;          // a pair's pipelined load completes on CTA 0's barrier
  int multicast = 0;               // the cluster's CTAs (pairs) sharing the boxes (ir::Load::multicast); 0: none
  bool multicast_along_m = false;  // they are the block's tile column (B), else its tile row (A)
  bool arm = true;                 // TMA: the load arms its own barrier with its bytes (else an expect_tx did)
  std::vector<TmaBox> boxes;
  int64_t cta_c0 = 0, cta_c1 = 0;  // a CTA pair: CTA r's coordinates are r * (cta_c0, cta_c1) further on
  // Run-time parts of the coordinates (elements of the map): m_tile, n_tile, k_block multiples.
  ir::Affine c0_rt, c1_rt;
  // A rank-3 map: the plane coordinate of every box, CTA r's r * cta_c2 further on, and its run-time part.
  int64_t c2 = 0, cta_c2 = 0;
  ir::Affine c2_rt;
};

// A ring of tensor-memory buffers (ResolvedView::stages): in a K loop the op uses the copy of its
// iteration's ring stage s, `columns` * s columns after copy 0 (added at run time).
struct TmemRing {
  int stages = 1;
  uint32_t columns = 0;
};

struct CpInstr {
  isa::CpShape shape = isa::CpShape::s128x256b;
  isa::CpDecompress decompress = isa::CpDecompress::none;
  isa::SmemDesc src;               // start relative to the aligned shared-memory base (stage 0)
  std::string tile;                // the source tile (its stage offset is added at run time)
  std::string alloc;
  uint32_t taddr = 0;              // relative to the allocation base (ring stage 0)
  TmemRing ring;                   // the destination's ring, if it is one
  int src_row = 0;                 // first source row (in the tile)
  int src_col = 0;                 // first source element column (in the tile)
  int dst_row = 0;                 // first logical destination row, block included
  int64_t dst_elem = 0;            // first logical destination element column (within the row block)
};

// The .scale_vectorsize of a block-scaled MMA: `factors` scale factors per row per instruction
// (the N of .scale_vec::NX), blocks of `vec` elements; the emitter spells it per target.
struct ScaleVec {
  int factors = 0;
  int vec = 32;
};

// How an MMA uses the collector buffer for A (§9.7.16.10.9.1, .collector_usage): discard (the
// default), fill (A read from memory is kept), use (A read from the buffer a fill left), lastuse
// (read from it, then discarded).
enum class Collector : uint8_t { discard, fill, use, lastuse };

struct MmaInstr {
  int mi = 0, ni = 0, ki = 0;
  Collector collector = Collector::discard;
  int m = 0, n = 0, k = 0;
  isa::InstrDesc idesc;            // tcgen05
  bool a_tmem = false;
  isa::SmemDesc a_desc;
  std::string a_tile, b_tile;      // tiles the descriptors start in (ring stage added at run time)
  std::string a_alloc;
  uint32_t a_taddr = 0;
  isa::SmemDesc b_desc;
  std::string d_alloc;
  uint32_t d_taddr = 0;
  int acc_reg = 0;                 // wgmma: first accumulator register of this N group
  bool enable_input_d = true;      // false: D = A x B (in a loop, only in iteration 0: see MmaStep)
  // block scaling
  std::string sfa_alloc, sfb_alloc;
  uint32_t sfa_taddr = 0, sfb_taddr = 0;  // ring stage 0 where the factors are a ring
  TmemRing sfa_ring, sfb_ring;
  // sparsity
  std::string meta_alloc;
  uint32_t meta_taddr = 0;  // ring stage 0 where the metadata is a ring
  TmemRing meta_ring;
};

struct MmaStep {
  ir::Engine engine = ir::Engine::tcgen05;
  isa::Kind kind = isa::Kind::f16;
  bool sparse = false;
  bool scaled = false;
  ScaleVec scale;
  isa::DType scale_dtype = isa::DType::ue8m0;
  bool first_iteration_overwrites = false;  // in a loop: enable_input_d false only in iteration 0
  // wgmma: the operand types, accumulator register set, A from registers (fragments of `a_tile`)
  isa::DType a_dtype = isa::DType::bf16, b_dtype = isa::DType::bf16, acc_dtype = isa::DType::f32;
  bool a_major_mn = false, b_major_mn = false;
  std::string acc_regs;
  bool a_registers = false;
  int warpgroup_rows = 64;         // wgmma: the rows of A each warpgroup of the role reads (instrs are warpgroup 0's)
  uint32_t a_warpgroup_stride = 0; // wgmma: bytes from one warpgroup's A rows to the next's
  std::vector<MmaInstr> instrs;    // issue order: K step outermost, then M group, then N group
};

// ---- Narrow call: an mma op's types, kind and instruction shapes --------------------------------
// Mosaic GPU's steps 1 and 2 as numbers, derived from the operands without judging them: the MMA
// verifier (src/rules/verify_mma.cpp) checks them and says what is wrong; the planner takes them
// for steps 3 and 4 (src/plan/mma.cpp). tcgen05 only.
struct MmaOperands {
  const SmemPlacement* a_tile = nullptr;   // A in shared memory, or
  const ResolvedView* a_view = nullptr;    // A in tensor memory
  const SmemPlacement* b = nullptr;
  const ResolvedView* d = nullptr;
  const ResolvedView* sfa = nullptr;       // block scaling: both, or neither
  const ResolvedView* sfb = nullptr;
  const ResolvedView* meta = nullptr;      // sparsity metadata
};
struct MmaShape {
  // step 1: types and kind
  isa::DType ta = isa::DType::bf16, tb = isa::DType::bf16, acc = isa::DType::f32;
  bool scaled = false, sparse = false;
  bool packed = false;                    // an operand stores two e2m1 per byte
  bool scale_types_ok = true;             // ue8m0 or ue4m3, one type for A and B (Tables 43/44)
  std::optional<isa::Kind> kind;          // none: the types (and kind override) form no kind
  int f_align = -1;                       // D's layout-F lane alignment, or -1
  bool m64 = false, lb = false, pair = false;  // D in layout F (M = 64), D in layout B, a CTA pair
  // step 2: instruction shapes (kind set)
  int M = 0, N = 0, KB = 0;               // A's rows, N over the pair, B's K
  int64_t KA = 0;                         // A's K elements per row (half of K when sparse)
  int a_row0 = 0, b_row0 = 0;             // first rows of A and B the op reads
  int m_instr = 128, m_idesc = 128;       // rows of each CTA per instruction; the instruction's M
  int mg = 1, cg = 1;                     // M groups; CTAs per instruction
  std::vector<int> ng;                    // N groups' widths (empty: no split)
  int k_instr = 16, ka_instr = 16, ks = 1;  // K per instruction (B, A), K steps
  std::optional<int> factors;             // block scaling: scale factors per instruction (Table 57)
};
MmaShape mma_shape(const ir::Kernel& k, const ir::Mma& o, const MmaOperands& x);

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

// The registers of a register set: as the tcgen05.ld instructions of a tmem_load defined them, or a
// wgmma accumulator (§9.7.15.5.1.1: warp q of a warpgroup, lane l, register pair i of N group g
// holds rows 16q + l/4 + 8 (i % 2), columns n0(g) + 8 (i / 2) + 2 (l % 4) + {0, 1}).
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
  // A wgmma accumulator: `groups` are the N groups; `rows` per warpgroup, 64 per M group, the
  // registers of M group i after those of M group i - 1.
  bool wgmma = false;
  std::vector<int> groups;
};

// Whether register j of every thread holds the same element (row, column) in both sets: the
// operands of an elementwise op (ir::Math), whose result register j holds that element too.
inline bool same_elements(const RegDef& x, const RegDef& y) {
  if (x.wgmma != y.wgmma || x.groups != y.groups || x.regs != y.regs || x.rows != y.rows || x.row_elements != y.row_elements ||
      x.elems_per_reg != y.elems_per_reg || x.elem_bits != y.elem_bits || x.frags.size() != y.frags.size())
    return false;
  for (size_t i = 0; i < x.frags.size(); ++i) {
    const LdInstr &f = x.frags[i], &g = y.frags[i];
    if (f.warp != g.warp || f.shape != g.shape || f.num != g.num || f.pack != g.pack || f.split != g.split ||
        f.first_reg != g.first_reg || f.regs != g.regs || f.row0 != g.row0 || f.elem0 != g.elem0)
      return false;
  }
  return true;
}

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
  ir::Affine row0, col0;
  int64_t cta_row = 0, cta_col = 0;  // constant parts of the per-rank offsets (a pair's per_cta)
  ir::Affine plane;                  // a 3-D global's plane (ir::Store::plane): a TMA store's third coordinate
  isa::DType to = isa::DType::f32;
  int64_t global_cols = 0;           // the row stride in elements (static)
  std::string ld_param;              // the row stride at run time ("n"), if not static
  bool clip = false;                 // elements at or past the run-time extents are not written
  std::string rows_param, cols_param;  // the extents at run time ("" : the static extents below)
  int64_t global_rows = 0, global_width = 0;
  // By TMA (ir::Store::via): each warpgroup writes its 64 rows into the shared tile `stage` (column
  // box j of `box_cols` elements at stage_offset + j * box_stride, its rows from warpgroup w at
  // + w * warpgroup_bytes, 128-byte swizzled), then one of its threads stores each box through `map` at
  // (col0 + j * box_cols, row0 + 64 w). `shared_by` > 0: that many threads are done with the
  // ring the tile overlays first; `reuse`: a persistent role waits until the previous tile's
  // boxes have been read out of the tile before writing it again.
  bool tma = false;
  TensorMap map;
  std::string stage;
  uint32_t stage_offset = 0, box_stride = 0, warpgroup_bytes = 0;
  int box_cols = 0, boxes = 0, warpgroups = 1;
  int shared_by = 0;
  bool reuse = false;
  // `subtiles` (ir::Store::subtiles): the tile holds two boxes, and box j goes through box j % 2
  // (at stage_offset + (j % 2) * box_stride), written once the issuing thread has waited until at
  // most one of its bulk groups still reads (the other buffer's) and its warpgroup's barrier held
  // the others, then stored, one bulk group per box.
  bool subtiles = false;
  // How a wgmma D is written into `stage` (ir::d_staging, the one place that decides it): by
  // stmatrix.x4, else by st.shared per pair of columns; `staging` says why, for `ptxgen plan`.
  bool stmatrix = false;
  std::string staging;
  // tcgen05 (the registers of tcgen05.ld, src.wgmma false): the registers are one box of
  // `box_rows` rows x `box_cols` elements, written by the warps that hold them into the stage at
  // stage_offset once the issuing thread (lane 0 of the role's first warp) has waited until at most
  // `pending` of its bulk groups still read (the stage's previous box), then stored by that thread.
  // `overlay`: the stage lies over the operand ring, which the MMAs read through the async proxy.
  int box_rows = 0;
  int pending = -1;
  bool overlay = false;
  // A piece of the box (ir::Store::piece_col): the registers are its columns from `piece_col` on;
  // the piece at 0 waits for the stage, the last (`piece_last`, boxes 1; the others 0) stores it.
  int piece_col = 0;
  bool piece_last = true;
};

// ---- Narrow calls: tcgen05.ld / tcgen05.st, stores and wgmma registers (src/rules/verify_regs.cpp)
// The tcgen05.ld (a tmem_load) or tcgen05.st (a tmem_store) instructions that move view `v` for the
// access `o` of an op on register set `set` in a kernel of `threads` threads (§9.7.16.8): warps,
// shape, .num, (un)packing. Without them
// `miss` says why, with the numbers a message needs:
//   pack: .pack::16b / .unpack::16b on a view not of unpacked 16-bit elements (§9.7.16.8.2);
//   threads: the threads are no whole number of warps (PROGRAM-THREADS is the root: nothing to say);
//   warp_absent: `warp` (entry `index` of o.warps) is not below threads / 32;
//   warp_quarter: `warp` reaches none of the view's lanes (§9.7.16.8.1: lanes 32 (w % 4) .. + 31);
//   row_twice: row `row` of the view is moved by `warp` and a warp listed before it;
//   rows_unreached: the warps miss rows; `unreached` the lanes [first, end) of the quarters no
//     listed warp reaches (empty where a replica's other quarters could reach them);
//   shape_lanes: `warp` holds the view's lanes [lane0, lane1), not whole pieces of the shape's lanes;
//   shape_halves: .16x32bx2 on `columns` block columns, which do not halve;
//   num_illegal: o.num is no .num of the shape (Table 49);
//   num_columns: o.num moves `columns` columns per lane, which do not divide the `span` of a row (half);
//   no_num: no .num divides the `span` columns (`columns` per unit of .num);
//   too_many_regs: def.regs registers per thread, more than the 256 ptxgen keeps in a register set.
struct TmemLanes {
  enum Miss {
    fits, pack, threads, warp_absent, warp_quarter, row_twice, rows_unreached, shape_lanes, shape_halves, num_illegal,
    num_columns, no_num, too_many_regs
  };
  RegDef def;  // the instructions (frags) and the register set they define; with too_many_regs its size
  Miss miss = fits;
  int warp = 0, row = 0;
  size_t index = 0;
  uint32_t lane0 = 0, lane1 = 0;
  int columns = 0, span = 0;
  std::vector<std::pair<uint32_t, uint32_t>> unreached;
};
TmemLanes tmem_lanes(const ir::TmemAccess& o, const std::string& set, const ResolvedView& v, int threads);
// Where each thread holds each element of a register set: (warp, thread, row, element) -> source.
using Held = std::map<std::tuple<int, int, int, int64_t>, StSource>;
// A tmem_store of register set `src` into view `v`: its tcgen05.st instructions and where each of
// their registers' elements comes from. `held` is src's Held, filled here when empty (the planner and
// the verifier each keep one per definition of the set, so a long list of tmem_store ops costs each
// op its own instructions only). Without a step `miss` says why:
//   shape_differs: the set's rows x row elements are not the view's;
//   dtype: neither the set's own type nor f32 -> f16/bf16 (cvt.rn);
//   no_lanes: no tcgen05.st covers the view (`lanes` says why);
//   not_held / held_apart: thread `thread` of warp `warp` would store row `row`, element `elem`,
//     which it does not hold / holds in another register than the threads before it;
//   narrow_moved: elements of `lanes.def.elem_bits` (< 16) bits would leave the registers and
//     positions the tcgen05.ld put them in.
struct TmemStore {
  enum Miss { fits, shape_differs, dtype, no_lanes, not_held, held_apart, narrow_moved };
  std::optional<TmemStStep> step;
  Miss miss = fits;
  TmemLanes lanes;
  int thread = 0, warp = 0, row = 0;
  int64_t elem = 0;
};
TmemStore tmem_store(const ir::TmemStore& o, const RegDef& src, const ResolvedView& v, int threads, Held& held);
// Whether a store writes registers of `regs` into a global tensor of `global`: its own type (of 8
// bits or more), f32 to f16/bf16, and for a clipped store (the gemm template's D) f16, s32 or f32
// accumulators into f32, f16 or bf16.
bool store_converts(isa::DType regs, isa::DType global, bool clip);
// The accumulator registers a wgmma op of tiles `a` and `b` defines (§9.7.15.5.1.1): 64 rows per
// warpgroup, the N groups of b's N; none where the types have no wgmma variant or N no split.
std::optional<RegDef> wgmma_accumulators(const ir::Mma& o, const SmemPlacement& a, const SmemPlacement& b);

// A multicast load whose sharing CTAs are the whole cluster (one CTA per tile, a block one tile
// wide or high): it issues the part of its cluster rank, to every CTA of the cluster.
inline bool multicast_whole_cluster(const ir::Grid& g, int cta_group, const LoadStep& l) {
  return cta_group == 1 && l.multicast == g.cluster_m * g.cluster_n;
}

// An elementwise function (ir::Math): register j of `def` = fn(register j of a, b, c) in every
// thread that holds `def`'s fragments (the operands', the same elements).
struct MathStep {
  MathFn fn = MathFn::add;
  bool approx = false;
  // The type it computes in: f32, or (bf16, f16) the packed pairs of §9.7.4, two elements a
  // register; convert: the result's (its operand is f32).
  isa::DType dtype = isa::DType::f32;
  RegDef def;
  std::string a, b, c;  // the operands' register sets ("" : none, or a constant)
  std::array<std::optional<float>, 3> value;  // a, b, c: a constant (the f32 nearest the spec's number)
  // A fill (ir::Fill): every register of `def` = value[0] (mov.b32 of its bits, §9.7.9.3); `fn`
  // and the operands are unused.
  bool fill = false;
  // ir::Math::c_from_iteration_1: c is the set itself, carried by the loop from 0 (zeroed before it).
  bool c_from_iteration_1 = false;
};
// Operand k (0: a) of an elementwise step as the plan prints it: its register set, or its constant.
std::string operand_text(const MathStep& m, size_t k);
// The registers of f32 set `f32` converted to packed pairs of `t` (bf16, f16: convert, docs/spec.md
// "Packed half-precision arithmetic"): register j holds its registers 2j (low half) and 2j + 1
// (high half), two neighbouring columns of a row, which is what a .32x32b.pack::16b tcgen05.ld of
// 16-bit cells gives (§9.7.16.8.2): the same fragments at half the .num. None where `f32` is not
// one f32 each from .32x32b fragments of even .num (other shapes put a register's neighbour
// column in another thread or register pair order, wgmma accumulators too).
std::optional<RegDef> packed_regs(const RegDef& f32, isa::DType t);

// A read (ir::Read): register j of `def` (the elements of the set it was shaped like, as f32) is
// the element of global `global` at row0 + its row and col0 + its column; along a broadcast
// dimension (the tensor's static extent 1) at 0 instead. Elements at or past the extents (at run
// time: rows_param, cols_param) read as 0. The distinct elements a thread needs are loaded once
// each, into the registers `pool` (def.regs at most); register j of `def` names one of them.
struct ReadStep {
  RegDef def;
  std::string global, pool;
  isa::DType dtype = isa::DType::f32;  // the tensor's (f32, bf16, f16)
  ir::Affine row0, col0;
  ir::ReadAt at = ir::ReadAt::cells;  // row_vector, element: ir::Read's (wgmma sets only)
  bool rows_broadcast = false, cols_broadcast = false;
  int64_t global_cols = 0;              // the row stride in elements (static)
  std::string ld_param;                 // the row stride at run time, if not static
  std::string rows_param, cols_param;   // the extents at run time ("" : the static ones below)
  int64_t global_rows = 0, global_width = 0;
};

// Whether a read (ir::Read) of global `g` can give registers the elements `like` holds, or why not:
//   like_dtype: `like` is not one f32 per register (packed 16-bit or s32 registers);
//   like_shape: tcgen05.ld fragments of a shape other than .32x32b and .16x256b (whose elements'
//     positions the emitter computes, as a clipped store's);
//   global_dtype: the tensor is not f32, bf16 or f16 (converted to f32 exactly).
enum class ReadMiss { fits, like_dtype, like_shape, global_dtype };
ReadMiss read_miss(const RegDef& like, const ir::Global& g);
inline bool read_fits(const RegDef& like, const ir::Global& g) { return read_miss(like, g) == ReadMiss::fits; }

// A row reduction (ir::Reduce): register j of `def` (a's elements) holds fn over the row of a
// that register j of a belongs to; the distinct rows' values in the registers `pool`, register
// j of `def` naming its row's. `shuffle`: a row spans 4 threads (lanes 4r .. 4r + 3: .16x256b
// fragments and wgmma accumulators), combined with shfl.sync.bfly over lanes xor 1 and xor 2.
struct ReduceStep {
  ReduceFn fn = ReduceFn::max;
  RegDef def;
  std::string a, pool;
  bool shuffle = false;
};
// Whether a reduce can reduce the rows of registers `a`, or why not: not one f32 per register
// (dtype), or tcgen05.ld fragments of a shape other than .32x32b and .16x256b (shape).
enum class ReduceMiss { fits, dtype, shape };
ReduceMiss reduce_miss(const RegDef& a);

// An amax (ir::Amax): the global f32 `dst` raised to the largest |element| of registers
// `bounds.def` that lies inside the extents of `bounds.global` (positions as a read of it at
// bounds.row0/col0 computes them; no element is loaded).
struct AmaxStep {
  std::string a, dst;
  ReadStep bounds;
};

// A block quantization (ir::Quantize): register j of `def` is register j of `a` times 2^(127 - x),
// x the ue8m0 factor of its block of `vec` columns of a row, which goes to the global `dst` (the
// 128x4 layout) for each block inside the extents of `bounds.global` (positions as an amax's).
// `shuffle`: 4 lanes share a row (.16x256b, wgmma), their block maxima combined by shfl.sync.bfly.
struct QuantizeStep {
  RegDef def;
  std::string a, dst;
  ReadStep bounds;
  int vec = 32;
  isa::DType elem = isa::DType::e4m3;
  isa::DType scale = isa::DType::ue8m0;  // or ue4m3 (NVFP4: ir::Quantize)
  bool shuffle = false;
};
// Whether a quantize can quantize registers `a` stored at `pos` in blocks of `vec` columns, or why
// not: not one f32 per register (dtype); tcgen05.ld fragments of a shape other than .32x32b and
// .16x256b, or of both (shape); a block not whole in one thread's registers (.32x32b) or in the
// same registers of the 4 lanes of a row (.16x256b, wgmma), or a column position that is not a
// multiple of vec (blocks).
enum class QuantizeMiss { fits, dtype, shape, blocks };
QuantizeMiss quantize_miss(const RegDef& a, const ir::Position& pos, int vec);
// Where 4 lanes share each row of registers `a` (.16x256b fragments, wgmma accumulators).
bool rows_shared_by_lanes(const RegDef& a);
// Code the emitter writes once for several warps (and OUTPUT-SIZE counts once): the rows step R
// where the register set's two or more warps are consecutive and each holds the same fragments as
// the first, R (w - w0) rows further (a store, Emitter::for_warps: the row offset computed from
// the warp index); none where they are not (one copy a warp).
std::optional<int> uniform_warp_rows(const RegDef& d);
// Whether the set's warps are consecutive and each holds the same registers (an elementwise
// function's chain, Emitter::math_run: one copy for all of them).
bool warps_hold_same_registers(const RegDef& d);
// The largest finite value of an element type a block quantization converts to (e4m3 448, e5m2
// 57344, e2m1 6), as f32 bits: its exponent and mantissa set the ue8m0 factor (ir::Quantize).
uint32_t largest_finite_bits(isa::DType elem);

struct BarrierStep {
  std::string barrier;
  ir::Phase phase;      // in a loop: the ring position and phase of iteration kb - lag
  int parity = 0;       // outside a loop: the phase parity a wait waits for
  uint32_t tx_bytes = 0;  // expect_tx: bytes armed (per CTA; a pair's leader arms both CTAs')
  bool pair_multicast = false;  // commit: arrive on the barrier in both CTAs of the pair
  bool release_row = false, release_column = false;  // commit: and of the block's row / column (ir::Commit)
  bool leader_only = false;
  bool to_leader = false;       // arrive: on the barrier of the pair's CTA 0 (both CTAs' threads arrive there)
  bool per_warpgroup = false;   // arrive: one arrival per warpgroup (ir::Arrive::per_warpgroup)
  int cluster_ctas = 0;         // arrive: on the barrier in each of the cluster's first cluster_ctas CTAs
  int pending = 0;      // mma_wait
};

struct Step {
  StepKind kind = StepKind::sync;
  int op = -1;            // the op it implements (index in its role); -1 when the planner inserted it
  std::string ptr;        // the op's JSON pointer ("inserted" for planner steps)
  std::string why;        // what the step does and, for inserted steps, why the ISA needs it
  bool proxy_fence = false;  // sync: generic-proxy shared-memory writes precede it (fence.proxy.async)
  LoadStep load;
  std::vector<CpInstr> cps;
  MmaStep mma;
  RegDef ld;              // tmem_ld: the register set loaded
  TmemStStep st;
  StoreStep store;
  BarrierStep bar;
  MathStep math;
  ReadStep read;
  ReduceStep reduce;
  AmaxStep amax;
  QuantizeStep quantize;
  // mma (D) / tmem_ld: the tensor-memory ring over the role's tiles (ir::Mma::tmem_ring, ir::TmemLoad::tmem_ring); the
  // addresses planned are stage 0's, stage s lies s * stride columns further
  ir::TmemRing tmem_ring;
  // The op's ir::Phase::parity and lag, of every kind (barrier steps have them in bar.phase too):
  // in a loop of unroll 2 the step is written in the copy of the body for the parity of kb that
  // runs it, and skipped where kb < lag; after the loop it runs where trips - lag has the parity.
  int parity = -1, lag = 0;
  // loop: max(1, ceil(k_param / block)) iterations (or `trips`), over `body`, written `unroll` times
  std::string k_param;
  int64_t block = 0, trips = 0;
  int unroll = 1;
  std::vector<Step> body;
};

// What one kernel may make ptxgen write (rule OUTPUT-SIZE), so that every accepted spec is
// checked, planned and emitted in well under a second and 200 MB. `instructions` (PTX lines of the
// kernel body) and `ptx_bytes` are upper bounds computed from each step (tests compare them with
// the emitted PTX); `async` counts tcgen05.cp and tcgen05.mma instructions, whose descriptors
// `plan` decodes field by field.
struct OutputSize {
  int64_t instructions = 0, ptx_bytes = 0, async = 0;
};
inline constexpr OutputSize kMaxOutput{65536, int64_t{8} << 20, 2048};
// The op at which the planned size passed kMaxOutput, and the size with it.
struct SizeCrossing {
  std::string ptr;
  OutputSize size;
};
OutputSize output_size(const Step& s);  // an upper bound of what the emitter writes for the step
// Narrow call (OUTPUT-SIZE, src/rules/check_limits.cpp; src/plan/size.cpp): the size of a kernel
// the verifiers passed, bounded op by op from each op's own instructions and the most the order
// can insert around it, without planning the kernel. Where the bound passes kMaxOutput: the op
// at which it did (the rest is not sized, so a spec of any length costs no more than one at the
// bound); else nullopt and `total` the whole kernel's bound (the Plan's `size`).
std::optional<SizeCrossing> output_bound(const ir::Kernel& k, OutputSize* total = nullptr);

// A role's steps; what the role is (its warps, issue, budget, tiles) is the IR's role, read
// through ir(), not copied.
struct RolePlan {
  const ir::Role* role = nullptr;  // in Plan::kernel, which the plan holds
  std::vector<Step> steps;
  const ir::Role& ir() const { return *role; }
};

struct Grid {
  int64_t x = 1, y = 1, z = 1;
};

// ---- Narrow calls: the launch and the memory map (src/rules/check_gemm.cpp, check_program.cpp) ---
// The budget rules read these; the planner copies them into its Plan, so the two cannot disagree.
// The grid of the spec's own sizes: one CTA (pair) per output tile, x walking N tiles (cta_group
// CTAs each), y walking M tiles, each rounded up to whole clusters; a persistent grid one CTA per
// tile at most (the launcher takes fewer); an untiled kernel one cluster.
Grid launch_grid(const ir::Kernel& k);
// How a TMA load of a tile arranged as `columns` boxes of `box_bytes` per row by `rows` rows splits
// into `parts` equal parts of whole boxes, one per CTA of a multicasting cluster: 1 by box columns,
// 2 by rows (shorter boxes), 3 no split needed (parts 1), 0 it cannot (CLUSTER-MULTICAST).
int multicast_split(int rows, int columns, int box_bytes, int parts);
// Shared memory from the (run-time aligned) dynamic base: the tiles (rings of stages, overlays),
// then the mbarriers the ops name (8 bytes a stage, in name order; a TMA load without a barrier of
// its own gets one, and an ordered role that ends with tcgen05 work in flight gets the kernel's
// final commit barrier), then the 4-byte words tcgen05.alloc writes, largest allocation first;
// the dynamic bytes the launch requests include the slack to align the base.
struct MemoryMap {
  std::vector<SmemPlacement> smem;  // in name order
  std::vector<BarrierPlacement> barriers;
  std::vector<AllocPlacement> allocs;
  uint32_t smem_align = 16;
  uint32_t smem_bytes = 0;
  uint32_t tmem_columns = 0;  // the allocations' sum
};
MemoryMap memory_map(const ir::Kernel& k);

// What the rules computed of a verified kernel through the narrow calls above (memory_map,
// launch_grid, output_bound), handed to make_plan with the kernel so that a spec's analysis is
// done once (ptxgen/compile.hpp). Empty members are computed by make_plan.
struct Facts {
  std::optional<MemoryMap> memory;
  std::optional<Grid> grid;
  bool sized = false;                    // output_bound ran: where it passed kMaxOutput,
  std::optional<SizeCrossing> crossing;  // or (none) the whole kernel's bound in `size`
  OutputSize size;
};

struct Plan {
  // The IR it plans: what the kernel is (name, target, engine, threads, cta_group, cluster, grid,
  // size parameters, roles) is read through ir(), not copied; the plan adds what it resolved.
  std::shared_ptr<const ir::Kernel> kernel;
  const ir::Kernel& ir() const { return *kernel; }
  std::string summary;                    // one line on what the kernel computes (header comment)
  Grid launch;                            // the grid of the spec's own problem sizes
  std::vector<SmemPlacement> smem;
  std::vector<AllocPlacement> allocs;
  std::vector<BarrierPlacement> barriers;
  std::vector<TensorMap> tensor_maps;     // kernel parameters after the globals' addresses
  std::map<std::string, ResolvedView> views;
  std::map<std::string, int> reg_counts;  // registers per thread of each register set (largest definition)
  uint32_t smem_align = 16;               // the dynamic base is rounded up to this at run time
  uint32_t smem_bytes = 0;                // dynamic shared memory the launch requests
  uint32_t tmem_columns = 0;              // sum of the allocations
  int ptx_version = 86;                   // major * 10 + minor
  std::vector<RolePlan> roles;
  std::vector<std::string> view_order;    // named views in declaration order (for the printers)
  OutputSize size;                        // the whole kernel's, an upper bound (output_bound)
  int mma_instructions() const;           // tcgen05.mma / wgmma instructions (one warpgroup's for wgmma)
  int tma_boxes() const;                  // cp.async.bulk.tensor instructions
  int tma_stores() const;                 // cp.async.bulk.tensor stores of D (a wgmma warpgroup's boxes are one code path)
};

// Plans a kernel that passed the rule check, reusing what the rules computed of it (`facts`).
// Throws std::logic_error on internal inconsistencies.
Plan make_plan(std::shared_ptr<const ir::Kernel> k, Facts facts = {});
// The same for a kernel the caller holds (tests): the plan keeps its own copy.
Plan make_plan(const ir::Kernel& k);

// Encoded words.
uint64_t encoded(const isa::SmemDesc& d);
uint32_t encoded(const isa::InstrDesc& d);

// The launch manifest a host program reads (entry, parameters, grid, block, cluster, shared
// memory, tensors and tensor maps).
std::string manifest(const Plan& p);

}  // namespace ptxgen::plan
