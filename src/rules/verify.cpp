// The verifiers' shared context and their order.
#include "verify.hpp"

namespace ptxgen::rules::verify {

Ctx::Ctx(const ir::Kernel& kernel) : k(kernel), target(isa::target_info(kernel.target)) {
  for (const auto& g : k.globals) globals[g.name] = &g;
  for (const auto& t : k.tiles) tiles[t.name] = &t;
  for (const auto& v : k.views)
    if (!v.name.empty()) view_names.insert(v.name);
}

void Ctx::problem(const std::string& rule, const std::string& ptr, const std::string& msg, std::vector<std::string> help) {
  if (reported.insert(rule + "@" + ptr + "@" + msg).second) problems.push_back({rule, ptr, msg, std::move(help)});
}

std::string Ctx::kind_of(const std::string& n) const {
  if (globals.count(n)) return "a global tensor";
  if (tiles.count(n)) return "a shared-memory tile";
  if (view_names.count(n)) return "a tensor-memory view";
  return "";
}

namespace {
bool unknown(Ctx& c, const ir::Ref& r, const std::string& role, const std::string& want, const char* where) {
  const std::string k = c.kind_of(r.name);
  if (k.empty()) {
    c.problem("NAME-UNKNOWN", r.ptr, "\"" + r.name + "\" (" + role + ") is not declared",
              {std::string("declare it under ") + where});
    return true;
  }
  if (k != want) {
    c.problem("OP-OPERAND", r.ptr, "\"" + r.name + "\" is " + k + "; the " + role + " must be " + want);
    return true;
  }
  return false;
}
}  // namespace

const ir::Global* Ctx::global(const ir::Ref& r, const std::string& role) {
  if (unknown(*this, r, role, "a global tensor", "/program/globals") || oversized.count(r.name)) return nullptr;
  return globals.at(r.name);
}

const plan::SmemPlacement* Ctx::tile(const ir::Ref& r, const std::string& role) {
  if (unknown(*this, r, role, "a shared-memory tile", "/program/smem")) return nullptr;
  auto it = placed.find(r.name);
  return it == placed.end() ? nullptr : &it->second;
}

const ir::ResolvedView* Ctx::view(const ir::Ref& r, const std::string& role) {
  if (unknown(*this, r, role, "a tensor-memory view", "/program/tmem")) return nullptr;
  auto it = views.find(r.name);
  return it == views.end() ? nullptr : &it->second;
}

std::vector<const ir::Op*> all_ops(const ir::Kernel& k) {
  std::vector<const ir::Op*> out;
  for (const auto& r : k.roles)
    for (const auto& n : r.nodes) {
      if (!n.is_loop) out.push_back(&n.op);
      else
        for (const auto& o : n.loop.body) out.push_back(&o);
    }
  return out;
}

Verdict run(const ir::Kernel& k) {
  Ctx c(k);
  kernel(c);
  views(c);
  const size_t buffers = c.problems.size();
  loads(c);
  copies(c);
  mmas(c);
  registers(c);
  order(c);
  coverage(c);
  lane_order(c);
  return {std::move(c.problems), std::move(c.refused), buffers, std::move(c.warnings)};
}

}  // namespace ptxgen::rules::verify
