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
  out += "[" + d.rule + "]: " + d.message + "\n";
  out += "  --> ";
  out += source;
  if (d.line > 0)
    out += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
  else if (const SourcePos* p = lookup(map, d.pointer))
    out += ":" + std::to_string(p->line) + ":" + std::to_string(p->column);
  out += " at " + (d.pointer.empty() ? std::string("/") : d.pointer) + "\n";
  for (const auto& h : d.help) out += "  = help: " + h + "\n";
  out += "  = see: ptxgen explain " + d.rule + "\n";
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
