// The verifiers' shared context and their order.
#include "verify.hpp"

namespace ptxgen::rules::verify {

Ctx::Ctx(const ir::Kernel& kernel) : k(kernel), target(isa::target_info(kernel.target)) {
  for (const auto& g : k.globals) globals[g.name] = &g;
  for (const auto& t : k.tiles) tiles[t.name] = &t;
}

void Ctx::problem(const std::string& rule, const std::string& ptr, const std::string& msg, std::vector<std::string> help) {
  if (reported.insert(rule + "@" + ptr + "@" + msg).second) problems.push_back({rule, ptr, msg, std::move(help)});
}

std::vector<plan::Problem> run(const ir::Kernel& k) {
  Ctx c(k);
  kernel(c);
  views(c);
  return std::move(c.problems);
}

}  // namespace ptxgen::rules::verify
