// Encoders against bit images worked out by hand from the PTX ISA 9.1 tables, and
// decode(encode(x)) == x over the whole field space.
#include <doctest/doctest.h>

#include <random>

#include "ptxgen/isa.hpp"

using namespace ptxgen::isa;

namespace {
InstrDesc dense(Kind k, DType a, DType b, DType acc, unsigned m, unsigned n) {
  InstrDesc d;
  d.kind = k;
  d.atype = *idesc_ab_code(k, a);
  d.btype = *idesc_ab_code(k, b);
  d.dtype = idesc_dtype_code(acc);
  d.m = m;
  d.n = n;
  return d;
}
}  // namespace

TEST_SUITE("isa") {
TEST_CASE("instruction descriptor, Table 42: hand-computed bit images") {
  // bf16 x bf16 -> f32, M=128 N=256: dtype F32 (1<<4) | atype BF16 (1<<7) | btype BF16 (1<<10)
  // | N>>3=32 at bit 17 | M>>4=8 at bit 24.
  CHECK(*encode(dense(Kind::f16, DType::bf16, DType::bf16, DType::f32, 128, 256)) ==
        ((1u << 4) | (1u << 7) | (1u << 10) | (32u << 17) | (8u << 24)));
  CHECK(*encode(dense(Kind::f16, DType::bf16, DType::bf16, DType::f32, 128, 256)) == 0x08400490u);
  CHECK(*encode(dense(Kind::f16, DType::bf16, DType::bf16, DType::f32, 64, 8)) == 0x04020490u);
  // f16 -> f16, M=128 N=128, both transposed: bits 15 and 16.
  InstrDesc t = dense(Kind::f16, DType::f16, DType::f16, DType::f16, 128, 128);
  t.transpose_a = t.transpose_b = true;
  CHECK(*encode(t) == 0x08218000u);
  // tf32: atype/btype TF32=2.
  CHECK(*encode(dense(Kind::tf32, DType::tf32, DType::tf32, DType::f32, 128, 128)) == 0x08200910u);
  // f8f6f4 e4m3 x e5m2 -> f32, M=128 N=256: atype 0, btype E5M2=1 at bit 10.
  CHECK(*encode(dense(Kind::f8f6f4, DType::e4m3, DType::e5m2, DType::f32, 128, 256)) == 0x08400410u);
  // f8f6f4 e2m3 (3) x e2m1 (5).
  CHECK(*encode(dense(Kind::f8f6f4, DType::e2m3, DType::e2m1, DType::f32, 128, 64)) ==
        ((1u << 4) | (3u << 7) | (5u << 10) | (8u << 17) | (8u << 24)));
  // i8 s8 x u8 -> s32, saturate, M=128 N=64: bit 3 | S32=2 at bit 4 | S8=1 at bit 7 | U8=0.
  InstrDesc i = dense(Kind::i8, DType::s8, DType::u8, DType::s32, 128, 64);
  i.saturate = true;
  CHECK(*encode(i) == 0x081000a8u);
  // Sparse, selector 2: bits 0-1 and 2.
  InstrDesc sp = dense(Kind::f16, DType::f16, DType::f16, DType::f32, 128, 128);
  sp.sparse = true;
  sp.sparse_selector = 2;
  CHECK(*encode(sp) == 0x08200016u);
  // .ws max shift 32 (3 at bits 30-31).
  InstrDesc ws = dense(Kind::f16, DType::bf16, DType::bf16, DType::f32, 128, 64);
  ws.max_shift = 3;
  CHECK(*encode(ws) == 0xc8100490u);
}

TEST_CASE("instruction descriptor, Tables 43 and 44: block-scaled formats") {
  InstrDesc d;
  d.kind = Kind::mxf8f6f4;
  d.m = 128;
  d.n = 256;
  d.scale_type = 1;  // UE8M0 at bit 23; M>>7 = 1 at bit 27
  CHECK(*encode(d) == ((32u << 17) | (1u << 23) | (1u << 27)));
  CHECK(*encode(d) == 0x08c00000u);
  d.m = 256;
  CHECK(*encode(d) == 0x10c00000u);
  d.m = 128;
  d.a_sf_id = 3;  // bits 29-30
  d.b_sf_id = 2;  // bits 4-5
  CHECK(*encode(d) == 0x68c00020u);
  InstrDesc f4;
  f4.kind = Kind::mxf4;
  f4.atype = f4.btype = 1;  // E2M1
  f4.m = 128;
  f4.n = 128;
  f4.scale_type = 1;
  CHECK(*encode(f4) == 0x08a00480u);
  f4.kind = Kind::mxf4nvf4;
  f4.n = 256;
  f4.scale_type = 1;
  f4.k96 = true;  // bit 31
  CHECK(*encode(f4) == 0x88c00480u);
}

TEST_CASE("instruction descriptor: values that do not fit are refused") {
  InstrDesc d = dense(Kind::f16, DType::bf16, DType::bf16, DType::f32, 128, 260);
  CHECK_FALSE(encode(d));  // N not a multiple of 8
  d.n = 512;
  CHECK_FALSE(encode(d));  // N>>3 = 64 does not fit 6 bits
  d.n = 256;
  d.m = 72;
  CHECK_FALSE(encode(d));  // M not a multiple of 16
  InstrDesc s;
  s.kind = Kind::mxf8f6f4;
  s.m = 64;
  s.n = 64;
  CHECK_FALSE(encode(s));  // M>>7 = 0: M=64 has no block-scaled encoding
  s.m = 128;
  s.saturate = true;
  CHECK_FALSE(encode(s));  // bit 3 reserved
  InstrDesc f4;
  f4.kind = Kind::mxf4;
  f4.m = 128;
  f4.n = 64;
  f4.transpose_b = true;
  CHECK_FALSE(encode(f4));  // Table 44: no transpose
  f4.transpose_b = false;
  f4.a_sf_id = 1;
  CHECK_FALSE(encode(f4));  // SF id 0 or 2
}

TEST_CASE("instruction descriptor: decode(encode(x)) == x") {
  std::mt19937 rng(12345);
  for (Kind k : {Kind::f16, Kind::tf32, Kind::f8f6f4, Kind::i8, Kind::mxf8f6f4, Kind::mxf4, Kind::mxf4nvf4}) {
    int checked = 0;
    for (int it = 0; it < 4000; ++it) {
      InstrDesc d;
      d.kind = k;
      d.sparse = rng() & 1;
      d.atype = rng() % 8;
      d.btype = rng() % 8;
      d.negate_a = rng() & 1;
      d.negate_b = rng() & 1;
      d.transpose_a = rng() & 1;
      d.transpose_b = rng() & 1;
      d.n = 8 * (1 + rng() % 32);
      if (idesc_format(k) == IdescFormat::dense) {
        d.sparse_selector = rng() % 4;
        d.saturate = rng() & 1;
        d.dtype = rng() % 3;
        d.m = 16 * (1 + rng() % 16);
        d.max_shift = rng() % 4;
      } else {
        d.m = 128 * (1 + rng() % 2);
        d.scale_type = rng() & 1;
        d.a_sf_id = rng() % 4;
        d.b_sf_id = rng() % 4;
        d.k96 = idesc_format(k) == IdescFormat::mxf4 && (rng() & 1);
      }
      auto w = encode(d);
      if (!w) continue;
      ++checked;
      InstrDesc back = decode_idesc(*w, k);
      CHECK(*encode(back) == *w);
      CHECK(back.m == d.m);
      CHECK(back.n == d.n);
      CHECK(back.atype == d.atype);
      CHECK(back.btype == d.btype);
      CHECK(back.transpose_a == d.transpose_a);
      CHECK(back.sparse == d.sparse);
      CHECK(back.a_sf_id == d.a_sf_id);
      CHECK(back.b_sf_id == d.b_sf_id);
      CHECK(back.k96 == d.k96);
    }
    CHECK(checked > 100);
  }
}

TEST_CASE("shared-memory descriptor, Table 40 (sm_100): hand-computed bit images") {
  SmemDesc d;
  d.start_address = 0x400;  // encode: 0x40 at bits 0-13
  d.lbo = 16;               // 1 at bits 16-29
  d.sbo = 1024;             // 64 at bits 32-45
  d.swizzle = Swizzle::b128;  // 2 at bits 61-63; bit 46 = 1 (fixed 0b001)
  CHECK(*encode(d) == ((uint64_t{0x40}) | (uint64_t{1} << 16) | (uint64_t{64} << 32) | (uint64_t{1} << 46) |
                       (uint64_t{2} << 61)));
  CHECK(*encode(d) == 0x4000404000010040ull);
  d.swizzle = Swizzle::b64;
  d.sbo = 512;
  CHECK(*encode(d) == 0x8000402000010040ull);
  d.swizzle = Swizzle::b32;
  d.sbo = 256;
  CHECK(*encode(d) == 0xc000401000010040ull);
  d.swizzle = Swizzle::b128_base32b;  // layout type 1 at bit 61
  CHECK((*encode(d) >> 61) == 1);
  d.swizzle = Swizzle::none;
  d.lbo = 2048;
  d.sbo = 128;
  CHECK(*encode(d) == 0x0000400800800040ull);
  d.base_offset = 5;  // bits 49-51
  d.lbo_mode = true;  // bit 52
  CHECK(*encode(d) == (0x0000400800800040ull | (uint64_t{5} << 49) | (uint64_t{1} << 52)));
}

TEST_CASE("shared-memory descriptor (sm_90): no version bit, 2-bit swizzle at 62-63") {
  SmemDesc d;
  d.format = DescFormat::sm90;
  d.start_address = 0x400;
  d.lbo = 16;
  d.sbo = 1024;
  d.swizzle = Swizzle::b128;
  CHECK(*encode(d) == 0x4000004000010040ull);
  d.swizzle = Swizzle::b64;
  CHECK((*encode(d) >> 62) == 2);
  d.swizzle = Swizzle::b32;
  CHECK((*encode(d) >> 62) == 3);
  d.swizzle = Swizzle::b128_base32b;
  CHECK_FALSE(encode(d));  // no such mode on sm_90
}

TEST_CASE("shared-memory descriptor: refusals and decode") {
  SmemDesc d;
  d.start_address = 8;  // not 16-byte aligned
  CHECK_FALSE(encode(d));
  d.start_address = 1u << 18;  // beyond the 18-bit window
  CHECK_FALSE(encode(d));
  d.start_address = 0;
  d.base_offset = 8;
  CHECK_FALSE(encode(d));
  auto bad = decode_smem_desc(0x0000000000010040ull, DescFormat::sm100);  // bit 46 missing
  CHECK(bad.problems.size() == 1);
  auto bad2 = decode_smem_desc(0x6000404000010040ull, DescFormat::sm100);  // layout 3 invalid
  CHECK_FALSE(bad2.problems.empty());
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    SmemDesc x;
    x.format = (rng() & 1) ? DescFormat::sm100 : DescFormat::sm90;
    x.start_address = (rng() % (1u << 14)) << 4;
    x.lbo = (rng() % (1u << 14)) << 4;
    x.sbo = (rng() % (1u << 14)) << 4;
    x.base_offset = rng() % 8;
    const Swizzle all[] = {Swizzle::none, Swizzle::b32, Swizzle::b64, Swizzle::b128, Swizzle::b128_base32b};
    x.swizzle = all[rng() % (x.format == DescFormat::sm100 ? 5 : 4)];
    x.lbo_mode = x.format == DescFormat::sm100 && (rng() & 1);
    auto w = encode(x);
    REQUIRE(w);
    auto back = decode_smem_desc(*w, x.format);
    CHECK(back.problems.empty());
    CHECK(back.desc.start_address == x.start_address);
    CHECK(back.desc.lbo == x.lbo);
    CHECK(back.desc.sbo == x.sbo);
    CHECK(back.desc.base_offset == x.base_offset);
    CHECK(back.desc.lbo_mode == x.lbo_mode);
    CHECK(back.desc.swizzle == x.swizzle);
  }
}

TEST_CASE("tensor-memory address: lane in 31-16, column in 15-0") {
  CHECK(encode(TmemAddr{0, 0}) == 0u);
  CHECK(encode(TmemAddr{32, 5}) == 0x00200005u);
  CHECK(encode(TmemAddr{96, 511}) == 0x006001ffu);
  for (uint32_t lane : {0u, 16u, 64u, 127u})
    for (uint32_t col : {0u, 7u, 256u, 511u}) {
      const TmemAddr a = decode_tmem(encode(TmemAddr{lane, col}));
      CHECK(a.lane == lane);
      CHECK(a.column == col);
    }
}

TEST_CASE("canonical layouts: the PTX ISA worked examples (9.7.16.3.3)") {
  // K-major, no swizzle, tf32, 16 rows (m=2) x 16 K (2k=4 columns): LBO 64*4 B, SBO 32*4 B.
  TileLayout a{Major::k, Swizzle::none, 32, 16, 16};
  REQUIRE_FALSE(make_tile_layout(a));
  CHECK(a.lbo == 256);
  CHECK(a.sbo == 128);
  CHECK(matrix_descriptor_encode(a.lbo) == 16);
  CHECK(matrix_descriptor_encode(a.sbo) == 8);
  // K-major, 32B swizzle, tf32: SBO 64*4 B (encoded 16), LBO assumed 1.
  TileLayout b{Major::k, Swizzle::b32, 32, 16, 8};
  REQUIRE_FALSE(make_tile_layout(b));
  CHECK(matrix_descriptor_encode(b.sbo) == 16);
  CHECK(matrix_descriptor_encode(b.lbo) == 1);
  // Swizzle atoms (Table 55), in elements for bf16: K-major 128B is 8 x 64, MN-major 64B is 32 x 8.
  TileLayout c{Major::k, Swizzle::b128, 16, 128, 64};
  REQUIRE_FALSE(make_tile_layout(c));
  CHECK(c.atom_mn == 8);
  CHECK(c.atom_k == 64);
  TileLayout e{Major::mn, Swizzle::b64, 16, 64, 16};
  REQUIRE_FALSE(make_tile_layout(e));
  CHECK(e.atom_mn == 32);
  CHECK(e.atom_k == 8);
  // tf32 MN-major 128B with 32B atomicity: atom 32 x 4 elements (Table 55: 8x4 of 128-bit).
  TileLayout f{Major::mn, Swizzle::b128_base32b, 32, 128, 32};
  REQUIRE_FALSE(make_tile_layout(f));
  CHECK(f.atom_mn == 32);
  CHECK(f.atom_k == 4);
  // Not whole atoms.
  TileLayout g{Major::k, Swizzle::b128, 16, 128, 32};
  CHECK(make_tile_layout(g));
  TileLayout h{Major::k, Swizzle::b128_base32b, 32, 128, 32};
  CHECK(make_tile_layout(h));
}

TEST_CASE("shapes: Table 39 and Table 52") {
  CHECK(legal_m(Kind::f16, 1, 64));
  CHECK(legal_m(Kind::f16, 1, 128));
  CHECK_FALSE(legal_m(Kind::f16, 1, 256));
  CHECK(legal_m(Kind::f16, 2, 256));
  CHECK_FALSE(legal_m(Kind::f16, 2, 64));
  CHECK_FALSE(legal_m(Kind::mxf8f6f4, 1, 64));
  CHECK(legal_n(Kind::f16, 1, false, 8));
  CHECK(legal_n(Kind::f16, 1, false, 200));
  CHECK_FALSE(legal_n(Kind::f16, 1, false, 260));
  CHECK_FALSE(legal_n(Kind::f16, 2, false, 8));
  CHECK(legal_n(Kind::i8, 1, false, 24));
  CHECK_FALSE(legal_n(Kind::i8, 1, false, 40));
  CHECK(legal_n(Kind::i8, 1, false, 48));
  CHECK_FALSE(legal_n(Kind::i8, 2, false, 48));
  CHECK_FALSE(legal_n(Kind::f8f6f4, 1, true, 8));  // 8-bit N-major B: steps of 16
  CHECK(legal_n(Kind::f8f6f4, 1, true, 16));
  CHECK(split_n(Kind::f16, 1, false, 264, 8) == std::vector<int>{256, 8});
  CHECK(split_n(Kind::i8, 1, false, 40, 8) == std::vector<int>{32, 8});
  CHECK(split_n(Kind::i8, 2, false, 48, 16).empty());
  CHECK(split_n(Kind::f16, 1, false, 1001, 8).empty());
  CHECK(split_n(Kind::f16, 1, false, 512, 64) == std::vector<int>{256, 256});
  // What B's layout decides of the split (the rules, the gemm lowering and the planner all ask
  // mma_n_groups): 8-bit N-major B takes N in steps of 16 (Table 52), K-major steps of 8.
  const TileLayout k8{Major::k, Swizzle::b128, 8, 64, 128}, mn8{Major::mn, Swizzle::b128, 8, 128, 128};
  CHECK(mma_n_groups(Kind::f8f6f4, 1, k8, 24) == std::vector<int>{24});
  CHECK(mma_n_groups(Kind::f8f6f4, 1, mn8, 24).empty());
  CHECK(mma_n_groups(Kind::f8f6f4, 1, mn8, 48) == std::vector<int>{48});
  CHECK(mma_n_groups(Kind::f8f6f4, 1, mn8, 264).empty());  // 256 + 8: 8 is no width of N-major 8-bit B
  CHECK(mma_n_groups(Kind::f8f6f4, 1, k8, 264) == std::vector<int>{256, 8});
  CHECK(mma_n_groups(Kind::f16, 2, TileLayout{Major::k, Swizzle::b128, 16, 256, 64}, 512) == std::vector<int>{256, 256});
  CHECK(unscaled_kind(DType::bf16, DType::bf16) == Kind::f16);
  CHECK_FALSE(unscaled_kind(DType::bf16, DType::f16));
  CHECK(unscaled_kind(DType::e4m3, DType::e2m1) == Kind::f8f6f4);
  CHECK(unscaled_kind(DType::u8, DType::s8) == Kind::i8);
  CHECK_FALSE(unscaled_kind(DType::bf16, DType::e4m3));
  CHECK(instr_k(Kind::f16) == 16);
  CHECK(instr_k(Kind::tf32) == 8);
  CHECK(instr_k(Kind::f8f6f4) == 32);
  CHECK(smem_bits(Kind::f8f6f4, DType::e2m1) == 8);
  CHECK(smem_bits(Kind::mxf4, DType::e2m1) == 4);
}
}
