// Checks for the limits of this build and of the hardware's address arithmetic.
#include <string>

#include "context.hpp"

namespace ptxgen::rules {

void check_target_emitter(const Context& c, Diagnostics& d) {
  // The wgmma emitter for sm_90a is not in this build yet; without this rule an sm_90a spec would
  // pass the check and then have no plan (found by the fuzzer).
  if (c.target.tcgen05) return;
  d.error("TARGET-EMITTER", "/target",
          "this ptxgen checks " + std::string(c.target.name) + " specs but has no code generator for it yet")
      .help = {"target sm_100a, sm_100f, sm_103a or sm_110a (tcgen05)"};
}

}  // namespace ptxgen::rules
