// ptxgen/rules.hpp — the rule table: the one place that says what the hardware forbids.
//
// Each rule has a stable id, a title, the PTX ISA section it rests on, the check (for rules the
// spec parser enforces, the parser is the check), a long explanation, fixes, and a minimal
// failing example with the pointer its diagnostic must carry. `ptxgen rules`, `ptxgen explain`,
// docs/rules.md and the negative test suite are all generated from this table.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ptxgen/diag.hpp"
#include "ptxgen/ir.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/spec.hpp"

namespace ptxgen::rules {

struct Context;  // what a check sees (src/rules/context.hpp)
using CheckFn = void (*)(const Context&, Diagnostics&);

struct Rule {
  std::string_view id;
  std::string_view title;
  std::string_view isa;    // the PTX ISA section(s) it rests on
  std::string_view means;  // what it means
  std::string_view when;   // when it happens
  std::vector<std::string_view> fixes;
  // The minimal failing example: a JSON merge patch (RFC 7386) applied to example_base(), or, when
  // `bad_is_document`, a whole document text. `bad_pointer` is where the diagnostic must point.
  std::string_view bad;
  std::string_view bad_pointer;
  bool bad_is_document = false;
  // The same example fixed (a merge patch on example_base()).
  std::string_view good;
  CheckFn check = nullptr;  // nullptr: enforced by the spec parser (or, with ptxas_report, by check_ptxas_report)
  // Builds the failing document when it is too large to write out (an input limit: 1 MiB, 4097
  // elements); `bad` then describes it in words for `explain` and docs/rules.md.
  std::string (*make_bad)() = nullptr;
  // A rule about what ptxas reports for the kernel (`ptxgen build`), not about the spec: `bad`
  // passes the check, and assembled it draws `ptxas_report` (recorded from ptxas 13.0), from which
  // check_ptxas_report gives the diagnostic that `explain` and docs/rules.md show. Empty for the
  // rules the check itself fires.
  std::string_view ptxas_report = {};
};

const std::vector<Rule>& table();
const Rule* find(std::string_view id);

// The valid spec every example patches.
std::string_view example_base();
// The valid program-level spec that examples with a "program" member patch instead.
std::string_view example_program_base();
bool uses_program_base(const Rule& r);
// The example documents of a rule (the patch applied).
std::string bad_document(const Rule& r);
std::string good_document(const Rule& r);

// What the checks of a spec computed: when none found an error, the kernel IR they lowered (once)
// and verified, and the planner's facts the budget rules read, for make_plan (ptxgen/compile.hpp).
struct Analysis {
  std::shared_ptr<const ir::Kernel> kernel;  // null when a rule refused the spec
  plan::Facts facts;
};

// Runs every check of the table over a parsed spec.
Analysis check(const spec::Spec& s, Diagnostics& diags);

// The warnings of the rules about ptxas's report (Rule::ptxas_report: PTXAS-SPILL) for the kernel
// of `s`: what `ptxgen build` adds to the check's diagnostics once ptxas has assembled the PTX
// (`ptxas -v` output, one entry function).
void check_ptxas_report(const spec::Spec& s, std::string_view report, Diagnostics& diags);

// Parses then checks: everything `ptxgen check` does.
struct Checked {
  spec::ParseResult parsed;
  bool ok = false;  // parsed and no errors
};
Checked parse_and_check(std::string_view text, Diagnostics& diags);

// The long form printed by `ptxgen explain ID` and docs/rules.md.
std::string explain(const Rule& r);
// The table as Markdown (docs/rules.md).
std::string rules_markdown();

}  // namespace ptxgen::rules
