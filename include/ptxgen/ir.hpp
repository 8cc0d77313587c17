// ptxgen/ir.hpp — the kernel IR (src/ir/): its buffers, roles and ops (ir/kernel.hpp) and their
// geometry (ir/views.hpp). It depends on isa/ alone (and the spec's pointer vocabulary, ref.hpp):
// no spec, no plan, no PTX.
#pragma once

#include "ptxgen/ir/kernel.hpp"
#include "ptxgen/ir/views.hpp"
