// `ptxgen build`: ptxas per target, fatbinary across targets, every output staged and committed
// together (src/cli/output.hpp), so a failing ptxas or fatbinary leaves no file behind.
#include "build.hpp"

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "exit.hpp"
#include "output.hpp"
#include "ptxgen/emit.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::cli {

namespace {

// "dir/x.cubin" -> "dir/x" + ext.
std::string with_extension(const std::string& path, const std::string& ext) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) return path.substr(0, dot) + ext;
  return path + ext;
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string target_name(const spec::Spec& s) { return std::string(isa::target_info(s.target).name); }

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); !from.empty() && at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// Finds ptxas and checks that its toolkit knows every target. Empty (message printed) when not.
std::optional<std::string> usable_ptxas(const Loaded& l) {
  auto ptxas = io::find_ptxas();
  if (!ptxas) {
    const auto& t = isa::target_info(l.specs.front().target);
    std::cerr << "error: ptxas not found (looked in PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)\n"
              << "  = help: install the CUDA toolkit " << t.cuda_min_major << "." << t.cuda_min_minor
              << " or newer, or set CUDA_HOME\n";
    return std::nullopt;
  }
  auto ver = io::ptxas_version(*ptxas);
  if (!ver) {
    std::cerr << "error: " << *ptxas << " --version did not report a CUDA release\n";
    return std::nullopt;
  }
  for (const auto& s : l.specs) {
    const auto& t = isa::target_info(s.target);
    if (ver->major > t.cuda_min_major || (ver->major == t.cuda_min_major && ver->minor >= t.cuda_min_minor)) continue;
    const emit::PtxVersion pv = emit::ptx_version(plan::make_plan(s));
    std::cerr << "error: " << *ptxas << " is CUDA " << ver->major << "." << ver->minor << "; " << t.name
              << " (PTX ISA " << pv.major << "." << pv.minor << ") needs CUDA " << t.cuda_min_major << "."
              << t.cuda_min_minor << " or newer\n"
              << "  = help: install a newer CUDA toolkit, or put its bin/ first in PATH\n";
    return std::nullopt;
  }
  return ptxas;
}

std::string registers(const std::string& report) {
  static const std::regex regs("Used ([0-9]+) registers");
  std::smatch m;
  return std::regex_search(report, m, regs) ? m[1].str() + " registers" : "";
}

}  // namespace

BuildPaths build_paths(const Loaded& l, const BuildOptions& o) {
  BuildPaths p;
  const bool fat = l.specs.size() > 1;
  const std::string& name = l.specs.front().name;
  p.primary = !o.out.empty() ? o.out : name + (fat ? ".fatbin" : ".cubin");
  p.manifest = with_extension(p.primary, ".manifest.json");
  if (!fat) {
    p.targets.push_back({o.out_ptx.empty() ? with_extension(p.primary, ".ptx") : o.out_ptx,
                         with_extension(p.primary, ".ptxas.txt")});
    return p;
  }
  for (const auto& s : l.specs)
    p.targets.push_back({with_extension(p.primary, "." + target_name(s) + ".ptx"),
                         with_extension(p.primary, "." + target_name(s) + ".ptxas.txt")});
  return p;
}

std::string fatbin_manifest(const Loaded& l, const BuildPaths& p) {
  nlohmann::ordered_json j;
  j["ptxgen"] = 1;
  j["kind"] = "fatbin";
  j["name"] = l.specs.front().name;
  j["fatbin"] = base_name(p.primary);
  j["entries"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < l.specs.size(); ++i) {
    // Each entry is the target's launch manifest (what a one-target build writes) and its files.
    const plan::Plan plan = plan::make_plan(l.specs[i]);
    const emit::PtxVersion v = emit::ptx_version(plan);
    auto e = nlohmann::ordered_json::parse(plan::manifest(plan));
    e["ptx"] = base_name(p.targets[i].ptx);
    e["ptx_isa"] = std::to_string(v.major) + "." + std::to_string(v.minor);
    e["ptxas_report"] = base_name(p.targets[i].report);
    j["entries"].push_back(e);
  }
  return j.dump(2) + "\n";
}

int build(const Loaded& l, const BuildOptions& o) {
  const BuildPaths paths = build_paths(l, o);
  const bool fat = l.specs.size() > 1;
  const auto ptxas = usable_ptxas(l);
  if (!ptxas) return kToolchain;
  std::optional<std::string> fatbinary;
  if (fat && !(fatbinary = io::find_fatbinary(*ptxas))) {
    std::cerr << "error: fatbinary not found (looked beside " << *ptxas
              << ", in PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)\n"
              << "  = help: a build for several --target values needs the CUDA toolkit's fatbinary\n";
    return kToolchain;
  }

  Outputs outs;
  if (!o.depfile.empty())
    if (auto err = outs.set_depfile(o.depfile, paths.primary, l.inputs)) {
      std::cerr << "error: " << *err << "; nothing written\n";
      return kDepfile;
    }
  std::string error;
  auto unwritable = [&](const std::string& why) {
    std::cerr << "error: " << why << "\n";
    return kInvalid;
  };
  // A fatbin's per-target cubins live only until fatbinary has read them.
  std::vector<std::unique_ptr<io::TempFile>> cubins;
  std::vector<std::string> images, summary;
  for (size_t i = 0; i < l.specs.size(); ++i) {
    const spec::Spec& s = l.specs[i];
    const std::string t = target_name(s);
    const std::string& ptx_path = paths.targets[i].ptx;
    io::TempFile* ptx = outs.reserve(ptx_path, error);
    if (!ptx) return unwritable(error);
    if (auto err = ptx->write(emit::ptx(plan::make_plan(s)))) return unwritable(*err);
    io::TempFile* cubin = nullptr;
    if (fat) {
      cubins.push_back(std::make_unique<io::TempFile>(with_extension(paths.primary, "." + t + ".cubin")));
      if (!cubins.back()->ok()) return unwritable(cubins.back()->error());
      cubin = cubins.back().get();
      images.push_back("--image3=kind=elf,sm=" + t.substr(3) + ",file=" + cubin->path());
    } else if (!(cubin = outs.reserve(paths.primary, error))) {
      return unwritable(error);
    }
    io::Run r = io::run({*ptxas, "-arch=" + t, "-v", ptx->path(), "-o", cubin->path()});
    if (!r.launched) {
      std::cerr << "error: " << r.error << "\n";
      return kToolchain;
    }
    replace_all(r.output, ptx->path(), ptx_path);  // messages name the file the user will see
    if (r.exit_code != 0) {
      std::cerr << "error: ptxas failed (exit " << r.exit_code << ") on " << ptx_path << ":\n" << r.output;
      return kToolchain;
    }
    if (auto err = outs.add(paths.targets[i].report, r.output)) return unwritable(*err);
    const std::string regs = registers(r.output);
    summary.push_back(t + (regs.empty() ? "" : (fat ? " " : ", ") + regs));
  }
  if (fat) {
    io::TempFile* fatbin = outs.reserve(paths.primary, error);
    if (!fatbin) return unwritable(error);
    std::vector<std::string> argv{*fatbinary, "--create=" + fatbin->path()};
    argv.insert(argv.end(), images.begin(), images.end());
    io::Run r = io::run(argv);
    if (!r.launched || r.exit_code != 0) {
      std::cerr << "error: fatbinary failed" << (r.launched ? " (exit " + std::to_string(r.exit_code) + ")" : "")
                << ":\n" << (r.launched ? r.output : r.error + "\n");
      return kToolchain;
    }
  }
  const std::string manifest = fat ? fatbin_manifest(l, paths) : plan::manifest(plan::make_plan(l.specs.front()));
  if (auto err = outs.add(paths.manifest, manifest)) return unwritable(*err);
  if (auto err = outs.commit()) return unwritable(*err);
  if (o.quiet) return kOk;

  for (const auto& t : paths.targets) std::cout << "wrote " << t.ptx << "\n";
  std::string joined;
  for (const auto& x : summary) joined += (joined.empty() ? "" : ", ") + x;
  std::cout << "wrote " << paths.primary << " (" << joined << ")\n";
  for (const auto& t : paths.targets) std::cout << "wrote " << t.report << " (ptxas resource report)\n";
  std::cout << "wrote " << paths.manifest << (fat ? " (launch manifest, one entry per target)\n" : " (launch manifest)\n");
  if (!o.depfile.empty()) std::cout << "wrote " << o.depfile << "\n";
  return kOk;
}

}  // namespace ptxgen::cli
