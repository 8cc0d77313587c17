// `ptxgen build`: ptxas per target, fatbinary across targets, every output staged and committed
// together (src/cli/output.hpp), so a failing ptxas or fatbinary leaves no file behind.
#include "build.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "exit.hpp"
#include "header.hpp"
#include "output.hpp"
#include "ptxgen/emit.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/rules.hpp"

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

// A ptxas whose toolkit knows every target (io::ptxas_for checks the newest target's minimum, which
// covers the others). Empty (message printed) when there is none.
std::optional<std::string> usable_ptxas(const std::vector<Compiled>& units) {
  const isa::TargetInfo* newest = nullptr;
  for (const auto& u : units) {
    const auto& t = isa::target_info(u.spec.target);
    if (!newest || t.cuda_min_major > newest->cuda_min_major ||
        (t.cuda_min_major == newest->cuda_min_major && t.cuda_min_minor > newest->cuda_min_minor))
      newest = &t;
  }
  const io::Ptxas p = io::ptxas_for(newest->name, newest->cuda_min_major, newest->cuda_min_minor);
  if (!p.error.empty()) {
    std::cerr << p.error;
    return std::nullopt;
  }
  return p.path;
}

// After a toolchain failure (exit 3) no cubin may stay beside a spec or PTX it would not match:
// this build's outputs from an earlier run go too. Only regular files (through links: the file an
// output link points to) are removed, never a device or FIFO an output names (-o /dev/null).
void remove_stale(const BuildPaths& paths) {
  std::vector<std::string> stale{paths.primary, paths.manifest};  // not for -o -
  for (const auto& t : paths.targets) stale.push_back(t.report);
  for (const auto& f : stale) {
    if (f.empty() || f == "-") continue;
    const io::Destination d = io::destination(f);
    struct stat st {};
    if (!d.error.empty() || ::lstat(d.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::unlink(d.path.c_str()) == 0) std::cerr << "note: removed " << f << " from an earlier build\n";
  }
}

// Says why ptxas failed (killed, a non-zero exit, or no cubin), if it did.
bool ptxas_failed(const io::Run& r, const std::string& ptxas, const std::string& cubin, int timeout,
                  const std::string& shown) {
  struct stat st {};
  const bool wrote = ::stat(cubin.c_str(), &st) == 0 && st.st_size > 0;
  if (!r.timed_out && r.exit_code == 0 && wrote) return false;
  std::cerr << "error: " << ptxas << " ("
            << (r.timed_out ? "killed after " + std::to_string(timeout) + " s (PTXGEN_PTXAS_TIMEOUT)"
                : r.exit_code != 0 ? "exit " + std::to_string(r.exit_code)
                                   : "exit 0 but no cubin written")
            << ") on " << shown << ":\n"
            << r.output;
  return true;
}

std::string registers(const std::string& report) {
  static const std::regex regs("Used ([0-9]+) registers");
  std::smatch m;
  return std::regex_search(report, m, regs) ? m[1].str() + " registers" : "";
}

}  // namespace

BuildPaths build_paths(const Loaded& l, const BuildOptions& o) {
  BuildPaths p;
  const bool fat = l.units.size() > 1;
  const std::string& name = l.units.front().spec.name;
  p.primary = !o.out.empty() ? o.out : name + (fat ? ".fatbin" : ".cubin");
  if (p.primary == "-") {
    // Only the cubin (or fatbin) goes out, on standard output; the PTX too where --ptx names it.
    for (size_t i = 0; i < l.units.size(); ++i) p.targets.push_back({fat ? "" : o.out_ptx, ""});
    return p;
  }
  p.manifest = with_extension(p.primary, ".manifest.json");
  if (!fat) {
    p.targets.push_back({o.out_ptx.empty() ? with_extension(p.primary, ".ptx") : o.out_ptx,
                         with_extension(p.primary, ".ptxas.txt")});
    return p;
  }
  for (const auto& u : l.units)
    p.targets.push_back({with_extension(p.primary, "." + target_name(u.spec) + ".ptx"),
                         with_extension(p.primary, "." + target_name(u.spec) + ".ptxas.txt")});
  return p;
}

std::string fatbin_manifest(const Loaded& l, const BuildPaths& p) {
  nlohmann::ordered_json j;
  j["ptxgen"] = 1;
  j["kind"] = "fatbin";
  j["name"] = l.units.front().spec.name;
  j["fatbin"] = base_name(p.primary);
  j["entries"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < l.units.size(); ++i) {
    // Each entry is the target's launch manifest (what a one-target build writes) and its files.
    const plan::Plan& plan = *l.units[i].plan;
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
  const bool fat = l.units.size() > 1;
  // "-" for -o sends the cubin (or fatbin) to standard output, for --ptx the PTX; messages and
  // ptxas's reports then go to standard error. Files that go to standard output are staged in
  // $TMPDIR for the tools, and nothing is written beside them.
  const bool primary_stdout = paths.primary == "-";
  const bool ptx_stdout = !fat && paths.targets.front().ptx == "-";
  std::ostream& status = primary_stdout || ptx_stdout ? std::cerr : std::cout;
  std::vector<std::string> all_outputs{paths.primary, paths.manifest, o.depfile};
  for (const auto& t : paths.targets) all_outputs.insert(all_outputs.end(), {t.ptx, t.report});
  if (auto err = overwrites_input(all_outputs, l.inputs)) {
    std::cerr << "error: " << *err << "\n";
    return kInvalid;
  }
  // Every exit 3 (toolchain missing, too old, hanging, failing) leaves no cubin, report or manifest
  // of an earlier build (README: "no cubin is left").
  auto toolchain_failed = [&] {
    if (!primary_stdout) remove_stale(paths);
    return kToolchain;
  };
  const auto ptxas = usable_ptxas(l.units);
  if (!ptxas) return toolchain_failed();
  std::optional<std::string> fatbinary;
  if (fat && !(fatbinary = io::find_fatbinary(*ptxas))) {
    std::cerr << "error: fatbinary not found (looked beside " << *ptxas
              << ", in PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)\n"
              << "  = help: a build for several --target values needs the CUDA toolkit's fatbinary\n";
    return toolchain_failed();
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
  // Temporary files that are never renamed into place: a fatbin's per-target cubins (they live
  // until fatbinary has read them) and whatever goes to standard output.
  std::vector<std::unique_ptr<io::TempFile>> scratch;
  auto scratch_file = [&](const std::string& name) -> io::TempFile* {
    scratch.push_back(std::make_unique<io::TempFile>(name));
    return scratch.back()->ok() ? scratch.back().get() : nullptr;
  };
  std::vector<io::TempFile*> ptx_files;  // committed even when ptxas refuses them
  std::vector<std::string> images, summary, reports;
  std::string bad_timeout;  // refused before the build began (main.cpp: exit 2)
  const int timeout = io::ptxas_timeout_s(bad_timeout).value_or(600);
  io::TempFile* last_cubin = nullptr;
  for (size_t i = 0; i < l.units.size(); ++i) {
    const spec::Spec& s = l.units[i].spec;
    const std::string t = target_name(s);
    const std::string& ptx_path = paths.targets[i].ptx;
    const std::string ptx_text = emit::ptx(*l.units[i].plan);
    io::TempFile* ptx = nullptr;
    if (ptx_path.empty() || ptx_path == "-") {
      if (!(ptx = scratch_file(io::temp_dir() + "/" + s.name + "." + t + ".ptx"))) return unwritable(scratch.back()->error());
      if (ptx_path == "-") outs.add("-", ptx_text);
    } else if (!(ptx = outs.reserve(ptx_path, error))) {
      return unwritable(error);
    } else {
      ptx_files.push_back(ptx);
    }
    if (auto err = ptx->write(ptx_text)) return unwritable(*err);
    io::TempFile* cubin = nullptr;
    if (fat || primary_stdout) {
      const std::string name = fat && !primary_stdout ? with_extension(paths.primary, "." + t + ".cubin")
                                                      : io::temp_dir() + "/" + s.name + "." + t + ".cubin";
      if (!(cubin = scratch_file(name))) return unwritable(scratch.back()->error());
      images.push_back("--image3=kind=elf,sm=" + t.substr(3) + ",file=" + cubin->path());
    } else if (!(cubin = outs.reserve(paths.primary, error))) {
      return unwritable(error);
    }
    last_cubin = cubin;
    io::Run r = io::run({*ptxas, "-arch=" + t, "-v", ptx->path(), "-o", cubin->path()}, timeout);
    if (!r.launched) {
      std::cerr << "error: " << r.error << "\n";
      return toolchain_failed();
    }
    const std::string shown = ptx_path.empty() || ptx_path == "-" ? "the PTX" : ptx_path;
    replace_all(r.output, ptx->path(), shown);  // messages name the file the user will see
    if (ptxas_failed(r, *ptxas, cubin->path(), timeout, shown)) {
      // The PTX stays for the user to read; no cubin, report or manifest does.
      for (io::TempFile* f : ptx_files) (void)f->commit();
      return toolchain_failed();
    }
    if (primary_stdout) reports.push_back(r.output);
    else if (auto err = outs.add(paths.targets[i].report, r.output)) return unwritable(*err);
    // What ptxas did that the spec did not ask for (spills) is a warning, even with -q: the report
    // file says it too, but nobody reads a file a successful build writes.
    Diagnostics found;
    rules::check_ptxas_report(s, r.output, found);
    print_diagnostics(l, i, found);
    const std::string regs = registers(r.output);
    summary.push_back(t + (regs.empty() ? "" : (fat ? " " : ", ") + regs));
  }
  io::TempFile* image = nullptr;  // what goes to standard output with -o -
  if (fat) {
    io::TempFile* fatbin = primary_stdout ? scratch_file(io::temp_dir() + "/" + l.units.front().spec.name + ".fatbin")
                                          : outs.reserve(paths.primary, error);
    if (!fatbin) return unwritable(primary_stdout ? scratch.back()->error() : error);
    std::vector<std::string> argv{*fatbinary, "--create=" + fatbin->path()};
    argv.insert(argv.end(), images.begin(), images.end());
    io::Run r = io::run(argv, timeout);
    if (!r.launched || r.timed_out || r.exit_code != 0) {
      std::cerr << "error: fatbinary failed"
                << (!r.launched ? "" : r.timed_out ? " (killed after " + std::to_string(timeout) + " s)"
                                                   : " (exit " + std::to_string(r.exit_code) + ")")
                << ":\n" << (r.launched ? r.output : r.error + "\n");
      return toolchain_failed();
    }
    image = fatbin;
  } else if (primary_stdout) {
    image = last_cubin;
  }
  if (primary_stdout) {
    const io::Read bin = io::read_file(image->path(), size_t{1} << 30);
    if (!bin.ok) return unwritable(bin.error);
    outs.add("-", bin.data);
  } else {
    const std::string manifest = fat ? fatbin_manifest(l, paths) : plan::manifest(*l.units.front().plan);
    if (auto err = outs.add(paths.manifest, manifest)) return unwritable(*err);
  }
  if (auto err = outs.commit()) return unwritable(*err);
  for (const auto& r : reports) std::cerr << r;  // the resource reports, when the cubin went to stdout
  if (o.quiet) return kOk;

  for (const auto& t : paths.targets)
    if (!t.ptx.empty() && t.ptx != "-") status << "wrote " << t.ptx << "\n";
  std::string joined;
  for (const auto& x : summary) joined += (joined.empty() ? "" : ", ") + x;
  status << "wrote " << (primary_stdout ? "standard output" : paths.primary) << " (" << joined << ")\n";
  if (!primary_stdout) {
    for (const auto& t : paths.targets) status << "wrote " << t.report << " (ptxas resource report)\n";
    status << "wrote " << paths.manifest << (fat ? " (launch manifest, one entry per target)\n" : " (launch manifest)\n");
  }
  if (!o.depfile.empty()) status << "wrote " << o.depfile << "\n";
  return kOk;
}

}  // namespace ptxgen::cli

namespace ptxgen::cli {

namespace {

// The tensors a kernel writes: D (and the amax, D's block-scale factors) for the gemm template, every store's global for a program.
std::vector<std::string> written(const spec::Spec& s) {
  if (!s.program) {
    std::vector<std::string> out = {"D"};
    if (s.gemm && s.gemm->amax) out.push_back("amax");
    if (s.gemm && s.gemm->quantize) out.push_back("SFD");
    return out;
  }
  std::vector<std::string> out;
  std::function<void(const spec::Op&)> visit = [&](const spec::Op& op) {
    if (op.kind == spec::OpKind::store && std::find(out.begin(), out.end(), op.dst.name) == out.end()) out.push_back(op.dst.name);
    for (const auto& b : op.body) visit(b);  // a loop's ops
  };
  for (const auto& op : s.program->ops) visit(op);
  return out;
}

}  // namespace

int build_header(const std::vector<Loaded>& loaded, const BuildOptions& o, const std::string& producer) {
  std::vector<Compiled> all;
  std::vector<std::string> inputs;
  for (const Loaded& l : loaded) {
    all.insert(all.end(), l.units.begin(), l.units.end());
    inputs.insert(inputs.end(), l.inputs.begin(), l.inputs.end());
  }
  std::ostream& status = o.header == "-" ? std::cerr : std::cout;
  const auto ptxas = usable_ptxas(all);
  if (!ptxas) return kToolchain;
  Outputs outs;
  if (!o.depfile.empty())
    if (auto err = outs.set_depfile(o.depfile, o.header, inputs)) {
      std::cerr << "error: " << *err << "; nothing written\n";
      return kDepfile;
    }
  auto unwritable = [&](const std::string& why) {
    std::cerr << "error: " << why << "\n";
    return kInvalid;
  };
  std::string bad_timeout;  // refused with exit 2 before any build starts (cli/main.cpp)
  const int timeout = io::ptxas_timeout_s(bad_timeout).value_or(600);
  std::vector<HeaderKernel> kernels;
  std::string summary;
  for (size_t i = 0; i < loaded.size(); ++i) {
    HeaderKernel hk;
    hk.spec = loaded[i].inputs.empty() ? "standard input" : loaded[i].inputs.front();
    hk.written = written(loaded[i].units.front().spec);
    std::string targets;
    for (size_t j = 0; j < loaded[i].units.size(); ++j) {
      const Compiled& u = loaded[i].units[j];
      const spec::Spec& s = u.spec;
      const std::string t = target_name(s);
      const plan::Plan& p = *u.plan;
      // PTX and cubin are scratch files: the header holds the cubin, and nothing else is written.
      io::TempFile ptx(io::temp_dir() + "/" + s.name + "." + t + ".ptx");
      io::TempFile cubin(io::temp_dir() + "/" + s.name + "." + t + ".cubin");
      if (!ptx.ok()) return unwritable(ptx.error());
      if (!cubin.ok()) return unwritable(cubin.error());
      if (auto err = ptx.write(emit::ptx(p))) return unwritable(*err);
      // -v: the resource report, for its spills (PTXAS-SPILL).
      io::Run r = io::run({*ptxas, "-arch=" + t, "-v", ptx.path(), "-o", cubin.path()}, timeout);
      if (!r.launched) {
        std::cerr << "error: " << r.error << "\n";
        return kToolchain;
      }
      const std::string shown = "the PTX of " + hk.spec + " for " + t;
      replace_all(r.output, ptx.path(), shown);
      if (ptxas_failed(r, *ptxas, cubin.path(), timeout, shown)) return kToolchain;
      Diagnostics found;
      rules::check_ptxas_report(s, r.output, found);
      print_diagnostics(loaded[i], j, found);
      const io::Read bin = io::read_file(cubin.path(), size_t{1} << 30);
      if (!bin.ok) return unwritable(bin.error);
      hk.images.push_back({plan::manifest(p), bin.data});
      targets += (targets.empty() ? "" : ", ") + t;
    }
    summary += (summary.empty() ? "" : "; ") + loaded[i].units.front().spec.name + " for " + targets;
    kernels.push_back(std::move(hk));
  }
  std::string text;
  try {
    text = launch_header(kernels, header_stem(o.header), producer);
  } catch (const HeaderError& e) {
    std::cerr << "error: " << e.what() << "; nothing written\n";
    return kInvalid;
  }
  if (auto err = outs.add(o.header, text)) return unwritable(*err);
  if (auto err = outs.commit()) return unwritable(*err);
  if (o.quiet) return kOk;
  status << "wrote " << (o.header == "-" ? "standard output" : o.header) << " (launch header: " << summary << ")\n";
  if (!o.depfile.empty()) status << "wrote " << o.depfile << "\n";
  return kOk;
}

}  // namespace ptxgen::cli
