// A small interpreter for the PTX the program emitter writes, run thread by thread: integer and
// address arithmetic, branches, loads, stores and special registers are executed, TMA boxes
// (cp.async.bulk.tensor) are expanded into the shared-memory writes the tensor map and its swizzle
// (PTX ISA 5.5.7) make of them; tcgen05.*
// instructions are recorded with their operand values. Values loaded from global memory or tensor
// memory are symbolic tokens that follow moves, splits and conversions to the stores that write them.
// It lets tests check what the emitted code does against the plan, which the plan-level reference
// model cannot see: the loops of the loads, the address arithmetic of the stores, the routing of
// registers into tcgen05.st.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ptxsim {

struct Token {        // where a value came from
  int kind = 0;       // 0: none (a plain integer), 1: global memory, 2: tcgen05.ld
  uint64_t addr = 0;  // kind 1: global byte address of the 32-bit word
  int ld = 0;         // kind 2: index of the tcgen05.ld instruction (in execution order per thread)
  int reg = 0;        // kind 2: position in its register vector
  int part = -1;      // 16-bit half (0/1) or byte (0-3) taken out of the register; -1 whole
  bool converted = false;
};

struct Value {
  uint64_t i = 0;
  Token t;
};

struct Tcgen05 {      // one tcgen05 instruction as a thread executed it
  std::string text;   // the instruction with its modifiers (operands omitted)
  std::vector<uint64_t> values;  // operand values: addresses, descriptors, immediates, in order
  std::vector<std::vector<Token>> regs;  // register-vector operands (tcgen05.st): the sources of each register
  int line = 0;
};

struct SharedWrite {  // st.shared.v4: 16 bytes at a shared address from tokens
  uint64_t addr = 0;
  std::vector<Token> from;
};

struct GlobalWrite {
  uint64_t addr = 0;
  int bytes = 0;
  Token from;
};

struct Thread {
  std::vector<Tcgen05> tc;
  std::map<uint64_t, uint64_t> expect_tx, complete_tx;  // per mbarrier address: bytes armed / delivered by TMA
  std::vector<SharedWrite> shared;
  std::vector<GlobalWrite> global;
  std::map<int, int> ld_of_line;  // tcgen05.ld line -> index
};

// A CUtensorMap parameter as the manifest describes it (tiled, rank 2, no interleave, no OOB).
struct TensorMap {
  uint64_t global = 0;           // the tensor's base address
  int unit = 1;                  // bytes per element of the map
  uint64_t dims[2] = {0, 0};     // elements, rows
  uint64_t stride = 0;           // bytes between rows
  uint32_t box[2] = {0, 0};
  int swizzle = 0;               // span in bytes: 0 (none), 32, 64, 128
  int atom = 16;                 // swizzle atomicity in bytes (32 for 128B_ATOM_32B)
};

struct Kernel {
  std::vector<std::string> params;
  std::map<std::string, TensorMap> tensor_maps;  // by parameter name
  uint64_t smem_symbol = 0;       // the address ptxgen_smem is given
  std::map<std::string, uint64_t> param_values;
  // Shared-memory words tcgen05.alloc wrote, shared by the threads of the CTA: run the allocating
  // warp's threads first (the kernel's bar.sync orders their writes before the other warps' reads).
  std::map<uint64_t, uint64_t> alloc_words;
  uint64_t cluster_ctarank = 0;   // %cluster_ctarank: a CTA pair runs each CTA with its own Kernel
};

// Runs thread `tid` (of `threads`) of the first .entry in `ptx`. Global parameters get distinct
// bases (param_values); ptxgen_smem sits at `smem_symbol`; tcgen05.alloc writes `tmem_base` plus the
// columns of the allocations before it. Throws std::runtime_error on an instruction it does not know.
Thread run(const std::string& ptx, int tid, Kernel& k, uint32_t tmem_base = 0);

}  // namespace ptxsim
