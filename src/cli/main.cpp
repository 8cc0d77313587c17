// The ptxgen command line: check, plan, emit, build, rules, explain.
//
// Exit codes: 0 success; 1 the spec is invalid or an output cannot be written (nothing written);
// 2 usage error; 3 toolchain failure (ptxas missing, too old, or failing; its output shown).
#include <CLI/CLI.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <optional>
#include <regex>

#include "ptxgen/emit.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/rules.hpp"

namespace {

using namespace ptxgen;

constexpr int kOk = 0, kInvalid = 1, kUsage = 2, kToolchain = 3;

struct Common {
  std::string spec_path;
  std::string diagnostics = "text";
};

void print_diagnostics(const Diagnostics& d, const Common& c, const SourceMap* map) {
  for (const auto& x : d.list()) {
    if (c.diagnostics == "json") std::cerr << format_json(x, c.spec_path, map) << "\n";
    else std::cerr << format_text(x, c.spec_path, map) << "\n";
  }
}

// Reads, parses and checks; prints diagnostics. Empty on any error.
std::optional<spec::Spec> load(const Common& c) {
  io::Read r = io::read_file(c.spec_path, spec::Limits{}.max_bytes);  // more is SPEC-LIMIT-SIZE
  if (!r.ok) {
    std::cerr << "error: " << r.error << "\n";
    return std::nullopt;
  }
  Diagnostics d;
  rules::Checked ck = rules::parse_and_check(r.data, d);
  print_diagnostics(d, c, &ck.parsed.positions);
  if (!ck.ok) {
    size_t errors = 0;
    for (const auto& x : d.list()) errors += x.severity == Severity::error;
    std::cerr << c.spec_path << ": " << errors << " error(s); nothing written\n";
    return std::nullopt;
  }
  return ck.parsed.spec;
}

int write_output(const std::string& path, const std::string& data) {
  if (auto err = io::write_file_atomic(path, data)) {
    std::cerr << "error: " << *err << "\n";
    return kInvalid;
  }
  return kOk;
}

std::string default_path(const spec::Spec& s, const std::string& given, const char* ext) {
  return given.empty() ? s.name + ext : given;
}

// The cubin next to a ptx: "x.ptx" -> "x.cubin".
std::string with_extension(const std::string& path, const char* ext) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) return path.substr(0, dot) + ext;
  return path + ext;
}

// A cubin from a build that failed no longer matches the PTX just written beside it: remove it
// (and its report and manifest) so that no cubin is left that does not come from the PTX next to it.
void remove_stale(const std::string& cubin, const std::string& report, const std::string& manifest) {
  for (const std::string& f : {cubin, report, manifest})
    if (::unlink(f.c_str()) == 0) std::cerr << "note: removed " << f << " from an earlier build\n";
}

int cmd_build(const spec::Spec& s, const std::string& out_cubin, const std::string& out_ptx) {
  const plan::Plan p = plan::make_plan(s);
  const std::string ptx = emit::ptx(p);
  const std::string cubin = default_path(s, out_cubin, ".cubin");
  const bool cubin_stdout = cubin == "-";
  if (cubin_stdout && out_ptx == "-") {
    std::cerr << "error: -o - and --ptx - cannot both write standard output\n";
    return kUsage;
  }
  // Without a file for the PTX (it goes to standard output, or the cubin does and --ptx is not
  // given), ptxas reads it from a temporary file; otherwise from the PTX output, which its
  // messages then name.
  const std::string ptx_path = out_ptx.empty() ? (cubin_stdout ? "" : with_extension(cubin, ".ptx")) : out_ptx;
  const std::string report = cubin_stdout ? "" : with_extension(cubin, ".ptxas.txt");
  const std::string manifest = cubin_stdout ? "" : with_extension(cubin, ".manifest.json");
  std::ostream& status = cubin_stdout || ptx_path == "-" ? std::cerr : std::cout;
  const auto& t = isa::target_info(s.target);

  const io::Ptxas ptxas = io::ptxas_for(t.name, t.cuda_min_major, t.cuda_min_minor);
  if (!ptxas.error.empty()) {
    std::cerr << ptxas.error;
    return kToolchain;
  }
  std::optional<io::TempFile> ptx_tmp;
  std::string ptx_input = ptx_path;
  if (ptx_path.empty() || ptx_path == "-") {
    ptx_tmp.emplace(io::temp_dir() + "/" + s.name + ".ptx");
    if (auto err = ptx_tmp->write(ptx)) {
      std::cerr << "error: " << *err << "\n";
      return kInvalid;
    }
    ptx_input = ptx_tmp->path();
  }
  if (!ptx_path.empty())
    if (int rc = write_output(ptx_path, ptx)) return rc;
  io::TempFile tmp(cubin_stdout ? io::temp_dir() + "/" + s.name + ".cubin" : cubin);
  if (!tmp.ok()) {
    std::cerr << "error: " << tmp.error() << "\n";
    return kInvalid;
  }
  const int timeout = io::ptxas_timeout_s();
  io::Run r = io::run({ptxas.path, "-arch=" + std::string(t.name), "-v", ptx_input, "-o", tmp.path()}, timeout);
  if (!r.launched) {
    std::cerr << "error: " << r.error << "\n";
    return kToolchain;
  }
  struct stat st {};
  const bool wrote = ::stat(tmp.path().c_str(), &st) == 0 && st.st_size > 0;
  if (r.timed_out || r.exit_code != 0 || !wrote) {
    std::cerr << "error: " << ptxas.path << " ("
              << (r.timed_out ? "killed after " + std::to_string(timeout) + " s (PTXGEN_PTXAS_TIMEOUT)"
                  : r.exit_code != 0 ? "exit " + std::to_string(r.exit_code)
                                     : "exit 0 but no cubin written")
              << ") on " << (ptx_path.empty() || ptx_path == "-" ? "the PTX" : ptx_path) << ":\n"
              << r.output;
    if (!cubin_stdout) remove_stale(cubin, report, manifest);
    return kToolchain;
  }
  std::smatch m;
  static const std::regex regs("Used ([0-9]+) registers");
  std::string summary;
  if (std::regex_search(r.output, m, regs)) summary = ", " + m[1].str() + " registers";
  if (cubin_stdout) {
    const io::Read bin = io::read_file(tmp.path(), size_t{1} << 30);
    if (!bin.ok) {
      std::cerr << "error: " << bin.error << "\n";
      return kToolchain;
    }
    if (int rc = write_output("-", bin.data)) return rc;
    std::cerr << r.output;  // the resource report
  } else {
    if (auto err = tmp.commit()) {
      std::cerr << "error: " << *err << "\n";
      return kInvalid;
    }
    if (int rc = write_output(report, r.output)) return rc;
    if (int rc = write_output(manifest, plan::manifest(p))) return rc;
  }
  if (!ptx_path.empty() && ptx_path != "-") status << "wrote " << ptx_path << "\n";
  status << "wrote " << (cubin_stdout ? "standard output" : cubin) << " (" << t.name << summary << ")\n";
  if (!cubin_stdout) status << "wrote " << report << " (ptxas resource report)\nwrote " << manifest << " (launch manifest)\n";
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ptxgen: JSON kernel specs to tensor-core PTX (tcgen05 for sm_100a, wgmma for sm_90a)"};
  app.require_subcommand(1);
  Common c;
  auto add_spec = [&](CLI::App* sub) {
    sub->add_option("spec", c.spec_path, "kernel spec (JSON); - reads standard input")->required();
    sub->add_option("--diagnostics", c.diagnostics, "diagnostic format")->check(CLI::IsMember({"text", "json"}));
  };

  auto* check = app.add_subcommand("check", "check a spec against the rule table");
  add_spec(check);

  std::string out;
  bool json = false;
  auto* plan_cmd = app.add_subcommand("plan", "print the plan: instruction groups and every descriptor decoded");
  add_spec(plan_cmd);
  plan_cmd->add_flag("--json", json, "machine-readable plan");
  plan_cmd->add_option("-o,--output", out, "output file (default: standard output)");

  auto* manifest_cmd = app.add_subcommand("manifest", "write the launch manifest (parameters, grid, tensor maps)");
  add_spec(manifest_cmd);
  manifest_cmd->add_option("-o,--output", out, "output file (default: NAME.manifest.json; - for standard output)");

  auto* emit_cmd = app.add_subcommand("emit", "write the PTX");
  add_spec(emit_cmd);
  emit_cmd->add_option("-o,--output", out, "output file (default: NAME.ptx; - for standard output)");

  std::string out_ptx;
  auto* build = app.add_subcommand("build", "write the PTX and assemble it with ptxas into a cubin");
  add_spec(build);
  build->add_option("-o,--output", out, "cubin file (default: NAME.cubin)");
  build->add_option("--ptx", out_ptx, "PTX file (default: the cubin's name with .ptx)");

  bool markdown = false;
  auto* rules_cmd = app.add_subcommand("rules", "list the rule table");
  rules_cmd->add_flag("--markdown", markdown, "the whole table as Markdown (docs/rules.md)");

  std::string rule_id;
  bool base = false;
  auto* explain = app.add_subcommand("explain", "explain one rule: meaning, causes, fixes, example");
  explain->add_option("rule", rule_id, "rule id, e.g. MMA-N");
  explain->add_flag("--base", base, "print the example spec that rule examples patch");

  app.add_subcommand("version", "print the version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsage;
  }

  try {
    if (app.got_subcommand("version")) {
      std::cout << "ptxgen 0.1.0\n";
      return kOk;
    }
    if (*rules_cmd) {
      if (markdown) {
        std::cout << rules::rules_markdown();
        return kOk;
      }
      for (const auto& r : rules::table())
        std::cout << r.id << std::string(r.id.size() < 24 ? 24 - r.id.size() : 1, ' ') << r.title << "\n";
      std::cout << rules::table().size() << " rules; `ptxgen explain ID` for one\n";
      return kOk;
    }
    if (*explain) {
      if (base) {
        std::cout << rules::example_base() << "\n";
        return kOk;
      }
      const rules::Rule* r = rules::find(rule_id);
      if (!r) {
        std::cerr << "error: no rule " << (rule_id.empty() ? "given" : "\"" + rule_id + "\"")
                  << "; `ptxgen rules` lists them\n";
        return kUsage;
      }
      std::cout << rules::explain(*r);
      return kOk;
    }
    auto s = load(c);
    if (!s) return kInvalid;
    if (*check) {
      std::cerr << c.spec_path << ": ok\n";
      return kOk;
    }
    if (*plan_cmd) {
      const plan::Plan p = plan::make_plan(*s);
      return write_output(out.empty() ? "-" : out, json ? plan::to_json(p) : plan::to_text(p));
    }
    if (*emit_cmd) {
      const plan::Plan p = plan::make_plan(*s);
      return write_output(default_path(*s, out, ".ptx"), emit::ptx(p));
    }
    if (*manifest_cmd) {
      const plan::Plan p = plan::make_plan(*s);
      return write_output(default_path(*s, out, ".manifest.json"), plan::manifest(p));
    }
    if (*build) return cmd_build(*s, out, out_ptx);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n  = help: please report this spec to the ptxgen issue tracker\n";
    return 70;
  }
  return kUsage;
}
