// Shared by the program level's lowering (not part of the stage's interface).
#pragma once

#include "ptxgen/ir.hpp"
#include "ptxgen/program.hpp"

namespace ptxgen::lower {

// One op of the program as the IR's (its position's base and run-time steps, its operands): one
// op, an activation's steps (one ir::Math each, in order), or a placed load's pieces (16 rows each,
// in order; the program's tiles say how many).
std::vector<ir::Op> lower_op(const spec::Program& p, const spec::Op& o);

// A program with "roles": each role's nodes (a loop where its ops are in the program's loop), with
// the mbarrier waits, arrivals, commits and expect_tx the order of the ops needs between them
// (pipeline.cpp), into k.roles and k.barriers.
void pipeline(const spec::Program& p, ir::Kernel& k);

}  // namespace ptxgen::lower
