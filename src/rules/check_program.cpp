// The lowered kernel's checks. The verifiers (verify*.cpp, run once by lowered()) find every reason
// the kernel cannot be planned, each a Problem under a rule id of this table with the pointer of
// the field to change; each check here reports the problems of its own rule, so the table binds id,
// explanation, examples and check as for every other rule. The budget rules read the planned
// kernel's memory map (the same numbers the plan uses).
#include <algorithm>
#include <cctype>

#include "context.hpp"

namespace ptxgen::rules {

namespace {

std::string rule_id(std::string_view fn) {
  std::string id(fn);
  for (auto& ch : id) ch = ch == '_' ? '-' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return id;
}

void report(const Context& c, Diagnostics& d, const std::string& id) {
  // A lowered gemm has problems only where the template's own rules (budgets included, which
  // run first) already refused the spec.
  if (c.gemm && d.has_errors()) return;
  lowered(c, d);
  for (const auto& p : c.problems)
    if (p.rule == id) d.error(p.rule, p.pointer, p.message).help = p.help;
}

}  // namespace

#define PTXGEN_DEFINE_CHECK(n) \
  void check_##n(const Context& c, Diagnostics& d) { report(c, d, rule_id(#n)); }
PTXGEN_PROGRAM_CHECKS(PTXGEN_DEFINE_CHECK)
#undef PTXGEN_DEFINE_CHECK

}  // namespace ptxgen::rules

namespace ptxgen::rules {

// Budgets (program level): the memory map of the analysis.
void check_tmem_alloc_total(const Context& c, Diagnostics& d) {
  if (!c.spec.program || !c.target.tcgen05) return;  // elsewhere PROGRAM-TARGET says all there is
  const ir::Kernel* k = buffers_verified(c, d);
  if (!k) return;
  const plan::MemoryMap& m = memory_map(c, *k);
  if (m.allocs.empty() || m.tmem_columns <= static_cast<uint32_t>(c.target.tmem_columns)) return;
  d.error("TMEM-ALLOC-TOTAL", k->tmem_ptr,
          "the allocations take " + std::to_string(m.tmem_columns) + " tensor-memory columns; a CTA has " +
              std::to_string(c.target.tmem_columns) + " (§9.7.16.1), and a tcgen05.alloc beyond them blocks forever")
      .help = {"share columns through slices and aliases of fewer allocations"};
}

void check_program_smem_budget(const Context& c, Diagnostics& d) {
  if (!c.spec.program || !c.target.tcgen05) return;
  const ir::Kernel* k = buffers_verified(c, d);
  if (!k) return;
  const uint32_t bytes = memory_map(c, *k).smem_bytes, budget = static_cast<uint32_t>(c.target.smem_per_block_max);
  if (bytes <= budget) return;
  Diagnostic& e = d.error("PROGRAM-SMEM-BUDGET", k->smem_ptr,
                          "the tiles, barriers and allocation words need " + std::to_string(bytes) +
                              " bytes of shared memory with alignment slack; a CTA on " + std::string(c.target.name) +
                              " gets at most " + std::to_string(budget));
  // Where rings are what overflows (a pipelined loop's stages), the help names the stage count that
  // fits: every ring of the largest count cut to it together (a loop's rings turn in step), found by
  // placing the kernel again at each smaller count, so the number is the memory map's own.
  int most = 1;
  for (const ir::Tile& t : k->tiles) most = std::max(most, t.stages);
  std::string rings, first;
  for (const ir::Tile& t : k->tiles)
    if (t.stages == most && most > 1) {
      rings += (rings.empty() ? "\"" : ", \"") + t.name + "\"";
      if (first.empty()) first = t.ptr + "/stages";
    }
  for (int s = most - 1; s >= 1 && !rings.empty(); --s) {
    ir::Kernel fewer = *k;
    for (ir::Tile& t : fewer.tiles)
      if (t.stages == most) t.stages = s;
    const uint32_t need = plan::memory_map(fewer).smem_bytes;
    if (need > budget) continue;
    e.help = {"\"stages\": " + std::to_string(s) + " on " + rings + " (" + first + "): the rings' " + std::to_string(most) +
                  " stages are what overflows, and " + std::to_string(s) + " take " + std::to_string(need) + " bytes",
              "or use smaller tiles"};
    return;
  }
  e.help = {"use smaller tiles, or reuse one tile for several loads"};
}

}  // namespace ptxgen::rules
