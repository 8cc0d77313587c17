// Properties checked for every input (tests/fuzz/pipeline.hpp):
//  - no stage throws; every diagnostic names a rule of the table and a JSON pointer;
//  - printed diagnostics are single lines of printable text (specs come from other programs, and
//    their bytes end up in terminals and CI logs);
//  - a spec that passes the check plans and emits: the rule table, not the planner, refuses specs;
//  - the plan stays inside the hardware: shared memory and tensor memory budgets, descriptor ranges
//    (a program plan also: tiles apart and aligned, every view and tensor-memory address inside its
//    allocation);
//  - PTX is ASCII and the same bytes twice; the canonical form of the spec (spec::to_json, sorted
//    keys, defaults explicit) gives the same PTX and plan, so key order and defaults never matter.
#include "pipeline.hpp"

#include <nlohmann/json.hpp>

#include <exception>
#include <map>

#include "ptxgen/emit.hpp"
#include "ptxgen/lower.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/rules.hpp"

namespace ptxgen::fuzz {

namespace {

// No C0 control but the line ends, no DEL, no C1 control (U+0080..U+009F: CSI is U+009B).
bool printable_lines(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c != '\n' && (c < 0x20 || c == 0x7f)) return false;
    if (c == 0xC2 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0x80) return false;
  }
  return true;
}

std::optional<std::string> check_diagnostics(const Diagnostics& d, const rules::Checked& ck) {
  for (const auto& x : d.list()) {
    if (!rules::find(x.rule)) return "diagnostic with a rule not in the table: " + x.rule;
    if (!x.pointer.empty() && x.pointer[0] != '/') return "diagnostic pointer is not a JSON pointer: " + x.pointer;
    if (x.message.empty()) return "diagnostic " + x.rule + " without a message";
    const std::string text = format_text(x, "spec.json", &ck.parsed.positions);
    if (!printable_lines(text)) return "diagnostic " + x.rule + " prints control characters";
    const std::string json = format_json(x, "spec.json", &ck.parsed.positions);
    if (json.find('\n') != std::string::npos) return "JSON diagnostic " + x.rule + " spans lines";
    if (!nlohmann::json::accept(json)) return "JSON diagnostic " + x.rule + " is not JSON";
  }
  if (ck.ok == d.has_errors()) return "Checked::ok disagrees with the diagnostics";
  if (ck.ok && !ck.parsed.spec) return "checked ok without a spec";
  return std::nullopt;
}

// A plan: every placement inside the budgets it was checked against, tiles (and their rings)
// apart and aligned, views, tensor-memory addresses and descriptors inside what they point into.
std::optional<std::string> check_plan(const plan::Plan& p) {
  const auto& t = isa::target_info(p.ir().target);
  if (p.ir().engine == ir::Engine::tcgen05 && !t.tcgen05) return "a tcgen05 plan for a target without tcgen05";
  if (p.ir().engine == ir::Engine::wgmma && !p.allocs.empty()) return "a wgmma plan with tensor memory";
  if (p.smem_bytes > static_cast<uint32_t>(t.smem_per_block_max))
    return "the plan exceeds the target's shared memory: " + std::to_string(p.smem_bytes);
  const uint32_t usable = p.smem_bytes - p.smem_align;  // the rest is slack for aligning the base
  auto extent = [](const plan::SmemPlacement& x) { return x.stages > 1 ? x.stage_bytes * static_cast<uint32_t>(x.stages) : x.layout.bytes; };
  for (size_t i = 0; i < p.smem.size(); ++i) {
    const auto& a = p.smem[i];
    if (a.offset % a.align != 0 || a.align > p.smem_align || (a.stages > 1 && a.stage_bytes % a.align != 0))
      return "tile " + a.name + " is not aligned";
    if (a.offset + extent(a) > usable) return "tile " + a.name + " outside the shared memory requested";
    for (size_t j = 0; j < i; ++j) {
      const auto& b = p.smem[j];
      // A tile over a ring (ir::Tile::overlay) starts where that ring does and shares its memory.
      if (!a.overlay.empty() || !b.overlay.empty()) continue;
      if (a.offset < b.offset + extent(b) && b.offset < a.offset + extent(a)) return "tiles " + b.name + " and " + a.name + " overlap";
    }
  }
  for (const auto& a : p.smem) {
    if (a.overlay.empty()) continue;
    bool at_ring = false;
    for (const auto& b : p.smem) at_ring = at_ring || (b.name == a.overlay && b.offset == a.offset && b.overlay.empty());
    if (!at_ring) return "tile " + a.name + " is not where the ring it overlays starts";
  }
  for (const auto& b : p.barriers)
    if (b.offset % 8 != 0 || b.offset + 8u * static_cast<uint32_t>(b.stages) > usable) return "mbarrier " + b.name + " misplaced";
  std::map<std::string, uint32_t> cols;
  uint32_t total = 0, last = ~0u;
  for (const auto& a : p.allocs) {
    if (a.columns < 32 || a.columns > 512 || (a.columns & (a.columns - 1)) != 0)
      return "tcgen05.alloc of " + std::to_string(a.columns) + " columns";
    if (a.columns > last) return "allocations grow (PTX ISA 9.1 §9.7.16.7.1: they must not increase)";
    if (a.slot_offset % 4 != 0 || a.slot_offset + 4 > usable) return "allocation word of " + a.name + " misplaced";
    last = a.columns;
    total += a.columns;
    cols[a.name] = a.columns;
  }
  if (total != p.tmem_columns || total > static_cast<uint32_t>(t.tmem_columns))
    return "the allocations take " + std::to_string(total) + " columns";
  for (const auto& [n, v] : p.views) {
    auto it = cols.find(v.alloc);
    if (it == cols.end()) return "view " + n + " in no allocation";
    if (v.column + v.columns > it->second || v.lane + v.lanes > static_cast<uint32_t>(isa::kTmemLanes))
      return "view " + n + " outside its allocation";
  }
  auto inside = [&](const std::string& alloc, uint32_t addr) {
    auto it = cols.find(alloc);
    const isa::TmemAddr a = isa::decode_tmem(addr);
    return it != cols.end() && a.column < it->second && a.lane < static_cast<uint32_t>(isa::kTmemLanes);
  };
  std::vector<const plan::Step*> steps;
  auto walk = [&](auto&& self, const std::vector<plan::Step>& ss) -> void {
    for (const auto& x : ss) {
      steps.push_back(&x);
      self(self, x.body);
    }
  };
  for (const auto& r : p.roles) walk(walk, r.steps);
  for (const plan::Step* sp : steps) {
    const plan::Step& st = *sp;
    // A tensor-memory ring over the tiles (the double-buffered accumulator): the addresses planned
    // are stage 0's; the last stage lies stride x (stages - 1) columns further, inside too.
    const uint32_t last = st.tmem_ring.stages > 1 ? st.tmem_ring.stride * static_cast<uint32_t>(st.tmem_ring.stages - 1) : 0;
    for (const auto& m : st.mma.instrs)
      if (last && !inside(m.d_alloc, m.d_taddr + last)) return "the accumulator ring's last stage outside its allocation";
    for (const auto& f : st.ld.frags)
      if (last && !inside(f.alloc, f.taddr + last)) return "the accumulator ring's last stage outside its allocation";
    for (const auto& c : st.cps) {
      (void)plan::encoded(c.src);  // throws when a field does not fit
      if (!inside(c.alloc, c.taddr)) return "tcgen05.cp outside its allocation";
    }
    for (const auto& m : st.mma.instrs) {
      if (st.mma.engine == ir::Engine::wgmma) {
        if (!st.mma.a_registers) (void)plan::encoded(m.a_desc);
        (void)plan::encoded(m.b_desc);
        continue;
      }
      if (!m.a_tmem) (void)plan::encoded(m.a_desc);
      else if (!inside(m.a_alloc, m.a_taddr)) return "tcgen05.mma A outside its allocation";
      (void)plan::encoded(m.b_desc);
      (void)plan::encoded(m.idesc);
      if (!inside(m.d_alloc, m.d_taddr)) return "tcgen05.mma D outside its allocation";
      if (st.mma.scaled && (!inside(m.sfa_alloc, m.sfa_taddr) || !inside(m.sfb_alloc, m.sfb_taddr)))
        return "scale factors outside their allocation";
      if (st.mma.sparse && !inside(m.meta_alloc, m.meta_taddr)) return "metadata outside its allocation";
    }
    for (const plan::RegDef* d : {&st.ld, &st.st.dst})
      for (const auto& f : d->frags)
        if (!inside(f.alloc, f.taddr)) return "tcgen05.ld/st outside its allocation";
  }
  return std::nullopt;
}

struct Outputs {
  std::string ptx, plan_json, plan_text, manifest;
};

// The outputs of a spec. `chosen` aside: the canonical form states what a spec left out and was
// chosen (gemm.tile, gemm.stages), so only the spec itself has the plan's "chosen" notes.
Outputs outputs(const spec::Spec& s) {
  ir::Kernel k = lower::lower(s);
  const plan::Plan with_chosen = plan::make_plan(k);
  if (auto bad = check_plan(with_chosen)) throw std::logic_error(*bad);
  const std::string text = emit::plan_text(with_chosen);  // printed with them once, so a crash there is found
  (void)text;
  k.chosen.clear();  // the plan reads the IR's notes
  const plan::Plan p = plan::make_plan(k);
  return {emit::ptx(p), emit::plan_json(p), emit::plan_text(p), plan::manifest(p)};
}

std::optional<std::string> run(std::string_view input) {
  Diagnostics d;
  const rules::Checked ck = rules::parse_and_check(input, d);
  if (auto bad = check_diagnostics(d, ck)) return bad;
  if (!ck.ok) return std::nullopt;
  const spec::Spec& s = *ck.parsed.spec;

  const Outputs first = outputs(s);
  for (unsigned char c : first.ptx)
    if (c >= 0x80 || (c < 0x20 && c != '\n' && c != '\t')) return "PTX byte outside printable ASCII";
  if (outputs(s).ptx != first.ptx) return "PTX differs between two runs in one process";

  const std::string canonical = spec::to_json(s);
  Diagnostics d2;
  const rules::Checked again = rules::parse_and_check(canonical, d2);
  if (!again.ok) return "the canonical form of a valid spec does not check:\n" + canonical;
  const Outputs second = outputs(*again.parsed.spec);
  if (second.ptx != first.ptx || second.plan_json != first.plan_json || second.plan_text != first.plan_text ||
      second.manifest != first.manifest)
    return "the canonical form of the spec gives different output";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> run_pipeline(std::string_view input) {
  try {
    return run(input);
  } catch (const std::exception& e) {
    return std::string("exception: ") + e.what();
  }
}

}  // namespace ptxgen::fuzz
