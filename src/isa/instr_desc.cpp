// The tcgen05 instruction descriptor: PTX ISA 9.1 §9.7.16.4.2, Tables 42 (dense kinds),
// 43 (.kind::mxf8f6f4) and 44 (.kind::mxf4, .kind::mxf4nvf4).
#include "ptxgen/isa.hpp"

#include <cctype>

namespace ptxgen::isa {

IdescFormat idesc_format(Kind k) {
  switch (k) {
    case Kind::mxf8f6f4: return IdescFormat::mxf8f6f4;
    case Kind::mxf4:
    case Kind::mxf4nvf4: return IdescFormat::mxf4;
    default: return IdescFormat::dense;
  }
}

// Table 42, bits 4-5.
unsigned idesc_dtype_code(DType accumulator) {
  switch (accumulator) {
    case DType::f16: return 0;
    case DType::s32: return 2;
    default: return 1;  // F32
  }
}

// Tables 42-44, bits 7-9 / 10-12.
std::optional<unsigned> idesc_ab_code(Kind k, DType t) {
  switch (k) {
    case Kind::f16:
      if (t == DType::f16) return 0;
      if (t == DType::bf16) return 1;
      return std::nullopt;
    case Kind::tf32:
      if (t == DType::tf32) return 2;
      return std::nullopt;
    case Kind::f8f6f4:
    case Kind::mxf8f6f4:
      switch (t) {
        case DType::e4m3: return 0;
        case DType::e5m2: return 1;
        case DType::e2m3: return 3;
        case DType::e3m2: return 4;
        case DType::e2m1: return 5;
        default: return std::nullopt;
      }
    case Kind::i8:
      if (t == DType::u8) return 0;
      if (t == DType::s8) return 1;
      return std::nullopt;
    case Kind::mxf4:
    case Kind::mxf4nvf4:
      if (t == DType::e2m1) return 1;
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DType> idesc_ab_dtype(Kind k, unsigned code) {
  for (DType t : {DType::f16, DType::bf16, DType::tf32, DType::e4m3, DType::e5m2, DType::e2m3,
                  DType::e3m2, DType::e2m1, DType::s8, DType::u8}) {
    auto c = idesc_ab_code(k, t);
    if (c && *c == code) return t;
  }
  return std::nullopt;
}

namespace {
bool fits(unsigned v, int bits) { return v < (1u << bits); }
uint32_t put(uint32_t v, int lo) { return v << lo; }
unsigned get(uint32_t w, int lo, int hi) { return (w >> lo) & ((1u << (hi - lo + 1)) - 1u); }
}  // namespace

std::optional<uint32_t> encode(const InstrDesc& d) {
  const IdescFormat f = idesc_format(d.kind);
  if (d.n % 8 != 0 || !fits(d.n >> 3, 6)) return std::nullopt;
  if (!fits(d.atype, 3)) return std::nullopt;
  uint32_t w = 0;
  w |= put(d.sparse ? 1 : 0, 2);
  w |= put(d.atype, 7);
  w |= put(d.negate_a ? 1 : 0, 13);
  w |= put(d.negate_b ? 1 : 0, 14);
  w |= put(d.transpose_a ? 1 : 0, 15);
  w |= put(d.transpose_b ? 1 : 0, 16);
  w |= put(d.n >> 3, 17);
  if (f == IdescFormat::dense) {
    // Table 42.
    if (!fits(d.sparse_selector, 2) || !fits(d.dtype, 2) || d.dtype == 3) return std::nullopt;
    if (!fits(d.btype, 3) || d.m % 16 != 0 || !fits(d.m >> 4, 5) || !fits(d.max_shift, 2))
      return std::nullopt;
    if (d.b_sf_id || d.a_sf_id || d.scale_type || d.k96) return std::nullopt;
    w |= put(d.sparse_selector, 0);
    w |= put(d.saturate ? 1 : 0, 3);
    w |= put(d.dtype, 4);
    w |= put(d.btype, 10);
    w |= put(d.m >> 4, 24);
    w |= put(d.max_shift, 30);
    return w;
  }
  // Tables 43 and 44: bits 0-1, 3, 6, 24-26 reserved; M>>7 in 27-28.
  if (d.sparse_selector || d.saturate || d.dtype || d.max_shift) return std::nullopt;
  if (d.m % 128 != 0 || !fits(d.m >> 7, 2) || (d.m >> 7) == 0) return std::nullopt;
  if (!fits(d.b_sf_id, 2) || !fits(d.a_sf_id, 2) || !fits(d.scale_type, 1)) return std::nullopt;
  if (f == IdescFormat::mxf8f6f4) {
    if (!fits(d.btype, 3) || d.k96) return std::nullopt;  // bit 31 reserved in Table 43
  } else {
    // Table 44: btype is 2 bits (bit 12 reserved), no transpose, SF ids 0 or 2.
    if (!fits(d.btype, 2) || d.transpose_a || d.transpose_b) return std::nullopt;
    if ((d.a_sf_id & 1) || (d.b_sf_id & 1)) return std::nullopt;
  }
  w |= put(d.b_sf_id, 4);
  w |= put(d.btype, 10);
  w |= put(d.scale_type, 23);
  w |= put(d.m >> 7, 27);
  w |= put(d.a_sf_id, 29);
  w |= put(d.k96 ? 1 : 0, 31);
  return w;
}

InstrDesc decode_idesc(uint32_t w, Kind kind) {
  InstrDesc d;
  d.kind = kind;
  const IdescFormat f = idesc_format(kind);
  d.sparse = get(w, 2, 2);
  d.atype = get(w, 7, 9);
  d.negate_a = get(w, 13, 13);
  d.negate_b = get(w, 14, 14);
  d.transpose_a = get(w, 15, 15);
  d.transpose_b = get(w, 16, 16);
  d.n = get(w, 17, 22) << 3;
  if (f == IdescFormat::dense) {
    d.sparse_selector = get(w, 0, 1);
    d.saturate = get(w, 3, 3);
    d.dtype = get(w, 4, 5);
    d.btype = get(w, 10, 12);
    d.m = get(w, 24, 28) << 4;
    d.max_shift = get(w, 30, 31);
  } else {
    d.b_sf_id = get(w, 4, 5);
    d.btype = f == IdescFormat::mxf4 ? get(w, 10, 11) : get(w, 10, 12);
    d.scale_type = get(w, 23, 23);
    d.m = get(w, 27, 28) << 7;
    d.a_sf_id = get(w, 29, 30);
    d.k96 = f == IdescFormat::mxf4 && get(w, 31, 31);
  }
  return d;
}

namespace {
std::string type_name(Kind k, unsigned code) {
  auto t = idesc_ab_dtype(k, code);
  if (!t) return "invalid";
  std::string s(name(*t));
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string yes_no(bool b, const char* yes, const char* no) { return b ? yes : no; }
}  // namespace

std::vector<Field> fields(const InstrDesc& d) {
  const IdescFormat f = idesc_format(d.kind);
  std::vector<Field> v;
  if (f == IdescFormat::dense) {
    v.push_back({"sparsity_selector", 0, 1, d.sparse_selector, std::to_string(d.sparse_selector)});
    v.push_back({"sparsity", 2, 2, d.sparse, yes_no(d.sparse, "sparse", "dense")});
    v.push_back({"saturate", 3, 3, d.saturate, yes_no(d.saturate, "saturate", "no saturate")});
    const char* dn[] = {"F16", "F32", "S32", "invalid"};
    v.push_back({"dtype", 4, 5, d.dtype, dn[d.dtype & 3]});
  } else {
    v.push_back({"sparsity", 2, 2, d.sparse, yes_no(d.sparse, "sparse", "dense")});
    v.push_back({"b_scale_factor_id", 4, 5, d.b_sf_id, std::to_string(d.b_sf_id)});
  }
  v.push_back({"atype", 7, 9, d.atype, type_name(d.kind, d.atype)});
  v.push_back({"btype", 10, f == IdescFormat::mxf4 ? 11 : 12, d.btype, type_name(d.kind, d.btype)});
  v.push_back({"negate_a", 13, 13, d.negate_a, yes_no(d.negate_a, "negate", "no negate")});
  v.push_back({"negate_b", 14, 14, d.negate_b, yes_no(d.negate_b, "negate", "no negate")});
  v.push_back({"transpose_a", 15, 15, d.transpose_a,
               yes_no(d.transpose_a, "transpose (M-major)", "no transpose (K-major)")});
  v.push_back({"transpose_b", 16, 16, d.transpose_b,
               yes_no(d.transpose_b, "transpose (N-major)", "no transpose (K-major)")});
  v.push_back({"n_dim", 17, 22, d.n >> 3, "N=" + std::to_string(d.n)});
  if (f == IdescFormat::dense) {
    v.push_back({"m_dim", 24, 28, d.m >> 4, "M=" + std::to_string(d.m)});
    const char* sn[] = {"no shift", "8", "16", "32"};
    v.push_back({"max_shift", 30, 31, d.max_shift, sn[d.max_shift & 3]});
  } else {
    v.push_back({"scale_type", 23, 23, d.scale_type, d.scale_type ? "UE8M0" : "UE4M3"});
    v.push_back({"m_dim", 27, 28, d.m >> 7, "M=" + std::to_string(d.m)});
    v.push_back({"a_scale_factor_id", 29, 30, d.a_sf_id, std::to_string(d.a_sf_id)});
    if (f == IdescFormat::mxf4)
      v.push_back({"k_dim", 31, 31, d.k96, d.k96 ? "dense K=96" : "dense K=64 / sparse K=128"});
  }
  return v;
}

}  // namespace ptxgen::isa
