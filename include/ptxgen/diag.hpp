// ptxgen/diag.hpp — diagnostics: what every stage reports and how the CLI prints it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ptxgen {

enum class Severity { error, warning, note };
std::string_view name(Severity s);

struct Diagnostic {
  std::string rule;     // stable rule id, e.g. "MMA-N-RANGE"
  Severity severity = Severity::error;
  std::string pointer;  // RFC 6901 JSON pointer of the offending field ("" = whole document)
  std::string message;  // one line, with the offending values
  std::vector<std::string> help;  // concrete fixes for this instance
  int line = 0, column = 0;       // where in the source, when known more precisely than the pointer
};

// Where each JSON value starts in the source text: pointer -> (line, column), 1-based.
struct SourcePos {
  int line = 0;
  int column = 0;
};
using SourceMap = std::map<std::string, SourcePos>;

class Diagnostics {
 public:
  Diagnostic& error(std::string rule, std::string pointer, std::string message);
  Diagnostic& warning(std::string rule, std::string pointer, std::string message);
  bool has_errors() const;
  const std::vector<Diagnostic>& list() const { return list_; }
  bool fired(std::string_view rule) const;

 private:
  std::vector<Diagnostic> list_;
};

// Human form:
//   error[MMA-N-RANGE]: N=264 ...
//     --> spec.json:12:9 at /gemm/tile/n
//     = help: ...
//     = see: ptxgen explain MMA-N-RANGE
std::string format_text(const Diagnostic& d, std::string_view source, const SourceMap* map);
// One JSON object per line (rustc-like fields plus "rule" and "pointer").
std::string format_json(const Diagnostic& d, std::string_view source, const SourceMap* map);

// `s` with control characters (C0, DEL, C1) shown as JSON-style escapes: text from a spec or a
// file name, safe to print to a terminal.
std::string printable(std::string_view s);

// JSON-pointer helpers.
std::string ptr_join(std::string_view base, std::string_view key);
std::string ptr_join(std::string_view base, size_t index);

}  // namespace ptxgen
