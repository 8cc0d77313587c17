// The tcgen05.mma planner. Four steps, each a small function:
//   1. shapes and types        (kind, per-CTA tile extents, operand layouts)
//   2. instruction shapes      (M/N/K instruction groups, memory maps)
//   3. descriptors             (instruction descriptors, SMEM descriptors, TMEM addresses)
//   4. issue order             (tcgen05.cp of A, then the MMAs, K step outermost)
// and the kernel roles and epilogue map (which tcgen05.ld reads which rows and columns).
#include <algorithm>
#include <stdexcept>

#include "internal.hpp"

namespace ptxgen::plan::detail {

namespace {

uint32_t next_pow2_at_least_32(uint32_t v) {
  uint32_t p = 32;
  while (p < v) p <<= 1;
  return p;
}

// ---- Step 1: shapes and types ---------------------------------------------------------------
std::optional<std::string> step1_types(const spec::Spec& s, Shapes& sh) {
  const spec::Gemm& g = *s.gemm;
  auto kind = isa::unscaled_kind(g.a.dtype, g.b.dtype);
  if (!kind) return "A and B types form no tcgen05.mma kind";
  sh.engine = Engine::tcgen05;
  sh.kind = *kind;
  sh.cta_group = g.cta_group;
  sh.a_in_tmem = g.a_source == spec::ASource::tmem;
  sh.k_instr = isa::instr_k(sh.kind);
  return std::nullopt;
}

// ---- Step 2: instruction shapes and memory maps ---------------------------------------------
std::optional<std::string> step2_instructions(const spec::Spec& s, Shapes& sh) {
  const spec::Gemm& g = *s.gemm;
  const int cta = sh.cta_group;
  const int tm = static_cast<int>(g.tile.m), tn = static_cast<int>(g.tile.n), tk = static_cast<int>(g.tile.k);

  // M: the largest legal instruction M that divides the tile.
  sh.m_instr = isa::instr_m_for_tile(sh.kind, cta, tm);
  if (sh.m_instr == 0) return "tile.m is not a multiple of a legal instruction M";
  sh.m_groups = tm / sh.m_instr;
  sh.m_per_cta = sh.m_instr / cta;

  // Operand layouts (per CTA): A holds tile.m / cta rows, B holds tile.n / cta rows.
  if (tn % cta != 0) return "tile.n is not divisible by the CTA group";
  if (auto why = operand_tile(sh.a, 'A', g.a, g.swizzle_a, isa::smem_bits(sh.kind, g.a.dtype), tm / cta, tk))
    return "A: " + *why;
  if (auto why = operand_tile(sh.b, 'B', g.b, g.swizzle_b, isa::smem_bits(sh.kind, g.b.dtype), tn / cta, tk))
    return "B: " + *why;
  if (sh.a.layout.major == isa::Major::mn && sh.m_per_cta % sh.a.layout.atom_mn != 0)
    return "A: an M group does not start on a swizzle atom";

  // N: legal groups of at most 256; a group's first row of B (per CTA) starts a core matrix
  // group (K-major) or a swizzle atom (MN-major).
  const bool b8mn = g.b.major == isa::Major::mn && sh.b.layout.bits == 8;
  const int align = cta * (g.b.major == isa::Major::mn ? sh.b.layout.atom_mn : 8);
  sh.n_groups = isa::split_n(sh.kind, cta, b8mn, tn, align);
  if (sh.n_groups.empty()) return "tile.n has no split into legal instruction N";

  // K.
  if (tk % sh.k_instr != 0) return "tile.k is not a multiple of the instruction K";
  sh.k_steps = tk / sh.k_instr;

  if (auto why = smem_map(sh, g.stages)) return why;

  // Tensor memory: D of every (M group, N group) side by side in columns, then A (if in TMEM)
  // per M group. Lane placement follows the data-path layouts of §9.7.16.10.5: M=128 (layout D)
  // and M=256 (layout A) use all 128 lanes; M=64 (layout F) lanes 0-15 of each 32-lane quarter;
  // cta_group::2 M=128 (layout B) holds N/2 columns per CTA over all 128 lanes. Two M=64 groups
  // share columns: layout F allows lane alignment 0 or 16.
  TmemMap& t = sh.tmem;
  const bool layout_f = cta == 1 && sh.m_instr == 64;
  uint32_t col = 0, group_col = 0;
  for (int mi = 0; mi < sh.m_groups; ++mi) {
    const bool second_half = layout_f && mi % 2 == 1;
    uint32_t c = second_half ? group_col : col;  // the odd M=64 group reuses its partner's columns
    group_col = c;
    for (size_t ni = 0; ni < sh.n_groups.size(); ++ni) {
      const uint32_t n = static_cast<uint32_t>(sh.n_groups[ni]);
      const uint32_t cols = (cta == 2 && sh.m_instr == 128) ? n / 2 : n;
      TmemRegion r{"D", mi, static_cast<int>(ni), 0, second_half ? 16u : 0u, isa::kTmemLanes, c, cols, false};
      if (layout_f) {
        r.lanes = 16;
        r.half_datapath = true;
      }
      t.regions.push_back(r);
      c += cols;
    }
    col = std::max(col, c);
  }
  if (sh.a_in_tmem) {
    // A is K-major in TMEM: lane = row, 32 bits of K per column (packed), §9.7.16.10.4.
    const uint32_t a_cols = static_cast<uint32_t>(tk) * static_cast<uint32_t>(sh.a.layout.bits) / 32;
    for (int mi = 0; mi < sh.m_groups; ++mi) {
      t.regions.push_back({"A", mi, 0, 0, 0, isa::kTmemLanes, col, a_cols, false});
      col += a_cols;
    }
  }
  t.used_columns = col;
  t.alloc_columns = next_pow2_at_least_32(col);
  return std::nullopt;
}

// ---- Step 3: descriptors --------------------------------------------------------------------
const TmemRegion& region(const Shapes& sh, const char* what, int mi, int ni) {
  for (const auto& r : sh.tmem.regions)
    if (r.what == what && r.mi == mi && r.ni == ni) return r;
  throw std::logic_error(std::string("no TMEM region for ") + what);
}

void step3_idescs(const spec::Spec& s, Plan& p) {
  const spec::Gemm& g = *s.gemm;
  const Shapes& sh = p.shapes;
  for (int n : sh.n_groups) {
    bool seen = false;
    for (const auto& d : p.idescs) seen |= d.n == static_cast<unsigned>(n);
    if (seen) continue;
    isa::InstrDesc d;
    d.kind = sh.kind;
    d.dtype = isa::idesc_dtype_code(g.accumulator);
    d.atype = *isa::idesc_ab_code(sh.kind, g.a.dtype);
    d.btype = *isa::idesc_ab_code(sh.kind, g.b.dtype);
    d.transpose_a = g.a.major == isa::Major::mn;
    d.transpose_b = g.b.major == isa::Major::mn;
    d.n = static_cast<unsigned>(n);
    d.m = static_cast<unsigned>(sh.m_instr);
    encoded(d);  // throws if it does not encode
    p.idescs.push_back(d);
  }
}

int idesc_index(const Plan& p, int n) {
  for (size_t i = 0; i < p.idescs.size(); ++i)
    if (p.idescs[i].n == static_cast<unsigned>(n)) return static_cast<int>(i);
  throw std::logic_error("no instruction descriptor for N");
}

// ---- Step 4: issue order --------------------------------------------------------------------
void step4_issue(Plan& p) {
  const Shapes& sh = p.shapes;
  const auto f = isa::DescFormat::sm100;
  const uint32_t a_stage0 = sh.smem.a_offset.at(0), b_stage0 = sh.smem.b_offset.at(0);
  if (sh.a_in_tmem) {
    // tcgen05.cp .128x256b moves 128 rows x 32 bytes: one instruction's K of A per copy.
    const int chunk_k = 256 / sh.a.layout.bits;
    for (int mi = 0; mi < sh.m_groups; ++mi) {
      const TmemRegion& ra = region(sh, "A", mi, 0);
      for (int k0 = 0, c = 0; k0 < sh.a.layout.k; k0 += chunk_k, ++c) {
        Copy cp;
        cp.mi = mi;
        cp.ki = c;
        cp.shape = "128x256b";
        cp.src = operand_desc(sh.a, f, a_stage0, mi * sh.m_per_cta, k0);
        cp.dst_tmem = isa::encode(isa::TmemAddr{ra.lane, ra.column + static_cast<uint32_t>(c) * 8});
        p.copies.push_back(cp);
      }
    }
  }
  // K step outermost, then M group, then N group: consecutive MMAs share A (collector-friendly)
  // and every accumulator receives its K steps in order.
  for (int ki = 0; ki < sh.k_steps; ++ki) {
    for (int mi = 0; mi < sh.m_groups; ++mi) {
      int n_start = 0;
      for (size_t ni = 0; ni < sh.n_groups.size(); ++ni) {
        Mma m;
        m.mi = mi;
        m.ni = static_cast<int>(ni);
        m.ki = ki;
        m.m = sh.m_instr;
        m.n = sh.n_groups[ni];
        m.k = sh.k_instr;
        const int k0 = ki * sh.k_instr;
        if (sh.a_in_tmem) {
          m.a_tmem = true;
          const TmemRegion& ra = region(sh, "A", mi, 0);
          // 256 bits of K per instruction = 8 columns (§9.7.16.10.4: A packed 32 bits per column).
          m.a_tmem_addr = isa::encode(isa::TmemAddr{ra.lane, ra.column + static_cast<uint32_t>(ki) * 8});
        } else {
          m.a_desc = operand_desc(sh.a, f, a_stage0, mi * sh.m_per_cta, k0);
        }
        m.b_desc = operand_desc(sh.b, f, b_stage0, n_start / sh.cta_group, k0);
        const TmemRegion& rd = region(sh, "D", mi, static_cast<int>(ni));
        m.d_tmem = isa::encode(isa::TmemAddr{rd.lane, rd.column});  // lane 16: layout F's second alignment
        m.idesc = idesc_index(p, m.n);
        m.first = ki == 0;
        p.mmas.push_back(m);
        n_start += m.n;
      }
    }
  }
}

// ---- The kernel: roles and the epilogue map --------------------------------------------------
// Warps 0-3 read the accumulator back (warp w reaches lanes 32w..32w+31, §9.7.16.8.1), warp 4
// issues the TMA loads, warp 5 allocates tensor memory and issues tcgen05.cp/tcgen05.mma.
void kernel_roles(Plan& p) {
  Kernel& k = p.kernel;
  const Shapes& sh = p.shapes;
  k.threads = 192;
  k.producer_warp = 4;
  k.mma_warp = 5;
  k.max_registers = 255;
  if (sh.cta_group == 1) k.layout = sh.m_instr == 64 ? Layout::F : Layout::D;
  else k.layout = sh.m_instr == 256 ? Layout::A : Layout::B;

  // Column chunks of at most 32 (tcgen05.ld.32x32b.x32: one register per column), never
  // straddling the two halves of a pair's N group (which come from the two CTAs' B).
  auto chunks = [](int from, int to, auto&& fn) {
    for (int c = from; c < to;) {
      int num = 32;
      while (num > to - c) num >>= 1;
      fn(c, num);
      c += num;
    }
  };
  const int tile_n = static_cast<int>(p.spec.gemm->tile.n);
  for (size_t ri = 0; ri < sh.tmem.regions.size(); ++ri) {
    const TmemRegion& r = sh.tmem.regions[ri];
    if (r.what != "D") continue;
    int n0 = 0;
    for (int j = 0; j < r.ni; ++j) n0 += sh.n_groups[static_cast<size_t>(j)];
    const int ng = sh.n_groups[static_cast<size_t>(r.ni)];
    switch (k.layout) {
      case Layout::D:
        chunks(0, ng, [&](int c, int num) {
          k.epilogue.push_back({static_cast<int>(ri), r.column + static_cast<uint32_t>(c), num, r.mi * 128, -1, n0 + c, 0});
        });
        break;
      case Layout::F: {
        if (r.lane != 0) break;  // the odd group is read with its even partner
        int second = -1;
        if (r.mi + 1 < sh.m_groups) second = (r.mi + 1) * 64;
        chunks(0, ng, [&](int c, int num) {
          k.epilogue.push_back({static_cast<int>(ri), r.column + static_cast<uint32_t>(c), num, r.mi * 64, second, n0 + c, 0});
        });
        break;
      }
      case Layout::A:
        // Instruction column c < N/2 came from CTA 0's B rows n0/2 + c, c >= N/2 from CTA 1's.
        chunks(0, ng / 2, [&](int c, int num) {
          k.epilogue.push_back({static_cast<int>(ri), r.column + static_cast<uint32_t>(c), num, r.mi * sh.m_per_cta, -1,
                                n0 / 2 + c, 0});
        });
        chunks(ng / 2, ng, [&](int c, int num) {
          k.epilogue.push_back({static_cast<int>(ri), r.column + static_cast<uint32_t>(c), num, r.mi * sh.m_per_cta, -1,
                                tile_n / 2 + n0 / 2 + (c - ng / 2), 0});
        });
        break;
      case Layout::B:
        // Lanes 0-63 hold columns [0, N/2) and lanes 64-127 columns [N/2, N), in N/2 TMEM columns.
        chunks(0, ng / 2, [&](int c, int num) {
          k.epilogue.push_back({static_cast<int>(ri), r.column + static_cast<uint32_t>(c), num, r.mi * sh.m_per_cta, -1,
                                n0 / 2 + c, tile_n / 2 + n0 / 2 + c});
        });
        break;
    }
  }
}

}  // namespace

std::optional<std::string> derive_tcgen05(const spec::Spec& s, Shapes& sh) {
  if (auto why = step1_types(s, sh)) return why;
  return step2_instructions(s, sh);
}

void plan_tcgen05(Plan& p) {
  step3_idescs(p.spec, p);
  step4_issue(p);
  kernel_roles(p);
}

}  // namespace ptxgen::plan::detail
