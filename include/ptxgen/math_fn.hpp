// ptxgen/math_fn.hpp — the elementwise functions of register sets (docs/spec.md, "Arithmetic"): the
// vocabulary the spec writes and the IR keeps, with what the PTX ISA says of each f32 instruction
// (§9.7.3): its operands, whether it has an exact (.rn) form, an approximate (.approx) form or
// both, and the documented maximum error of the approximate one.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace ptxgen {

enum class MathFn : uint8_t { add, sub, mul, fma, min, max, neg, abs, exp2, log2, tanh, rsqrt, rcp, sqrt };

struct MathFnInfo {
  MathFn fn;
  std::string_view name;   // as the spec writes it ("exp2")
  int operands;            // a; a, b; a, b, c
  bool exact;              // a form without .approx (IEEE round to nearest, or exact: min, neg, ...)
  bool approx;             // a .approx form
  std::string_view ptx;    // the instruction's base mnemonic ("ex2")
  std::string_view isa;    // "§9.7.3.21"
  // The documented error of the approximate form (the ISA's words), "" for exact functions.
  std::string_view bound;
};

inline const std::array<MathFnInfo, 14>& math_fns() {
  static const std::array<MathFnInfo, 14> k = {{
      {MathFn::add, "add", 2, true, false, "add", "§9.7.3.3", ""},
      {MathFn::sub, "sub", 2, true, false, "sub", "§9.7.3.4", ""},
      {MathFn::mul, "mul", 2, true, false, "mul", "§9.7.3.5", ""},
      {MathFn::fma, "fma", 3, true, false, "fma", "§9.7.3.6", ""},
      {MathFn::min, "min", 2, true, false, "min", "§9.7.3.11", ""},
      {MathFn::max, "max", 2, true, false, "max", "§9.7.3.12", ""},
      {MathFn::neg, "neg", 1, true, false, "neg", "§9.7.3.10", ""},
      {MathFn::abs, "abs", 1, true, false, "abs", "§9.7.3.9", ""},
      {MathFn::exp2, "exp2", 1, false, true, "ex2", "§9.7.3.21", "2 ulp from the correctly rounded result"},
      {MathFn::log2, "log2", 1, false, true, "lg2", "§9.7.3.20",
       "absolute error 2^-22 for inputs in (0.5, 2), relative error 2^-22 elsewhere"},
      {MathFn::tanh, "tanh", 1, false, true, "tanh", "§9.7.3.22", "relative error 2^-11"},
      {MathFn::rsqrt, "rsqrt", 1, false, true, "rsqrt", "§9.7.3.16", "relative error 2^-22.9"},
      {MathFn::rcp, "rcp", 1, true, true, "rcp", "§9.7.3.13", "1 ulp"},
      {MathFn::sqrt, "sqrt", 1, true, true, "sqrt", "§9.7.3.15", "relative error 2^-23"},
  }};
  return k;
}
inline const MathFnInfo& info(MathFn f) { return math_fns()[static_cast<size_t>(f)]; }

}  // namespace ptxgen
