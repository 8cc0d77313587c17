// `ptxgen simulate` (simulate.hpp): sizes, the run, and the report.
#include "simulate.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "exit.hpp"
#include "npy.hpp"
#include "ptxgen/emit.hpp"
#include "ptxgen/io.hpp"
#include "ptxgen/plan.hpp"
#include "ptxgen/sim.hpp"

namespace ptxgen::cli {

namespace {

// The simulator keeps every tensor in memory as bytes and doubles: a tensor of more elements
// than this is refused before anything runs (docs/simulate.md).
constexpr int64_t kMaxElements = int64_t{1} << 24;

bool parse_sizes(const std::string& text, Sizes& out, std::string& why) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size() ||
        item.find_first_not_of("0123456789", eq + 1) != std::string::npos || item.size() - eq > 12) {
      why = "--size takes NAME=VALUE,... with whole numbers (e.g. m=256,n=512,k=320), not \"" + item + "\"";
      return false;
    }
    out[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
  }
  if (out.empty()) {
    why = "--size takes NAME=VALUE,... (e.g. m=256,n=512,k=320)";
    return false;
  }
  return true;
}

int stages_of(const plan::Plan& p) {
  int s = 1;
  for (const auto& t : p.ir().tiles) s = std::max(s, t.stages);
  return s;
}

// ---- the gemm template ---------------------------------------------------------------------
// Defaults: two tiles in M and N, each problem edge 5 short of the tile's (ragged: partial tiles,
// odd n's one-element stores) and n rounded down to what D's tensor map or quantization blocks
// need; stages + 1 K blocks, the last partial (the ring wraps, every barrier changes phase; sparse
// A: whole blocks, rule SPARSE-K).
std::string gemm_sizes(const nlohmann::json& mf, int stages, const Sizes& given, Sizes& z, std::string& how) {
  const int64_t tm = mf.at("tile").at("m"), tn = mf.at("tile").at("n"), tk = mf.at("tile").at("k");
  const bool sparse = mf.at("tensors").at("A").contains("sparse");
  const int64_t u = sim::d_row_unit(mf);
  z = {{"m", 2 * tm - 5},
       {"n", std::max<int64_t>((2 * tn - 5) / u * u, u)},
       {"k", (stages + 1) * tk - (sparse ? 0 : 3)}};
  how = "default: two tiles in M and N with ragged edges, " + std::to_string(stages + 1) + " K blocks (the " +
        std::to_string(stages) + "-stage ring wraps)" + (sparse ? "" : ", the last partial");
  for (const auto& [name, v] : given) {
    if (!z.count(name)) return "--size " + name + ": the gemm template's sizes are m, n and k";
    z[name] = v;
  }
  if (!given.empty()) how = "given" + std::string(given.size() < z.size() ? "; the others the default" : "");
  for (const auto& [name, v] : z)
    if (v < 1 || v > kMaxElements)
      return "--size " + name + "=" + std::to_string(v) + ": sizes are at least 1" +
             (v < 1 ? "" : ", and tensors at most " + std::to_string(kMaxElements) + " elements (docs/simulate.md)");
  if (z["n"] % u)
    return "--size n=" + std::to_string(z["n"]) + ": this kernel needs n a multiple of " + std::to_string(u) +
           " (D's rows reach a tensor map, 16 bytes apart, or whole quantization blocks)";
  if (sparse && z["k"] % tk)
    return "--size k=" + std::to_string(z["k"]) + ": sparse A needs k a multiple of tile.k = " + std::to_string(tk) +
           " (rule SPARSE-K)";
  const bool gated = mf.contains("derived_sizes") && mf.at("derived_sizes").contains("d");
  const int64_t b_rows = gated ? 2 * z["n"] : z["n"];
  if (z["m"] * z["n"] > kMaxElements || z["m"] * z["k"] > kMaxElements || b_rows * z["k"] > kMaxElements)
    return "sizes " + sizes_text(z) + " exceed the simulation's budget of " + std::to_string(kMaxElements) +
           " elements per tensor (docs/simulate.md)";
  return "";
}

// ---- the program level -----------------------------------------------------------------------
// A run's sizes against what the kernel takes: given sizes are the spec's run-time ones, derived
// sizes marked exact divide, and a tensor reached by a tensor map keeps its rows 16-byte multiples.
std::string program_check(const spec::Program& p, const nlohmann::json& mf, const Sizes& z) {
  std::map<std::string, int64_t> v;
  for (const auto& s : p.sizes) v[s.name] = z.count(s.name) ? z.at(s.name) : s.value;
  for (const auto& s : p.sizes)
    if (s.of) {
      const int64_t of = v.at(s.of.name);
      if (mf.contains("derived_sizes") && mf.at("derived_sizes").contains(s.name) &&
          mf.at("derived_sizes").at(s.name).value("exact", false) && of % s.div)
        return "size " + s.of.name + "=" + std::to_string(of) + " is not a multiple of " + std::to_string(s.div) +
               ", which " + s.name + " needs";
      v[s.name] = (of + s.div - 1) / s.div * s.mul;
    }
  std::set<std::string> mapped;
  for (const auto& prm : mf.at("params"))
    if (prm.at("kind") == "tensor_map") mapped.insert(prm.at("tensor").get<std::string>());
  for (const auto& g : p.globals) {
    const int64_t rows = g.rows_size.empty() ? g.rows : v.at(g.rows_size);
    const int64_t cols = g.cols_size.empty() ? g.cols : v.at(g.cols_size);
    if (rows * cols > kMaxElements)
      return "tensor " + g.name + " would hold " + std::to_string(rows * cols) +
             " elements, over the simulation's budget of " + std::to_string(kMaxElements) + " (docs/simulate.md)";
    const int64_t bits = cols * spec::storage_bits(g.dtype, g.format);
    if (mapped.count(g.name) && (bits % 128))
      return "tensor " + g.name + "'s rows would be " + std::to_string(bits / 8) +
             (bits % 8 ? " and " + std::to_string(bits % 8) + " bits" : "") +
             " bytes, and its tensor map needs them a multiple of 16 bytes";
  }
  return "";
}

// Defaults for a program with run-time sizes: over its grid two tiles in M and N less 24 rows and
// plus 8 columns (ragged), and its K loop 2 stages + 1 blocks less 16 elements (the ring wraps
// twice, the last block partial); whole tiles and blocks where the ragged sizes break a tensor
// map's 16-byte rows. Sizes no op steps along keep the spec's value.
std::string program_sizes(const spec::Program& p, const nlohmann::json& mf, int stages, const Sizes& given, Sizes& z,
                          std::string& how) {
  std::set<std::string> runtime;
  for (const auto& s : p.sizes)
    if (!s.of) runtime.insert(s.name);
  std::string names;
  for (const auto& n : runtime) names += (names.empty() ? "" : ", ") + n;
  for (const auto& [name, v] : given) {
    if (!runtime.count(name))
      return "--size " + name + ": " +
             (runtime.empty() ? std::string("this program's sizes are fixed (it declares no run-time size)")
                              : "not one of the program's run-time sizes (" + names + ")");
    if (v < 1 || v > kMaxElements)
      return "--size " + name + "=" + std::to_string(v) + ": sizes are at least 1" +
             (v < 1 ? "" : ", and tensors at most " + std::to_string(kMaxElements) + " elements (docs/simulate.md)");
  }
  const sim::ProgramSteps steps = sim::program_steps(p);
  const int64_t tm = steps.tile_m, tn = steps.tile_n;
  auto sizes = [&](int64_t m, int64_t n, int64_t kblocks, int64_t kpart) {
    Sizes r = steps.sizes(m, n, kblocks, kpart);
    std::erase_if(r, [&](const auto& e) { return !runtime.count(e.first); });  // a fixed size keeps the spec's value
    return r;
  };
  const std::string k_text = steps.k.empty() ? ""
                                          : ", " + std::to_string(2 * stages + 1) + " K blocks (the " +
                                                std::to_string(stages) + "-stage ring wraps)";
  z = sizes(2 * tm - 24, tn + 8, 2 * stages + 1, 16);
  how = "default: two tiles in M and N with ragged edges" + k_text + ", the last partial";
  if (z.empty()) how = "no run-time size an op steps along";
  if (!z.empty() && !program_check(p, mf, z).empty()) {
    // Whole K blocks where the loop's size must be a multiple of its block (an exact derived size).
    z = sizes(2 * tm - 24, tn + 8, 2 * stages + 1, 0);
    how = "default: two tiles in M and N with ragged edges" + k_text + ", whole blocks (the kernel takes no partial one)";
  }
  if (!z.empty() && !program_check(p, mf, z).empty()) {
    z = sizes(2 * tm, 2 * tn, 2 * stages + 1, 0);
    how = "default: two whole tiles in M and N" + k_text + " (ragged edges would break a tensor map's 16-byte rows)";
  }
  // Given sizes replace the defaults (the others stay); a program's other sizes keep the spec's value.
  for (const auto& [name, v] : given) z[name] = v;
  if (!given.empty()) how = "given";
  return program_check(p, mf, z);
}

}  // namespace

std::string simulate_usage_problem(const SimulateOptions& o) {
  Sizes z;
  std::string why;
  if (o.schedule_given && o.schedules != 1) return "--schedule S runs one schedule; --schedules N runs 0 to N-1: give one";
  if (o.sizes_given && !parse_sizes(o.sizes, z, why)) return why;
  return "";
}

int simulate(const Loaded& l, const SimulateOptions& o) {
  const Compiled& u = l.units.front();
  const spec::Spec& s = u.spec;
  const plan::Plan& p = *u.plan;
  auto refuse = [&](const std::string& why) {
    std::cerr << "error: " << why << "\n";
    return kInvalid;
  };
  const nlohmann::json mf = nlohmann::json::parse(plan::manifest(p));
  Sizes given, z;
  std::string why, how;
  if (o.sizes_given && !parse_sizes(o.sizes, given, why)) return refuse(why);
  if (s.gemm)
    why = gemm_sizes(mf, stages_of(p), given, z, how);
  else
    why = program_sizes(*s.program, mf, stages_of(p), given, z, how);
  if (!why.empty()) return refuse(l.source.path + ": " + why);
  const bool persistent = mf.value("schedule", "") == "persistent";
  if (o.grid && !persistent)
    return refuse(l.source.path + ": --grid sets a persistent kernel's units; this kernel launches one CTA " +
                  (p.ir().cta_group == 2 ? "pair " : "") + "per tile");
  std::string ptx = "";
  if (!o.ptx.empty()) {
    const io::Read r = io::read_file(o.ptx, 64u << 20);
    if (!r.ok) return refuse("cannot read " + o.ptx + ": " + r.error);
    if (r.truncated) return refuse(o.ptx + ": more than 64 MiB of PTX");
    ptx = r.data;
  } else {
    ptx = emit::ptx(p);
  }
  // --inputs: every NAME.npy of the folder, the values of input tensor NAME (the simulator checks
  // each against the run's shape and type, and that the kernel has such an input).
  sim::Inputs inputs;
  if (!o.inputs.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(o.inputs, ec)) return refuse("--inputs " + o.inputs + ": not a folder");
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(o.inputs, ec))
      if (e.path().extension() == ".npy") files.push_back(e.path());
    if (ec) return refuse("--inputs " + o.inputs + ": " + ec.message());
    if (files.empty()) return refuse("--inputs " + o.inputs + ": no .npy file in it (input tensor NAME is read from NAME.npy)");
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const io::Read r = io::read_file(f.string(), 1u << 30);
      if (!r.ok) return refuse("cannot read " + f.string() + ": " + r.error);
      if (r.truncated) return refuse(f.string() + ": more than 1 GiB");
      sim::InputArray a;
      if (const std::string bad = read_npy(r.data, a); !bad.empty()) return refuse(f.string() + ": " + bad);
      inputs[f.stem().string()] = std::move(a);
    }
  }
  const std::string ptx_name = o.ptx.empty() ? "the emitted PTX (ptxgen emit " + l.source.path + ")" : o.ptx;
  ksim::KernelPtr k;
  try {
    k = ksim::parse(ptx);
  } catch (const ksim::Error& e) {
    return refuse(ptx_name + ": the simulator cannot run it: " + e.what());
  }
  ksim::Options opt;
  opt.max_instructions = o.max_instructions;
  // A persistent kernel's units: two by default, so that each walks several tiles.
  const int64_t per =
      mf.at("cluster")[0].get<int64_t>() * mf.at("cluster")[1].get<int64_t>() * mf.at("cluster")[2].get<int64_t>();
  const int64_t units = o.grid ? o.grid : 2;
  std::string error;
  std::vector<sim::TensorReport> tensors;
  ksim::Stats st;
  // The schedules: --schedule S alone, else 0 (the fixed one) to --schedules - 1; the first that
  // fails is reported (its number replays it), else the fixed one's run.
  std::vector<uint64_t> schedules;
  if (o.schedule_given) schedules.push_back(o.schedule);
  else
    for (uint64_t i = 0; i < o.schedules; ++i) schedules.push_back(i);
  uint64_t shown_schedule = schedules.front();
  size_t ran = 0;
  for (const uint64_t id : schedules) {
    opt.schedule = id;
    ++ran;
    std::string e;
    std::vector<sim::TensorReport> ts;
    ksim::Stats stats;
    try {
      if (s.gemm) {
        sim::GemmResult r = sim::run_gemm(*k, mf, z.at("m"), z.at("n"), z.at("k"), o.seed, opt,
                                          persistent ? static_cast<int>(units * per) : 0, inputs);
        e = r.error, ts = std::move(r.tensors), stats = r.stats;
      } else {
        sim::ProgramResult r = sim::run_program(*k, *s.program, mf, o.seed, opt, z, inputs);
        e = r.error, ts = std::move(r.tensors), stats = r.stats;
      }
    } catch (const std::exception& x) {  // what the reference does not evaluate (docs/simulate.md)
      return refuse(l.source.path + ": " + x.what());
    }
    bool failed = !e.empty();
    for (const auto& t : ts) failed = failed || !t.passed();
    if (id == schedules.front() || failed) {
      error = e, tensors = std::move(ts), st = stats, shown_schedule = id;
    }
    if (failed) break;
  }
  SimReport rep{l.source.path, ptx_name, how, z, persistent, units, "", error, {}, {}, std::move(tensors), st, nullptr};
  rep.schedule = shown_schedule;
  rep.schedules_run = ran;

  for (const auto& [name, a] : inputs) rep.from_files.push_back(name);
  explain_failure(rep, p, ptx, o.max_instructions);
  if (!o.print.empty() && rep.error.empty()) {
    for (const auto& t : rep.tensors)
      if (t.name == o.print) rep.shown = &t;
    if (!rep.shown) {
      std::string names;
      for (const auto& t : rep.tensors) names += (names.empty() ? "" : ", ") + t.name;
      return refuse("--print " + o.print + ": the kernel's outputs are " + names);
    }
    if (rep.shown->got.empty())
      return refuse("--print " + o.print + ": too large to keep (" + std::to_string(rep.shown->rows * rep.shown->cols) +
                    " elements)");
  }
  print_report(p, o, rep, std::cout);
  if (const std::string v = verdict(rep); !v.empty()) {
    std::cerr << v;
    return kInvalid;
  }
  return kOk;
}

}  // namespace ptxgen::cli
