// Legal tcgen05.mma shapes and type combinations: PTX ISA 9.1 §9.7.16.2.1 Table 39 (shapes per
// kind, CTA group and sparsity), §9.7.16.10.1 Table 52 (N for 8-bit transposed B).
#include <functional>
#include <set>

#include "ptxgen/isa.hpp"

namespace ptxgen::isa {

std::optional<Kind> unscaled_kind(DType a, DType b) {
  auto f16ish = [](DType t) { return t == DType::f16 || t == DType::bf16; };
  auto i8ish = [](DType t) { return t == DType::s8 || t == DType::u8; };
  if (f16ish(a) && a == b) return Kind::f16;
  if (a == DType::tf32 && b == DType::tf32) return Kind::tf32;
  if (is_float8_6_4(a) && is_float8_6_4(b)) return Kind::f8f6f4;
  if (i8ish(a) && i8ish(b)) return Kind::i8;
  return std::nullopt;
}

bool accumulator_allowed(Kind k, DType a, DType /*b*/, DType acc) {
  switch (k) {
    case Kind::f16: return acc == DType::f32 || (acc == DType::f16 && a == DType::f16);
    case Kind::tf32: return acc == DType::f32;
    case Kind::f8f6f4: return acc == DType::f32 || acc == DType::f16;
    case Kind::i8: return acc == DType::s32;
    default: return acc == DType::f32;  // block-scaled kinds: .f32 only
  }
}

std::string accumulators_text(Kind k, DType a) {
  switch (k) {
    case Kind::f16: return a == DType::f16 ? "f32 or f16" : "f32";
    case Kind::f8f6f4: return "f32 or f16";
    case Kind::i8: return "s32";
    default: return "f32";
  }
}

bool legal_m(Kind k, int cta_group, int m) {
  if (is_block_scaled(k)) return cta_group == 1 ? m == 128 : (m == 128 || m == 256);
  return cta_group == 1 ? (m == 64 || m == 128) : (m == 128 || m == 256);
}

std::string legal_m_text(Kind k, int cta_group) {
  std::string out;
  for (int m : {64, 128, 256})
    if (legal_m(k, cta_group, m)) out += (out.empty() ? "" : " or ") + std::to_string(m);
  return out;
}

int smallest_legal_m(Kind k, int cta_group) {
  for (int m : {64, 128, 256})
    if (legal_m(k, cta_group, m)) return m;
  return 0;
}

int instr_m_for_tile(Kind k, int cta_group, int tile_m) {
  for (int m : {256, 128, 64})
    if (legal_m(k, cta_group, m) && tile_m % m == 0) return m;
  return 0;
}

bool legal_n(Kind k, int cta_group, bool b_mn_major_8bit, int n) {
  if (n <= 0 || n > 256) return false;
  if (b_mn_major_8bit) return cta_group == 1 ? n % 16 == 0 : n % 32 == 0;  // Table 52
  if (k == Kind::i8) {
    if (cta_group == 2) return n % 32 == 0;
    return n == 8 || n == 16 || n == 24 || n == 32 || (n >= 48 && n % 16 == 0);
  }
  return cta_group == 1 ? n % 8 == 0 : n % 16 == 0;
}

std::string legal_n_text(Kind k, int cta_group, bool b_mn_major_8bit) {
  if (b_mn_major_8bit)
    return cta_group == 1 ? "16..256 in steps of 16 (8-bit N-major B, Table 52)"
                          : "32..256 in steps of 32 (8-bit N-major B, Table 52)";
  if (k == Kind::i8)
    return cta_group == 1 ? "8, 16, 24, 32, then 48..256 in steps of 16" : "32..256 in steps of 32";
  return cta_group == 1 ? "8..256 in steps of 8" : "16..256 in steps of 16";
}

namespace {
// Splits `tile_n` into widths accepted by `legal`, each group after the first starting on a
// multiple of `start_align`: fewest groups first, larger groups first (tile_n <= 1024 keeps the
// remembered dead ends few).
std::vector<int> split_widths(int tile_n, int start_align, const std::function<bool(int)>& legal) {
  if (tile_n <= 0 || start_align <= 0) return {};
  std::vector<int> out;
  std::set<std::pair<int, int>> dead;  // (start, groups) already known to have no split
  std::function<bool(int, int, int)> go = [&](int start, int left, int groups) -> bool {
    if (left == 0) return true;
    if (groups == 0 || dead.count({start, groups})) return false;
    for (int g = std::min(256, left); g > 0; --g) {
      if (!legal(g)) continue;
      if (g < left && (start + g) % start_align != 0) continue;
      out.push_back(g);
      if (go(start + g, left - g, groups - 1)) return true;
      out.pop_back();
    }
    dead.insert({start, groups});
    return false;
  };
  const int min_groups = (tile_n + 255) / 256;
  for (int groups = min_groups; groups <= min_groups + 2; ++groups) {
    out.clear();
    if (go(0, tile_n, groups)) return out;
  }
  return {};
}
}  // namespace

std::vector<int> split_n(Kind k, int cta_group, bool b8mn, int tile_n, int start_align) {
  return split_widths(tile_n, start_align, [&](int n) { return legal_n(k, cta_group, b8mn, n); });
}

std::vector<int> mma_n_groups(Kind k, int cta_group, TileLayout b, int n) {
  const bool formed = !make_tile_layout(b);
  const bool b8mn = b.major == Major::mn && b.bits == 8;
  const int align = b.major == Major::mn && formed ? b.atom_mn : 8;
  return split_n(k, cta_group, b8mn, n, align * cta_group);
}

// ---- wgmma (§9.7.15.2 shapes, §9.7.15.3 data types) -----------------------------------------

std::optional<Kind> wgmma_kind(DType a, DType b) {
  auto fp8 = [](DType t) { return t == DType::e4m3 || t == DType::e5m2; };
  if ((a == DType::f16 || a == DType::bf16) && a == b) return Kind::f16;
  if (a == DType::tf32 && b == DType::tf32) return Kind::tf32;
  if (fp8(a) && fp8(b)) return Kind::f8f6f4;
  if ((a == DType::s8 || a == DType::u8) && a == b) return Kind::i8;
  return std::nullopt;
}

bool wgmma_accumulator_allowed(DType a, DType acc) {
  switch (a) {
    case DType::f16:
    case DType::e4m3:
    case DType::e5m2: return acc == DType::f16 || acc == DType::f32;
    case DType::bf16:
    case DType::tf32: return acc == DType::f32;
    case DType::s8:
    case DType::u8: return acc == DType::s32;
    default: return false;
  }
}

bool wgmma_legal_n(Kind k, int n) {
  if (n < 8 || n > 256 || n % 8 != 0) return false;
  if (k == Kind::i8) return n <= 32 || n % 16 == 0;
  return true;
}

std::string wgmma_legal_n_text(Kind k) {
  return k == Kind::i8 ? "8, 16, 24, 32, then 48..256 in steps of 16" : "8..256 in steps of 8";
}

std::vector<int> wgmma_split_n(Kind k, int tile_n) {
  return split_widths(tile_n, 8, [&](int n) { return wgmma_legal_n(k, n); });
}

}  // namespace ptxgen::isa
