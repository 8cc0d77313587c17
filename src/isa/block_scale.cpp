// Block-scaled and sparse tcgen05.mma facts: PTX ISA 9.1 §9.7.16.10.7 (Tables 56 and 57, scale
// factor IDs), §9.7.16.10.8 (sparse granularity and the sparsity selector), §9.7.16.10.4 (packing
// of 4- and 6-bit elements), the target notes of §9.7.16.10.9.1-2 and §13 Table 60.
#include "ptxgen/isa.hpp"

namespace ptxgen::isa {

// Table 57 with Table 56: the .scale_vec::NX each (kind, scale type, block size) means.
std::optional<int> scale_factors_per_instr(Kind k, DType scale, int vec) {
  switch (k) {
    case Kind::mxf8f6f4:
      if (scale == DType::ue8m0 && vec == 32) return 1;  // .scale_vec::1X / .block32
      return std::nullopt;
    case Kind::mxf4:
      if (scale == DType::ue8m0 && vec == 32) return 2;  // .scale_vec::2X / .block32
      return std::nullopt;
    case Kind::mxf4nvf4:
      if (scale == DType::ue8m0 && vec == 32) return 2;  // .scale_vec::2X / .block32
      if ((scale == DType::ue8m0 || scale == DType::ue4m3) && vec == 16) return 4;  // .scale_vec::4X / .block16
      return std::nullopt;
    default: return std::nullopt;
  }
}

std::string scale_combinations_text(Kind k, bool sparse) {
  const std::string v32 = sparse ? "64" : "32", v16 = sparse ? "32" : "16";
  switch (k) {
    case Kind::mxf8f6f4: return "ue8m0 scales with vec " + v32 + " (.scale_vec::1X / .block32)";
    case Kind::mxf4: return "ue8m0 scales with vec " + v32 + " (.scale_vec::2X / .block32)";
    case Kind::mxf4nvf4:
      return "ue8m0 scales with vec " + v32 + " (.scale_vec::2X / .block32), ue8m0 or ue4m3 scales with vec " + v16 +
             " (.scale_vec::4X / .block16)";
    default: return "no block scaling";
  }
}

int stored_scale_vec(int vec, bool sparse) {
  if (!sparse) return vec;
  return vec % 2 == 0 ? vec / 2 : 0;
}

std::string scale_vec_qualifier(int factors, int vec, const TargetInfo& t) {
  // §9.7.16.10.9.1 target notes: .scale_vec::NX requires sm_100a; .block16/.block32 (PTX ISA 8.8)
  // are the family-portable aliases (.block32 = 1X or 2X by kind, .block16 = 4X).
  if (t.scale_vec_nx) return ".scale_vec::" + std::to_string(factors) + "X";
  return ".block" + std::to_string(vec);
}

std::vector<unsigned> legal_sf_ids(int factors) {
  switch (factors) {
    case 1: return {0, 1, 2, 3};  // byte offset in the 32-bit word (§9.7.16.10.7.2.1)
    case 2: return {0, 2};        // half-word offset (§9.7.16.10.7.2.2; Table 44 "0 or 2")
    case 4: return {0};           // "must be 0" (§9.7.16.10.7.2.3)
    default: return {};
  }
}

unsigned scale_type_code(DType scale) { return scale == DType::ue8m0 ? 1u : 0u; }

std::optional<Kind> scaled_kind(DType a, DType b, DType scale, int vec, bool packed_e2m1) {
  if (packed_e2m1) {
    // §9.7.16.10.4.6: two e2m1 per byte is the format of .kind::mxf4 and .kind::mxf4nvf4 only.
    if (a != DType::e2m1 || b != DType::e2m1) return std::nullopt;
    return (vec == 16 || scale == DType::ue4m3) ? Kind::mxf4nvf4 : Kind::mxf4;
  }
  if (is_float8_6_4(a) && is_float8_6_4(b)) return Kind::mxf8f6f4;
  return std::nullopt;
}

std::optional<Kind> gemm_scaled_kind(DType a, DType b, DType scale, int vec, std::optional<Kind> requested) {
  const bool both_e2m1 = a == DType::e2m1 && b == DType::e2m1;
  if (requested) {
    if (*requested == Kind::mxf8f6f4) return is_float8_6_4(a) && is_float8_6_4(b) ? requested : std::nullopt;
    if (*requested == Kind::mxf4 || *requested == Kind::mxf4nvf4) return both_e2m1 ? requested : std::nullopt;
    return std::nullopt;
  }
  if (both_e2m1) return scaled_kind(a, b, scale, vec, true);
  if (is_float8_6_4(a) && is_float8_6_4(b)) return Kind::mxf8f6f4;
  return std::nullopt;
}

int tmem_bits(Kind k, DType t) {
  if (k == Kind::mxf4 || k == Kind::mxf4nvf4) return 4;  // §9.7.16.10.4.5: two e2m1 per byte
  if (is_float8_6_4(t)) return 8;                        // §9.7.16.10.4.3: 8-bit containers
  return value_bits(t);
}

int sparse_metadata_columns(Kind k) {
  // Sparse K = 2 x dense K (Table 39). Metadata per row: tf32 one 4-bit index per 2 elements
  // (K=16 -> 32 bits), 2:4 kinds two 2-bit indices per 4 elements (f16 K=32 -> 32 bits; 8-bit
  // K=64 -> 64 bits), mxf4 kinds two 2-bit indices per 8 elements (K=128 -> 64 bits).
  switch (k) {
    case Kind::tf32:
    case Kind::f16: return 1;
    default: return 2;
  }
}

bool sparse_selector_used(Kind k) { return k == Kind::tf32 || k == Kind::f16; }

std::string sparse_granularity(Kind k) {
  switch (k) {
    case Kind::tf32: return "1:2";
    case Kind::mxf4:
    case Kind::mxf4nvf4: return "4:8";
    default: return "2:4";
  }
}

int sparse_atom_k(Kind k) {
  // 128 bits of metadata a row, 4 per chunk: 32 chunks of 2, 4 or 8 elements.
  const std::string g = sparse_granularity(k);
  return 32 * (g == "1:2" ? 2 : g == "4:8" ? 8 : 4);
}

std::optional<std::string> mma_target_gap(Kind k, bool sparse, const TargetInfo& t) {
  if (k == Kind::i8 && !t.kind_i8)
    return ".kind::i8 is available on sm_100a and sm_110a only, not on " + std::string(t.name);
  if (sparse && (k == Kind::mxf4 || k == Kind::mxf4nvf4) && t.arch == Arch::sm_100f)
    return "tcgen05.mma.sp with .kind::" + std::string(name(k)) +
           " is available on sm_100a, sm_103a and sm_110a, not on the family target sm_100f";
  return std::nullopt;
}

int mma_min_ptx(Kind k, const std::string& q) {
  if (q.rfind(".block", 0) == 0) return 88;
  if (k == Kind::mxf4nvf4 || q == ".scale_vec::4X") return 87;
  return 86;
}

}  // namespace ptxgen::isa
