// `ptxgen simulate`'s report (simulate.hpp): the text and JSON forms, and the simulator's
// messages in the spec's terms (roles, barrier and tile names from the plan).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <regex>
#include <sstream>

#include "ptxgen/isa.hpp"
#include "simulate.hpp"

namespace ptxgen::cli {

namespace {

using json = nlohmann::ordered_json;

json num(double x) { return std::isfinite(x) ? json(x) : json(std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf"); }

std::string g4(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", x);
  return b;
}

struct RoleFacts {
  std::string name;
  int first = 0, warps = 0;
  uint64_t instructions = 0, mbarrier_waits = 0, bar_syncs = 0;
};

std::vector<RoleFacts> roles_of(const plan::Plan& p, const ksim::Stats& st) {
  std::vector<RoleFacts> out;
  std::vector<bool> seen(st.warp_instructions.size(), false);
  auto add = [&](RoleFacts r) {
    for (int w = r.first; w < r.first + r.warps && w < static_cast<int>(seen.size()); ++w) {
      seen[static_cast<size_t>(w)] = true;
      r.instructions += st.warp_instructions[static_cast<size_t>(w)];
      r.mbarrier_waits += st.warp_mbarrier_waits[static_cast<size_t>(w)];
      r.bar_syncs += st.warp_bar_waits[static_cast<size_t>(w)];
    }
    out.push_back(r);
  };
  for (const auto& r : p.ir().roles) add({r.name.empty() ? "all" : r.name, r.first_warp, r.warps, 0, 0, 0});
  for (size_t w = 0; w < seen.size(); ++w)
    if (!seen[w]) add({"warp " + std::to_string(w), static_cast<int>(w), 1, 0, 0, 0});
  return out;
}

// Rewrites every match of `re` in `e` by `f` of the match.
std::string rewrite(const std::string& e, const std::regex& re,
                    const std::function<std::string(const std::smatch&)>& f) {
  std::string out;
  size_t last = 0;
  for (auto it = std::sregex_iterator(e.begin(), e.end(), re); it != std::sregex_iterator(); ++it) {
    out += e.substr(last, static_cast<size_t>(it->position()) - last) + f(*it);
    last = static_cast<size_t>(it->position() + it->length());
  }
  return out + e.substr(last);
}

}  // namespace

// m, n and k first (the gemm template's order), then any other names.
std::string sizes_text(const Sizes& z) {
  std::string s;
  auto add = [&](const std::string& n, int64_t v) { s += (s.empty() ? "" : " ") + n + "=" + std::to_string(v); };
  for (const char* n : {"m", "n", "k"})
    if (z.count(n)) add(n, z.at(n));
  for (const auto& [n, v] : z)
    if (n != "m" && n != "n" && n != "k") add(n, v);
  return s.empty() ? "the spec's own" : s;
}

// What a simulator error is, from its wording (src/sim/: "deadlock:", "race:", ...).
std::string cause_of(const std::string& e) {
  if (e.rfind("deadlock", 0) == 0) return "deadlock";
  if (e.find("race: ") != std::string::npos) return "race";
  if (e.find("the kernel does not end") != std::string::npos) return "budget";
  if (e.find("which no instruction on this thread's path has written") != std::string::npos ||
      e.find("uninitialized mbarrier") != std::string::npos)
    return "unwritten";
  auto has = [&](const char* w) { return e.find(w) != std::string::npos; };
  // A limit of the simulator, not a fault of the kernel: the user learns nothing about the kernel.
  if (has("is not simulated")) return "not_simulated";
  if (has("exits with ")) return "unfinished";  // asynchronous work in flight, tensor memory allocated
  if (has("more arrivals than the mbarrier") || has("mbarrier.init of a barrier threads wait on") ||
      has("barrier.cluster.arrive twice") || has("barrier.cluster.wait without"))
    return "barrier";
  if (has("the warp diverged") || has("lanes of the warp give different") || has("the warps of the warpgroup") ||
      has("the warps of a warpgroup"))
    return "divergence";
  if (has("outside") || has("beyond")) return "out_of_bounds";
  return "error";
}

// A simulator message in the spec's terms: "(warp 4, lane 0)" gains the warp's role, and "the
// mbarrier at shared 0x30800" the barrier's name and stage in the plan's memory map (the offset
// from the dynamic base, which the kernel aligns up from where the simulator places it).
std::string with_names(const std::string& e, const plan::Plan& p) {
  const std::string roles = rewrite(e, std::regex("\\(warp ([0-9]+), lane ([0-9]+)\\)"), [&](const std::smatch& m) {
    const int w = std::stoi(m[1]);
    std::string role;
    for (const auto& r : p.ir().roles)
      if (w >= r.first_warp && w < r.first_warp + r.warps && !r.name.empty()) role = r.name;
    return "(warp " + m[1].str() + ", lane " + m[2].str() + (role.empty() ? "" : ", role " + role) + ")";
  });
  const uint64_t align = std::max<uint64_t>(p.smem_align, 1);
  const uint64_t base = (ksim::Launch{}.smem_symbol + align - 1) / align * align;
  const std::string tiles = rewrite(roles, std::regex("shared memory at 0x([0-9a-f]+)"), [&](const std::smatch& m) {
    const uint64_t at = std::stoull(m[1].str(), nullptr, 16);
    std::string name;
    for (const auto& t : p.smem) {
      for (int st = 0; st < t.stages; ++st) {
        const uint64_t lo = base + t.offset + uint64_t{t.stage_bytes} * static_cast<uint64_t>(st);
        if (at >= lo && at < lo + t.layout.bytes)
          name = "tile " + t.name + (t.stages > 1 ? " stage " + std::to_string(st) : "") + ", byte " +
                 std::to_string(at - lo);
      }
    }
    return m.str() + (name.empty() ? "" : " (" + name + ")");
  });
  return rewrite(tiles, std::regex("mbarrier at shared 0x([0-9a-f]+)"), [&](const std::smatch& m) {
    const uint64_t at = std::stoull(m[1].str(), nullptr, 16);
    std::string name;
    for (const auto& b : p.barriers)
      if (at >= base + b.offset && at < base + b.offset + 8u * static_cast<uint64_t>(b.stages) &&
          (at - base - b.offset) % 8 == 0)
        name = b.stages > 1 ? b.name + "[" + std::to_string((at - base - b.offset) / 8) + "]" : b.name;
    return m.str() + (name.empty() ? "" : " (\"" + name + "\")");
  });
}

// The emitter's comments mark where each part of the kernel starts (src/emit/emitter.cpp): a step
// "// [i] KIND (POINTER): what it does" (POINTER "inserted" for a step the planner added), a role
// "// Role \"NAME\": warps ...", and the teardown label. Lines before the first step of the kernel
// are its prologue; lines after a role's heading and before its first step are the role's dispatch.
PtxPlace ptx_place(const std::string& ptx, long line) {
  static const std::regex step("^\\s*// \\[([0-9]+)\\] (.+?) \\((/[^)]*|inserted)\\)");
  struct Step {
    std::string index, kind, ptr;
  };
  std::vector<Step> block;
  std::string other = "the prologue (tensor-memory allocation, barrier initialisation)";
  bool in_block = false;
  long n = 0;
  size_t at = 0;
  while (at <= ptx.size() && n < line) {
    const size_t end = std::min(ptx.find('\n', at), ptx.size());
    const std::string text = ptx.substr(at, end - at);
    ++n;
    at = end + 1;
    std::smatch m;
    if (std::regex_search(text, m, step)) {
      if (!in_block) block.clear();
      block.push_back({m[1].str(), m[2].str(), m[3].str()});
      in_block = true;
      continue;
    }
    in_block = false;
    if (const size_t r = text.find("// Role \""); r != std::string::npos) {
      const size_t q = text.find('"', r + 9);
      block.clear();
      other = "role " + text.substr(r + 9, q == std::string::npos ? std::string::npos : q - r - 9) +
              "'s dispatch (before its first step)";
    } else if (text.rfind("$L_teardown:", 0) == 0) {
      block.clear();
      other = "the teardown (tensor-memory deallocation)";
    }
  }
  PtxPlace out;
  if (block.empty()) {
    out.where = other;
    return out;
  }
  std::vector<std::string> kinds;
  for (const Step& s : block) {
    if (s.ptr != "inserted" && std::find(out.ops.begin(), out.ops.end(), s.ptr) == out.ops.end()) out.ops.push_back(s.ptr);
    if (std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end()) kinds.push_back(s.kind);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
    return s;
  };
  const std::string of = out.ops.empty() ? " (inserted by the planner)" : " of " + list(out.ops);
  if (block.size() == 1)
    out.where = "step [" + block[0].index + "] " + block[0].kind + of;
  else
    out.where = "steps [" + block.front().index + "] to [" + block.back().index + "], " + list(kinds) + of +
                ", written register by register";
  return out;
}

std::string with_steps(const std::string& e, const std::string& ptx) {
  return rewrite(e, std::regex("ptx line ([0-9]+)"), [&](const std::smatch& m) {
    return m.str() + " (" + ptx_place(ptx, std::stol(m[1].str())).where + ")";
  });
}

std::vector<std::string> failing_ops(const std::string& e, const std::string& ptx) {
  static const std::regex at("lane [0-9]+(, role [^)]*)?\\) at ptx line ([0-9]+)");
  std::smatch m;
  if (!std::regex_search(e, m, at)) return {};
  return ptx_place(ptx, std::stol(m[2].str())).ops;
}

// The spec's ops that write the global `name` (a store, a quantization's factors, an amax): where a
// wrong value came from, in the spec's terms (a gemm's are all /gemm).
std::vector<std::string> writers(const plan::Plan& p, const std::string& name) {
  std::vector<std::string> out;
  auto visit = [&](const ir::Op& o) {
    const bool writes = std::visit(
        [&](const auto& b) {
          if constexpr (requires { b.dst.name; }) return b.dst.name == name;
          else return false;
        },
        o.body);
    if (writes && !o.ptr.empty() && std::find(out.begin(), out.end(), o.ptr) == out.end()) out.push_back(o.ptr);
  };
  for (const auto& r : p.ir().roles)
    for (const auto& n : r.nodes) {
      if (!n.is_loop) visit(n.op);
      for (const auto& o : n.loop.body) visit(o);
    }
  return out;
}

void explain_failure(SimReport& rep, const plan::Plan& p, const std::string& ptx, uint64_t max_instructions) {
  if (!rep.error.empty()) {
    rep.cause = cause_of(rep.error);
    rep.error = with_names(rep.error, p);
    rep.ops = failing_ops(rep.error, ptx);
    rep.error = with_steps(rep.error, ptx);
    if (rep.cause == "budget")
      rep.error = "the simulation exceeded its budget of " + std::to_string(max_instructions) +
                  " instructions (--max-instructions): a kernel that does not end, or sizes too large to simulate; " +
                  rep.error;
  }
  for (const auto& t : rep.tensors)
    if (!t.passed() && rep.cause.empty()) rep.cause = "wrong_value";
}

std::string verdict(const SimReport& rep) {
  if (!rep.error.empty()) {  // "error[race]: tcgen05.mma reads ...", the message's own "race: " once
    const std::string& e = rep.error;
    return "error[" + rep.cause + "]: " + (e.rfind(rep.cause + ": ", 0) == 0 ? e.substr(rep.cause.size() + 2) : e) + "\n";
  }
  long bad = 0;
  for (const auto& t : rep.tensors) bad += !t.passed();
  if (bad)
    return "error[wrong_value]: " + std::to_string(bad) +
           " output tensor(s) differ from the float64 reference beyond their bound\n";
  return "";
}

void print_report(const plan::Plan& p, const SimulateOptions& o, const SimReport& r, std::ostream& os) {
  const auto& z = r.sizes;
  const std::string &how = r.sizes_how, &cause = r.cause, &error = r.error, &ptx_name = r.ptx_name;
  const bool persistent = r.persistent;
  const int64_t units = r.units;
  const std::vector<sim::TensorReport>& tensors = r.tensors;
  const ksim::Stats& st = r.stats;
  const sim::TensorReport* shown = r.shown;
  const std::vector<RoleFacts> roles = error.empty() ? roles_of(p, st) : std::vector<RoleFacts>{};
  const int64_t pr = 16, pc = 8;  // --print: the top-left corner
  if (o.json) {
    json j;
    j["spec"] = r.spec_path;
    j["kernel"] = p.ir().name;
    j["target"] = std::string(isa::target_info(p.ir().target).name);
    j["ptx"] = o.ptx.empty() ? json(nullptr) : json(o.ptx);
    j["sizes"] = z;
    j["sizes_chosen"] = how;
    j["seed"] = o.seed;
    j["inputs_from_files"] = r.from_files;
    j["schedule"] = r.schedule;
    j["policy"] = ksim::policy_name(ksim::policy_of(r.schedule));
    j["schedules_run"] = r.schedules_run;
    if (persistent) j["units"] = units;
    j["result"] = cause.empty() ? "pass" : "fail";
    j["cause"] = cause.empty() ? json(nullptr) : json(cause);
    j["error"] = error.empty() ? json(nullptr) : json(error);
    j["ops"] = r.ops;
    j["tensors"] = json::array();
    for (const auto& t : tensors) {
      json x = {{"name", t.name},
                {"rows", t.rows},
                {"cols", t.cols},
                {"checked", t.checked},
                {"max_abs", num(t.max_abs)},
                {"max_rel", num(t.max_rel)},
                {"worst", num(t.worst)},
                {"bound", num(t.bound)},
                {"pass", t.passed()}};
      x["mismatches"] = json::array();
      for (const auto& m : t.first)
        x["mismatches"].push_back(
            {{"row", m.row}, {"col", m.col}, {"got", num(m.got)}, {"want", num(m.want)}, {"bound", num(m.bound)}});
      if (!t.note.empty()) x["note"] = t.note;
      x["written_by"] = writers(p, t.name);
      j["tensors"].push_back(x);
    }
    if (error.empty()) {
      json d = {{"ctas", st.ctas},
                {"instructions", st.instructions},
                {"mma", st.mma},
                {"tma_boxes", st.tma_boxes},
                {"tma_stores", st.tma_stores}};
      d["roles"] = json::array();
      for (const auto& r : roles)
        d["roles"].push_back({{"name", r.name},
                              {"warps", {r.first, r.first + r.warps - 1}},
                              {"instructions", r.instructions},
                              {"mbarrier_waits", r.mbarrier_waits},
                              {"bar_syncs", r.bar_syncs}});
      j["dynamic"] = d;
    }
    if (shown) {
      json g = json::array(), w = json::array();
      for (int64_t i = 0; i < std::min(pr, shown->rows); ++i) {
        json gr = json::array(), wr = json::array();
        for (int64_t c = 0; c < std::min(pc, shown->cols); ++c) {
          gr.push_back(num(shown->got[static_cast<size_t>(i * shown->cols + c)]));
          wr.push_back(num(shown->want[static_cast<size_t>(i * shown->cols + c)]));
        }
        g.push_back(gr), w.push_back(wr);
      }
      j["print"] = {{"tensor", shown->name}, {"got", g}, {"want", w}};
    }
    os << j.dump(2) << "\n";
  } else {
    std::ostringstream out;
    out << "simulate " << p.ir().name << " (" << isa::target_info(p.ir().target).name << ") from " << ptx_name << "\n";
    out << "  sizes: " << sizes_text(z) << " (" << how << "), seed " << o.seed;
    if (persistent) out << ", " << units << " persistent unit(s)";
    out << "\n";
    if (o.schedules > 1 || o.schedule_given || r.schedule != 0) {
      out << "  schedule " << r.schedule << " (" << ksim::policy_name(ksim::policy_of(r.schedule)) << ")";
      if (!o.schedule_given)
        out << (r.cause.empty() ? ", the first of " + std::to_string(r.schedules_run) + " run, all passing"
                                : ", the first failing of " + std::to_string(r.schedules_run) + " run; replay it with --schedule " +
                                      std::to_string(r.schedule));
      out << "\n";
    }
    if (!r.from_files.empty()) {
      std::string list;
      for (const auto& x : r.from_files) list += (list.empty() ? "" : ", ") + x;
      out << "  inputs from " << o.inputs << ": " << list << " (the others random)\n";
    }
    for (const auto& t : tensors) {
      const bool ok = t.passed();
      out << "  " << t.name << ": " << t.checked << " elements checked, max abs error " << g4(t.max_abs)
          << ", max rel error " << g4(t.max_rel) << ", " << g4(t.worst) << " of the bound ("
          << (t.bound > 0 ? g4(t.bound) : "bits equal") << " there): " << (ok ? "ok" : "WRONG") << "\n";
      if (!ok) {
        const std::vector<std::string> w = writers(p, t.name);
        std::string list;
        for (const auto& x : w) list += (list.empty() ? "" : ", ") + x;
        if (!list.empty()) out << "    written by " << list << "\n";
      }
      for (const auto& m : t.first)
        out << "    " << t.name << "(" << m.row << "," << m.col << ") = " << g4(m.got) << ", expected " << g4(m.want)
            << (m.bound > 0 ? " (bound " + g4(m.bound) + ")" : " (bits equal)") << "\n";
      if (!t.note.empty()) out << "    " << t.note << "\n";
    }
    if (error.empty()) {
      out << "  ran " << st.ctas << " CTA(s): " << st.instructions << " instructions, " << st.mma << " MMAs, "
          << st.tma_boxes << " TMA boxes, " << st.tma_stores << " TMA stores\n";
      for (const auto& r : roles)
        out << "    " << r.name << " (warp"
            << (r.warps > 1 ? "s " + std::to_string(r.first) + "-" + std::to_string(r.first + r.warps - 1)
                            : " " + std::to_string(r.first))
            << "): " << r.instructions << " instructions, " << r.mbarrier_waits << " mbarrier waits, " << r.bar_syncs
            << " bar.syncs\n";
    }
    if (shown) {
      out << "  " << shown->name << " rows 0-" << std::min(pr, shown->rows) - 1 << ", columns 0-"
          << std::min(pc, shown->cols) - 1 << " (of " << shown->rows << " x " << shown->cols
          << "): the kernel's | the reference\n";
      for (int64_t i = 0; i < std::min(pr, shown->rows); ++i) {
        char b[24];
        std::snprintf(b, sizeof b, "  %4ld ", static_cast<long>(i));
        out << b;
        for (const auto* v : {&shown->got, &shown->want}) {
          for (int64_t c = 0; c < std::min(pc, shown->cols); ++c) {
            std::snprintf(b, sizeof b, " %10.4g", (*v)[static_cast<size_t>(i * shown->cols + c)]);
            out << b;
          }
          if (v == &shown->got) out << "  |";
        }
        out << "\n";
      }
    }
    os << out.str();
  }
}

}  // namespace ptxgen::cli
