// Element types, MMA kinds and swizzle modes: names and the small facts the ISA tables give.
#include "ptxgen/isa.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace ptxgen::isa {

namespace {
struct DTypeRow {
  DType t;
  std::string_view name;
  int bits;
};
constexpr std::array<DTypeRow, 15> kDTypes{{
    {DType::f16, "f16", 16},   {DType::bf16, "bf16", 16}, {DType::tf32, "tf32", 32},
    {DType::f32, "f32", 32},   {DType::e4m3, "e4m3", 8},  {DType::e5m2, "e5m2", 8},
    {DType::e2m3, "e2m3", 6},  {DType::e3m2, "e3m2", 6},  {DType::e2m1, "e2m1", 4},
    {DType::s8, "s8", 8},      {DType::u8, "u8", 8},      {DType::s32, "s32", 32},
    {DType::ue8m0, "ue8m0", 8}, {DType::ue4m3, "ue4m3", 8}, {DType::b8, "b8", 8},
}};
}  // namespace

std::string_view name(DType t) {
  for (const auto& r : kDTypes)
    if (r.t == t) return r.name;
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (const auto& r : kDTypes)
    if (r.name == s) return r.t;
  return std::nullopt;
}

int value_bits(DType t) {
  for (const auto& r : kDTypes)
    if (r.t == t) return r.bits;
  return 0;
}

bool is_float8_6_4(DType t) {
  return t == DType::e4m3 || t == DType::e5m2 || t == DType::e2m3 || t == DType::e3m2 ||
         t == DType::e2m1;
}

bool is_integer(DType t) { return t == DType::s8 || t == DType::u8 || t == DType::s32; }

std::string_view name(Kind k) {
  switch (k) {
    case Kind::f16: return "f16";
    case Kind::tf32: return "tf32";
    case Kind::f8f6f4: return "f8f6f4";
    case Kind::i8: return "i8";
    case Kind::mxf8f6f4: return "mxf8f6f4";
    case Kind::mxf4: return "mxf4";
    case Kind::mxf4nvf4: return "mxf4nvf4";
  }
  return "?";
}

bool is_block_scaled(Kind k) {
  return k == Kind::mxf8f6f4 || k == Kind::mxf4 || k == Kind::mxf4nvf4;
}

// Table 39: K of a dense instruction. Every dense kind reads 256 bits of K per row from shared
// memory, counting 4/6-bit f8f6f4 elements in their 8-bit containers.
int instr_k(Kind k) {
  switch (k) {
    case Kind::f16: return 16;
    case Kind::tf32: return 8;
    case Kind::f8f6f4:
    case Kind::i8:
    case Kind::mxf8f6f4: return 32;
    case Kind::mxf4:
    case Kind::mxf4nvf4: return 64;
  }
  return 0;
}

int smem_bits(Kind k, DType t) {
  if (k == Kind::mxf4 || k == Kind::mxf4nvf4) return 4;  // §9.7.16.10.4.6: two e2m1 per byte
  if (is_float8_6_4(t)) return 8;                        // §9.7.16.10.4.4: 8-bit containers
  return value_bits(t);
}

std::string_view name(Swizzle s) {
  switch (s) {
    case Swizzle::none: return "none";
    case Swizzle::b32: return "32B";
    case Swizzle::b64: return "64B";
    case Swizzle::b128: return "128B";
    case Swizzle::b128_base32b: return "128B_base32B";
  }
  return "?";
}

int bytes(Swizzle s) {
  switch (s) {
    case Swizzle::none: return 16;
    case Swizzle::b32: return 32;
    case Swizzle::b64: return 64;
    case Swizzle::b128:
    case Swizzle::b128_base32b: return 128;
  }
  return 0;
}

// Table 40, bits 61-63.
int code_sm100(Swizzle s) {
  switch (s) {
    case Swizzle::none: return 0;
    case Swizzle::b128_base32b: return 1;
    case Swizzle::b128: return 2;
    case Swizzle::b64: return 4;
    case Swizzle::b32: return 6;
  }
  return -1;
}

std::optional<Swizzle> swizzle_from_code_sm100(int code) {
  switch (code) {
    case 0: return Swizzle::none;
    case 1: return Swizzle::b128_base32b;
    case 2: return Swizzle::b128;
    case 4: return Swizzle::b64;
    case 6: return Swizzle::b32;
    default: return std::nullopt;  // 3, 5, 7 are invalid
  }
}

// §9.7.15.5.1.2.2 (wgmma matrix descriptor), bits 62-63.
int code_sm90(Swizzle s) {
  switch (s) {
    case Swizzle::none: return 0;
    case Swizzle::b128: return 1;
    case Swizzle::b64: return 2;
    case Swizzle::b32: return 3;
    case Swizzle::b128_base32b: return -1;
  }
  return -1;
}

std::optional<Swizzle> swizzle_from_code_sm90(int code) {
  switch (code) {
    case 0: return Swizzle::none;
    case 1: return Swizzle::b128;
    case 2: return Swizzle::b64;
    case 3: return Swizzle::b32;
    default: return std::nullopt;
  }
}

// Table 41.
int pattern_bytes(Swizzle s) {
  switch (s) {
    case Swizzle::none: return 16;
    case Swizzle::b32: return 256;
    case Swizzle::b64: return 512;
    case Swizzle::b128:
    case Swizzle::b128_base32b: return 1024;
  }
  return 0;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

int storage_bits(isa::DType t, SubByte f) {
  const int b = isa::value_bits(t);
  if (b >= 8) return b;
  return (t == isa::DType::e2m1 && f == SubByte::packed) ? 4 : 8;
}

std::string_view name(TmemLayout l) {
  switch (l) {
    case TmemLayout::rows: return "rows";
    case TmemLayout::warpx2_02_13: return "warpx2::02_13";
    case TmemLayout::warpx2_01_23: return "warpx2::01_23";
    case TmemLayout::warpx4: return "warpx4";
    case TmemLayout::layout_f_0: return "layout_f::0";
    case TmemLayout::layout_f_16: return "layout_f::16";
    case TmemLayout::layout_b: return "layout_b";
  }
  return "?";
}

uint16_t half_bits_rn(DType t, double v) {
  const int man = t == DType::bf16 ? 7 : 10, bias = t == DType::bf16 ? 127 : 15;
  const uint32_t inf = t == DType::bf16 ? 0x7F80u : 0x7C00u, sign = std::signbit(v) ? 0x8000u : 0u;
  if (std::isnan(v)) return static_cast<uint16_t>(inf | (1u << (man - 1)));
  const double a = std::fabs(v);
  if (a == 0) return static_cast<uint16_t>(sign);
  if (std::isinf(a)) return static_cast<uint16_t>(sign | inf);
  int e = 0;
  std::frexp(a, &e);                       // a = m 2^e, m in [0.5, 1): its leading bit is 2^(e - 1)
  const int E = std::max(e - 1, 1 - bias);  // the exponent it is written with (subnormals: 1 - bias)
  // The significand in units of the last place, rounded to nearest even: exact in double (at most
  // man + 1 bits before the point), and a carry to 2^(man + 1) moves into the exponent field.
  const auto n = static_cast<uint32_t>(std::nearbyint(std::ldexp(a, man - E)));
  const uint32_t bits = (static_cast<uint32_t>(E + bias - 1) << man) + n;
  return static_cast<uint16_t>(sign | std::min(bits, inf));
}

double half_value(DType t, uint16_t bits) {
  const int man = t == DType::bf16 ? 7 : 10, bias = t == DType::bf16 ? 127 : 15, ebits = t == DType::bf16 ? 8 : 5;
  const int ef = (bits >> man) & ((1 << ebits) - 1);
  const uint32_t m = bits & ((1u << man) - 1);
  const double sign = bits & 0x8000u ? -1.0 : 1.0;
  if (ef == (1 << ebits) - 1) return m ? NAN : sign * INFINITY;
  return sign * (ef ? std::ldexp(static_cast<double>(m | (1u << man)), ef - bias - man) : std::ldexp(static_cast<double>(m), 1 - bias - man));
}

}  // namespace ptxgen::isa
