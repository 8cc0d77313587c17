// Loading a spec: --target resolution, parsing, and the rule check per target.
#include "load.hpp"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "exit.hpp"
#include "ptxgen/io.hpp"

namespace ptxgen::cli {

namespace {

std::string known_targets() {
  std::string out;
  for (auto a : isa::all_archs()) out += (out.empty() ? "" : ", ") + std::string(isa::target_info(a).name);
  return out;
}

// The --target names as architectures, duplicates dropped; empty optional on an unknown name.
std::optional<std::vector<isa::Arch>> resolve(const std::vector<std::string>& names) {
  std::vector<isa::Arch> out;
  for (const auto& n : names) {
    const auto a = isa::parse_arch(n);
    if (!a) {
      std::cerr << "error: unknown --target \"" << n << "\"; ptxgen knows " << known_targets() << "\n";
      for (auto k : isa::all_archs())
        if (const auto name = isa::target_info(k).name; !n.empty() && name.substr(0, n.size()) == n)
          std::cerr << "  = help: did you mean " << name << "?\n";
      return std::nullopt;
    }
    if (std::find(out.begin(), out.end(), *a) == out.end()) out.push_back(*a);
  }
  return out;
}

void print(const Diagnostics& d, const Source& src, const SourceMap& map, const char* target) {
  for (const auto& x : d.list()) {
    if (src.diagnostics != "json") {
      std::cerr << format_text(x, src.path, &map) << "\n";
      continue;
    }
    if (!target) {
      std::cerr << format_json(x, src.path, &map) << "\n";
      continue;
    }
    auto j = nlohmann::ordered_json::parse(format_json(x, src.path, &map));
    j["target"] = target;
    std::cerr << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
}

size_t count_errors(const Diagnostics& d) {
  size_t n = 0;
  for (const auto& x : d.list()) n += x.severity == Severity::error;
  return n;
}

}  // namespace

void print_diagnostics(const Loaded& l, size_t i, const Diagnostics& d) {
  const std::string name(isa::target_info(l.units.at(i).spec.target).name);
  print(d, l.source, l.positions, l.overridden ? name.c_str() : nullptr);
}

std::string target_names(const std::vector<Compiled>& units) {
  std::string out;
  for (const auto& u : units) out += (out.empty() ? "" : ", ") + std::string(isa::target_info(u.spec.target).name);
  return out;
}

Loaded load(const Source& src) {
  Loaded l;
  const auto targets = resolve(src.targets);
  if (!targets) {
    l.exit = kUnknownTarget;
    return l;
  }
  const io::Read r = io::read_file(src.path, spec::Limits{}.max_bytes);  // more is SPEC-LIMIT-SIZE
  if (!r.ok) {
    std::cerr << "error: " << r.error << "\n";
    l.exit = kInvalid;
    return l;
  }
  if (src.path != "-") l.inputs.push_back(src.path);

  Diagnostics parse_diags;
  const spec::ParseResult parsed = spec::parse(r.data, parse_diags);
  print(parse_diags, src, parsed.positions, nullptr);
  if (!parsed.spec) {
    std::cerr << src.path << ": " << count_errors(parse_diags) << " error(s); nothing written\n";
    l.exit = kInvalid;
    return l;
  }
  // Without --target the spec's own target, reported as before --target existed.
  const bool overridden = !targets->empty();
  const std::vector<isa::Arch> archs = overridden ? *targets : std::vector<isa::Arch>{parsed.spec->target};
  size_t errors = 0;
  std::string failing;
  for (isa::Arch a : archs) {
    Diagnostics d;
    Compiled unit = compile(*parsed.spec, a, d);
    const std::string name(isa::target_info(a).name);
    if (overridden && !d.list().empty() && src.diagnostics != "json")
      std::cerr << "note: " << src.path << " checked for --target " << name << " (the spec says "
                << isa::target_info(parsed.spec->target).name << ")\n";
    print(d, src, parsed.positions, overridden ? name.c_str() : nullptr);
    if (d.has_errors()) {
      errors += count_errors(d);
      failing += (failing.empty() ? "" : ", ") + name;
    }
    l.units.push_back(std::move(unit));
  }
  l.source = src;
  l.positions = parsed.positions;
  l.overridden = overridden;
  if (errors) {
    std::cerr << src.path << ": " << errors << " error(s)" << (overridden ? " for --target " + failing : "")
              << "; nothing written\n";
    l.exit = kInvalid;
    l.units.clear();
  }
  return l;
}

}  // namespace ptxgen::cli
