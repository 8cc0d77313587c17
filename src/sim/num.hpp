// Number formats of the simulator, written from PTX ISA 9.1 §5.2 (fundamental types, §5.2.3
// alternate floating-point formats) and IEEE 754: decoding every element type the tcgen05 kinds
// read into a double, and round-to-nearest-even encoding (cvt.rn) into the narrow float formats.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ksim::num {

inline float f32_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// A binary floating-point format: `ebits` exponent bits, `mbits` mantissa bits, a sign bit unless
// `unsigned_`; `ieee`: the all-ones exponent is infinity/NaN (f16, bf16, e5m2); `fn`: e4m3's
// "finite, NaN only at all ones" convention; otherwise every encoding is a finite number (e2m3,
// e3m2, e2m1: "does not support infinity and NaN").
struct Format {
  int ebits, mbits;
  bool ieee = false, fn = false, unsigned_ = false;
  int bias() const { return (1 << (ebits - 1)) - 1; }
  int width() const { return ebits + mbits + (unsigned_ ? 0 : 1); }
};

constexpr Format kF16{5, 10, true};
constexpr Format kBF16{8, 7, true};
constexpr Format kE4M3{4, 3, false, true};
constexpr Format kE5M2{5, 2, true};
constexpr Format kE2M3{2, 3};
constexpr Format kE3M2{3, 2};
constexpr Format kE2M1{2, 1};
constexpr Format kUE4M3{4, 3, false, true, true};

inline double decode(const Format& f, uint32_t bits) {
  const uint32_t mmask = (1u << f.mbits) - 1, emask = (1u << f.ebits) - 1;
  const uint32_t m = bits & mmask, e = (bits >> f.mbits) & emask;
  const bool neg = !f.unsigned_ && ((bits >> (f.ebits + f.mbits)) & 1);
  double v;
  if (f.ieee && e == emask) {
    v = m ? std::nan("") : INFINITY;
  } else if (f.fn && e == emask && m == mmask) {
    v = std::nan("");
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias() - f.mbits);
  } else {
    v = std::ldexp(static_cast<double>(m | (1u << f.mbits)), static_cast<int>(e) - f.bias() - f.mbits);
  }
  return neg ? -v : v;
}

// Round to nearest, ties to even; beyond the largest finite value: infinity (IEEE formats) or
// NaN (e4m3, which has no infinity; cvt without .satfinite); NaN in, the canonical NaN out.
inline uint32_t encode_rn(const Format& f, double x) {
  const uint32_t sign = (!f.unsigned_ && std::signbit(x)) ? 1u << (f.ebits + f.mbits) : 0;
  const uint32_t emask = (1u << f.ebits) - 1, mmask = (1u << f.mbits) - 1;
  const uint32_t nan = (f.ieee ? (emask << f.mbits) | (1u << (f.mbits - 1)) : (emask << f.mbits) | mmask);
  if (std::isnan(x)) return nan | (f.ieee ? 0 : sign);
  const uint32_t inf = f.ieee ? (emask << f.mbits) : nan;
  const double a = std::fabs(x);
  if (std::isinf(a)) return sign | inf;
  if (a == 0) return sign;
  int e2;
  std::frexp(a, &e2);
  int E = e2 - 1;  // a = 1.x * 2^E
  const int emin = 1 - f.bias();
  if (E < emin) E = emin;
  double n = std::nearbyint(std::ldexp(a, f.mbits - E));  // significand in units of the last place
  if (n >= std::ldexp(1.0, f.mbits + 1)) {
    n /= 2;
    ++E;
  }
  const int emax = f.ieee ? static_cast<int>(emask) - 1 - f.bias() : static_cast<int>(emask) - f.bias();
  if (E > emax) return sign | inf;
  const uint32_t ni = static_cast<uint32_t>(n);
  if (f.fn && E == emax && (ni & mmask) == mmask) return sign | inf;  // would be e4m3's NaN code
  if (ni < (1u << f.mbits)) return sign | ni;                         // subnormal
  return sign | (static_cast<uint32_t>(E + f.bias()) << f.mbits) | (ni & mmask);
}

inline double f16(uint32_t b) { return decode(kF16, b & 0xFFFF); }
inline double bf16(uint32_t b) { return decode(kBF16, b & 0xFFFF); }
// tf32 (§5.2.3: "implementation defined" internal layout): the f32 bit pattern read with its 13
// low mantissa bits ignored.
inline double tf32(uint32_t b) { return static_cast<double>(f32_of(b & 0xFFFFE000u)); }
// ue8m0: 2^(e - 127), 0xFF NaN.
inline double ue8m0(uint32_t b) { return (b & 0xFF) == 0xFF ? std::nan("") : std::ldexp(1.0, static_cast<int>(b & 0xFF) - 127); }

}  // namespace ksim::num
