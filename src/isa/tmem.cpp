// Tensor-memory data movement: the shapes of tcgen05.cp (PTX ISA 9.1 §9.7.16.9.2) and of
// tcgen05.ld / tcgen05.st (§9.7.16.8.3-4, Tables 49 and 50), with the lane and register maps the
// ISA gives only as figures, taken from CUTLASS's copy traits where noted.
#include <array>

#include "ptxgen/isa.hpp"

namespace ptxgen::isa {

namespace {

constexpr std::array<CpShapeInfo, 6> kCpShapes{{
    {CpShape::s128x256b, "128x256b", "", 128, 256},
    {CpShape::s128x128b, "128x128b", "", 128, 128},
    {CpShape::s4x256b, "4x256b", "", 4, 256},
    {CpShape::s64x128b_02_13, "64x128b", "warpx2::02_13", 64, 128},
    {CpShape::s64x128b_01_23, "64x128b", "warpx2::01_23", 64, 128},
    {CpShape::s32x128b_warpx4, "32x128b", "warpx4", 32, 128},
}};

// Table 49: registers per thread for .x1; .num multiplies it. columns_per_num: 32-bit columns
// each lane moves per unit of .num (16x64b: 64 bits = 2 columns, and so on).
constexpr std::array<LdShapeInfo, 5> kLdShapes{{
    {LdShape::s32x32b, "32x32b", 32, 1, 1},
    {LdShape::s16x64b, "16x64b", 16, 2, 1},
    {LdShape::s16x128b, "16x128b", 16, 4, 2},
    {LdShape::s16x256b, "16x256b", 16, 8, 4},
    {LdShape::s16x32bx2, "16x32bx2", 16, 1, 1},
}};

}  // namespace

// §9.7.16.10.4: 16-bit D is unpacked (one per cell, §9.7.16.10.4.1) and 16-bit A packed (two);
// 8-bit and 8-bit-container 4/6-bit types four (§9.7.16.10.4.3); e2m1 may also pack two per byte
// (§9.7.16.10.4.5).
std::vector<int> tmem_packings(DType t) {
  const int bits = value_bits(t);
  if (bits == 32) return {1};
  if (bits == 16) return {1, 2};
  if (bits == 8 || bits == 6) return {1, 4};
  return {1, 4, 8};
}

const CpShapeInfo& info(CpShape s) {
  for (const auto& r : kCpShapes)
    if (r.shape == s) return r;
  return kCpShapes[0];
}

const std::vector<CpShape>& all_cp_shapes() {
  static const std::vector<CpShape> v{CpShape::s128x256b, CpShape::s128x128b, CpShape::s4x256b,
                                      CpShape::s64x128b_02_13, CpShape::s64x128b_01_23,
                                      CpShape::s32x128b_warpx4};
  return v;
}

std::vector<int> cp_lanes(CpShape s, int row) {
  switch (s) {
    case CpShape::s128x256b:
    case CpShape::s128x128b: return {row};
    // CUTLASS SM100_UTCCP_4dp256bit: one row per 32-lane sub-partition (the row tcgen05.shift
    // frees), "refresh" of lanes 0, 32, 64, 96 relative to taddr.
    case CpShape::s4x256b: return {32 * row};
    // warps 0 and 2 receive rows 0-31, warps 1 and 3 rows 32-63 (SM100_UTCCP_2x64dp128bitlw0213:
    // row r -> lanes r and r + 64).
    case CpShape::s64x128b_02_13: return {row, row + 64};
    // warps 0 and 1 receive rows 0-31, warps 2 and 3 rows 32-63 (SM100_UTCCP_2x64dp128bitlw0123).
    case CpShape::s64x128b_01_23:
      return row < 32 ? std::vector<int>{row, row + 32} : std::vector<int>{row + 32, row + 64};
    // "multicasted into all 4 warps": row r -> lanes r, r+32, r+64, r+96.
    case CpShape::s32x128b_warpx4: return {row, row + 32, row + 64, row + 96};
  }
  return {};
}

std::string_view qualifier(CpDecompress d) {
  switch (d) {
    case CpDecompress::none: return "";
    case CpDecompress::b4x16_p64: return ".b8x16.b4x16_p64";
    case CpDecompress::b6x16_p32: return ".b8x16.b6x16_p32";
  }
  return "";
}

const LdShapeInfo& info(LdShape s) {
  for (const auto& r : kLdShapes)
    if (r.shape == s) return r;
  return kLdShapes[0];
}

const std::vector<LdShape>& all_ld_shapes() {
  static const std::vector<LdShape> v{LdShape::s32x32b, LdShape::s16x64b, LdShape::s16x128b, LdShape::s16x256b,
                                      LdShape::s16x32bx2};
  return v;
}

std::optional<LdShape> parse_ld_shape(std::string_view s) {
  for (const auto& r : kLdShapes)
    if (r.name == s) return r.shape;
  return std::nullopt;
}

int ld_regs(LdShape s, int num) {
  if (num < 1 || num > 128 || (num & (num - 1)) != 0) return 0;
  const int regs = num * info(s).regs_per_num;
  return regs <= 128 ? regs : 0;  // Table 49: NA beyond 128 registers
}

LdCell ld_cell(LdShape s, int t, int j) {
  // CUTLASS copy_traits_sm100.hpp, SM100_TMEM_LOAD_*: each DstLayout maps (thread, value bit) to
  // (column bit + lane * bits-per-lane); decoded here per 32-bit register.
  switch (s) {
    case LdShape::s32x32b: return {t, j, false};  // 32dp32b: thread t <-> lane t, register j <-> column j
    case LdShape::s16x64b:                         // 16dp64b: ((2,2,8),32) : ((512,32,64),1)
      return {t / 4 + 8 * (t % 2), (t / 2) % 2 + 2 * j, false};
    case LdShape::s16x128b:  // 16dp128b: ((4,8),(32,2)) : ((32,128),(1,1024))
      return {t / 4 + 8 * (j % 2), t % 4 + 4 * (j / 2), false};
    case LdShape::s16x256b:  // 16dp256b: ((4,8),(64,2)) : ((64,256),(1,2048)), the mma.sync C fragment
      return {t / 4 + 8 * ((j / 2) % 2), 2 * (t % 4) + j % 2 + 8 * (j / 4), false};
    case LdShape::s16x32bx2:  // 16dp32b2x: threads 0-15 at taddr, 16-31 at taddr + immHalfSplitoff
      return {t % 16, j, t >= 16};
  }
  return {};
}

bool alloc_columns_ok(int64_t columns) {
  return columns >= 32 && columns <= 512 && (columns & (columns - 1)) == 0;
}

}  // namespace ptxgen::isa
