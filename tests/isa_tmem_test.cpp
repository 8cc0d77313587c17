// ISA facts of tensor-memory data movement, block scaling and sparsity (src/isa/tmem.cpp,
// src/isa/block_scale.cpp), against values worked out by hand from the ISA text and tables and
// from the CUTLASS layouts docs/architecture.md cites.
#include <doctest/doctest.h>

#include <set>
#include <tuple>

#include "ptxgen/isa.hpp"

using namespace ptxgen::isa;

TEST_SUITE("isa") {
TEST_CASE("tcgen05.cp: lanes per source row (§9.7.16.9.2; CUTLASS UTCCP traits)") {
  CHECK(cp_lanes(CpShape::s128x256b, 77) == std::vector<int>{77});
  CHECK(cp_lanes(CpShape::s128x128b, 0) == std::vector<int>{0});
  CHECK(cp_lanes(CpShape::s4x256b, 3) == std::vector<int>{96});
  CHECK(cp_lanes(CpShape::s64x128b_02_13, 5) == std::vector<int>{5, 69});
  CHECK(cp_lanes(CpShape::s64x128b_02_13, 40) == std::vector<int>{40, 104});
  CHECK(cp_lanes(CpShape::s64x128b_01_23, 5) == std::vector<int>{5, 37});
  CHECK(cp_lanes(CpShape::s64x128b_01_23, 40) == std::vector<int>{72, 104});
  CHECK(cp_lanes(CpShape::s32x128b_warpx4, 7) == std::vector<int>{7, 39, 71, 103});
  // Every multicast shape writes each of the 128 lanes exactly once; .4x256b the first lane of each quarter.
  for (auto s : all_cp_shapes()) {
    std::multiset<int> lanes;
    for (int r = 0; r < info(s).rows; ++r)
      for (int l : cp_lanes(s, r)) lanes.insert(l);
    CAPTURE(info(s).name);
    if (s == CpShape::s4x256b) {
      CHECK(lanes == std::multiset<int>{0, 32, 64, 96});
      continue;
    }
    CHECK(lanes.size() == 128);
    CHECK(std::set<int>(lanes.begin(), lanes.end()).size() == 128);
  }
  CHECK(info(CpShape::s64x128b_01_23).multicast == "warpx2::01_23");
  CHECK(qualifier(CpDecompress::b4x16_p64) == ".b8x16.b4x16_p64");
  CHECK(qualifier(CpDecompress::b6x16_p32) == ".b8x16.b6x16_p32");
}

TEST_CASE("tcgen05.ld/st: Table 49 register counts") {
  CHECK(ld_regs(LdShape::s32x32b, 128) == 128);
  CHECK(ld_regs(LdShape::s16x64b, 64) == 64);
  CHECK(ld_regs(LdShape::s16x128b, 64) == 128);
  CHECK(ld_regs(LdShape::s16x128b, 128) == 0);  // NA
  CHECK(ld_regs(LdShape::s16x256b, 32) == 128);
  CHECK(ld_regs(LdShape::s16x256b, 64) == 0);   // NA
  CHECK(ld_regs(LdShape::s16x32bx2, 8) == 8);
  CHECK(ld_regs(LdShape::s32x32b, 3) == 0);     // .num is a power of two
  CHECK(ld_regs(LdShape::s32x32b, 256) == 0);
  CHECK(parse_ld_shape("16x32bx2") == LdShape::s16x32bx2);
  CHECK_FALSE(parse_ld_shape("16x32b"));
}

TEST_CASE("tcgen05.ld/st fragments: thread and register -> lane and column") {
  // .16x256b is the mma.sync m16n8 accumulator fragment: r0,r1 row t/4 columns 2(t%4)+{0,1}, r2,r3 row +8.
  for (int t = 0; t < 32; ++t) {
    CHECK(ld_cell(LdShape::s16x256b, t, 0).lane == t / 4);
    CHECK(ld_cell(LdShape::s16x256b, t, 1).column == 2 * (t % 4) + 1);
    CHECK(ld_cell(LdShape::s16x256b, t, 2).lane == t / 4 + 8);
    CHECK(ld_cell(LdShape::s16x256b, t, 7).column == 2 * (t % 4) + 1 + 8);  // the second .x repeat
    CHECK(ld_cell(LdShape::s16x128b, t, 1).lane == t / 4 + 8);
    CHECK(ld_cell(LdShape::s16x128b, t, 2).column == t % 4 + 4);
    CHECK(ld_cell(LdShape::s16x64b, t, 0).lane == t / 4 + 8 * (t % 2));
    CHECK(ld_cell(LdShape::s16x64b, t, 3).column == (t / 2) % 2 + 6);
    CHECK(ld_cell(LdShape::s16x32bx2, t, 2).second_half == (t >= 16));
    CHECK(ld_cell(LdShape::s32x32b, t, 9).lane == t);
  }
  // Each .x1 instruction moves every (lane, column) of its shape exactly once per warp, and the maps
  // separate into a thread part and a register part (what the emitter's stores rely on).
  for (auto s : all_ld_shapes()) {
    const auto& i = info(s);
    const int regs = ld_regs(s, 2);
    std::set<std::tuple<int, int, bool>> cells;
    for (int t = 0; t < 32; ++t)
      for (int j = 0; j < regs; ++j) {
        const LdCell c = ld_cell(s, t, j), ct = ld_cell(s, t, 0), cj = ld_cell(s, 0, j);
        CHECK(cells.insert({c.lane, c.column, c.second_half}).second);
        CHECK(c.lane == ct.lane + cj.lane);
        CHECK(c.column == ct.column + cj.column);
        CHECK(c.second_half == ct.second_half);
        CHECK(c.lane < i.lanes);
      }
    CAPTURE(i.name);
    CHECK(static_cast<int>(cells.size()) == 32 * regs);
    CHECK(static_cast<int>(cells.size()) == i.lanes * 2 * i.columns_per_num * (s == LdShape::s16x32bx2 ? 2 : 1));
  }
  CHECK(first_lane_of_warp(6) == 64);
}

TEST_CASE("block scaling: Table 57 combinations, scale-factor IDs, spellings per target") {
  CHECK(scale_factors_per_instr(Kind::mxf8f6f4, DType::ue8m0, 32) == 1);
  CHECK_FALSE(scale_factors_per_instr(Kind::mxf8f6f4, DType::ue8m0, 16));
  CHECK_FALSE(scale_factors_per_instr(Kind::mxf8f6f4, DType::ue4m3, 32));
  CHECK(scale_factors_per_instr(Kind::mxf4, DType::ue8m0, 32) == 2);
  CHECK_FALSE(scale_factors_per_instr(Kind::mxf4, DType::ue8m0, 16));
  CHECK(scale_factors_per_instr(Kind::mxf4nvf4, DType::ue8m0, 32) == 2);
  CHECK(scale_factors_per_instr(Kind::mxf4nvf4, DType::ue8m0, 16) == 4);
  CHECK(scale_factors_per_instr(Kind::mxf4nvf4, DType::ue4m3, 16) == 4);
  CHECK_FALSE(scale_factors_per_instr(Kind::mxf4nvf4, DType::ue4m3, 32));
  CHECK(legal_sf_ids(1) == std::vector<unsigned>{0, 1, 2, 3});
  CHECK(legal_sf_ids(2) == std::vector<unsigned>{0, 2});
  CHECK(legal_sf_ids(4) == std::vector<unsigned>{0});
  CHECK(scale_type_code(DType::ue8m0) == 1);
  CHECK(scale_type_code(DType::ue4m3) == 0);
  CHECK(scale_vec_qualifier(1, 32, target_info(Arch::sm_100a)) == ".scale_vec::1X");
  CHECK(scale_vec_qualifier(4, 16, target_info(Arch::sm_100a)) == ".scale_vec::4X");
  CHECK(scale_vec_qualifier(2, 32, target_info(Arch::sm_100f)) == ".block32");
  CHECK(scale_vec_qualifier(4, 16, target_info(Arch::sm_103a)) == ".block16");
  CHECK(mma_min_ptx(Kind::mxf8f6f4, ".scale_vec::1X") == 86);
  CHECK(mma_min_ptx(Kind::mxf4nvf4, ".scale_vec::2X") == 87);
  CHECK(mma_min_ptx(Kind::mxf4, ".block32") == 88);
  CHECK(scaled_kind(DType::e2m1, DType::e2m1, DType::ue8m0, 32, true) == Kind::mxf4);
  CHECK(scaled_kind(DType::e2m1, DType::e2m1, DType::ue4m3, 16, true) == Kind::mxf4nvf4);
  CHECK(scaled_kind(DType::e2m1, DType::e4m3, DType::ue8m0, 32, false) == Kind::mxf8f6f4);
  CHECK_FALSE(scaled_kind(DType::bf16, DType::bf16, DType::ue8m0, 32, false));
  CHECK(tmem_bits(Kind::mxf8f6f4, DType::e2m1) == 8);
  CHECK(tmem_bits(Kind::mxf4, DType::e2m1) == 4);
  CHECK(tmem_bits(Kind::f16, DType::bf16) == 16);
}

TEST_CASE("sparsity and target gaps") {
  CHECK(sparse_metadata_columns(Kind::f16) == 1);
  CHECK(sparse_metadata_columns(Kind::tf32) == 1);
  CHECK(sparse_metadata_columns(Kind::i8) == 2);
  CHECK(sparse_metadata_columns(Kind::mxf4) == 2);
  CHECK(sparse_selector_used(Kind::f16));
  CHECK_FALSE(sparse_selector_used(Kind::f8f6f4));
  // §9.7.16.10.8's table; a 16-byte atom row holds 32 chunks of 4 bits.
  CHECK(sparse_granularity(Kind::tf32) == "1:2");
  CHECK(sparse_granularity(Kind::f16) == "2:4");
  CHECK(sparse_granularity(Kind::i8) == "2:4");
  CHECK(sparse_granularity(Kind::mxf4nvf4) == "4:8");
  CHECK(sparse_atom_k(Kind::tf32) == 64);
  CHECK(sparse_atom_k(Kind::f16) == 128);
  CHECK(sparse_atom_k(Kind::f8f6f4) == 128);
  CHECK(sparse_atom_k(Kind::mxf4) == 256);
  CHECK(mma_target_gap(Kind::i8, false, target_info(Arch::sm_100f)));
  CHECK(mma_target_gap(Kind::i8, true, target_info(Arch::sm_103a)));
  CHECK_FALSE(mma_target_gap(Kind::i8, false, target_info(Arch::sm_110a)));
  CHECK(mma_target_gap(Kind::mxf4nvf4, true, target_info(Arch::sm_100f)));
  CHECK_FALSE(mma_target_gap(Kind::mxf4nvf4, false, target_info(Arch::sm_100f)));
  CHECK_FALSE(mma_target_gap(Kind::mxf4, true, target_info(Arch::sm_103a)));
  CHECK(name(DType::ue8m0) == "ue8m0");
  CHECK(parse_dtype("ue4m3") == DType::ue4m3);
  CHECK(value_bits(DType::b8) == 8);
}
}
