// The ptxgen command line: check, plan, emit, manifest, build, simulate, rules, explain.
//
// This file declares the commands and dispatches; loading a spec for its targets is load.cpp,
// writing outputs (--check, --update, --depfile) output.cpp, `build` build.cpp and `simulate`
// simulate.cpp. The exit
// codes are in exit.hpp.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "build.hpp"
#include "exit.hpp"
#include "load.hpp"
#include "output.hpp"
#include "ptxgen/emit.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/rules.hpp"
#include "simulate.hpp"

namespace {

using namespace ptxgen;
using namespace ptxgen::cli;

int usage(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ptxgen: JSON kernel specs to tensor-core PTX (tcgen05 for sm_100a, wgmma for sm_90a)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ptxgen " PTXGEN_VERSION);
  Source src;
  auto add_spec = [&](CLI::App* sub, const char* target_help) {
    sub->add_option("spec", src.path, "kernel spec (JSON); - reads standard input")->required();
    sub->add_option("--diagnostics", src.diagnostics, "diagnostic format")->check(CLI::IsMember({"text", "json"}));
    sub->add_option("--target", src.targets, target_help)->allow_extra_args(false)->take_all()->type_name("TARGET");
  };
  std::string out;
  TextOutput text;
  auto add_text_output = [&](CLI::App* sub, const char* output_help) {
    auto* o = sub->add_option("-o,--output", out, output_help);
    auto* golden = sub->add_option("--check", text.golden,
                                   "compare with GOLDEN instead of writing: a unified diff and exit 4 when it differs")
                       ->type_name("GOLDEN")
                       ->excludes(o);
    sub->add_flag("--update", text.update, "with --check: rewrite GOLDEN when it differs or is missing")->needs(golden);
    sub->add_option("--depfile", text.depfile, "write a Makefile-syntax depfile naming every input read")
        ->type_name("FILE");
  };

  auto* check = app.add_subcommand("check", "check a spec against the rule table");
  add_spec(check, "check for this target instead of the spec's (repeat for several)");

  bool json = false;
  auto* plan_cmd = app.add_subcommand("plan", "print the plan: instruction groups and every descriptor decoded");
  add_spec(plan_cmd, "plan for this target instead of the spec's");
  plan_cmd->add_flag("--json", json, "machine-readable plan");
  add_text_output(plan_cmd, "output file (default: standard output)");

  auto* manifest_cmd = app.add_subcommand("manifest", "write the launch manifest (parameters, grid, tensor maps)");
  add_spec(manifest_cmd, "the manifest for this target instead of the spec's");
  add_text_output(manifest_cmd, "output file (default: NAME.manifest.json; - for standard output)");

  auto* emit_cmd = app.add_subcommand("emit", "write the PTX");
  add_spec(emit_cmd, "emit for this target instead of the spec's");
  add_text_output(emit_cmd, "output file (default: NAME.ptx; - for standard output)");

  BuildOptions bo;
  std::vector<std::string> build_specs;
  auto* build_cmd = app.add_subcommand("build", "write the PTX and assemble it with ptxas into a cubin (or a fatbin)");
  build_cmd->add_option("spec", build_specs, "kernel spec (JSON); - reads standard input; several with --header")
      ->required();
  build_cmd->add_option("--diagnostics", src.diagnostics, "diagnostic format")->check(CLI::IsMember({"text", "json"}));
  build_cmd
      ->add_option("--target", src.targets,
                   "build for this target instead of the spec's; repeat it for a fatbin of several")
      ->allow_extra_args(false)
      ->take_all()
      ->type_name("TARGET");
  auto* build_out = build_cmd->add_option(
      "-o,--output", bo.out, "cubin file (default: NAME.cubin), or fatbin for several --target (NAME.fatbin)");
  auto* build_ptx =
      build_cmd->add_option("--ptx", bo.out_ptx, "PTX file (default: the cubin's name with .ptx; one --target only)");
  build_cmd
      ->add_option("--header", bo.header,
                   "write only a C++ launch header for every spec and target (- for standard output)")
      ->type_name("FILE")
      ->excludes(build_out)
      ->excludes(build_ptx);
  build_cmd->add_option("--depfile", bo.depfile, "write a Makefile-syntax depfile naming every input read")
      ->type_name("FILE");
  build_cmd->add_flag("-q,--quiet", bo.quiet, "print nothing when it succeeds");

  SimulateOptions so;
  auto* sim_cmd = app.add_subcommand(
      "simulate", "run the kernel on the CPU simulator and compare its outputs with a float64 evaluation of the spec");
  add_spec(sim_cmd, "simulate the kernel for this target instead of the spec's");
  auto* sim_size =
      sim_cmd->add_option("--size", so.sizes, "problem sizes (default: several tiles, K blocks and ragged edges)")
          ->type_name("m=M,n=N,k=K");
  sim_cmd->add_option("--grid", so.grid, "a persistent kernel's units (CTAs, pairs or clusters; default 2)")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  sim_cmd->add_option("--seed", so.seed, "seed of the random inputs (default 1)");
  sim_cmd->add_option("--ptx", so.ptx, "simulate this PTX file (e.g. edited by hand) instead of the emitted PTX")
      ->type_name("FILE");
  sim_cmd->add_option("--inputs", so.inputs, "take each input tensor NAME from DIR/NAME.npy where there is one (default: random)")
      ->type_name("DIR");
  sim_cmd->add_option("--schedules", so.schedules,
                      "run N schedules: the fixed one, then random, early, reverse and lifo ones in turn (default 1)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{10000}));
  auto* sim_schedule = sim_cmd->add_option("--schedule", so.schedule, "run only schedule S (a failure's number replays it)")
                            ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  sim_cmd->add_flag("--json", so.json, "the report as one JSON object");
  sim_cmd->add_option("--print", so.print, "print the top-left corner of an output tensor beside its reference")
      ->type_name("TENSOR");
  sim_cmd->add_option("--max-instructions", so.max_instructions, "the simulation's budget (default 400000000)")
      ->check(CLI::PositiveNumber);

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
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsage;
  }

  try {
    if (app.got_subcommand("version")) {
      std::cout << "ptxgen " PTXGEN_VERSION "\n";
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
    // Usage errors first: nothing is read when the command line is wrong.
    if ((*plan_cmd || *emit_cmd || *manifest_cmd) && src.targets.size() > 1)
      return usage("plan, emit and manifest write one target's output: give one --target (build takes several)");
    if (*sim_cmd && src.targets.size() > 1) return usage("simulate runs one target's kernel: give one --target");
    so.sizes_given = sim_size->count() > 0;
    so.schedule_given = sim_schedule->count() > 0;
    if (*sim_cmd)
      if (auto why = simulate_usage_problem(so); !why.empty()) return usage(why);
    if (*plan_cmd && out.empty()) out = "-";
    if (auto why = depfile_usage_problem(text, out)) return usage(*why);
    if (*build_cmd && bo.out == "-" && bo.out_ptx == "-")
      return usage("-o - and --ptx - cannot both write standard output");
    if (*build_cmd && bo.out == "-" && !bo.depfile.empty())
      return usage("--depfile names the output it describes: give -o FILE, not -o -");
    if (*build_cmd && src.targets.size() > 1 && !bo.out_ptx.empty())
      return usage("--ptx names one PTX file; with several --target each target's PTX is named after -o");
    if (*build_cmd) {
      std::string why;
      if (!io::ptxas_timeout_s(why)) return usage(why);
    }
    if (*build_cmd && build_specs.size() > 1 && bo.header.empty())
      return usage("build takes several specs only with --header FILE (one header for all of them)");
    if (*build_cmd && bo.header == "-" && !bo.depfile.empty())
      return usage("--depfile names the output it describes: give --header FILE, not --header -");
    if (*build_cmd && std::count(build_specs.begin(), build_specs.end(), "-") > 1)
      return usage("standard input (-) can be read for one spec only");
    if (*build_cmd && !bo.header.empty()) {
      // Every spec is read and checked (all their diagnostics shown) before anything is built.
      std::vector<Loaded> loaded;
      int exit = kOk;
      for (const auto& path : build_specs) {
        Source one = src;
        one.path = path;
        loaded.push_back(load(one));
        if (loaded.back().exit == kUnknownTarget) return kUnknownTarget;
        if (!exit) exit = loaded.back().exit;
      }
      if (exit) return exit;
      std::string producer = "ptxgen build";
      for (const auto& path : build_specs) producer += " " + path;
      for (const auto& t : src.targets) producer += " --target " + t;
      return build_header(loaded, bo, producer + " --header " + bo.header);
    }
    if (*build_cmd) src.path = build_specs.front();

    const Loaded l = load(src);
    if (l.exit) return l.exit;
    const spec::Spec& s = l.units.front().spec;
    const plan::Plan& planned = *l.units.front().plan;
    std::string producer = " " + src.path;
    for (const auto& t : src.targets) producer += " --target " + t;
    if (*check) {
      std::cerr << src.path << ": ok" << (src.targets.empty() ? "" : " for " + target_names(l.units)) << "\n";
      return kOk;
    }
    if (*plan_cmd) {
      return deliver(text, out, json ? emit::plan_json(planned) : emit::plan_text(planned),
                     std::string("ptxgen plan") + (json ? " --json" : "") + producer, l.inputs);
    }
    if (*emit_cmd)
      return deliver(text, out.empty() ? s.name + ".ptx" : out, emit::ptx(planned), "ptxgen emit" + producer,
                     l.inputs);
    if (*manifest_cmd)
      return deliver(text, out.empty() ? s.name + ".manifest.json" : out, plan::manifest(planned),
                     "ptxgen manifest" + producer, l.inputs);
    if (*build_cmd) return build(l, bo);
    if (*sim_cmd) return simulate(l, so);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n  = help: please report this spec to the ptxgen issue tracker\n";
    return kInternal;
  }
  return kUsage;
}
