// ptxgen/ir/kernel.hpp — the kernel IR: what every front end lowers into, and all the planner reads.
//
//   spec.json --parse--> Spec --lower--> ir::Kernel --check--> ir::Kernel + Diagnostics --plan--> Plan --emit--> PTX
//                                 (lower/gemm.cpp: the gemm template; lower/program.cpp: the program level)
//
// A kernel is buffers and roles. Buffers: global tensors (kernel parameters), shared-memory tiles
// (a ring of `stages` copies when a loop cycles through them), tensor-memory allocations and views
// of them (slice / cast / alias to any depth, resolved by the planner), mbarriers (a ring of them
// beside a ring of tiles). Roles: sets of warps that run their own list of nodes at the same time
// as the other roles; a node is an op or a loop of ops. One role of all warps is the program level
// (the planner orders its ops and inserts the syncs between the threads that run them); several
// roles are a warp-specialized kernel whose lowering synchronizes them through the IR's mbarriers
// (waits, arrivals, tcgen05.commit), as a hand-written pipelined kernel does.
//
// Where a node touches a position in memory, it says so as an Affine: a constant plus multiples of
// the CTA's output tile (a grid of tiles over run-time problem sizes), the loop's K block and the
// CTA's rank in its pair. The planner resolves everything that is constant; the emitter computes the
// rest at run time from %ctaid, %cluster_ctarank and the loop counter.
//
// No PTX spelling lives here: ops name what they do (mma, copy, tmem_load, ...); the emitter's
// spelling tables (src/emit/spelling.cpp) say how each is written for each target.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ptxgen/isa.hpp"
#include "ptxgen/math_fn.hpp"
#include "ptxgen/ref.hpp"
#include "ptxgen/tmem_view.hpp"

namespace ptxgen::ir {

// The storage of sub-byte elements and tensor memory's row layouts are the ISA's (ptxgen/isa.hpp);
// a name with the JSON pointer of the field that wrote it (ptxgen/ref.hpp) and a link of a view
// chain (ptxgen/tmem_view.hpp) are the vocabulary the IR shares with the spec it points at.
using isa::SubByte;
using isa::TmemLayout;
using isa::layout_f_alignment;
using ptxgen::Ref;
using ptxgen::TmemView;

// tcgen05.mma (sm_100a family: D in tensor memory, one thread issues) or wgmma.mma_async (sm_90a:
// D in the registers of a warpgroup, which issues together).
enum class Engine : uint8_t { tcgen05, wgmma };

// ---- Positions ---------------------------------------------------------------------------------
// value = base + m_tile * (this CTA's tile row in the grid) + n_tile * (its tile column)
//              + k_block * (the enclosing loop's iteration) + rank * (%cluster_ctarank & 1 in a pair)
//              + size_mul * (the run-time size `size`: a size parameter or a derived size)
//              + group * (this CTA's group of a grouped grid, Grid::groups_param: %ctaid.z, or its
//                         segment's in the contiguous layout)
struct Affine {
  int64_t base = 0, m_tile = 0, n_tile = 0, k_block = 0, rank = 0;
  int64_t group = 0;
  // The gated epilogue's up half lies d = n / 2 rows of B (columns of the bias) after the gate's.
  int64_t size_mul = 0;
  std::string size;
  bool constant() const { return !m_tile && !n_tile && !k_block && !rank && !size_mul && !group; }
};

// The launch grid: one CTA (or one pair) for a program, or one CTA (pair) per output tile of an
// M x N problem whose sizes are kernel parameters. `m_param`/`n_param` name the u32 parameters.
struct Grid {
  bool tiled = false;
  int64_t tile_m = 0, tile_n = 0;   // rows and columns of the output each CTA pair (or CTA) computes
  int64_t tile_k = 0;               // the K block of the loop over K
  std::string m_param, n_param;     // run-time extents (tiled only)
  // The launch order of the tiles (L2 reuse): CTAs in launch order (%ctaid.x fastest) take the
  // tiles of `raster_group` tile rows column by column, then the next group of rows. 1: row by row.
  int raster_group = 1;
  // Persistent: fewer CTAs than tiles (one per multiprocessor, by the launcher's rule), each CTA's
  // roles walking its tiles: place %ctaid.x, then every %nctaid.x-th (Role::persistent).
  bool persistent = false;
  // A cluster of CTAs (CTA pairs) over a block of cluster_m x cluster_n tiles that share operands by
  // multicast: the launch order places blocks, and the CTA of cluster rank r, in pair q = r /
  // cta_group, takes tile (q / cluster_n, q % cluster_n) of its block. A persistent grid's clusters
  // walk the blocks together.
  int cluster_m = 1, cluster_n = 1;
  // Grouped GEMM (docs/spec.md, "Grouped GEMM"); `groups_param` names the size parameter G ("" :
  // one problem). Masked layout: the grid's z walks the groups, and each CTA reads element
  // %ctaid.z of the int32 global `group_rows` (masked_m), its group's valid rows. Contiguous
  // layout: the grid walks the rows of A, whose groups' segments start on multiples of
  // `group_align` rows after the previous group's end, and each CTA finds its group by a binary
  // search of the int32 global `group_ends` (the groups' ends, ascending). Either way a CTA whose
  // first row lies at or past its group's valid rows (in the contiguous layout: in a segment's
  // padding, or past every segment) exits before its first load, issuing no TMA, MMA or store.
  std::string groups_param = {}, group_rows = {}, group_ends = {};
  int64_t group_align = 0;
};

// A u32 kernel parameter: a problem size the kernel takes at run time, and the spec's value of it.
// A derived size (`of` not empty) is no parameter: the kernel computes ceil(of / div) * mul.
struct SizeParam {
  std::string name;
  int64_t value = 0;
  std::string of;
  int64_t div = 1, mul = 1;
  // `of` must be a multiple of `div` (the launch header refuses others): a gated activation's d = n / 2.
  bool exact = false;
};

// ---- Buffers -----------------------------------------------------------------------------------
// A kernel parameter: a row-major 2-D array (`cols` contiguous) of `rows` x `cols` elements, `ld`
// elements from one row to the next. Extents named by a parameter (`rows_param`, ...) are the
// problem's at run time; `rows`/`cols` are then the spec's sizes (what the rules and the plan check).
struct Global {
  std::string name, ptr, format_ptr;
  isa::DType dtype = isa::DType::bf16;
  SubByte format = SubByte::padded;
  int64_t rows = 0, cols = 0, ld = 0;
  std::string rows_param, cols_param, ld_param;  // "" : static
  bool output = false;                           // written by the kernel (the manifest says so)
  std::string param;      // the .u64 address parameter; "" when only tensor maps reach the tensor
  // Bits one element occupies in global memory (lower() sets isa::storage_bits of dtype and format
  // where a front end left 0, and ld = cols likewise). The gemm template's 4- and 6-bit operands are
  // dense (4 or 6 bits) and their TMA loads unpack them.
  int bits = 0;
  // TMA loads see the tensor as elements of its own type (the CUtensorMapDataType of the dtype),
  // not as bytes: what the gemm template's host code encodes.
  bool typed_map = false;
  // The names of the logical dimensions the manifest gives (a gemm operand: "m", "k"; a bias along
  // N: "1", "n"); the tensor is stored transposed where the second is rows_param and the first not.
  // Empty: rows, cols.
  std::array<std::string, 2> dims;
  // A 3-D tensor [planes][rows][cols], its planes rows * ld elements apart (TMA loads take a
  // plane coordinate, ir::Load::plane); 0: 2-D. `planes_param` names the size it grows with at run time.
  int64_t planes = 0;
  std::string planes_param;
  // One plane per group of a grouped grid (Grid::groups_param): every access of a CTA lies in its
  // group's plane. TMA loads and stores take the plane as their coordinate (an Affine's `group`
  // term); the address parameter, which direct stores and reads add rows and columns to, is moved
  // to the plane once per CTA (planes rows * ld elements apart, at run time).
  bool grouped = false;
  // A block-scale factor tensor (§9.7.16.10.7) of operand `scales` ("A", "B"), one factor per
  // `scale_vec` elements of K of each of its rows (A) or columns (B), in the 128x4 layout of
  // cuBLAS, CUTLASS and torch (docs/spec.md, "Block scaling"): `planes` blocks of 128 rows of the
  // operand (dims[0]: m or n), each `rows` lines of 16 bytes (32 lines per 4 factors of a row).
  int scale_vec = 0;
  std::string scales;
  // Sparse A (§9.7.16.10.8): `compressed` is A itself, whose K extent holds half of the k
  // parameter's elements (2:4, 1:2); `metadata_of` ("A") names the operand a metadata tensor indexes:
  // in atoms of 128 rows by isa::sparse_atom_k elements of K, `rows` rows (m padded to 128) of 16
  // bytes per plane, one plane per atom of K (docs/spec.md, "Sparse A"). `sparse_kind` is the MMA
  // kind of both: their granularity and the atom's K and order.
  bool compressed = false;
  std::string metadata_of;
  isa::Kind sparse_kind = isa::Kind::f8f6f4;
};

// A shared-memory tile: an M (or N) x K operand in a canonical layout (§9.7.16.3.3), rows along M
// or N, cols along K. `stages` > 1: a ring of that many copies that a loop cycles through.
struct Tile {
  std::string name, ptr;
  isa::DType dtype = isa::DType::bf16;
  SubByte format = SubByte::padded;
  int rows = 0, cols = 0;
  isa::Major major = isa::Major::k;
  isa::Swizzle swizzle = isa::Swizzle::none;
  uint32_t align = 0;  // bytes; 0: derived from the swizzle pattern (and TMA)
  int stages = 1;
  // Placed over the memory of this tile's ring (and the tiles after it) instead of its own: a
  // staging tile used only once the ring is no longer read (the gemm template's D after the K loop).
  std::string overlay;
  std::string align_ptr, swizzle_ptr, major_ptr, format_ptr, shape_ptr;
};

// An mbarrier (§9.7.13.15): `count` arrivals complete a phase (plus the transaction bytes armed by
// expect_tx). `stages` > 1: one per stage of a ring.
struct Barrier {
  std::string name;
  int count = 1;
  int stages = 1;
};

// ---- Ops ---------------------------------------------------------------------------------------
enum class OpKind : uint8_t {
  load,        // global -> shared tile: plain 16-byte loads of every thread, or TMA boxes (via_tma)
  copy,        // shared tile -> tensor-memory view (tcgen05.cp)
  mma,         // D (+)= A x B: tcgen05.mma, or wgmma with D a register set
  tmem_load,   // tensor-memory view -> register set (tcgen05.ld)
  tmem_store,  // register set -> tensor-memory view (tcgen05.st)
  store,       // register set -> global tensor
  commit,      // tcgen05.commit: the barrier's next phase completes when the issued tcgen05 work does
  wait,        // every thread of the role waits for a phase of the barrier
  arrive,      // every thread of the role arrives on the barrier
  expect_tx,   // one thread arrives and arms the barrier with the bytes of the loads that follow
  mma_wait,    // wgmma: wait until at most `pending` wgmma groups of this warpgroup are in flight
  math,        // register sets -> register set: an f32 function element by element (add.rn.f32, ex2.approx.f32, ...)
  read,        // global tensor -> register set holding the elements another set holds (a bias, C, a scalar)
  reduce,      // register set -> register set: each row's max, sum or absmax, in every element of the row
  amax,        // register set -> global scalar: raised to the largest |element| (red.global.max)
  quantize,    // register set -> register set divided by its blocks' scale factors, the factors to a global tensor
  fill,        // constant -> register set holding the elements a tcgen05.ld of a view would (mov.b32)
};

// Which stage of a ring, and which phase of a barrier, an op inside a loop uses: those of iteration
// kb - lag (of a ring of S stages, the barrier's or the tile's: position (kb - lag) % S, phase
// ((kb - lag) / S) & 1, flipped by `flip`). Iterations kb < lag skip the op. Outside a loop the
// phase is `flip` (0 or 1) and the stage 0.
struct Phase {
  int lag = 0;
  bool flip = false;
  // The ring follows the persistent role's tiles instead of a loop's iterations (the
  // double-buffered accumulator's barriers): the CTA's i-th tile (from 0) uses stage i % S and
  // phase (i / S) & 1, flipped by `flip`, inside a loop or not; in a ping-pong role (Role::turns
  // > 1) i counts the role's own tiles (the consumers' hand-off). Outside a persistent role: stage 0.
  bool tile = false;
  // In a loop unrolled by two (Loop::unroll), where an op may name a register set of each parity
  // of the K block: the op runs only in iterations kb whose kb - lag is even (0) or odd (1); after
  // the loop, only where iteration trips - lag, the one it names, is. -1: in every iteration.
  int parity = -1;
};

// Tensor memory a persistent role's tiles cycle through (the double-buffered accumulator of a
// persistent tcgen05 GEMM): the op's tensor-memory operand (mma: D; tmem_load: its view) is
// stage i % stages of a ring whose stage s lies s * stride columns after the view, for the CTA's
// i-th tile. stages 1: the view itself.
struct TmemRing {
  int stages = 1;
  uint32_t stride = 0;
};

// Where a load or a store works in its global tensor: the first row and column (a load of a 3-D
// global: in Load::plane), and the spec fields they came from. A pair's CTA r works at `at`'s
// rank term; `has_per_cta`: the spec said where (a single CTA's spec may not, CTA-PAIR).
struct Position {
  std::array<Affine, 2> at{};
  std::string at_ptr, per_cta_ptr;
  bool has_per_cta = false;
};

// The access of a tcgen05.ld / tcgen05.st (§9.7.16.8.3-5): shape, .num, .pack::16b (load) or
// .unpack::16b (store) and the warps that run it; unset: the planner chooses.
struct TmemAccess {
  std::optional<isa::LdShape> shape;
  std::optional<int> num;
  bool pack = false;
  std::vector<int> warps;
  std::string shape_ptr, num_ptr, pack_ptr, warps_ptr;
};

// global -> shared tile: plain 16-byte loads of every thread, or TMA boxes (`tma`,
// cp.async.bulk.tensor, §9.7.9.27.1.2) completing on `barrier`.
struct Load {
  Ref src, dst, barrier;
  Position pos;
  Affine plane;  // a 3-D global's plane (Global::planes)
  bool tma = false;
  std::string via_ptr;
  bool to_leader = false;  // a pair's pipelined load: its bytes complete on CTA 0's barrier
  std::string map_param;   // the tensor-map parameter ("" : the planner names it tmap_N)
  int tile_row0 = -1;      // a row-placed load: it writes tile rows [tile_row0, tile_row0 + load_rows)
  int load_rows = 0;
  // The program's "place" of the load this one is a piece of ("" : none written): the pieces of
  // one placed load share its tensor map.
  std::string place_ptr;
  // A TMA load the `multicast` CTAs (pairs) of the cluster's block share (.multicast::cluster):
  // along N, the block's tile row (`multicast_along_m` false: the same M tile, A's rows), along M
  // its tile column (true: B's). The CTA (pair) at place j of that row or column issues the j-th of
  // `multicast` equal parts of the tile's boxes, each written to the same place in the shared
  // memory of the row's (column's) CTAs of its own rank in the pair, completing on each one's
  // barrier (in a pair, on each pair's CTA 0's). 0: its own.
  int multicast = 0;
  bool multicast_along_m = false;
};

// shared tile -> tensor-memory view (tcgen05.cp, §9.7.16.9.2): the source's rows / columns, or all.
struct Copy {
  Ref src, dst;
  std::optional<std::array<int64_t, 2>> rows, cols;
  std::string rows_ptr, cols_ptr;
};

// D (+)= A x B: tcgen05.mma (§9.7.16.10.9; block-scaled and sparse variants), or wgmma.mma_async
// (§9.7.15.5) with D a register set.
struct Mma {
  Ref a, b, d, scale_a, scale_b, metadata;
  // A and B may be a range of their tile's rows (an instruction group the lowering places)
  std::optional<std::array<int, 2>> a_rows, b_rows;
  bool accumulate = false;    // D += A x B from the first instruction on
  bool accumulate_after_first_iteration = false;  // inside a loop: D = A x B in iteration 0, += after
  // wgmma: D is the register set `d` of this type; A may come from registers (loaded from the tile)
  isa::DType acc_dtype = isa::DType::f32;
  bool a_registers = false;
  // wgmma: the rows of A (and of D) each warpgroup of the role covers, in m64 instructions stacked
  // over them (registers of M group i after those of i - 1); 0: 64, one instruction row.
  int warpgroup_rows = 0;
  int vec = 32;  // block scaling: elements of K per scale factor
  std::string vec_ptr, scale_ptr, sparse_ptr, kind_ptr;
  std::optional<isa::Kind> kind_override;
  TmemRing tmem_ring;  // D: a ring of tensor memory over a persistent role's tiles
};

// tensor-memory view -> register set (tcgen05.ld, §9.7.16.8.3).
struct TmemLoad {
  Ref src, regs;
  TmemAccess access;
  TmemRing tmem_ring;  // src: a ring of tensor memory over a persistent role's tiles
};

// constant -> register set: `regs` holds the elements a tcgen05.ld of `like` with `access` would
// give it (the same RegDef: shape, .num, warps), every one the f32 `value` (mov.b32 of its bits,
// §9.7.9.10). It reads no tensor memory: an initial value of a set the loop carries (the running
// max and sum of an online softmax), or zeros for a tcgen05.st to clear an accumulator.
struct Fill {
  Ref like, regs;
  TmemAccess access;
  double value = 0;       // as written; the register holds the f32 nearest it (MATH-DTYPE: finite)
  std::string value_ptr;
};

// register set -> tensor-memory view (tcgen05.st, §9.7.16.8.4).
struct TmemStore {
  Ref regs, dst;
  TmemAccess access;
};

// register set -> global tensor: each thread's elements directly, or through shared memory by TMA.
struct Store {
  Ref regs, dst;
  Position pos;
  Affine plane;  // a 3-D global's plane (Global::planes): the third coordinate of a TMA store
  bool clip = false;  // clip to the global's run-time extents (elements past them are not written)
  bool tma = false;
  std::string map_param;  // the tensor-map parameter of a TMA store
  // store by TMA (wgmma accumulators): the registers go to the shared tile `via` (boxes of one
  // 128-byte swizzle row by 64 rows, a warpgroup's), then cp.async.bulk.tensor writes the boxes,
  // which TMA clips to the tensor's extents. `via_shared_by`: the threads (all consumer warpgroups)
  // that must be done with the ring `via` overlays before it is written; 0 when it has its own memory.
  Ref via;
  int via_shared_by = 0;
  // A TMA store with a direct fallback ("epilogue": "auto"): where D's rows are not 16-byte
  // multiples apart at run time (no tensor map can stride them), the clipped direct store instead.
  bool direct_fallback = false;
  // `via` holds two boxes of each row, subtile buffers that the boxes take in turn (spec::d_subtiles):
  // box j goes through buffer j % 2 once the store that read it before has read it out.
  bool subtiles = false;
  // tcgen05 registers by TMA (the template's TMA epilogue): the registers hold one box of D, which
  // goes to stage `via_stage` of the staging ring `via` once the issuing thread's stores that read
  // that stage before have (at most `pending` newer bulk groups still reading: the ring's stages
  // - 1), then one thread stores it.
  int via_stage = 0;
  int pending = 0;
  // A piece of that box (the epilogue loads a box in narrower tcgen05.ld pieces, so that a piece's
  // registers and the reads fused with them are live, not the whole box's): the registers hold the
  // box's columns from `piece_col` (elements) on. The first piece (piece_col 0) waits for the stage,
  // the last (`piece_last`) stores the box. A whole box is the one piece at 0 that is last.
  int piece_col = 0;
  bool piece_last = true;
};

// tcgen05.commit (§9.7.16.12.1): the barrier's next phase completes when the issued tcgen05 work does.
struct Commit {
  Ref barrier;  // in a pair: the barrier of both CTAs (.multicast::cluster)
  // Arrive on the barrier, at the same offset, in every CTA of the pairs (CTAs) of this one's
  // cluster-block tile row (`release_row`) and tile column (`release_column`): the producers that
  // multicast into this CTA's stage (.multicast::cluster, §9.7.16.12.1).
  bool release_row = false, release_column = false;
};

// Every thread of the role waits for a phase of the barrier (mbarrier.try_wait.parity, §9.7.13.15).
struct Wait {
  Ref barrier;
};

// Every thread of the role arrives on the barrier (mbarrier.arrive, §9.7.13.15).
struct Arrive {
  Ref barrier;
  bool to_leader = false;  // in a pair: on CTA 0's barrier
  // One arrival per warpgroup of the role instead of one per thread, on the barrier at the same
  // offset in CTAs of the cluster's `cluster_ctas` (lane r of the warpgroup's first warp arrives on
  // rank r's, after the warpgroup's wgmma.wait_group): the consumers of a stage that multicast
  // loads write release it in every CTA whose producer writes it, those of this CTA's block row
  // (`release_row`) and column (`release_column`) (mapa and a remote arrive, §9.7.13.15.13).
  bool per_warpgroup = false;
  int cluster_ctas = 0;
  bool release_row = false, release_column = false;
};

// One thread arrives and arms the barrier with the bytes of the loads that follow
// (mbarrier.arrive.expect_tx, §9.7.13.15).
struct ExpectTx {
  Ref barrier;
  bool leader_only = false;  // in a pair: CTA 0 only, arming its barrier for both CTAs' bytes
};

// wgmma.wait_group (§9.7.15.7): wait until at most `pending` wgmma groups of this warpgroup are in flight.
struct MmaWait {
  int pending = 0;
};

// regs = fn(a[, b[, c]]) element by element (§9.7.3): register j of each thread of `regs` is fn of
// register j of the operands, which hold the same elements (the same tcgen05.ld fragments, or the
// same wgmma accumulators). Run by every thread that holds the registers; `approx`: the .approx
// instruction. An operand may be a constant (`value`, its Ref then empty but for the pointer).
struct Math {
  MathFn fn = MathFn::add;
  Ref regs, a, b, c;  // b, c: empty where the function takes fewer operands
  std::array<std::optional<double>, 3> value;  // a, b, c: a constant instead of a register set
  bool approx = false;
  std::string approx_ptr;
  // convert: the result's 16-bit float (bf16, f16), two elements a register (plan::packed_regs).
  // Other functions compute in their operands' type: f32, or packed pairs (§9.7.4).
  isa::DType convert_to = isa::DType::bf16;
  std::string dtype_ptr;
  // Inside a loop: operand c, which `regs` names too, is the set the loop carries, 0 before
  // iteration 0 (the emitter zeroes it before the loop), so that it needs no op of its own to start
  // it: the block-wise scaled sum acc = partial * s + acc of the gemm template (docs/spec.md, "Block
  // scaling"). Only fma, with c == regs.
  bool c_from_iteration_1 = false;
  // A step of an activation op (docs/spec.md, "Activations"), which the lowering expands into one
  // Math per step of its composition (activations(), ptxgen/math_fn.hpp): the steps before the
  // last write temporaries (activation_temporary), the last the op's `regs`. `approx` above is the
  // step's own instruction form; `of.approx` what the spec said for the whole op (MATH-APPROX).
  struct Of {
    Activation act = Activation::relu;
    size_t step = 0;  // its index in the composition
    bool approx = false;
    std::string result, input;  // the op's "regs" and "a" as written (a constant: its number)
    // A gated activation (swiglu, geglu: `act` is the gate's): the composition's steps, the last
    // into a temporary too, then one more step, the mul by up, which writes the op's "regs".
    bool gated = false;
    std::string up;  // a gated activation's "b" as written, for the plan's words
    std::string_view name() const { return !gated ? info(act).name : act == Activation::silu ? "swiglu" : "geglu"; }
    size_t steps() const { return info(act).steps.size() + (gated ? 1 : 0); }
    bool last() const { return step + 1 == steps(); }
  };
  std::optional<Of> of;
};
// The register set that temporary `t` of an activation writing `result` lives in: a name with a
// '.', which no name of the spec has (PROGRAM-NAME: [A-Za-z_][A-Za-z0-9_]*), so none collides.
inline std::string activation_temporary(const std::string& result, Activation act, int t) {
  return result + "." + std::string(info(act).name) + "." + std::to_string(t);
}

// global tensor -> register set (ld.global, §9.7.9.8): `regs` holds the elements `like` holds, as
// f32, register j of each thread the tensor's element at `pos` plus that element's row and column
// of `like` (a pair's CTA r at `pos`'s rank term further). A tensor of one row gives every row
// its row (a per-column vector: a bias along N), of one column every column its column (a per-row
// vector), of one element every element (a scalar such as alpha). Elements at or past the
// tensor's extents (at run time) read as 0.
// `at` other than `cells` reads a wgmma accumulator's set otherwise (the gemm template's block-wise
// f32 scales, docs/spec.md "Block scaling"): `row_vector`, register j the tensor's element at row
// pos.at[0] and column pos.at[1] plus the row of `like` register j holds (a per-row vector stored
// along a row of the tensor: A's factors stored MN-major, [ceil(k / 128), m]), the same element
// for every column of a row; `element`, every register the one element at pos (one factor of a
// tile for one K block). Past the extents 0, as above.
enum class ReadAt : uint8_t { cells, row_vector, element };
struct Read {
  Ref src, regs, like;
  Position pos;
  ReadAt at = ReadAt::cells;
};

// regs = fn over each row of a (max.f32, add.rn.f32, abs.f32; §9.7.3), every element of the row
// holding it: within the thread where it holds whole rows (tcgen05.ld .32x32b), then across the
// threads that share a row (.16x256b and wgmma accumulators: 4 lanes, shfl.sync.bfly, §9.7.9.6).
struct Reduce {
  ReduceFn fn = ReduceFn::max;
  Ref regs, a;
};

// dst[0] = max(dst[0], |x|) over the elements x of `a` that lie inside the extents of the global
// tensor `of` (at run time) where a store of `a` at `pos` writes them (register j of each thread at
// `pos` plus that element's row and column, as a read's): each thread folds its elements (abs.f32,
// max.f32, §9.7.3; an element outside is left out by its predicate), each warp folds its lanes'
// (shfl.sync.bfly.b32, §9.7.9.6), and lane 0 raises dst[0] by red.global.max.u32 (§9.7.13.6) of
// the f32 bits, which order as the values do for values >= 0. `dst` is an f32 tensor of one element
// the kernel writes; the caller sets it (to 0) before the launch. max.f32 returns the other operand
// for a NaN, so NaN elements are not counted.
struct Amax {
  Ref a, dst, of;
  Position pos;
};

// Block quantization to an MX format (OCP Microscaling v1.0; MXFP8: e4m3 or e5m2 elements, one
// ue8m0 factor 2^(x - 127) per block of `vec` consecutive columns of a row): for each block of the
// elements of `a` that a store at `pos` writes to `of`, the factor X = 2^ceil(log2(amax / Fmax))
// (amax the block's largest |element|, Fmax `elem`'s largest finite value: the rounding up of
// cuBLAS, TransformerEngine and CUTLASS, under which no element saturates) clamped to the ue8m0
// range, and `regs` = a / X element by element (a multiplication by 2^(127 - x), exact), ready for
// the store's conversion to `elem`. The factor byte x of the block at D's row r and column block c
// goes to the global `dst` (ue8m0, the 128x4 layout of docs/spec.md "Block scaling", with rows =
// of's rows and factors = its columns / vec) for every block inside `of`'s extents (at run time).
// A block lies whole in one thread's registers (a .32x32b fragment) or in those of the 4 lanes
// that share a row (.16x256b, wgmma accumulators: shfl.sync.bfly over lanes xor 1 and xor 2).
// With `scale` ue4m3 (NVFP4): the factor is the e4m3 (RN, saturating) of amax / Fmax, as written
// (its byte, sign 0), and `regs` = a times min(1 / X, FLT_MAX) (rcp.rn.f32: an all-zero block's
// factor 0 gives 0, not NaN).
struct Quantize {
  Ref regs, a, dst, of;
  Position pos;
  int vec = 32;
  isa::DType elem = isa::DType::e4m3;
  isa::DType scale = isa::DType::ue8m0;
};

// An op: what every kind has, and the kind's own fields. A new kind adds its struct to `Body` (in
// OpKind's order), its verifier, and its planner and emitter cases.
struct Op {
  using Body = std::variant<Load, Copy, Mma, TmemLoad, TmemStore, Store, Commit, Wait, Arrive, ExpectTx, MmaWait, Math, Read, Reduce, Amax, Quantize, Fill>;
  std::string ptr;  // the JSON pointer of what it came from ("/program/ops/3", "/gemm")
  // The stage of a ring and the phase of a barrier (waits, arrivals, commits, expect_tx; loads and
  // mmas on ring tiles) of an op in a loop or a persistent role.
  Phase phase;
  std::string note;  // what the step does, when the lowering says it better than the planner
  Body body;

  OpKind kind() const { return static_cast<OpKind>(body.index()); }
  template <class T>
  const T* as() const { return std::get_if<T>(&body); }
  template <class T>
  T* as() { return std::get_if<T>(&body); }
};
static_assert(std::variant_size_v<Op::Body> == static_cast<size_t>(OpKind::fill) + 1, "one struct per OpKind");

// What the passes that walk every op ask of it, whatever its kind: the barrier it names (a TMA
// load's, a wait's, ...), the register set it defines or reads (tcgen05.ld/st, a store), where it
// works in a global tensor (a load, a store). nullptr for kinds that have none.
inline const Ref* barrier_of(const Op& o) {
  return std::visit(
      [](const auto& b) -> const Ref* {
        if constexpr (requires { b.barrier; }) return &b.barrier;
        else return nullptr;
      },
      o.body);
}
inline const Ref* regs_of(const Op& o) {
  return std::visit(
      [](const auto& b) -> const Ref* {
        if constexpr (requires { b.regs; }) return &b.regs;
        else return nullptr;
      },
      o.body);
}
inline const Position* position_of(const Op& o) {
  return std::visit(
      [](const auto& b) -> const Position* {
        if constexpr (requires { b.pos; }) return &b.pos;
        else return nullptr;
      },
      o.body);
}

// A loop over the K blocks of the problem: max(1, ceil(k / block)) iterations with `k_param` the
// run-time K, or `trips` iterations when it is static. Ops inside see the iteration as k_block.
// `unroll` 2: the body is written twice, for even and for odd kb, so that ops of one parity
// (Phase::parity) may use register sets of their own: the block-wise scaled sum's two sets of
// partial sums, one filled by block kb's wgmmas while block kb - 1's is promoted (docs/spec.md,
// "Block-wise f32 factors"). A register cannot be indexed at run time, so the sets are named.
struct Loop {
  std::string k_param;
  int64_t block = 0;
  int64_t trips = 0;
  int unroll = 1;
  std::vector<Op> body;
};

struct Node {
  bool is_loop = false;
  Op op;
  Loop loop;
};

// Warps [first_warp, first_warp + warps) run `nodes`. `issue`: what one op of the role is run by
// when the instruction is issued by a single thread (lane 0 of the first warp; of CTA 0 in a pair).
// `max_registers`: the role's setmaxnreg budget (0: the kernel's .maxnreg).
struct Role {
  std::string name;
  int first_warp = 0, warps = 1;
  bool single_thread = false;  // the role is one thread (lane 0 of its first warp)
  bool leader_cta_only = false;  // in a pair, only CTA 0 runs the role (tcgen05.mma issue)
  int max_registers = 0;
  // The role runs `nodes` once per tile of the CTA (a persistent grid). The rings its loops cycle
  // through carry on from one tile to the next; an op after a loop with a phase lag L names the
  // stage of that loop's iteration trips - L (the consumer releasing its last stage).
  bool persistent = false;
  // Ping-pong: the persistent role takes only the CTA's tiles i with i % turns == turn, leaving the
  // others to roles of the other turns. Its loops' rings skip the iterations of the tiles it leaves
  // (each tile has the same K blocks), so that the role reads the stages its tiles were loaded into.
  int turn = 0, turns = 1;
  std::vector<Node> nodes;
};

struct Kernel {
  std::string name;
  isa::Arch target = isa::Arch::sm_100a;
  Engine engine = Engine::tcgen05;
  std::string source;           // "gemm" or "program": for the header comment only
  std::vector<std::string> chosen;  // what the front end chose where the spec is silent, with why
  // The gemm template's fused epilogue, in order of application, as the manifest states it for
  // launchers (docs/spec.md, "Epilogues"): "alpha" (times the constant), "c" (+ the input C) or
  // "beta_c" (+ the constant beta times C), "bias" (the input tensor "bias" gives its axis), the
  // activation's name (a gated one's, "swiglu" or "geglu": D then pairs the product's halves),
  // "residual" (+ the input residual), "amax", "d_scale". Empty: D is the accumulator.
  std::vector<std::string> epilogue_ops;
  std::vector<std::pair<std::string, double>> epilogue_constants;  // "alpha", "beta": their values as the spec gave them
  int threads = 128;
  std::string threads_ptr;
  int cta_group = 1;            // 2: a CTA pair (§9.7.16.5) issuing .cta_group::2
  std::string cta_group_ptr;
  std::array<int, 3> cluster{1, 1, 1};
  int max_registers = 255;      // .maxnreg (255: none)
  int alloc_warp = 0;           // allocates and frees tensor memory
  Grid grid;
  std::vector<SizeParam> size_params;  // u32 kernel parameters after the tensors ("m", "n", "k")
  std::vector<Global> globals;
  std::vector<Tile> tiles;
  std::vector<TmemView> views;  // named (in name order) and inline views
  std::vector<Barrier> barriers;  // declared by the lowering; the planner adds those it needs
  std::vector<Role> roles;
  std::string smem_ptr = "/program/smem", tmem_ptr = "/program/tmem";  // where the budgets point
  // A program whose roles the lowering synchronized (pipeline.cpp): its ops as it lists them, the
  // loop's body once in place ([loop_first, loop_end)), for the order rules that read the meaning
  // of the listed order (ORDER-UNWRITTEN, CP-MULTICAST-OVERLAP, src/rules/verify_order.cpp).
  std::vector<Op> listed;
  size_t loop_first = 0, loop_end = 0;
  // A single role whose ops the planner orders (the program level), or roles the lowering ordered.
  bool planner_orders() const { return roles.size() == 1; }
};

}  // namespace ptxgen::ir
