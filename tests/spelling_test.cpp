// The scalar spelling table (src/emit/spelling.hpp, alu_rows()): a few spellings exactly, and, for
// each target, one module holding every variant every row claims for it, assembled by ptxas. The
// goldens only reach the variants some spec happens to use; this reaches all of them, one ptxas run
// per target.
#include <doctest/doctest.h>

#include <fstream>
#include <stdexcept>
#include <set>

#include "../src/emit/spelling.hpp"
#include "cli_support.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/sim.hpp"

using namespace ptxgen;
namespace spell = ptxgen::emit::spell;
using spell::BoolOp;
using spell::Cmp;
using spell::Op;
using spell::Round;
using spell::Space;
using spell::Ty;

namespace {

int bits(Ty t) {
  switch (t) {
    case Ty::pred: return 1;
    case Ty::b8:  // a byte lives in a 16-bit register (ld/st may name a wider register, §9.7.9.8)
    case Ty::b16:
    case Ty::u16:
    case Ty::f16:
    case Ty::bf16: return 16;
    case Ty::b64:
    case Ty::u64:
    case Ty::s64: return 64;
    default: return 32;
  }
}

// A register of `b` bits; bit-size registers go with every type of their size (§9.4), so four
// register files serve every variant.
std::string reg(int b, int i = 0) {
  const std::string n = std::to_string(i);
  return b == 1 ? "%p" + n : b == 16 ? "%h" + n : b == 32 ? "%r" + n : "%rd" + n;
}
std::string reg(Ty t, int i = 0) { return reg(bits(t), i); }

std::string list(Ty t, int n) {
  if (n == 1) return reg(t);
  std::string o = "{";
  for (int i = 0; i < n; ++i) o += (i ? ", " : "") + reg(t, i);
  return o + "}";
}

// Operands that make the variant a whole instruction. Shared-memory addresses are 32-bit
// registers, as the emitter writes them; global ones 64-bit; .param ones the entry's parameters.
std::string operands(const spell::Scalar& v, const std::string& label) {
  const Ty t = v.type;
  switch (v.op) {
    case Op::mul_wide: return reg(64) + ", " + reg(t, 1) + ", " + reg(t, 2);
    case Op::mad_lo:
    case Op::fma: return reg(t) + ", " + reg(t, 1) + ", " + reg(t, 2) + ", " + reg(t, 3);
    // One source; f32 instructions take the .b32 registers the emitter declares (§9.4: a bit-size
    // register goes with every type of its size).
    case Op::neg:
    case Op::abs:
    case Op::ex2:
    case Op::lg2:
    case Op::tanh:
    case Op::rsqrt:
    case Op::rcp:
    case Op::sqrt: return reg(t) + ", " + reg(t, 1);
    case Op::shl:
    case Op::shr: return reg(t) + ", " + reg(t, 1) + ", " + reg(32, 2);
    case Op::bfe: return reg(t) + ", " + reg(t, 1) + ", " + reg(32, 2) + ", " + reg(32, 3);
    case Op::mov: return reg(t) + ", " + reg(t, 1);
    case Op::setp:
      return reg(1) + ", " + reg(t, 1) + ", " + reg(t, 2) + (v.combine != BoolOp::none ? ", " + reg(1, 3) : "");
    case Op::set: return reg(t) + ", " + reg(v.from, 1) + ", " + reg(v.from, 2);
    case Op::selp: return reg(t) + ", " + reg(t, 1) + ", " + reg(t, 2) + ", " + reg(1, 3);
    case Op::cvt:
      // The packed pairs take two sources (§9.7.9.21): the first goes to the upper half.
      if (t == Ty::e4m3x2 || t == Ty::e5m2x2) return reg(Ty::b16) + ", " + reg(v.from, 1) + ", " + reg(v.from, 2);  // a .b16 pair
      if (v.from == Ty::e4m3x2) return reg(32) + ", " + reg(Ty::b16, 1);  // two bytes to two f16
      if (t == Ty::e2m1x2) return "%b0, " + reg(v.from, 1) + ", " + reg(v.from, 2);  // a .b8 pair: only a .b8 register is accepted
      return reg(t) + ", " + reg(v.from, 1) + (t == Ty::f16x2 || t == Ty::bf16x2 ? ", " + reg(v.from, 2) : "");
    case Op::cvta: return reg(64) + ", " + reg(64, 1);
    case Op::mapa: return reg(32) + ", " + reg(32, 1) + ", " + reg(32, 2);
    case Op::ld:
    case Op::st: {
      const std::string addr = v.space == Space::param    ? (bits(t) == 64 ? "[p64]" : "[p32]")
                               : v.space == Space::shared ? "[" + reg(32, 9) + "]"
                                                          : "[" + reg(64, 9) + "]";
      return v.op == Op::ld ? list(t, v.vec) + ", " + addr : addr + ", " + list(t, v.vec);
    }
    case Op::bra: return label;
    case Op::ret: return "";
    case Op::bar_warp_sync: return "-1";
    case Op::shfl_bfly: return reg(t) + ", " + reg(t, 1) + ", 1, 31, -1";
    case Op::elect_sync: return "_|" + reg(1) + ", -1";
    case Op::prefetch_tensormap: return "[" + reg(64, 9) + "]";
    case Op::red_max: return "[" + reg(64, 9) + "], " + reg(t);
    case Op::barrier_sync: return "0";
    case Op::setmaxnreg: return v.inc ? "232" : "40";  // multiples of 8 in [24, 256] (§9.7.19.5)
    default: return reg(t) + ", " + reg(t, 1) + ", " + reg(t, 2);  // d = a op b
  }
}

// One kernel holding every variant of the rows `take` picks.
template <typename Pick>
std::string module(const isa::TargetInfo& t, Pick take, int& count) {
  std::string body;
  int label = 0;
  for (const auto& row : spell::alu_rows()) {
    if (!take(row)) continue;
    for (const auto& v : spell::variants(row)) {
      const std::string l = "$L_" + std::to_string(label++);
      const std::string ops = operands(v, l);
      body += "\t" + spell::alu(v) + (ops.empty() ? "" : " " + ops) + ";\n";
      if (v.op == Op::bra) body += l + ":\n";
      ++count;
    }
  }
  return ".version " + std::to_string(t.ptx_major) + "." + std::to_string(t.ptx_minor) + "\n.target " +
         std::string(t.name) + "\n.address_size 64\n\n.visible .entry alu_table(.param .u64 p64, .param .u32 p32)\n" +
         // A register count at entry, without which ptxas ignores setmaxnreg (with a note) rather than assembling it.
         ".maxnreg 168\n{\n" +
         "\t.reg .pred %p<4>;\n\t.reg .b8 %b<2>;\n\t.reg .b16 %h<10>;\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<10>;\n" + body + "}\n";
}

}  // namespace

TEST_SUITE("isa") {
TEST_CASE("scalar spellings: each computed from its parameters") {
  CHECK(spell::alu(Op::add, Ty::u32) == "add.u32");
  CHECK(spell::alu(Op::mul_wide, Ty::u32) == "mul.wide.u32");
  CHECK(spell::alu(Op::and_, Ty::pred) == "and.pred");
  CHECK(spell::setp(Cmp::ne, Ty::u32, BoolOp::or_) == "setp.ne.or.u32");
  CHECK(spell::setp(Cmp::ge, Ty::u32) == "setp.ge.u32");
  CHECK(spell::setmaxnreg(true) == "setmaxnreg.inc.sync.aligned.u32");
  CHECK(spell::setmaxnreg(false) == "setmaxnreg.dec.sync.aligned.u32");
  CHECK(spell::mapa() == "mapa.shared::cluster.u32");
  CHECK(spell::cvt(Ty::f32, Ty::s32, Round::rn) == "cvt.rn.f32.s32");
  CHECK(spell::cvt(Ty::bf16x2, Ty::f32, Round::rn) == "cvt.rn.bf16x2.f32");
  CHECK(spell::cvt(Ty::u16, Ty::u32) == "cvt.u16.u32");
  CHECK(spell::cvta_to(Space::global, Ty::u64) == "cvta.to.global.u64");
  CHECK(spell::cvta(Space::param, Ty::u64) == "cvta.param.u64");
  CHECK(spell::ld(Space::global, Ty::b32, 4) == "ld.global.v4.b32");
  CHECK(spell::st(Space::shared, Ty::b32, 2) == "st.shared.v2.b32");
  CHECK(spell::st(Space::global, Ty::b8) == "st.global.b8");
  CHECK(spell::bar_warp_sync() == "bar.warp.sync");
  CHECK(spell::shfl_bfly() == "shfl.sync.bfly.b32");
  CHECK(spell::elect_sync() == "elect.sync");
  CHECK(spell::prefetch_tensormap() == "prefetch.tensormap");
  CHECK(spell::red_max_global_u32() == "red.global.max.u32");
  CHECK(spell::ret() == "ret");
  CHECK(spell::alu(spell::math(MathFn::add, false)) == "add.rn.f32");
  CHECK(spell::alu(spell::math(MathFn::fma, false)) == "fma.rn.f32");
  CHECK(spell::alu(spell::math(MathFn::min, false)) == "min.f32");
  CHECK(spell::alu(spell::math(MathFn::abs, false)) == "abs.f32");
  CHECK(spell::alu(spell::math(MathFn::exp2, true)) == "ex2.approx.f32");
  CHECK(spell::alu(spell::math(MathFn::tanh, true)) == "tanh.approx.f32");
  CHECK(spell::alu(spell::math(MathFn::rcp, false)) == "rcp.rn.f32");
  CHECK(spell::alu(spell::math(MathFn::sqrt, true)) == "sqrt.approx.f32");
  CHECK(spell::alu(spell::math(MathFn::lt, false)) == "set.lt.f32.f32");
  CHECK(spell::alu(spell::math(MathFn::ne, false)) == "set.ne.f32.f32");
  CHECK(spell::alu(spell::math(MathFn::select, false)) == "selp.f32");
  // Packed pairs (§9.7.4): .rn where the instruction rounds; bf16x2's ex2 exists only as .approx.ftz.
  CHECK(spell::alu(spell::math(MathFn::fma, false, isa::DType::bf16)) == "fma.rn.bf16x2");
  CHECK(spell::alu(spell::math(MathFn::add, false, isa::DType::f16)) == "add.rn.f16x2");
  CHECK(spell::alu(spell::math(MathFn::max, false, isa::DType::bf16)) == "max.bf16x2");
  CHECK(spell::alu(spell::math(MathFn::exp2, true, isa::DType::bf16)) == "ex2.approx.ftz.bf16x2");
  CHECK(spell::alu(spell::math(MathFn::exp2, true, isa::DType::f16)) == "ex2.approx.f16x2");
  CHECK(spell::alu(spell::math(MathFn::tanh, true, isa::DType::f16)) == "tanh.approx.f16x2");
  CHECK(spell::alu(spell::math(MathFn::convert, false, isa::DType::bf16)) == "cvt.rn.bf16x2.f32");
  CHECK_THROWS(spell::math(MathFn::rcp, true, isa::DType::bf16));  // no packed rcp: MATH-PACKED-FN
  CHECK(spell::setp(spell::Cmp::ne, spell::Ty::f32) == "setp.ne.f32");
}

TEST_CASE("scalar table: every instruction of every elementwise function is a row's variant") {
  // f32, and the packed pairs (§9.7.4) of the functions that have them, convert's cvt.rn.X2.f32.
  for (const auto& f : math_fns())
    for (const isa::DType t : {isa::DType::f32, isa::DType::bf16, isa::DType::f16})
    for (bool approx : {false, true}) {
      if (approx ? !f.approx : !f.exact) continue;
      if (t == isa::DType::f32 ? f.fn == MathFn::convert : f.fn != MathFn::convert && !packed_info(f.fn).has) continue;
      const spell::Scalar v = spell::math(f.fn, approx, t);
      bool claimed = false;
      for (const auto& row : spell::alu_rows())
        for (const auto& x : spell::variants(row)) claimed = claimed || spell::alu(x) == spell::alu(v);
      CAPTURE(spell::alu(v));
      CHECK(claimed);
    }
}

TEST_CASE("scalar table: each row cites its section and claims variants; no spelling is claimed twice") {
  std::set<std::string> seen;
  for (const auto& row : spell::alu_rows()) {
    CAPTURE(spell::name(row.op));
    CHECK(row.isa.rfind("§9.7.", 0) == 0);
    CHECK((row.tcgen05_targets || row.sm90));
    const auto vs = spell::variants(row);
    CHECK(!vs.empty());
    for (const auto& v : vs) CHECK_MESSAGE(seen.insert(spell::alu(v)).second, "claimed twice: " << spell::alu(v));
  }
}
}

TEST_SUITE("golden") {
// stmatrix (§9.7.14.5.16, the wgmma TMA epilogue's 16-bit D): each .num the spelling takes,
// assembled for every target (all are sm_90 or higher), and read by the simulator.
TEST_CASE("ptxas assembles the stmatrix spellings for each target; the simulator reads them") {
  CHECK(spell::stmatrix(4) == "stmatrix.sync.aligned.m8n8.x4.shared.b16");
  CHECK_THROWS_AS(spell::stmatrix(3), std::logic_error);
  auto ptxas = io::find_ptxas();
  REQUIRE_MESSAGE(ptxas, "ptxas not found: the spelling test needs the CUDA toolkit");
  support::TempDir tmp;
  std::string body;
  // The source: a brace-enclosed vector of one 32-bit register per matrix, even for .x1.
  for (int n : {1, 2, 4}) body += "\t" + spell::stmatrix(n) + " [%r9+16], " + (n == 1 ? "{%r0}" : list(Ty::b32, n)) + ";\n";
  for (isa::Arch a : isa::all_archs()) {
    const auto& t = isa::target_info(a);
    CAPTURE(t.name);
    const std::string ptx = ".version " + std::to_string(t.ptx_major) + "." + std::to_string(t.ptx_minor) + "\n.target " +
                            std::string(t.name) + "\n.address_size 64\n\n.visible .entry stm(\n\t.param .u64 p\n)\n{\n\t.reg .b32 %r<10>;\n" + body +
                            "\tret;\n}\n";
    const std::string path = tmp / (std::string(t.name) + "_stmatrix.ptx");
    std::ofstream(path) << ptx;
    const io::Run r = io::run({*ptxas, "-arch=" + std::string(t.name), path, "-o", tmp / (std::string(t.name) + "_stmatrix.cubin")});
    REQUIRE(r.launched);
    CHECK_MESSAGE(r.exit_code == 0, "ptxas rejected stmatrix for " << t.name << ":\n" << r.output << "\n" << ptx);
    CHECK_NOTHROW(ksim::parse(ptx));
  }
}

TEST_CASE("ptxas assembles every scalar table variant for each target") {
  auto ptxas = io::find_ptxas();
  REQUIRE_MESSAGE(ptxas, "ptxas not found: the spelling test needs the CUDA toolkit");
  const auto ver = io::ptxas_version(*ptxas);
  REQUIRE(ver);
  support::TempDir tmp;
  for (isa::Arch a : isa::all_archs()) {
    const auto& t = isa::target_info(a);
    CAPTURE(t.name);
    auto assemble = [&](const std::string& stem, const std::string& ptx) {
      const std::string path = tmp / (stem + ".ptx");
      std::ofstream(path) << ptx;
      io::Run r = io::run({*ptxas, "-arch=" + std::string(t.name), path, "-o", tmp / (stem + ".cubin")});
      REQUIRE(r.launched);
      return r;
    };
    int count = 0;
    const std::string ptx = module(t, [&](const spell::AluRow& row) { return spell::accepts(row, t); }, count);
    const io::Run r = assemble(std::string(t.name), ptx);
    CHECK_MESSAGE(r.exit_code == 0, "ptxas " << ver->text << " rejected the scalar table for " << t.name << ":\n"
                                            << r.output << "\n" << ptx);
    CHECK(count > 100);
    // A row the table keeps from this target must really be refused there, one row at a time.
    // (Every row holds on every target ptxgen has today, setmaxnreg and mapa included, so this
    // assembles nothing until a row says otherwise.)
    int row_index = 0;
    for (const auto& row : spell::alu_rows()) {
      const int i = row_index++;
      if (spell::accepts(row, t)) continue;
      int n = 0;
      const std::string one = module(t, [&](const spell::AluRow& x) { return &x == &row; }, n);
      CHECK_MESSAGE(assemble(std::string(t.name) + "_refused_" + std::to_string(i), one).exit_code != 0,
                    "the table keeps " << spell::name(row.op) << " from " << t.name << " but ptxas takes it");
    }
  }
}
}
