// The tcgen05.mma planner. Four steps, each a small function:
//   1. shapes and types        (kind, per-CTA tile extents, operand layouts)
//   2. instruction shapes      (M/N/K instruction groups, memory maps)
//   3. descriptors             (instruction descriptors, SMEM descriptors, TMEM addresses)
//   4. issue order             (tcgen05.cp of A, then the MMAs, K step outermost)
#include <algorithm>
#include <stdexcept>

#include "ptxgen/plan.hpp"

namespace ptxgen::plan {

namespace {

uint32_t round_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

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
  auto layout = [&](OperandTile& t, char name, const spec::Operand& op, isa::Swizzle sw, int rows) {
    t.name = name;
    t.dtype = op.dtype;
    t.rows_used = rows;
    t.layout.major = op.major;
    t.layout.swizzle = sw;
    t.layout.bits = isa::smem_bits(sh.kind, op.dtype);
    t.layout.mn = rows;
    t.layout.k = tk;
    return isa::make_tile_layout(t.layout);
  };
  if (auto why = layout(sh.a, 'A', g.a, g.swizzle_a, tm / cta)) return "A: " + *why;
  if (auto why = layout(sh.b, 'B', g.b, g.swizzle_b, tn / cta)) return "B: " + *why;
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

  // Shared memory: each operand tile starts on a 1024-byte boundary (the 128B swizzle pattern,
  // Table 41), so every descriptor's base offset is 0.
  SmemMap& m = sh.smem;
  const uint32_t a_bytes = round_up(sh.a.layout.bytes, 1024);
  const uint32_t b_bytes = round_up(sh.b.layout.bytes, 1024);
  m.stage_bytes = a_bytes + b_bytes;
  const uint64_t stages_bytes = uint64_t{m.stage_bytes} * static_cast<uint64_t>(g.stages);
  if (stages_bytes > (uint64_t{1} << 24)) return "the pipeline's shared memory is far beyond any target";
  for (int st = 0; st < g.stages; ++st) {
    m.a_offset.push_back(static_cast<uint32_t>(st) * m.stage_bytes);
    m.b_offset.push_back(static_cast<uint32_t>(st) * m.stage_bytes + a_bytes);
  }
  m.barriers_offset = static_cast<uint32_t>(stages_bytes);
  m.barriers = static_cast<int>(2 * g.stages + 1);  // full[stages], empty[stages], accumulator-ready
  m.tmem_slot_offset = m.barriers_offset + 8u * static_cast<uint32_t>(m.barriers);
  m.dynamic_bytes = m.align + round_up(m.tmem_slot_offset + 4, 16);

  // Tensor memory: D of every (M group, N group) side by side in columns, then A (if in TMEM)
  // per M group. Lane placement follows the data-path layouts of §9.7.16.10.5: M=128 (layout D)
  // and M=256 (layout A) use all 128 lanes; M=64 (layout F) lanes 0-15 of each 32-lane quarter;
  // cta_group::2 M=128 (layout B) holds N/2 columns per CTA over all 128 lanes.
  // Two M=64 groups share columns: layout F allows lane alignment 0 or 16, and each uses lanes
  // [0,16) or [16,32) of every 32-lane quarter.
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
isa::SmemDesc operand_desc(const OperandTile& t, uint32_t stage_offset, int row0, int k0) {
  isa::SmemDesc d;
  d.format = isa::DescFormat::sm100;
  d.start_address = stage_offset + isa::tile_offset(t.layout, row0, k0);
  d.lbo = t.layout.lbo;
  d.sbo = t.layout.sbo;
  d.base_offset = 0;  // every tile starts on a 1024-byte boundary of the aligned base
  d.swizzle = t.layout.swizzle;
  return d;
}

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
    if (!isa::encode(d)) throw std::logic_error("instruction descriptor does not encode");
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
        cp.src = operand_desc(sh.a, a_stage0, mi * sh.m_per_cta, k0);
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
          m.a_desc = operand_desc(sh.a, a_stage0, mi * sh.m_per_cta, k0);
        }
        m.b_desc = operand_desc(sh.b, b_stage0, n_start / sh.cta_group, k0);
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

}  // namespace

Derived derive(const spec::Spec& s) {
  Derived d;
  if (!s.gemm) {
    d.why_not = "no gemm template";
    return d;
  }
  if (!isa::target_info(s.target).tcgen05) {
    d.why_not = "the target has no tcgen05";
    return d;
  }
  Shapes sh;
  if (auto why = step1_types(s, sh)) {
    d.why_not = *why;
    return d;
  }
  if (auto why = step2_instructions(s, sh)) {
    d.why_not = *why;
    return d;
  }
  d.shapes = std::move(sh);
  return d;
}

Plan make_plan(const spec::Spec& s) {
  if (s.program) return make_program_plan(s);
  Derived d = derive(s);
  if (!d.shapes) throw std::logic_error("make_plan on a spec without a plan: " + d.why_not);
  Plan p;
  p.spec = s;
  p.shapes = std::move(*d.shapes);
  step3_idescs(s, p);
  step4_issue(p);
  return p;
}

uint64_t encoded(const isa::SmemDesc& d) {
  auto v = isa::encode(d);
  if (!v) throw std::logic_error("shared-memory descriptor does not encode");
  return *v;
}

std::array<uint64_t, 2> lane_mask(const TmemRegion& r) {
  std::array<uint64_t, 2> m{0, 0};
  auto set = [&](uint32_t lane) {
    if (lane < 128) m[lane / 64] |= uint64_t{1} << (lane % 64);
  };
  if (r.half_datapath) {
    for (uint32_t q = 0; q < 4; ++q)
      for (uint32_t i = 0; i < 16; ++i) set(32 * q + r.lane + i);
  } else {
    for (uint32_t i = 0; i < r.lanes; ++i) set(r.lane + i);
  }
  return m;
}

uint32_t encoded(const isa::InstrDesc& d) {
  auto v = isa::encode(d);
  if (!v) throw std::logic_error("instruction descriptor does not encode");
  return *v;
}

}  // namespace ptxgen::plan
