// The program level's checks. The analysis that resolves views and plans each op
// (plan::analyze_program) is the check: every reason a program has no plan is a Problem under a
// rule id of this table, with the pointer of the field to change. Each check here reports the
// problems of its own rule, so the table binds id, explanation, examples and check as for every
// other rule (the same deliberate edge as the budget checks, which call plan::derive).
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
  if (!c.program) return;
  for (const auto& p : c.program->problems)
    if (p.rule == id) d.error(p.rule, p.pointer, p.message).help = p.help;
}

}  // namespace

#define PTXGEN_DEFINE_CHECK(n) \
  void check_##n(const Context& c, Diagnostics& d) { report(c, d, rule_id(#n)); }
PTXGEN_PROGRAM_CHECKS(PTXGEN_DEFINE_CHECK)
#undef PTXGEN_DEFINE_CHECK

}  // namespace ptxgen::rules
