// `ptxgen explain ID` and docs/rules.md, generated from the rule table.
#include <sstream>

#include "ptxgen/rules.hpp"

namespace ptxgen::rules {

namespace {

std::string wrap(std::string_view text, size_t width, const std::string& indent) {
  std::string out, line;
  std::istringstream words{std::string(text)};
  std::string w;
  while (words >> w) {
    if (!line.empty() && line.size() + 1 + w.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

// The diagnostics the failing example produces, as `ptxgen check` prints them (a rule about
// ptxas's report: as `ptxgen build` does, from the report ptxas gave for it).
std::string example_messages(const Rule& r) {
  Diagnostics d;
  const std::string doc = bad_document(r);
  Checked c = parse_and_check(doc, d);
  if (!r.ptxas_report.empty() && c.parsed.spec) check_ptxas_report(*c.parsed.spec, r.ptxas_report, d);
  std::string out;
  for (const auto& x : d.list())
    if (x.rule == r.id) out += format_text(x, "example.json", &c.parsed.positions);
  return out;
}

std::string indent_lines(const std::string& s, const std::string& indent) {
  std::string out;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) out += indent + line + "\n";
  return out;
}

}  // namespace

std::string explain(const Rule& r) {
  std::string out;
  out += std::string(r.id) + ": " + std::string(r.title) + "\n";
  out += "ISA: " + std::string(r.isa) + "\n\n";
  out += "The message (from the failing example below)\n";
  out += indent_lines(example_messages(r), "  ") + "\n";
  out += "What it means\n" + wrap(r.means, 96, "  ") + "\n";
  out += "When it happens\n" + wrap(r.when, 96, "  ") + "\n";
  out += "How to fix it\n";
  for (auto f : r.fixes) out += wrap(std::string("- ") + std::string(f), 96, "  ");
  out += "\nExample\n";
  if (r.make_bad) {
    out += "  fails (a document built by the test suite):\n    " + std::string(r.bad) + "\n";
  } else if (r.bad_is_document) {
    out += "  fails (the whole document):\n" + indent_lines(std::string(r.bad), "    ");
  } else if (uses_program_base(r)) {
    out += "  fails (changes to the program example spec; the whole document):\n" + indent_lines(bad_document(r), "    ");
  } else {
    out += "  fails (changes to the example spec of `ptxgen explain --base`):\n    " + std::string(r.bad) + "\n";
  }
  if (!r.ptxas_report.empty())
    out += "  ptxas -v reports for it (`ptxgen build`):\n" + indent_lines(std::string(r.ptxas_report), "    ");
  // A program rule's passing patch is often empty ({"program": {}}: the example spec itself), which
  // shows nothing: print the document it gives, as the failing one is.
  if (!r.make_bad && !r.bad_is_document && uses_program_base(r))
    out += "  passes (changes to the program example spec; the whole document):\n" + indent_lines(good_document(r), "    ");
  else
    out += "  passes:\n    " + std::string(r.good) + "\n";
  return out;
}

std::string rules_markdown() {
  std::string out;
  out += "# ptxgen rules\n\n";
  out += "Generated from the rule table (src/rules/table.cpp) by `ptxgen rules --markdown`; CI checks that this\n";
  out += "file is current. `ptxgen explain ID` prints one rule with the message its failing example produces.\n\n";
  out += "| id | title | ISA |\n|---|---|---|\n";
  for (const auto& r : table())
    out += "| [" + std::string(r.id) + "](#" + std::string(r.id) + ") | " + std::string(r.title) + " | " +
           std::string(r.isa) + " |\n";
  out += "\nThe examples patch this spec (RFC 7386 merge patch):\n\n```json\n" + std::string(example_base()) + "\n```\n";
  out += "\nExamples whose patch has a \"program\" member patch this program-level spec instead:\n\n```json\n" +
         std::string(example_program_base()) + "\n```\n";
  for (const auto& r : table()) {
    out += "\n## " + std::string(r.id) + "\n\n";
    out += "**" + std::string(r.title) + "** — " + std::string(r.isa) + "\n\n";
    out += "```\n" + example_messages(r) + "```\n\n";
    out += "*What it means.* " + std::string(r.means) + "\n\n";
    out += "*When it happens.* " + std::string(r.when) + "\n\n";
    out += "*Fixes.*\n";
    for (auto f : r.fixes) out += "- " + std::string(f) + "\n";
    out += "\n*Fails:* `" + std::string(r.make_bad ? "(built) " : r.bad_is_document ? "(document) " : "") +
           std::string(r.bad) + "`  \n";
    if (!r.ptxas_report.empty()) out += "*ptxas -v reports for it (`ptxgen build`):*\n\n```\n" + std::string(r.ptxas_report) + "```\n\n";
    out += "*Passes:* `" + std::string(r.good) + "`\n";
  }
  return out;
}

}  // namespace ptxgen::rules
