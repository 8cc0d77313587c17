// ptxgen/isa.hpp — pure encoders and decoders for the bits the PTX ISA defines.
//
// Everything here is named as in the PTX ISA 9.1 and knows nothing of specs or plans:
// element types, targets, MMA kinds, the tcgen05 instruction descriptor (§9.7.16.4.2),
// the shared-memory matrix descriptor in its sm_100 (§9.7.16.4.1) and sm_90 (§9.7.15.5.1.2.2)
// formats, tensor-memory addresses (§9.7.16.1.1) and the canonical shared-memory layouts
// (§9.7.16.3.3) from which LBO/SBO follow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxgen::isa {

// ---------------------------------------------------------------------------------------------
// Element types
enum class DType : uint8_t { f16, bf16, tf32, f32, e4m3, e5m2, e2m3, e3m2, e2m1, s8, u8, s32,
                              // scale-factor types of block-scaled MMAs (§9.7.16.10.7) and raw bytes
                              // (sparsity metadata, §9.7.16.10.8), used by the program level
                              ue8m0, ue4m3, b8 };

std::string_view name(DType t);
std::optional<DType> parse_dtype(std::string_view s);
// Bits of one element as the element itself is defined (e2m1 = 4, e2m3 = 6, tf32 = 32).
int value_bits(DType t);
// The bits of the f16 or bf16 nearest v (round to nearest, ties to even; IEEE 754 binary16 or
// bfloat16, subnormals kept, beyond the largest finite value infinity): a packed constant
// (docs/spec.md, "Packed half-precision arithmetic") as cvt.rn.{f16,bf16}.f32 would round it.
uint16_t half_bits_rn(DType t, double v);
// The value of f16 or bf16 bits.
double half_value(DType t, uint16_t bits);
bool is_float8_6_4(DType t);  // e4m3 e5m2 e2m3 e3m2 e2m1
bool is_integer(DType t);

// How 4- and 6-bit elements are stored in global and shared memory: "padded" is the format of
// the f8f6f4 kinds and the tcgen05.cp decompression source (16 elements then 64 or 32 bits of
// padding per 16 bytes, §9.7.16.10.4.4, §9.7.16.9.1); "packed" is two e2m1 per byte, the format
// of the mxf4 kinds (§9.7.16.10.4.6). Other types ignore it.
enum class SubByte : uint8_t { padded, packed };

// Bits one element occupies in global or shared memory (8 for padded 4/6-bit types).
int storage_bits(isa::DType t, SubByte f);

// ---------------------------------------------------------------------------------------------
// Targets (PTX §11.1.2 .target; tcgen05 target notes in §9.7.16.*)
enum class Arch : uint8_t { sm_90a, sm_100a, sm_100f, sm_103a, sm_110a };

struct TargetInfo {
  Arch arch;
  std::string_view name;      // as spelled in .target
  int ptx_major, ptx_minor;   // lowest PTX ISA version that knows the target string
  bool tcgen05;               // tensor-core gen 5 (tcgen05.*)
  bool wgmma;                 // wgmma.mma_async (sm_90a only)
  bool kind_i8;               // .kind::i8: sm_100a and sm_110a only (§9.7.16.10.9.1 target notes)
  bool scale_vec_nx;          // .scale_vec::NX spellings need an `a` target
  bool k96;                   // K = 96 for mxf4/mxf4nvf4 (§9.7.16.2.1.1): sm_103a only
  int smem_per_block_max;     // bytes of shared memory one CTA may use (opt-in maximum)
  int tmem_columns;           // columns of tensor memory per CTA (§9.7.16.1)
  int cuda_min_major, cuda_min_minor;  // first CUDA toolkit whose ptxas assembles the target
};

const TargetInfo& target_info(Arch a);
std::optional<Arch> parse_arch(std::string_view s);
const std::vector<Arch>& all_archs();

// ---------------------------------------------------------------------------------------------
// Tensor-memory row layouts (§9.7.16.9, §9.7.16.10.5)
// How the logical rows of a tensor-memory view sit in the 128 lanes. `rows`: row r at lane
// lane0 + r. The replicated layouts are what the multicasting tcgen05.cp shapes write: 64 rows
// twice (.warpx2::02_13: row r at lanes r and r+64; .warpx2::01_23: rows 0-31 at lanes 0-31 and
// 32-63, rows 32-63 at 64-95 and 96-127) or 32 rows four times (.warpx4: row r at r + 32i).
// `layout_f_*` is data-path layout F (§9.7.16.10.5.6), where an M = 64 tcgen05.mma at
// .cta_group::1 keeps D (and A, and the metadata): 64 rows in 16-lane pieces, one per 32-lane
// quarter, row r at lane 32 (r / 16) + r % 16 + the lane alignment (0 or 16, the table of
// §9.7.16.10.5), so that warp w reaches rows 16 (w % 4) .. +15 with the 16-lane tcgen05.ld shapes.
// `layout_b` is data-path layout B (§9.7.16.10.5.2), where a dense M = 128 tcgen05.mma of a CTA
// pair keeps each CTA's 64 rows of D: the first half of a row's elements in lanes 0-63 (row r at
// lane r), the second half in lanes 64-127 (row r at lane 64 + r), at the same columns.
enum class TmemLayout : uint8_t { rows, warpx2_02_13, warpx2_01_23, warpx4, layout_f_0, layout_f_16, layout_b };
// The lane alignment of a layout-F view (0 or 16); -1 for the other layouts.
inline int layout_f_alignment(TmemLayout l) {
  return l == TmemLayout::layout_f_0 ? 0 : l == TmemLayout::layout_f_16 ? 16 : -1;
}
std::string_view name(TmemLayout l);

// tcgen05.alloc's column counts: a power of two of 32..512 (§9.7.16.7.1).
bool alloc_columns_ok(int64_t columns);

// ---------------------------------------------------------------------------------------------
// tcgen05.mma kinds (§9.7.16.10)
enum class Kind : uint8_t { f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4 };
std::string_view name(Kind k);
bool is_block_scaled(Kind k);
// K of one dense instruction in elements (Table 39); sparse doubles it.
int instr_k(Kind k);
// Bits one element of `t` occupies in shared memory for this kind: 4/6-bit types sit in 8-bit
// containers for f8f6f4/mxf8f6f4 (§9.7.16.10.4.4), two e2m1 share a byte for mxf4* (§9.7.16.10.4.6).
int smem_bits(Kind k, DType t);

// Table 39: the unscaled kind whose instruction takes A and B of these types (f16 and bf16 do not
// mix: the f16 kind is listed per type pair f16.f16 / bf16.bf16 as wgmma spells it).
std::optional<Kind> unscaled_kind(DType a, DType b);
// Table 39: accumulator (D) types per kind and input type.
bool accumulator_allowed(Kind k, DType a, DType b, DType accumulator);
std::string accumulators_text(Kind k, DType a);

// Table 39 (+ Table 52 for 8-bit N-major B): legal instruction M and N, dense, non-.ws.
bool legal_m(Kind k, int cta_group, int m);
std::string legal_m_text(Kind k, int cta_group);
int smallest_legal_m(Kind k, int cta_group);  // what every legal tile.m is a multiple of
// The largest legal instruction M that divides a CTA tile's M (0: none).
int instr_m_for_tile(Kind k, int cta_group, int tile_m);
bool legal_n(Kind k, int cta_group, bool b_mn_major_8bit, int n);
std::string legal_n_text(Kind k, int cta_group, bool b_mn_major_8bit);
// Splits a CTA-tile N into legal instruction N groups (each <= 256), fewest groups first, larger
// groups first; group starts must be multiples of `start_align` (elements of the whole pair N).
// Empty when no split exists.
std::vector<int> split_n(Kind k, int cta_group, bool b_mn_major_8bit, int tile_n, int start_align);

// wgmma (sm_90a), PTX ISA 9.1 §9.7.15.2-3: the kind-like family of A and B (f16: f16.f16 or
// bf16.bf16; tf32; f8f6f4 stands for e4m3/e5m2 in any mix; i8 for s8.s8 or u8.u8 — integer
// multiplicands must have the same type), the accumulators, and N per instruction (8..256 step 8;
// integers 8, 16, 24, 32, then steps of 16). M is always 64; K = 256 bits of each row.
std::optional<Kind> wgmma_kind(DType a, DType b);
bool wgmma_accumulator_allowed(DType a, DType accumulator);
bool wgmma_legal_n(Kind k, int n);
std::string wgmma_legal_n_text(Kind k);
std::vector<int> wgmma_split_n(Kind k, int tile_n);

// ---------------------------------------------------------------------------------------------
// Swizzling modes. `code_sm100` is the 3-bit layout field of Table 40 (bits 61-63);
// `code_sm90` the 2-bit field of the wgmma descriptor (bits 62-63).
enum class Swizzle : uint8_t { none, b32, b64, b128, b128_base32b };
std::string_view name(Swizzle s);
int bytes(Swizzle s);          // 16 for none (one 16-byte column), else 32/64/128
int code_sm100(Swizzle s);     // 0, 6, 4, 2, 1
std::optional<Swizzle> swizzle_from_code_sm100(int code);
int code_sm90(Swizzle s);      // 0, 3, 2, 1 ; -1 for 128B_base32B (absent on sm_90)
std::optional<Swizzle> swizzle_from_code_sm90(int code);
// Bytes after which the swizzle pattern repeats (Table 41): 1024 / 512 / 256; 16 for none.
int pattern_bytes(Swizzle s);
// cp.async.bulk.tensor (TMA): the shared-memory destination of a box starts on a 128-byte boundary
// (CUDA C++ Programming Guide, TMA alignment; the swizzle follows the absolute address, §5.5.7
// "swizzle base offset"), and each box dimension is at most 256 elements (cuTensorMapEncodeTiled).
constexpr int kTmaSmemAlign = 128;
constexpr int kTmaBoxMax = 256;
// A tensor map's global strides are multiples of 16 bytes (PTX ISA 9.1 §5.5.1 tensor strides, with
// the driver's cuTensorMapEncodeTiled for the element types ptxgen stores).
constexpr int kTmaStrideAlign = 16;

// ---------------------------------------------------------------------------------------------
// One named bit field of an encoded word, for printing and JSON.
struct Field {
  std::string name;   // as the ISA names it
  int lo, hi;         // bit range, inclusive
  uint64_t raw;       // the bits as stored
  std::string value;  // the meaning, e.g. "128" or "BF16"
};

// ---------------------------------------------------------------------------------------------
// Instruction descriptor, 32 bits (§9.7.16.4.2, Tables 42-44).
enum class IdescFormat : uint8_t { dense, mxf8f6f4, mxf4 };  // Table 42 / 43 / 44
IdescFormat idesc_format(Kind k);

struct InstrDesc {
  Kind kind = Kind::f16;         // selects the table (and names the type codes); not encoded
  // Table 42 (dense kinds)
  unsigned sparse_selector = 0;  // bits 0-1
  bool sparse = false;           // bit 2 (all tables)
  bool saturate = false;         // bit 3 (i8)
  unsigned dtype = 0;            // bits 4-5: F16=0 F32=1 S32=2
  unsigned atype = 0;            // bits 7-9
  unsigned btype = 0;            // bits 10-12 (10-11 for mxf4*)
  bool negate_a = false;         // bit 13
  bool negate_b = false;         // bit 14
  bool transpose_a = false;      // bit 15 (A is M-major)
  bool transpose_b = false;      // bit 16 (B is N-major)
  unsigned n = 0;                // N; bits 17-22 hold N>>3
  unsigned m = 0;                // M; Table 42 bits 24-28 hold M>>4, Tables 43/44 bits 27-28 hold M>>7
  unsigned max_shift = 0;        // bits 30-31 (.ws B reuse), Table 42 only
  // Tables 43/44 (block-scaled kinds)
  unsigned b_sf_id = 0;          // bits 4-5
  unsigned scale_type = 0;       // bit 23: UE8M0=1, UE4M3=0
  unsigned a_sf_id = 0;          // bits 29-30
  bool k96 = false;              // bit 31 (Table 44): dense K=96
};

// Field codes (Table 42).
unsigned idesc_dtype_code(DType accumulator);           // f16 0, f32 1, s32 2
std::optional<unsigned> idesc_ab_code(Kind k, DType t);  // atype/btype code for this kind
std::optional<DType> idesc_ab_dtype(Kind k, unsigned code);

// Encode fails (returns nullopt) when a field does not fit or a reserved bit would be set.
std::optional<uint32_t> encode(const InstrDesc& d);
InstrDesc decode_idesc(uint32_t bits, Kind kind);
std::vector<Field> fields(const InstrDesc& d);

// ---------------------------------------------------------------------------------------------
// Shared-memory matrix descriptor, 64 bits. Byte values are kept here; the encoding stores
// matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4 in 14-bit fields.
enum class DescFormat : uint8_t { sm100, sm90 };

struct SmemDesc {
  DescFormat format = DescFormat::sm100;
  uint32_t start_address = 0;  // bytes, 16-byte aligned, < 2^18
  uint32_t lbo = 0;            // leading dimension byte offset (bytes)
  uint32_t sbo = 0;            // stride dimension byte offset (bytes)
  unsigned base_offset = 0;    // bits 49-51
  bool lbo_mode = false;       // bit 52 (sm100 only): absolute LBO address
  Swizzle swizzle = Swizzle::none;
};

constexpr uint32_t matrix_descriptor_encode(uint32_t x) { return (x & 0x3FFFFu) >> 4; }
// Encode fails when an address is not 16-byte aligned or not below 2^18, or the swizzle has
// no code in the format.
std::optional<uint64_t> encode(const SmemDesc& d);
// Decode also reports malformed words (fixed bits wrong, invalid swizzle code).
struct DecodedSmemDesc {
  SmemDesc desc;
  std::vector<std::string> problems;
};
DecodedSmemDesc decode_smem_desc(uint64_t bits, DescFormat format);
std::vector<Field> fields(const SmemDesc& d);

// ---------------------------------------------------------------------------------------------
// Tensor-memory address (§9.7.16.1.1): lane in bits 31-16, column in bits 15-0.
struct TmemAddr {
  uint32_t lane = 0;
  uint32_t column = 0;
};
constexpr uint32_t encode(TmemAddr a) { return (a.lane << 16) | (a.column & 0xFFFFu); }
constexpr TmemAddr decode_tmem(uint32_t bits) { return {bits >> 16, bits & 0xFFFFu}; }
constexpr int kTmemLanes = 128;

// ---------------------------------------------------------------------------------------------
// Canonical shared-memory layouts (§9.7.16.3.3, identical for wgmma §9.7.15.5.1.2.1).
//
// An operand tile is `mn` rows (M for A, N for B) by `k` columns, `bits` per element in shared
// memory. ptxgen stores every tile the way one TMA box per "atom column" writes it:
//  - K-major, swizzled S:  boxes of S bytes of K by all `mn` rows; 8-row groups are 8*S apart.
//  - K-major, none:        boxes of 16 bytes of K by all rows; core matrices (8 rows x 16 B) stack.
//  - MN-major, swizzled S: boxes of S bytes of MN by all `k` rows; 8-K-row groups 8*S apart.
//  - MN-major, none:       boxes of 16 bytes of MN by all `k` rows.
enum class Major : uint8_t { k, mn };

struct TileLayout {
  Major major = Major::k;
  Swizzle swizzle = Swizzle::none;
  int bits = 16;           // element bits in shared memory
  int mn = 0;              // rows of the tile along M or N (padded to whole atoms)
  int k = 0;               // columns of the tile along K (elements)
  // Derived:
  uint32_t lbo = 0;        // bytes, as the descriptor wants them
  uint32_t sbo = 0;
  uint32_t bytes = 0;      // whole tile
  int atom_mn = 0;         // elements along MN in one swizzle atom
  int atom_k = 0;          // elements along K in one swizzle atom
};

// A descriptor addresses bytes [0, 2^18): start, LBO and SBO are 14-bit fields of 16-byte units
// (Table 40, matrix-descriptor-encode). Tiles are sized in 64 bits so no extent can wrap first.
constexpr int64_t kSmemDescRange = int64_t{1} << 18;
constexpr int64_t tile_bytes(int64_t mn, int64_t k, int bits) { return mn * k * bits / 8; }

// Fills the derived fields; returns a reason when the tile cannot be laid out canonically.
std::optional<std::string> make_tile_layout(TileLayout& t);

// The N groups of a tcgen05.mma of `n` columns (a pair's whole N) over B in shared memory laid out
// as `b` (before make_tile_layout): split_n with what B's layout decides, the widths an 8-bit
// N-major B takes (Table 52) and, for an N-major B, groups starting on its swizzle atoms (a
// descriptor addresses whole atoms, §9.7.16.3.3; 8 rows otherwise). The rules (MMA-N), the gemm
// lowering (a pair's ops, M = 64 folding) and the planner (each op's instructions) all split so.
std::vector<int> mma_n_groups(Kind k, int cta_group, TileLayout b, int n);
// Byte offset, from the tile start, of the descriptor start for the sub-matrix whose first row
// is `mn0` and first K element `k0` (both must lie on instruction boundaries the caller checked).
uint32_t tile_offset(const TileLayout& t, int mn0, int k0);

// ---------------------------------------------------------------------------------------------
// Tensor-memory data movement (src/isa/tmem.cpp).
//
// The packings (elements per 32-bit tensor-memory column) an element type has: §9.7.16.10.4.
std::vector<int> tmem_packings(DType t);
//
// tcgen05.cp shapes (§9.7.16.9.2, data-movement shapes §9.7.16.2.3): lanes x bits per lane. The
// .64x128b and .32x128b shapes multicast ("warpx2" / "warpx4") and so write every 32-lane
// sub-partition (warp quarter) of tensor memory.
enum class CpShape : uint8_t { s128x256b, s128x128b, s4x256b, s64x128b_02_13, s64x128b_01_23, s32x128b_warpx4 };
struct CpShapeInfo {
  CpShape shape;
  std::string_view name;       // ".128x256b" without the dot
  std::string_view multicast;  // "" or "warpx2::02_13" / "warpx2::01_23" / "warpx4"
  int rows;                    // source rows (shared-memory rows of 128 or 256 bits)
  int bits;                    // bits of each row
};
const CpShapeInfo& info(CpShape s);
const std::vector<CpShape>& all_cp_shapes();
// The lanes (relative to the lane of taddr, which is 0 for every shape but .4x256b) that source row
// `row` is written to. §9.7.16.9.2 says .warpx2 pairs warps (0,2),(1,3) or (0,1),(2,3) and that
// each warp of a pair receives half of the data; which half goes to which pair is fixed by
// CUTLASS's UTCCP traits (SM100_UTCCP_2x64dp128bitlw0213 / lw0123, 4x32dp128bit, 4dp256bit).
std::vector<int> cp_lanes(CpShape s, int row);
// The optional decompression of §9.7.16.9.1: 16 4-bit (6-bit) elements followed by 64 (32) bits
// of padding in shared memory become 16 8-bit containers in tensor memory.
enum class CpDecompress : uint8_t { none, b4x16_p64, b6x16_p32 };
std::string_view qualifier(CpDecompress d);  // "" or ".b8x16.b4x16_p64" / ".b8x16.b6x16_p32"

// tcgen05.ld / tcgen05.st shapes (§9.7.16.8.3-4, Tables 49 and 50).
enum class LdShape : uint8_t { s32x32b, s16x64b, s16x128b, s16x256b, s16x32bx2 };
struct LdShapeInfo {
  LdShape shape;
  std::string_view name;  // "32x32b"
  int lanes;              // lanes one instruction accesses: 32 or 16
  int columns_per_num;    // 32-bit columns per lane per unit of .num (per half for .16x32bx2)
  int regs_per_num;       // registers per thread per unit of .num (Table 49)
};
const LdShapeInfo& info(LdShape s);
const std::vector<LdShape>& all_ld_shapes();
std::optional<LdShape> parse_ld_shape(std::string_view s);
// Registers per thread for .num (Table 49/50); 0 where the table says NA or .num is not one of
// .x1 .x2 .x4 ... .x128.
int ld_regs(LdShape s, int num);
// Which cell thread `thread` (0-31) moves in register `reg`: the lane offset from taddr's lane,
// the 32-bit column offset from taddr's column, and for .16x32bx2 whether the column is relative
// to the second base (taddr + immHalfSplitoff). The fragments are figures in the ISA
// (Figures 183-187); the maps are CUTLASS's TMEM_LOAD traits (copy_traits_sm100.hpp), which
// .pack::16b / .unpack::16b do not change except that each register then covers two columns.
struct LdCell {
  int lane = 0;
  int column = 0;
  bool second_half = false;
};
LdCell ld_cell(LdShape s, int thread, int reg);
// §9.7.16.8.1: warp w of a warpgroup reaches lanes 32*(w%4) .. 32*(w%4)+31.
constexpr int first_lane_of_warp(int warp) { return 32 * (warp % 4); }

// ---------------------------------------------------------------------------------------------
// Block scaling (§9.7.16.10.7, Tables 56 and 57) and sparsity (§9.7.16.10.8); src/isa/block_scale.cpp.
//
// `vec` is the block size of the .blockN spelling (16 or 32); the scale factors one instruction
// reads per row of A (per column of B), the N of .scale_vec::NX, follow from kind and vec.
// Empty when Table 57 has no such combination.
std::optional<int> scale_factors_per_instr(Kind k, DType scale, int vec);
// The block sizes of Table 57 in words. With `sparse` they count elements of the logical K, which
// are twice the .blockN of tcgen05.mma.sp (stored_scale_vec).
std::string scale_combinations_text(Kind k, bool sparse = false);
// The .blockN of an MMA whose factors each cover `vec` elements of the logical K. A sparse MMA
// computes twice the K with as many factors (Table 56: "All supported values of K"), and .block32
// is its .scale_vec::2X at K = 128 (§9.7.16.10.9.2), so its block counts A's stored elements: half
// of vec. 0 (no block size) for an odd vec with sparse A.
int stored_scale_vec(int vec, bool sparse);
// The .scale_vectorsize qualifier as the target spells it: .scale_vec::NX where the target has
// it (architecture-specific targets), .blockN otherwise (PTX ISA 8.8 and family targets).
std::string scale_vec_qualifier(int factors_per_instr, int vec, const TargetInfo& t);
// Scale-factor IDs an instruction may use (§9.7.16.10.7.2-3): byte offsets 0-3 for 1X,
// half-word offsets 0 or 2 for 2X, 0 for 4X.
std::vector<unsigned> legal_sf_ids(int factors_per_instr);
// The scale type code of the instruction descriptor (Tables 43/44, bit 23): UE8M0 = 1, UE4M3 = 0.
unsigned scale_type_code(DType scale);
// The unscaled/scaled kind an MMA of these operand types takes. `packed_e2m1` says whether 4-bit
// operands are stored two per byte (§9.7.16.10.4.6, mxf4 kinds) rather than in padded 8-bit
// containers (§9.7.16.10.4.4).
std::optional<Kind> scaled_kind(DType a, DType b, DType scale, int vec, bool packed_e2m1);
// The block-scaled kind of a gemm of A and B with these types (the gemm template's "scale"):
// `requested` when its operands are these types (mxf8f6f4: e4m3, e5m2, e2m3, e3m2, e2m1 in
// 8-bit containers; mxf4 and mxf4nvf4: e2m1 two per byte, §9.7.16.10.4); else e2m1 x e2m1 takes
// the packed kinds (scaled_kind), any other float8/6/4 pair mxf8f6f4. Empty when none fits.
std::optional<Kind> gemm_scaled_kind(DType a, DType b, DType scale, int vec, std::optional<Kind> requested);
// Bits of tensor memory one element of A occupies when A is in tensor memory (§9.7.16.10.4.3,
// §9.7.16.10.4.5): 8-bit containers for 4/6-bit types with the f8f6f4 kinds, 4 bits for mxf4*.
int tmem_bits(Kind k, DType t);
// Sparsity metadata (§9.7.16.10.8): 32-bit columns of metadata one instruction reads per row
// (4 bits per chunk of 2, 4 or 8 elements of K: K/2 (tf32), K/4 (2:4 kinds) or K/8 (mxf4 pairs)
// bits), and whether the sparsity selector picks among several (§9.7.16.10.8.4: it must be / is
// assumed 0 for the 8-bit and 4-bit kinds).
int sparse_metadata_columns(Kind k);
bool sparse_selector_used(Kind k);
// The sparse granularity of a kind (§9.7.16.10.8, its table): "1:2" (tf32), "4:8" (mxf4 kinds,
// in pairs), "2:4" (the others).
std::string sparse_granularity(Kind k);
// Elements of K of one metadata atom of the gemm template (CUTLASS's sm_100 atoms, docs/spec.md
// "Sparse A"): 128 rows of 16 bytes, 4 bits per chunk, so 128 elements of K for the 2:4 kinds
// (chunks of 4), 64 for tf32 (chunks of 2, §9.7.16.10.8.1), 256 for the mxf4 kinds (chunks of 8).
int sparse_atom_k(Kind k);
// Target availability of an MMA variant (tcgen05.mma/.mma.sp target notes, §13 Table 60):
// a reason when the target lacks it.
std::optional<std::string> mma_target_gap(Kind k, bool sparse, const TargetInfo& t);
// The lowest PTX ISA version (major*10+minor) that spells this MMA: .kind::mxf4nvf4 and
// .scale_vec::4X need 8.7, .blockN 8.8 (PTX ISA notes of tcgen05.mma).
int mma_min_ptx(Kind k, const std::string& scale_qualifier);

std::string hex32(uint32_t v);
std::string hex64(uint64_t v);

}  // namespace ptxgen::isa
