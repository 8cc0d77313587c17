// Program-level kernels over a grid of output tiles (docs/spec.md, "Sizes and a grid", "Loops and
// roles"), run whole by the kernel simulator at several problem sizes the kernel takes at run time:
// several tiles in M and N with ragged edges, more K blocks than the rings have stages, and a K
// that ends inside a block; a CTA pair's programs run as clusters of two CTAs, one pair per tile.
// Every stored element is compared with the float64 evaluation of the spec's ops over the same
// tiles and iterations (src/sim/program.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "ptxgen/emit.hpp"
#include "sim_program.hpp"
#include "support.hpp"

using namespace ptxgen;

namespace {

// The sizes a tiled program runs at: its own, and three more around its tiles and K blocks.
std::vector<std::map<std::string, int64_t>> run_sizes(const spec::Program& p) {
  std::vector<std::map<std::string, int64_t>> out{{}};
  const sim::ProgramSteps steps = sim::program_steps(p);
  const int64_t tm = steps.tile_m, tn = steps.tile_n, block = steps.block;
  int64_t stages = 1;
  for (const auto& t : p.smem) stages = std::max<int64_t>(stages, t.stages);
  auto sizes = [&](int64_t m, int64_t n, int64_t kblocks, int64_t kpart) { return steps.sizes(m, n, kblocks, kpart); };
  // A loop size an exact derived size divides (attention's keys) takes whole blocks only: the kernel
  // refuses the others (docs/spec.md, "Sizes and a grid").
  bool whole_blocks = false;
  for (const auto& z : p.sizes) whole_blocks |= z.exact && z.of.name == steps.k;
  out.push_back(sizes(2 * tm, 2 * tn, stages + 2, 0));                                  // whole tiles, the ring wraps
  out.push_back(sizes(2 * tm - 24, tn + 8, 2 * stages + 1, whole_blocks ? 0 : 16));     // ragged M, N and K
  out.push_back(sizes(tm / 2 + 8, tn / 2, 1, whole_blocks ? 0 : block / 2));            // less than one tile and one block
  return out;
}

// The nearest bf16 (round to nearest even) of a finite float.
double bf16(double x) {
  uint32_t u = 0;
  const float f = static_cast<float>(x);
  std::memcpy(&u, &f, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  float r = 0;
  std::memcpy(&r, &u, 4);
  return r;
}

}  // namespace

TEST_SUITE("sim_tiled") {
TEST_CASE("every tiled program golden, simulated at several sizes, stores what its ops compute") {
  int n = 0;
  for (const auto& file : support::spec_files()) {
    nlohmann::json doc = nlohmann::json::parse(support::slurp(file));
    if (!doc.contains("program") || !(doc["program"].contains("sizes") || doc["program"].contains("roles"))) continue;
    if (const char* only = std::getenv("KSIM_ONLY"); only && support::stem(file) != only) continue;
    CAPTURE(file);
    const spec::Spec s = support::checked_spec(doc.dump());
    const plan::Plan p = support::plan_of(s);
    const auto manifest = nlohmann::json::parse(plan::manifest(p));
    const ksim::KernelPtr k = ksim::parse(support::slurp(support::source_root() + "/golden/" + support::stem(file) + ".ptx"));
    for (const auto& sizes : run_sizes(*s.program)) {
      std::string at;
      for (const auto& [name, v] : sizes) at += " " + name + "=" + std::to_string(v);
      CAPTURE(at);
      const simtest::ProgramResult r = simtest::run_program(*k, *s.program, manifest, 7 + static_cast<unsigned>(n), {}, sizes);
      CHECK_MESSAGE(r.error.empty(), r.error);
      CHECK(r.checked == r.outputs);
      CHECK_MESSAGE(r.worst <= 1.0, "max error " << r.max_err << " exceeds the bound (" << r.worst << " of it) at " << r.where);
      std::printf("sim tiled %-32s%s: %ld elements, %lu CTAs, max |err| %.2g (%.2g of the bound)\n", support::stem(file).c_str(),
                  at.empty() ? " (its own sizes)" : at.c_str(), r.checked, static_cast<unsigned long>(r.stats.ctas), r.max_err, r.worst);
      ++n;
    }
  }
  if (!std::getenv("KSIM_ONLY")) CHECK(n >= 36);  // 9 programs x 4 sizes (three of them CTA pairs)
}

// specs/prog_attention_fwd_bf16.json (docs/spec.md, "Worked example: attention forward"): O =
// softmax(Q Kᵀ / 8) V over 128-row query tiles and 128-key blocks, the online softmax in the
// softmax role's registers, and the row log-sum-exp LSE, against the definition evaluated here in
// float64 (never the kernel's own ops): s_j = q · k_j, p_j = exp((s_j - max_j s_j) / 8),
// O = sum_j p_j v_j / sum_j p_j, LSE = ln sum_j exp(s_j / 8).
// The bound, per element (i, d), with w = sum_j p_j |v_jd| / sum_j p_j:
//   (2^-8 + E_i) w + 2^-120 max_j |v_jd|, where
//   2^-8: P is rounded to bf16 (tcgen05.st of cvt.rn.bf16, unit roundoff 2^-8) before P·V, while
//         l sums the f32 values; every other error is relative to the same weighted sum:
//   E_i = 2^-24 (2 * 128 + 2 nb + 24)  f32 sums: the P·V MMA's 128 products and l's row sums per
//         block ((n - 1) 2^-24 each), the rescale of O and l per block (a rounding each), rcp.approx
//         (1.5 ulp) and the last mul;
//       + 2.5 * 2^-23                  ex2.approx of each p (2 ulp from the correctly rounded);
//       + ln 2 * 2^-24 (R + 2 |s c|max) the fma's rounding of s c - m (|s c - m| <= R, the range of
//         the row's scaled scores) and the f32 rounding of c = log2(e) / 8 and of rowmax * c;
//       + ln 2 * c * 63 * 2^-24 max_j sum_d |q_d k_jd|   the f32 accumulation of S = Q Kᵀ.
// The exp2 of m_old - m_new (alpha) multiplies O and l alike, so its error cancels in O / l.
TEST_CASE("attention forward (prog_attention_fwd_bf16) against a float64 softmax attention") {
  const std::string file = support::source_root() + "/specs/prog_attention_fwd_bf16.json";
  const spec::Spec s = support::checked_spec(support::slurp(file));
  const plan::Plan p = support::plan_of(s);
  const auto manifest = nlohmann::json::parse(plan::manifest(p));
  const ksim::KernelPtr k = ksim::parse(support::slurp(support::source_root() + "/golden/prog_attention_fwd_bf16.ptx"));
  const double c = std::log2(std::exp(1.0)) / 8, u = std::ldexp(1.0, -24), ln2 = std::log(2.0);
  struct Case {
    int64_t m, l;
    bool rising;  // later keys dominate: the row max moves up block after block
  };
  for (const Case cs : {Case{256, 512, false}, Case{200, 384, false}, Case{384, 128, false}, Case{256, 640, true}}) {
    CAPTURE(cs.m);
    CAPTURE(cs.l);
    CAPTURE(cs.rising);
    std::mt19937 rng(static_cast<unsigned>(cs.m * 7 + cs.l));
    std::uniform_real_distribution<double> uni(-1, 1), pos(0, 1);
    sim::Inputs in;
    auto tensor = [&](const std::string& name, int64_t rows, bool key) {
      sim::InputArray a{2, rows, 64, std::vector<double>(static_cast<size_t>(rows * 64))};
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t d = 0; d < 64; ++d)
          a.v[static_cast<size_t>(r * 64 + d)] =
              bf16(cs.rising ? (key ? pos(rng) * (1 + static_cast<double>(r) / 32) : pos(rng)) : uni(rng));
      in[name] = a;
      return a.v;
    };
    const std::vector<double> Q = tensor("Q", cs.m, false), K = tensor("K", cs.l, true), V = tensor("V", cs.l, false);
    const sim::ProgramResult r = simtest::run_program(*k, *s.program, manifest, 5, {}, {{"m", cs.m}, {"l", cs.l}}, in);
    REQUIRE_MESSAGE(r.error.empty(), r.error);
    const sim::TensorReport* o = nullptr;
    for (const auto& t : r.tensors)
      if (t.name == "O") o = &t;
    REQUIRE(o != nullptr);
    REQUIRE(o->got.size() == static_cast<size_t>(cs.m * 64));
    const sim::TensorReport* lse = nullptr;
    for (const auto& t : r.tensors)
      if (t.name == "LSE") lse = &t;
    REQUIRE(lse != nullptr);
    REQUIRE(lse->got.size() == static_cast<size_t>(cs.m));
    const int64_t nb = cs.l / 128;
    double worst = 0, max_err = 0, moved = 0, lse_worst = 0;
    for (int64_t i = 0; i < cs.m; ++i) {
      std::vector<double> sc(static_cast<size_t>(cs.l));
      double smax = -INFINITY, smin = INFINITY, dot_max = 0, first_block_max = -INFINITY;
      for (int64_t j = 0; j < cs.l; ++j) {
        double v = 0, mag = 0;
        for (int64_t d = 0; d < 64; ++d) {
          v += Q[static_cast<size_t>(i * 64 + d)] * K[static_cast<size_t>(j * 64 + d)];
          mag += std::fabs(Q[static_cast<size_t>(i * 64 + d)] * K[static_cast<size_t>(j * 64 + d)]);
        }
        sc[static_cast<size_t>(j)] = v;
        smax = std::max(smax, v);
        smin = std::min(smin, v);
        dot_max = std::max(dot_max, mag);
        if (j < 128) first_block_max = smax;
      }
      moved = std::max(moved, (smax - first_block_max) * c);
      std::vector<double> pj(static_cast<size_t>(cs.l));
      double sum = 0;
      for (int64_t j = 0; j < cs.l; ++j) sum += pj[static_cast<size_t>(j)] = std::exp((sc[static_cast<size_t>(j)] - smax) / 8);
      const double E = u * (2 * 128 + 2 * static_cast<double>(nb) + 24) + 2.5 * 2 * u + ln2 * u * ((smax - smin) * c + 2 * std::max(std::fabs(smax), std::fabs(smin)) * c) +
                       ln2 * c * 63 * u * dot_max;
      // LSE_i = ln sum_j exp(s_j / 8) = max_j s_j / 8 + ln(sum), the kernel's ln 2 (m + log2 l): m's own
      // error (S's accumulation, the rounding of max * c), l's (E), lg2.approx's (2^-22 absolute in
      // (0.5, 2), relative elsewhere), then an add and a mul (by ln 2 rounded): a rounding each.
      {
        const double want = smax / 8 + std::log(sum), m2 = smax * c, t = m2 + std::log2(sum);
        const double bound = ln2 * (c * 63 * u * dot_max + u * std::fabs(m2) + E / ln2 + std::ldexp(1.0, -22) * std::max(1.0, std::log2(sum)) +
                                    u * std::fabs(t)) +
                             2 * u * std::fabs(want) + 1e-30;
        const double err = std::fabs(lse->got[static_cast<size_t>(i)] - want);
        CHECK_MESSAGE(err <= bound, "LSE[" << i << "] = " << lse->got[static_cast<size_t>(i)] << ", float64 " << want << ", bound " << bound);
        lse_worst = std::max(lse_worst, err / bound);
      }
      for (int64_t d = 0; d < 64; ++d) {
        double want = 0, w = 0, vmax = 0;
        for (int64_t j = 0; j < cs.l; ++j) {
          const double v = V[static_cast<size_t>(j * 64 + d)];
          want += pj[static_cast<size_t>(j)] * v;
          w += pj[static_cast<size_t>(j)] * std::fabs(v);
          vmax = std::max(vmax, std::fabs(v));
        }
        want /= sum;
        w /= sum;
        const double bound = (std::ldexp(1.0, -8) + E) * w + std::ldexp(1.0, -120) * vmax;
        const double got = o->got[static_cast<size_t>(i * 64 + d)];
        const double err = std::fabs(got - want);
        max_err = std::max(max_err, err);
        if (!(err <= bound)) {
          CHECK_MESSAGE(err <= bound, "O[" << i << "][" << d << "] = " << got << ", float64 " << want << ", bound " << bound);
          worst = INFINITY;
        } else {
          worst = std::max(worst, err / bound);
        }
      }
    }
    CHECK(worst <= 1.0);
    if (cs.rising) CHECK(moved > 4);  // the row max moved by 2^4 and more in exp2's units after the first block
    std::printf("sim attention m=%ld l=%ld%s: O %ld elements, max |err| %.2g (%.2g of the bound); LSE %.2g of its bound%s\n",
                static_cast<long>(cs.m), static_cast<long>(cs.l), cs.rising ? " (later keys dominate)" : "", static_cast<long>(cs.m * 64), max_err,
                worst, lse_worst, cs.rising ? (", the max moved " + std::to_string(moved) + " after block 0").c_str() : "");
  }
}
}
