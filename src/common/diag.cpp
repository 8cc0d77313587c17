// Diagnostics: collection and the two printed forms.
#include "ptxgen/diag.hpp"

#include <nlohmann/json.hpp>

namespace ptxgen {

std::string_view name(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

Diagnostic& Diagnostics::error(std::string rule, std::string pointer, std::string message) {
  list_.push_back({std::move(rule), Severity::error, std::move(pointer), std::move(message), {}});
  return list_.back();
}

Diagnostic& Diagnostics::warning(std::string rule, std::string pointer, std::string message) {
  list_.push_back({std::move(rule), Severity::warning, std::move(pointer), std::move(message), {}});
  return list_.back();
}

bool Diagnostics::has_errors() const {
  for (const auto& d : list_)
    if (d.severity == Severity::error) return true;
  return false;
}

bool Diagnostics::fired(std::string_view rule) const {
  for (const auto& d : list_)
    if (d.rule == rule) return true;
  return false;
}

// Specs come from other programs, and their strings reach messages and pointers (an unknown key, a
// wrong name). Printed to a terminal or a CI log, a raw ESC or C1 control could rewrite what the
// reader sees, and a newline could forge a diagnostic line. Controls are shown as JSON-style escapes.
std::string printable(std::string_view s) {
  static const char* const hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool c1 = c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(s[i + 1]) <= 0x9F;  // U+0080..U+009F in UTF-8
    if (c1) {
      const auto cp = static_cast<unsigned char>(s[++i]);
      out += "\\u00";
      out += hex[cp >> 4];
      out += hex[cp & 15];
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {
const SourcePos* lookup(const SourceMap* map, const std::string& pointer) {
  if (!map) return nullptr;
  // The nearest enclosing value that has a position (a missing key points at its parent).
  std::string p = pointer;
  for (;;) {
    auto it = map->find(p);
    if (it != map->end()) return &it->second;
    if (p.empty()) return nullptr;
    p.erase(p.rfind('/'));
  }
}
}  // namespace

std::string format_text(const Diagnostic& d, std::string_view source, const SourceMap* map) {
  std::string out;
  out += name(d.severity);
  out += "[" + printable(d.rule) + "]: " + printable(d.message) + "\n";
  out += "  --> ";
  out += printable(source);
  if (d.line > 0)
    out += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
  else if (const SourcePos* p = lookup(map, d.pointer))
    out += ":" + std::to_string(p->line) + ":" + std::to_string(p->column);
  out += " at " + (d.pointer.empty() ? std::string("/") : printable(d.pointer)) + "\n";
  for (const auto& h : d.help) out += "  = help: " + printable(h) + "\n";
  out += "  = see: ptxgen explain " + printable(d.rule) + "\n";
  return out;
}

std::string format_json(const Diagnostic& d, std::string_view source, const SourceMap* map) {
  nlohmann::ordered_json j;
  j["severity"] = std::string(name(d.severity));
  j["rule"] = d.rule;
  j["message"] = d.message;
  j["file"] = std::string(source);
  j["pointer"] = d.pointer;
  if (d.line > 0) {
    j["line"] = d.line;
    j["column"] = d.column;
  } else if (const SourcePos* p = lookup(map, d.pointer)) {
    j["line"] = p->line;
    j["column"] = p->column;
  }
  j["help"] = d.help;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ptr_join(std::string_view base, std::string_view key) {
  std::string out(base);
  out += '/';
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string ptr_join(std::string_view base, size_t index) {
  return std::string(base) + "/" + std::to_string(index);
}

}  // namespace ptxgen
