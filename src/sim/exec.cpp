// The interpreter: one thread runs until it blocks, exits or reaches a warp collective.
#include "machine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "num.hpp"

namespace ksim {

// ---- f32 arithmetic (PTX ISA 9.1 §9.7.3) ------------------------------------------------------------
// The host's float arithmetic is IEEE 754 binary32 with round to nearest even and subnormals kept,
// what the .rn instructions (no .ftz) compute; fma rounds once (std::fma). An approximate
// instruction is computed exactly in double and rounded to f32: within each one's documented
// bound (ex2 2 ulp, lg2 2^-22, tanh 2^-11, rsqrt 2^-22.9, rcp 1 ulp, sqrt 2^-23), and with the
// ISA's results at ±0, ±Inf and NaN. A NaN result is the canonical NaN (0x7fffffff).
// The ordered comparisons of set and setp on f32 (§9.7.6.1-2): eq ne lt le gt ge as 0..5, false
// where either operand is NaN (ne too); -0 equals +0.
bool f32_compare(uint8_t cmp, uint32_t ua, uint32_t ub) {
  const float a = num::f32_of(ua), b = num::f32_of(ub);
  if (std::isnan(a) || std::isnan(b)) return false;
  switch (cmp) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    default: return a >= b;
  }
}

uint32_t fmath(FFn f, uint32_t ua, uint32_t ub, uint32_t uc) {
  const float a = num::f32_of(ua), b = num::f32_of(ub), c = num::f32_of(uc);
  auto out = [](float x) { return std::isnan(x) ? 0x7FFFFFFFu : num::bits_of(x); };
  auto exact = [&](double x) { return out(static_cast<float>(x)); };
  switch (f) {
    case FFn::add: return out(a + b);
    case FFn::sub: return out(a - b);
    case FFn::mul: return out(a * b);
    case FFn::fma: return out(std::fma(a, b, c));
    case FFn::min:
    case FFn::max: {
      // §9.7.3.11-12: a NaN operand yields the other one (both NaN: NaN); -0.0 < +0.0.
      if (std::isnan(a) && std::isnan(b)) return 0x7FFFFFFFu;
      if (std::isnan(a)) return ub;
      if (std::isnan(b)) return ua;
      const bool lt = a < b || (a == b && std::signbit(a) && !std::signbit(b));
      return (lt == (f == FFn::min)) ? ua : ub;
    }
    case FFn::neg: return ua ^ 0x80000000u;  // the sign bit (§9.7.3.10)
    case FFn::abs: return ua & 0x7FFFFFFFu;  // (§9.7.3.9)
    case FFn::ex2: return exact(std::exp2(static_cast<double>(a)));
    case FFn::lg2: return exact(std::log2(static_cast<double>(a)));
    case FFn::tanh: return exact(std::tanh(static_cast<double>(a)));
    case FFn::rsqrt: return exact(1.0 / std::sqrt(static_cast<double>(a)));  // -0.0: -Inf (§9.7.3.16)
    case FFn::rcp_approx: return exact(1.0 / static_cast<double>(a));
    case FFn::rcp_rn: return out(1.0f / a);
    case FFn::sqrt_approx: return exact(std::sqrt(static_cast<double>(a)));
    case FFn::sqrt_rn: return out(std::sqrt(a));
  }
  return 0x7FFFFFFFu;
}

// ---- packed half-precision arithmetic (PTX ISA 9.1 §9.7.4) --------------------------------------------
// Each half computed on its own (bits 0-15 with 0-15, 16-31 with 16-31), as §9.7.4.1-10's
// semantics write it. add, sub, mul, fma round to nearest even once: the exact result is a double
// s plus the exact remainder e of the last addition (two-sum; the product of two 16-bit floats is
// exact in double), and rounding the double one step from s toward e decides a tie of the 16-bit
// format the way the exact value does (no 16-bit boundary lies strictly between them). min and
// max: a NaN operand gives the other, else (a < b) ? a : b (max: >). neg, abs: the sign bit.
// tanh.approx and ex2.approx: the exact function rounded to nearest, within the documented bounds
// (tanh: absolute 2^-10.987 for f16, 2^-8 for bf16, §9.7.4.9; ex2: relative 2^-9.9 for f16, 2^-7
// for bf16, §9.7.4.10: half an ulp is 2^-11 and 2^-8 relative); ex2.approx.ftz.bf16x2 flushes a
// subnormal input to zero (2^0 = 1) and a subnormal result to +0.
uint32_t hmath(FFn f, bool bf16, uint32_t ua, uint32_t ub, uint32_t uc) {
  const num::Format& fmt = bf16 ? num::kBF16 : num::kF16;
  auto half = [&](uint32_t x) -> uint32_t {
    const uint32_t ha = ua >> x & 0xFFFFu, hb = ub >> x & 0xFFFFu, hc = uc >> x & 0xFFFFu;
    const double a = num::decode(fmt, ha), b = num::decode(fmt, hb), c = num::decode(fmt, hc);
    auto rn = [&](double s, double e) {  // s + e exactly, to nearest even
      return num::encode_rn(fmt, e == 0 || std::isnan(s) || std::isinf(s) ? s : std::nextafter(s, e > 0 ? INFINITY : -INFINITY));
    };
    auto two_sum = [&](double p, double q) {
      const double s = p + q, bb = s - p;
      return rn(s, (p - (s - bb)) + (q - bb));
    };
    switch (f) {
      case FFn::add: return two_sum(a, b);
      case FFn::sub: return two_sum(a, -b);
      case FFn::mul: return rn(a * b, 0);
      case FFn::fma: return two_sum(a * b, c);
      case FFn::min:
      case FFn::max:
        if (std::isnan(a) && std::isnan(b)) return num::encode_rn(fmt, NAN);
        if (std::isnan(a)) return hb;
        if (std::isnan(b)) return ha;
        return (f == FFn::min ? a < b : a > b) ? ha : hb;
      case FFn::neg: return ha ^ 0x8000u;
      case FFn::abs: return ha & 0x7FFFu;
      case FFn::tanh: return rn(std::tanh(a), 0);
      case FFn::ex2: {
        if (!bf16) return rn(std::exp2(a), 0);
        const bool sub_in = (ha & 0x7F80u) == 0;
        const uint32_t y = rn(std::exp2(sub_in ? 0.0 : a), 0);
        return (y & 0x7F80u) == 0 ? 0u : y;
      }
      default: return num::encode_rn(fmt, NAN);  // not a packed instruction (the parser admits none)
    }
  };
  return half(0) | half(16) << 16;
}

// ---- the interpreter ------------------------------------------------------------------------------
void Machine::run_thread(Thread& t) {
  uint64_t* R = t.r;
  const Ins* code = k.code.data();
  const size_t n = k.code.size();
  for (;;) {
    if (t.pc >= n) fail(&t, "ran past the end of the kernel");
    if (++stats.instructions > opt.max_instructions)
      fail(&t, "the kernel does not end (" + std::to_string(opt.max_instructions) + " instructions)");
    ++stats.warp_instructions[t.tid / 32];
    const Ins& in = code[t.pc];
    if (in.guard >= 0 && ((reg(t, static_cast<uint32_t>(in.guard)) != 0) == in.guard_neg)) {
      ++t.pc;
      continue;
    }
    const int bits = in.ty.bits;
    const bool sgn = in.ty.cls == Cls::s;
    auto A = [&](int i) { return val(t, in.o[i]); };
    auto put = [&](uint32_t slot, uint64_t v) {
      if (t.d[slot] & (kWgWrites | kWgReads)) wg_written(t, slot);  // a wgmma in flight uses it
      R[slot] = v;
      t.d[slot] = kDefined | kUnfenced;
    };
    auto set = [&](uint64_t v) { put(in.o[0].r, v & mask(bits)); };
    switch (in.op) {
      case Op::mov: set(A(1)); break;
      case Op::fmath:
        if (in.ty.fmt & 16)  // .f16x2 / .bf16x2 (§9.7.4)
          set(hmath(in.fn, (in.ty.fmt & 3) == 2, static_cast<uint32_t>(A(1)), in.nops > 2 ? static_cast<uint32_t>(A(2)) : 0,
                    in.nops > 3 ? static_cast<uint32_t>(A(3)) : 0));
        else
          set(fmath(in.fn, static_cast<uint32_t>(A(1)), in.nops > 2 ? static_cast<uint32_t>(A(2)) : 0,
                    in.nops > 3 ? static_cast<uint32_t>(A(3)) : 0));
        break;
      case Op::mov_pack: {
        const uint32_t* s = &k.pool[in.o[1].r];
        const int w = bits / in.o[1].count;
        uint64_t v = 0;
        for (int i = in.o[1].count - 1; i >= 0; --i) v = (v << w) | (reg(t, s[i]) & mask(w));
        set(v);
        break;
      }
      case Op::mov_unpack: {
        const uint32_t* d = &k.pool[in.o[0].r];
        const int w = bits / in.o[0].count;
        const uint64_t v = A(1);
        for (int i = 0; i < in.o[0].count; ++i)
          if (d[i] != kSinkSlot) put(d[i], (v >> (w * i)) & mask(w));
        break;
      }
      case Op::add: set(A(1) + A(2)); break;
      case Op::sub: set(A(1) - A(2)); break;
      case Op::mul_lo: set(A(1) * A(2)); break;
      case Op::mul_hi:
        if (bits == 64) fail(&t, "mul.hi.64 is not simulated");
        set(sgn ? static_cast<uint64_t>((sext(A(1), bits) * sext(A(2), bits)) >> bits) : ((A(1) & mask(bits)) * (A(2) & mask(bits))) >> bits);
        break;
      case Op::mul_wide:
        put(in.o[0].r, sgn ? static_cast<uint64_t>(sext(A(1), bits) * sext(A(2), bits)) & mask(2 * bits)
                           : ((A(1) & mask(bits)) * (A(2) & mask(bits))) & mask(2 * bits));
        break;
      case Op::mad_lo: set(A(1) * A(2) + A(3)); break;
      case Op::mad_wide:
        put(in.o[0].r, ((sgn ? static_cast<uint64_t>(sext(A(1), bits) * sext(A(2), bits)) : (A(1) & mask(bits)) * (A(2) & mask(bits))) +
                        A(3)) & mask(2 * bits));
        break;
      case Op::neg: set(0 - A(1)); break;
      case Op::div:
      case Op::rem: {
        if ((A(2) & mask(bits)) == 0) fail(&t, "integer division by zero");
        if (sgn) {
          const int64_t x = sext(A(1), bits), y = sext(A(2), bits);
          set(static_cast<uint64_t>(in.op == Op::div ? x / y : x % y));
        } else {
          const uint64_t x = A(1) & mask(bits), y = A(2) & mask(bits);
          set(in.op == Op::div ? x / y : x % y);
        }
        break;
      }
      case Op::min:
      case Op::max: {
        const bool lt = sgn ? sext(A(1), bits) < sext(A(2), bits) : (A(1) & mask(bits)) < (A(2) & mask(bits));
        set((lt == (in.op == Op::min)) ? A(1) : A(2));
        break;
      }
      case Op::and_: set(A(1) & A(2)); break;
      case Op::or_: set(A(1) | A(2)); break;
      case Op::xor_: set(A(1) ^ A(2)); break;
      case Op::not_: set(in.ty.cls == Cls::pred ? !A(1) : ~A(1)); break;
      case Op::shl: {
        const uint64_t s = A(2) & 0xFFFFFFFFu;
        set(s >= static_cast<uint64_t>(bits) ? 0 : A(1) << s);
        break;
      }
      case Op::shr: {
        const uint64_t s = std::min<uint64_t>(A(2) & 0xFFFFFFFFu, static_cast<uint64_t>(bits));
        if (sgn) set(static_cast<uint64_t>(sext(A(1), bits) >> std::min<uint64_t>(s, static_cast<uint64_t>(bits - 1))));
        else set(s >= static_cast<uint64_t>(bits) ? 0 : (A(1) & mask(bits)) >> s);
        break;
      }
      case Op::bfe: {
        const uint64_t pos = A(2) & 0xFF, len = A(3) & 0xFF, x = A(1) & mask(bits);
        uint64_t v = 0;
        if (len) {
          v = pos >= static_cast<uint64_t>(bits) ? 0 : x >> pos;
          v &= mask(static_cast<int>(std::min<uint64_t>(len, 64)));
          if (sgn) v = static_cast<uint64_t>(sext(v, static_cast<int>(std::min<uint64_t>(len, static_cast<uint64_t>(bits)))));
        }
        set(v);
        break;
      }
      case Op::selp: set(A(3) ? A(1) : A(2)); break;
      case Op::fset:
        set(f32_compare(in.cmp, static_cast<uint32_t>(A(1)), static_cast<uint32_t>(A(2))) ? 0x3F800000u : 0u);
        break;
      case Op::setp: {
        const uint64_t x = A(1), y = A(2);
        bool r = false;
        if (in.ty.cls == Cls::f) {
          put(in.o[0].r, f32_compare(in.cmp, static_cast<uint32_t>(x), static_cast<uint32_t>(y)));
          break;
        }
        const bool lt = sgn ? sext(x, bits) < sext(y, bits) : (x & mask(bits)) < (y & mask(bits));
        const bool eq = (x & mask(bits)) == (y & mask(bits));
        switch (in.cmp) {
          case 0: r = eq; break;
          case 1: r = !eq; break;
          case 2: r = lt; break;
          case 3: r = lt || eq; break;
          case 4: r = !lt && !eq; break;
          default: r = !lt; break;
        }
        if (in.boolop) {
          const bool c = A(3) != 0;
          r = in.boolop == 1 ? (r && c) : in.boolop == 2 ? (r || c) : (r != c);
        }
        put(in.o[0].r, r);
        break;
      }
      case Op::cvt: {
        const Ty d = in.ty, s = in.ty2;
        const uint64_t x = A(1);
        if (d.cls != Cls::f && s.cls != Cls::f) {  // integer widths: sign- or zero-extend the source, truncate to the destination
          const uint64_t v = s.cls == Cls::s ? static_cast<uint64_t>(sext(x, s.bits)) : (x & mask(s.bits));
          put(in.o[0].r, v & mask(d.bits));
        } else if (d.cls == Cls::f && (d.fmt == 19 || d.fmt == 20) && s.cls == Cls::f && s.bits == 32) {
          // .e4m3x2/.e5m2x2 from two f32 (§9.7.9.21): a in the upper byte, b in the lower; with
          // .satfinite a value beyond the range is the largest finite one (NaN stays NaN).
          const num::Format& f = d.fmt == 19 ? num::kE4M3 : num::kE5M2;
          const double maxf = f.fn ? 448.0 : 57344.0;
          auto enc = [&](uint64_t bits) {
            double v = num::f32_of(static_cast<uint32_t>(bits));
            if (in.wg_sat && !std::isnan(v)) v = std::max(-maxf, std::min(maxf, v));
            return num::encode_rn(f, v);
          };
          put(in.o[0].r, (uint64_t{enc(x)} << 8) | enc(A(2)));
        } else if (d.cls == Cls::f && d.fmt == 17 && s.cls == Cls::f && s.fmt == 19) {
          // .f16x2 from .e4m3x2 (§9.7.9.21): each byte to its f16, exactly, the upper to the upper half.
          auto f16 = [&](uint64_t byte) { return num::encode_rn(num::kF16, num::decode(num::kE4M3, static_cast<uint32_t>(byte & 0xFF))); };
          put(in.o[0].r, (uint64_t{f16(x >> 8)} << 16) | f16(x));
        } else if (d.cls == Cls::f && d.fmt == 21 && s.cls == Cls::f && s.bits == 32) {
          // .e2m1x2 from two f32 (§9.7.9.21): a in the upper nibble, b in the lower; .satfinite (the
          // only form) clamps to +-6, and e2m1, which has no NaN, takes a NaN to +6.
          if (!in.wg_sat) fail(&t, "cvt to .e2m1x2 without .satfinite");
          auto enc = [&](uint64_t bits) {
            double v = num::f32_of(static_cast<uint32_t>(bits));
            v = std::isnan(v) ? 6.0 : std::max(-6.0, std::min(6.0, v));
            return num::encode_rn(num::kE2M1, v);
          };
          put(in.o[0].r, (uint64_t{enc(x)} << 4) | enc(A(2)));
        } else if (d.cls == Cls::f && (d.fmt & 16) && s.cls == Cls::f && s.bits == 32) {  // .f16x2/.bf16x2 from two f32: a upper, b lower
          const num::Format& f = (d.fmt & 15) == 1 ? num::kF16 : num::kBF16;
          const uint32_t hi = num::encode_rn(f, num::f32_of(static_cast<uint32_t>(x)));
          const uint32_t lo = num::encode_rn(f, num::f32_of(static_cast<uint32_t>(A(2))));
          put(in.o[0].r, (uint64_t{hi} << 16) | lo);
        } else if (d.cls == Cls::f && d.bits == 16 && s.cls == Cls::f && s.bits == 32) {
          put(in.o[0].r, num::encode_rn(d.fmt == 1 ? num::kF16 : num::kBF16, num::f32_of(static_cast<uint32_t>(x))));
        } else if (d.cls == Cls::f && d.bits == 32 && s.cls == Cls::f && s.bits == 16) {
          put(in.o[0].r, num::bits_of(static_cast<float>(s.fmt == 1 ? num::f16(static_cast<uint32_t>(x)) : num::bf16(static_cast<uint32_t>(x)))));
        } else if (d.cls == Cls::f && d.bits == 32 && (s.cls == Cls::s || s.cls == Cls::u) && s.bits <= 32) {
          const double v = s.cls == Cls::s ? static_cast<double>(sext(x, s.bits)) : static_cast<double>(x & mask(s.bits));
          put(in.o[0].r, num::bits_of(static_cast<float>(v)));  // round to nearest even
        } else {
          fail(&t, "this cvt is not simulated");
        }
        break;
      }
      case Op::cvta: put(in.o[0].r, A(1)); break;
      case Op::mapa: {
        const uint64_t rank = A(2) & 0xFFFFFFFFu;
        if (rank >= ctas.size()) fail(&t, "mapa to CTA rank " + std::to_string(rank) + " outside the cluster");
        const uint64_t a = A(1) & 0xFFFFFFFFu;
        const uint64_t off = (a >> kClusterTagShift) ? a & ((1u << kClusterTagShift) - 1) : a;
        put(in.o[0].r, ((rank + 1) << kClusterTagShift) | off);
        break;
      }
      case Op::ld:
      case Op::st: {
        const bool ld = in.op == Op::ld;
        const Opnd& mo = ld ? in.o[1] : in.o[0];
        const Opnd& vo = ld ? in.o[0] : in.o[1];
        const uint32_t eb = static_cast<uint32_t>(bits) / 8, nb = eb * in.vec;
        uint8_t* p = nullptr;
        if (in.cmp == sp_param) {
          if (!ld || mo.kind != Opnd::param) fail(&t, "bad ld.param");
          const auto& pd = k.params[mo.r];
          if (pd.tensor_map) fail(&t, "ld.param of a tensor map is not simulated");
          uint64_t v = 0;
          for (const auto& x : launch.params)
            if (x.name == pd.name) v = x.value;
          put(vo.r, v & mask(bits));
          break;
        }
        const uint64_t a = addr_of(t, mo);
        if (a % eb) fail(&t, "misaligned " + std::string(ld ? "load" : "store") + " at " + hex(a));
        if (in.cmp == sp_global) {
          p = global.find(a, nb);
          if (!p) fail(&t, "global access at " + hex(a) + " (" + std::to_string(nb) + " bytes) outside every buffer");
          if (!ld) global.wrote(a, nb);
        } else {
          const auto [cta, off] = shared(t, a, in.cmp == sp_shared_cluster, nb);
          if (!ld) {
            shared_written(t, cta, off, nb, in.line, "st.shared");
          } else if (opt.race_checks) {
            Region r{cta, false, false, {}};
            for (uint32_t u = off / 16; u <= (off + nb - 1) / 16; ++u) r.units.push_back(u);
            check_region(r, &t, "ld.shared");
          }
          p = smem_ptr(cta, off, nb, nullptr, &t);
        }
        for (uint32_t e = 0; e < in.vec; ++e) {
          const uint32_t s = vo.kind == Opnd::vec ? k.pool[vo.r + e] : vo.r;
          if (ld) {
            uint64_t v = 0;
            for (uint32_t i = 0; i < eb; ++i) v |= uint64_t{p[e * eb + i]} << (8 * i);
            if (s != kSinkSlot) put(s, v);
          } else {
            const uint64_t v = vo.kind == Opnd::vec ? reg(t, s) : val(t, vo);
            for (uint32_t i = 0; i < eb; ++i) p[e * eb + i] = static_cast<uint8_t>(v >> (8 * i));
          }
        }
        break;
      }
      case Op::red_max: {
        const uint64_t a = addr_of(t, in.o[0]);
        if (a % 4) fail(&t, "misaligned red at " + hex(a));
        uint8_t* p = global.find(a, 4);
        if (!p) fail(&t, "global red at " + hex(a) + " outside every buffer");
        uint32_t old = 0;
        for (uint32_t i = 0; i < 4; ++i) old |= uint32_t{p[i]} << (8 * i);
        const uint32_t v = std::max(old, static_cast<uint32_t>(val(t, in.o[1])));
        for (uint32_t i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
        break;
      }
      case Op::bra: t.pc = in.o[0].r; continue;
      case Op::ret:
        // The shared memory a TMA store reads must outlive it: a thread waits for its stores'
        // reads (cp.async.bulk.wait_group.read) before it exits.
        if (t.bulk_open_in_flight || std::any_of(t.bulk.begin(), t.bulk.end(), [](const BulkGroup& g) { return g.in_flight > 0; }))
          fail(&t, "the thread exits with cp.async.bulk.tensor stores still reading shared memory (no cp.async.bulk.wait_group.read "
                   "for them)");
        if (k.wgmma) wg_exit(t);
        t.st = Thread::exited;
        return;
      case Op::bar_sync: {
        // Named barrier a of b threads (all the CTA's when absent): every thread counts (§9.7.13.1).
        Cta& c = ctas[t.cta];
        const uint64_t id = val(t, in.o[0]);
        const uint64_t count = in.nops == 2 ? val(t, in.o[1]) & 0xFFFFFFFFu : launch.threads;
        if (id >= c.bars.size()) fail(&t, "bar.sync barrier " + std::to_string(id) + " outside 0..15");
        if (count == 0 || count % 32 || count > launch.threads)
          fail(&t, "bar.sync thread count " + std::to_string(count) + " is not a multiple of 32 up to the CTA's threads");
        Cta::NamedBar& b = c.bars[id];
        if (b.expected && b.expected != count)
          fail(&t, "bar.sync " + std::to_string(id) + " with " + std::to_string(count) + " threads while " +
                       std::to_string(b.arrived) + " threads wait on it for " + std::to_string(b.expected));
        b.expected = static_cast<uint32_t>(count);
        ++t.pc;
        ++stats.warp_bar_waits[t.tid / 32];
        t.st = Thread::at_bar;
        t.bar_id = static_cast<uint32_t>(id);
        b.waiters.push_back(static_cast<uint32_t>(&t - threads.data()));
        if (opt.race_checks) {  // what the waiters acquire (order.cpp)
          b.rel = std::max(b.rel, stats.instructions);
          t.sync_line = in.line;
        }
        if (++b.arrived == b.expected) {
          b.arrived = b.expected = 0;
          for (uint32_t w : b.waiters) {
            if (opt.race_checks) synced(threads[w], b.rel, threads[w].sync_line);
            wake(w);
          }
          b.waiters.clear();
        }
        return;
      }
      case Op::cluster_arrive:
        if (t.cluster_arrived) fail(&t, "barrier.cluster.arrive twice without a wait");
        t.cluster_arrived = true;
        t.cluster_phase = cluster_phase_;
        if (opt.race_checks) {
          cluster_rel_ = std::max(cluster_rel_, stats.instructions);
          if (in.release) released(t);
        }
        if (++cluster_arrived_ == threads.size()) {
          cluster_arrived_ = 0;
          ++cluster_phase_;
          for (uint32_t w : cluster_waiters_) wake(w);
          cluster_waiters_.clear();
        }
        break;
      case Op::cluster_wait:
        if (!t.cluster_arrived) fail(&t, "barrier.cluster.wait without an arrive");
        if (cluster_phase_ > t.cluster_phase) {
          t.cluster_arrived = false;
          if (opt.race_checks) synced(t, cluster_rel_, in.line);
          break;
        }
        t.st = Thread::at_cluster;
        cluster_waiters_.push_back(static_cast<uint32_t>(&t - threads.data()));
        return;
      case Op::nop: break;
      // The orderings of order.cpp: tcgen05.fence::before_thread_sync releases the thread's
      // earlier tcgen05 operations to its next synchronizations, after_thread_sync orders its later
      // ones after what its synchronizations so far acquired (PTX ISA 9.7.16.11.1); a release at
      // cluster scope publishes its mbarrier.init operations (§9.7.13.4).
      case Op::tc_fence_before:
        if (opt.race_checks) t.before_fences.push_back(stats.instructions);
        break;
      case Op::tc_fence_after: t.fenced = t.acquired; break;
      case Op::fence_release:
        if (opt.race_checks) released(t);
        break;
      case Op::fence_proxy_async: {  // orders every generic write of this CTA's threads so far (docs/simulate.md)
        Cta& me = ctas[t.cta];
        for (const auto& [cta, u] : me.unfenced)
          if (ctas[cta].sm_generic_cta[u] == t.cta) ctas[cta].sm_generic[u] = 0;
        me.unfenced.clear();
        break;
      }
      case Op::mbar_init: {
        const auto [cta, off] = shared(t, addr_of(t, in.o[0]), false, 8);
        if (off % 8) fail(&t, "mbarrier not 8-byte aligned");
        const uint64_t n = A(1) & 0xFFFFFFFFu;
        if (n < 1 || n >= (1u << 20)) fail(&t, "mbarrier expected count out of range");
        Mbar& m = ctas[cta].mbars[off];
        if (!m.waiters.empty()) fail(&t, "mbarrier.init of a barrier threads wait on");
        m = Mbar{};
        m.expected = m.pending = static_cast<uint32_t>(n);
        if (opt.race_checks) {  // unpublished to the other CTAs until a release (order.cpp)
          m.init_line = in.line;
          m.init_by = index(t) + 1;
          m.published = false;
          t.inits.emplace_back(cta, off);
        }
        break;
      }
      case Op::mbar_arrive: {
        const auto [cta, off] = shared(t, addr_of(t, in.o[1]), in.cmp == sp_shared_cluster, 8);
        uint32_t count = 1;
        int64_t tx = 0;
        if (in.pack) tx = static_cast<int64_t>(A(2) & 0xFFFFFFFFu);
        else if (in.nops == 3) count = static_cast<uint32_t>(A(2));
        if (in.o[0].kind == Opnd::reg) put(in.o[0].r, mbar(&t, cta, off).phase);  // the state token (a remote arrive returns none)
        if (in.release && opt.race_checks) released(t);
        mbar_arrive(cta, off, count, tx, &t, nullptr);
        break;
      }
      case Op::mbar_try_wait: {
        const auto [cta, off] = shared(t, addr_of(t, in.o[1]), false, 8);
        Mbar& m = mbar(&t, cta, off);
        const uint64_t parity = A(2) & 1;
        const bool done = (m.phase & 1) != parity;  // the phase with this parity has completed
        put(in.o[0].r, done);
        if (done && opt.race_checks) synced(t, m.rel, in.line);
        if (kTrace) std::fprintf(stderr, "  try_wait cta %u tid %u off %x parity %lu phase %lu -> %d\n", t.cta, t.tid, off, (unsigned long)parity, (unsigned long)m.phase, done);
        if (!done && spin_[t.pc]) {  // block here until the barrier moves on
          ++stats.warp_mbarrier_waits[t.tid / 32];
          t.st = Thread::at_mbar;
          t.wait_cta = cta;
          t.wait_addr = off;
          t.wait_parity = static_cast<uint32_t>(parity);
          m.waiters.push_back(static_cast<uint32_t>(&t - threads.data()));
          return;
        }
        if (!done) {  // a poll in some other loop: time passes (the oldest asynchronous operation completes), the thread yields
          // Under an explored schedule the time a failed try_wait lets pass is arbitrary (its time
          // limit is the system's, §9.7.13.15.16): maybe no operation completes, maybe a random stream's.
          if (policy_ != Policy::fixed) {
            if (rng_() % 8 == 0) complete_early(false);
          } else if (!async.empty()) {
            Async a = std::move(async.front());
            async.pop_front();
            complete(a);
          }
          ++t.pc;
          wake(static_cast<uint32_t>(&t - threads.data()));
          return;
        }
        break;
      }
      case Op::tma_load: tma_issue(t, in); break;
      case Op::tma_store: tma_store_issue(t, in); break;
      case Op::bulk_commit:
        t.bulk.push_back({t.bulk_open, t.bulk_open_in_flight});
        ++t.bulk_open;
        t.bulk_open_in_flight = 0;
        break;
      case Op::bulk_wait:
        if (!bulk_wait(t, in)) return;
        break;
      case Op::tc_mma:
        tc_issue_mma(t, in);
        ++stats.mma;
        break;
      case Op::tc_cp: tc_issue_cp(t, in); break;
      case Op::tc_commit: {
        Async a;
        a.kind = Async::commit;
        a.ins = &in;
        a.cta = t.cta;
        const auto [cta, off] = shared(t, addr_of(t, in.o[0]), true, 8);
        uint64_t m = uint64_t{1} << cta;
        if (in.multicast) {
          m = A(1) & 0xFFFF;
          if (m >> ctas.size()) fail(&t, "tcgen05.commit ctaMask names CTAs outside the cluster");
        }
        a.v[0] = off;  // the same offset in every CTA the mask names (§9.7.16.12.1)
        a.v[1] = m;
        a.v[2] = index(t);  // its completion orders the thread's earlier tcgen05.mma/cp (order.cpp)
        a.v[3] = t.commits.size();
        if (opt.race_checks) t.commits.push_back(0);
        trace_issue(a);
        async.push_back(std::move(a));
        break;
      }
      case Op::elect:
      case Op::shfl:
      case Op::stmatrix:
      case Op::bar_warp_sync:
      case Op::tc_alloc:
      case Op::tc_dealloc:
      case Op::tc_relinquish:
      case Op::tc_ld:
      case Op::tc_st:
      case Op::tc_wait_ld:
      case Op::tc_wait_st:
      case Op::wg_fence:
      case Op::wg_mma:
      case Op::wg_commit:
      case Op::wg_wait:
      case Op::setmaxnreg:
        if (!collective(t, in)) return;
        continue;
    }
    ++t.pc;
    if (--yield_in_ == 0) {  // another schedule than the fixed one: switch here (Options::schedule)
      yield_in_ = next_yield();
      t.queued = true;
      runnable_.push_back(static_cast<uint32_t>(&t - threads.data()));
      return;
    }
  }
}

}  // namespace ksim
