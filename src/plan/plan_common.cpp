// The planner's entry points and the pieces both engines share.
#include <stdexcept>

#include "internal.hpp"

namespace ptxgen::plan {

namespace detail {

uint32_t round_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

std::optional<std::string> operand_tile(OperandTile& t, char name, const spec::Operand& op, isa::Swizzle sw,
                                        int bits, int rows, int tile_k) {
  t.name = name;
  t.dtype = op.dtype;
  t.layout = {};
  t.layout.major = op.major;
  t.layout.swizzle = sw;
  t.layout.bits = bits;
  t.layout.mn = rows;
  t.layout.k = tile_k;
  return isa::make_tile_layout(t.layout);
}

std::optional<std::string> smem_map(Shapes& sh, int64_t stages) {
  // Every operand tile starts on a 1024-byte boundary (the 128B swizzle pattern, PTX ISA 9.1
  // Table 41) so that descriptor base offsets are 0.
  SmemMap& m = sh.smem;
  const uint32_t a_bytes = round_up(sh.a.layout.bytes, 1024);
  const uint32_t b_bytes = round_up(sh.b.layout.bytes, 1024);
  m.stage_bytes = a_bytes + b_bytes;
  const uint64_t all = uint64_t{m.stage_bytes} * static_cast<uint64_t>(stages);
  if (all > (uint64_t{1} << 24)) return "the pipeline's shared memory is far beyond any target";
  m.a_offset.clear();
  m.b_offset.clear();
  for (int64_t st = 0; st < stages; ++st) {
    m.a_offset.push_back(static_cast<uint32_t>(st) * m.stage_bytes);
    m.b_offset.push_back(static_cast<uint32_t>(st) * m.stage_bytes + a_bytes);
  }
  m.barriers_offset = static_cast<uint32_t>(all);
  m.barriers = static_cast<int>(2 * stages + 2);  // full[s], empty[s], accumulator-ready, A-free
  m.tmem_slot_offset = m.barriers_offset + 8u * static_cast<uint32_t>(m.barriers);
  m.dynamic_bytes = m.align + round_up(m.tmem_slot_offset + 4, 16);
  return std::nullopt;
}

isa::SmemDesc operand_desc(const OperandTile& t, isa::DescFormat f, uint32_t stage_offset, int row0, int k0) {
  isa::SmemDesc d;
  d.format = f;
  d.start_address = stage_offset + isa::tile_offset(t.layout, row0, k0);
  d.lbo = t.layout.lbo;
  d.sbo = t.layout.sbo;
  d.base_offset = 0;  // every tile starts on a 1024-byte boundary of the aligned base
  d.swizzle = t.layout.swizzle;
  return d;
}

}  // namespace detail

Derived derive(const spec::Spec& s) {
  Derived d;
  if (!s.gemm) {
    d.why_not = "no gemm template";
    return d;
  }
  Shapes sh;
  const auto& t = isa::target_info(s.target);
  std::optional<std::string> why = t.tcgen05 ? detail::derive_tcgen05(s, sh) : detail::derive_wgmma(s, sh);
  if (why) {
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
  p.kernel.cluster = {static_cast<int>(s.gemm->cluster[0]), static_cast<int>(s.gemm->cluster[1]),
                      static_cast<int>(s.gemm->cluster[2])};
  if (p.shapes.engine == Engine::tcgen05) detail::plan_tcgen05(p);
  else detail::plan_wgmma(p);
  detail::plan_tma(p);
  return p;
}

uint64_t encoded(const isa::SmemDesc& d) {
  auto v = isa::encode(d);
  if (!v) throw std::logic_error("shared-memory descriptor does not encode");
  return *v;
}

uint32_t encoded(const isa::InstrDesc& d) {
  auto v = isa::encode(d);
  if (!v) throw std::logic_error("instruction descriptor does not encode");
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

}  // namespace ptxgen::plan
