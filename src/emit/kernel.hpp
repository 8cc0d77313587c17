// Pieces both kernels share (internal to the emit stage): parameters, the prologue, mbarrier
// waits, the TMA producer loop, and stores of accumulator pairs to D.
#pragma once

#include <string>

#include "ptx_writer.hpp"
#include "ptxgen/emit.hpp"

namespace ptxgen::emit::detail {

// Registers the prologue defines for the rest of the kernel.
struct Common {
  std::string tid, warp, lane;        // %tid.x, warp index, lane
  std::string base;                   // aligned shared-memory base (32-bit shared address)
  std::string bars;                   // address of the first mbarrier
  std::string m, n, k;                // problem sizes
  std::string d;                      // global address of D
  std::string tmap_a, tmap_b;         // generic addresses of the tensor-map parameters
  std::string num_kb;                 // K blocks: max(1, ceil(k / tile.k))
  std::string m_cta0;                 // first row of D this CTA holds
  std::string n_tile0;                // first column of the (pair's) N tile
  std::string b_row0;                 // first row of B (global N) this CTA loads
  std::string rank;                   // %cluster_ctarank (CTA pairs only)
  std::string odd;                    // predicate: odd CTA of a pair (CTA pairs only)
  std::string desc_base;              // 32-bit (base & 0x3FFFF) >> 4 for descriptor start fields
};

std::string params_block(const plan::Plan& p);
std::string header_comment(const plan::Plan& p, PtxVersion v);

// Thread ids, parameters, the aligned base, tile origins.
Common prologue(PtxWriter& w, const plan::Plan& p);

// Spins until the mbarrier at `addr` completes the phase with parity `parity` (a register or an
// immediate), then reconverges the warp.
void wait_barrier(PtxWriter& w, const std::string& addr, const std::string& parity, bool reconverge = true);

// Advances the pipeline counters: kb += 1; stage += 1 wrapping at `stages` and flipping `phase`.
void advance_stage(PtxWriter& w, const std::string& kb, const std::string& stage, const std::string& phase, int stages);

// The TMA producer loop, run by one thread: for each K block, wait for the stage to be empty,
// expect its bytes on the full barrier, and issue the planned cp.async.bulk.tensor loads.
void producer_loop(PtxWriter& w, const plan::Plan& p, const Common& c);

// Stores the accumulator pair (row, col) and (row, col + 1) to D, converting from the
// accumulator type; `x`/`y` are 32-bit registers (f32 or s32 bits, or an f16 in the low half),
// or `packed` is an .f16x2 register holding both (wgmma f16 accumulators).
struct Pair {
  std::string x, y, packed;
  std::string row, col;  // 32-bit registers
};
void store_pair(PtxWriter& w, const plan::Plan& p, const Common& c, const Pair& v);

// 64-bit descriptor register for `d`: the low word (start address, LBO) is `base32` (the aligned
// base's encoded start plus stage and warpgroup offsets, a 32-bit register) plus the constant low
// word; the high word (SBO, fixed bits, base offset, swizzle) is a constant. The start field cannot
// carry into LBO: shared addresses stay below 2^18.
std::string desc_reg(PtxWriter& w, const std::string& base32, const isa::SmemDesc& d, const std::string& what);

// The two kernels.
std::string ptx_tcgen05(const plan::Plan& p);
std::string ptx_wgmma(const plan::Plan& p);

}  // namespace ptxgen::emit::detail
