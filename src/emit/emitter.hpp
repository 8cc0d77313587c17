// The emitter's state (internal to the emit stage): one planned kernel in, PTX text out. The
// prologue (emitter.cpp) defines the registers everything else uses; each role's steps follow,
// loops and barriers (emitter.cpp), data movement (data.cpp), MMAs (mma.cpp); every mnemonic comes
// from the spelling tables (spelling.hpp).
#pragma once

#include <functional>
#include <array>
#include <map>
#include <tuple>
#include <set>
#include <string>
#include <vector>

#include "ptx_writer.hpp"
#include "ptxgen/emit.hpp"
#include "spelling.hpp"

namespace ptxgen::emit::detail {

// The scalar spelling table's parameters, by their short names at the emitter's many call sites.
using spell::BoolOp;
using spell::Cmp;
using spell::Op;
using spell::Round;
using spell::Space;
using spell::Ty;

// PTX is ASCII (ptxas refuses other bytes, even in comments): the plan's notes cite sections as
// "§9.7.16.6", written here "PTX ISA 9.7.16.6".
std::string ascii(const std::string& t);

// The registers of the loop an op runs in: iteration kb, and per ring size the stage and phase.
struct LoopRegs {
  bool active = false;
  std::string kb;
  std::map<int, std::pair<std::string, std::string>> ring;  // ring size -> (stage, phase)
  std::string acc_on, always;                               // predicates: kb != 0, true
  int half = -1;  // a loop unrolled by two (plan::Step::unroll): the copy being written, kb % 2
};

struct Emitter {
  explicit Emitter(const plan::Plan& p);
  std::string run();

  const plan::Plan& p;
  const isa::TargetInfo& target;
  PtxWriter w;
  int label_ = 0;
  // Prologue registers.
  std::string tid, warp, lane, base, not_t0, not_issuer, odd, rank, rank64, dbase, desc_base32, m_tile, n_tile, cta_even;
  std::map<int, std::string> warp_p;
  std::map<std::string, std::string> gbase, bar, tmem_base, tmap, size;
  // The registers each register set is read from: its own (`canon`, which every op that defines
  // the set writes), or after a read those its distinct elements were loaded into (a broadcast
  // tensor's repeat). `own(set)` makes a set its own registers again, for an op that writes them.
  std::map<std::string, std::vector<std::string>> regs, canon;
  const std::vector<std::string>& own(const std::string& set) { return regs[set] = canon.at(set); }
  std::map<std::string, const plan::SmemPlacement*> tiles;
  std::map<std::string, const plan::BarrierPlacement*> bars;
  LoopRegs loop;
  // A persistent role's rings (set up once, carried from tile to tile), and the rings of the loop
  // that just ended (a step after it with a lag names its last iterations).
  std::map<int, std::pair<std::string, std::string>> role_ring, after_ring;
  bool guarding_ = false;   // writing a run of steps of one parity, inside its guard (steps())
  std::string after_trips;  // the iterations of the loop that just ended (a step after it of one parity)
  // A persistent role's rings over its tiles (ir::Phase::tile, ir::TmemRing), by ring size: the
  // stage and phase of the CTA's current tile. And, for the step being written, its tensor-memory
  // ring's allocation bases moved to this tile's stage (empty: no ring).
  std::map<int, std::pair<std::string, std::string>> tile_ring;
  std::map<std::string, std::string> ring_base;
  std::string tiles_m, tiles_n, tile_count;  // persistent grids: tile rows, columns and all tiles
  std::string group;  // a grouped grid: this CTA's (tile's) group (ir::Grid::groups_param)
  // A persistent grouped grid: each grouped tensor's address parameter at group 0 and the bytes of
  // one group's plane (Emitter::group_planes), by tensor name.
  std::map<std::string, std::pair<std::string, std::string>> group_plane;
  // A persistent grouped role's walk over (group, tile) (Emitter::group_tile): the current group's
  // first tile among all groups', its tiles, its tile rows, its first tile row in A (contiguous
  // layout), its segment's first row and the next segment's.
  struct GroupWalk {
    std::string first, count, rows_t, row_t, start, next;
  };
  const plan::RolePlan* role = nullptr;

  bool pair() const { return p.ir().cta_group == 2; }
  // The cluster's CTAs (pairs) cover a block of tiles and share operands by multicast
  // (ir::Grid::cluster_m/n).
  bool clustered() const { return p.ir().grid.cluster_m * p.ir().grid.cluster_n > 1; }
  std::string crank, cpair;  // clustered: %cluster_ctarank; in a pair, the pair's place (rank / 2)
  void cluster_tile(const std::string& block_m, const std::string& block_n);
  // tcgen05 in a multicasting cluster (set up in the prologue): this CTA's (pair's) place in its
  // block tile row [0] (its tile column) and column [1] (its tile row); the ctaMask of the CTAs of
  // that row [0] and column [1] of its own rank in the pair; and the mask of every CTA of both (both
  // ranks of each pair), where the MMA issuer's commits release a stage.
  std::array<std::string, 2> share_place, share_mask;
  std::string release_mask, release_mask32;
  std::string shared_ctas(bool along_m, bool both_ranks);
  std::string cgq() const { return ".cta_group::" + std::to_string(p.ir().cta_group); }
  std::string label() { return "$L_s" + std::to_string(label_++); }
  const std::string& warp_pred(int wi);
  // The issuing thread's guard: a role of all threads leaves one thread (of CTA 0 in a pair) to
  // issue tcgen05.cp/mma/commit; a single-thread role is that thread already.
  bool guarded() const { return role && !role->ir().single_thread; }
  // A tcgen05 kernel's single-thread role runs in its whole warp, converged (the loops' trip counts
  // and the barrier waits are the same in every lane); `elected` is the predicate elect.sync set in
  // the one lane that issues (empty outside such a role). ptxas issues a tensor-core or TMA
  // instruction under it as one warp-uniform instruction, not in a loop over the active lanes.
  std::string elected;
  // The guard of one thread's instructions (TMA, tcgen05.cp/mma/commit, barrier arming and
  // arrival): in a role of all threads the others (`others`: not_t0 or not_issuer) branch to `to`;
  // in a single-thread role CTA 1 of a pair where `cta1`, and in an elected role every lane but the
  // elected one. False where nothing branches (no label needed).
  bool issue_guard(const std::string& others, bool cta1, const std::string& to);
  bool after_loop(const ir::Phase& ph) const { return ph.lag > 0 && !after_ring.empty(); }
  void tile_of(const std::string& lin, const std::string& rows, const std::string& cols);
  void tile_of(const std::string& lin, const std::string& rows, const std::string& cols, const std::string& out_m,
               const std::string& out_n);
  void tile_loop(const plan::RolePlan& r);
  std::set<int> rings(const std::vector<plan::Step>& body);
  std::pair<std::string, std::string> ring_regs(int n, const std::string& what);
  void advance(const std::map<int, std::pair<std::string, std::string>>& rings);
  void advance_by(const std::map<int, std::pair<std::string, std::string>>& rings, const std::string& n);
  std::string loop_trips(const plan::Step& st);

  // emitter.cpp
  std::string header() const;
  void prologue();
  void roles();
  void teardown_single();
  void steps(const std::vector<plan::Step>& ss);
  void step(const plan::Step& st);
  void thread_sync();
  void loop_step(const plan::Step& st);
  // The stage and phase registers of iteration kb - lag of a ring of `ring` stages (outside a
  // loop: stage 0, phase = parity given).
  std::pair<std::string, std::string> stage_phase(const ir::Phase& ph, int ring);
  std::string barrier_addr(const std::string& name, const ir::Phase& ph);
  void wait(const plan::Step& st, const std::string& L);
  void commit(const plan::Step& st, const std::string& L);
  void group_prologue();
  void group_entry(const std::string& array, const std::string& index, const std::string& out, const std::string& at, const std::string& what);
  void group_planes();
  std::pair<std::string, std::string> plane_extents(const ir::Global& g);
  void group_count(const GroupWalk& gw);
  void group_tile(const GroupWalk& gw, const std::string& tile, const std::string& end);
  // A register holding the Affine's value (32-bit).
  std::string affine(const ir::Affine& a, int64_t scale = 1);
  // The 16-byte-unit start offset of a tile's current stage, for descriptors (a ring) or "".
  std::string stage_units(const std::string& tile);
  std::string tmem(const std::string& alloc, uint32_t rel) const;
  // The same for a ring of buffers: in a K loop, the copy of the iteration's ring stage.
  std::string tmem(const std::string& alloc, uint32_t rel, const plan::TmemRing& ring);
  // tmem() of the current step's operand that follows its tensor-memory ring (D of an mma, the
  // view of a tcgen05.ld): the allocation base moved to this tile's stage.
  std::string ring_tmem(const std::string& alloc, uint32_t rel) const;
  void ring_bases(const plan::Step& st);
  std::string desc(const isa::SmemDesc& d, const std::string& tile);

  // data.cpp
  void load(const plan::LoadStep& l, const std::string& L);
  void tma_load(const plan::LoadStep& l, const std::string& L);
  void cp(const plan::Step& st, const std::string& L);
  void ld(const plan::RegDef& d, const std::vector<std::string>& rs, const std::string& L);
  // Elementwise steps over the same elements (plan::same_elements), one after the other in the
  // plan: each register's whole chain before the next register's, so that a chain's
  // intermediate values live one element at a time rather than a register set each.
  void math_run(const std::vector<const plan::Step*>& run);
  void read(const plan::ReadStep& r, const std::string& L);
  void reduce(const plan::ReduceStep& r, const std::string& L);
  void amax(const plan::AmaxStep& a, const std::string& L);
  void quantize(const plan::QuantizeStep& q, const std::string& L);
  void store_e2m1_pair(const plan::StoreStep& st, const std::string& x, const std::string& y, const std::string& row,
                       const std::string& col);
  // The predicate of the element at (tr + cell.first, tc + cell.second) lying inside r's extents
  // ("" where the read broadcasts along both); read_element's bounds without the load.
  std::string element_inside(const plan::ReadStep& r, const std::string& tr, const std::string& tc,
                             const std::pair<int64_t, int64_t>& cell);
  bool skip_other_warps(int lo, int hi, const std::string& L);
  void read_element(const plan::ReadStep& r, const std::string& v, const std::string& tr, const std::string& tc,
                    const std::pair<int64_t, int64_t>& cell);
  // read_element's row addresses: per (tensor, the thread's first row and column registers, the
  // cell's row offset), the address of the row's element at the thread's first column and the row's
  // predicate ("" where rows broadcast). Keyed by the base registers, which are defined once, so an
  // entry is used only after its definition in the same straight-line code.
  std::map<std::tuple<std::string, std::string, std::string, int64_t>, std::pair<std::string, std::string>> read_rows;
  std::map<std::tuple<std::string, std::string, std::string, int64_t>, std::string> inside_rows;  // element_inside's, likewise
  std::pair<std::string, std::string> wgmma_base(const plan::RegDef& d, const std::string& row0, const std::string& col0);
  std::pair<std::string, std::string> read_base(const plan::ReadStep& r);  // read_element's tr, tc for wgmma registers
  std::pair<std::string, std::string> ld_base(isa::LdShape shape, const std::string& row0, const std::string& col0,
                                              const std::string& wrow);
  void tmem_st(const plan::Step& st, const std::string& L);
  void store(const plan::StoreStep& st, const std::string& L);
  void clipped_store(const plan::StoreStep& st, const std::string& L);
  void tma_store(const plan::StoreStep& st, const std::string& L);
  void box_store(const plan::StoreStep& st, const std::string& L);  // epilogue.cpp: tcgen05.ld registers, one box
  // data.cpp: a 16-bit D into the staging tile by stmatrix.x4, for tma_store
  void stmatrix_staging(const plan::StoreStep& st, const std::vector<std::string>& rs, const std::string& wgi, const std::string& q, int row_bytes,
                        int only_box = -1);
  struct TmaBoxes {
    std::string row0, col0, box0, plane;  // plane: a rank-3 map's third coordinate (a grouped D)
  };
  TmaBoxes tma_boxes(const plan::StoreStep& st, const std::string& wgi);  // data.cpp: for tma_store_box
  void tma_store_box(const plan::StoreStep& st, const TmaBoxes& b, int j, int64_t at, const std::string& pred);
  void tma_store_subtiles(const plan::StoreStep& st, const std::vector<std::string>& rs, const std::string& wgi, const std::string& q,
                          const std::string& issuer, const std::function<void()>& wg_sync, int row_bytes);
  // The tcgen05.ld fragments of `d` warp by warp: fn(fragments, wrow) writes one warp's code, `wrow`
  // a register with the rows to add to the fragments' own ("": none). Warps whose fragments differ
  // only in their rows share one copy, the rows computed from the warp index. `unbranched`: where
  // the role is exactly those warps, that copy without a branch around it (data.cpp says why).
  void for_warps(const plan::RegDef& d, const std::string& L,
                 const std::function<void(const std::vector<const plan::LdInstr*>&, const std::string&)>& fn,
                 bool unbranched = false);
  std::vector<std::string> pair_out(const plan::StoreStep& st, const std::string& x, const std::string& y,
                                    const std::string& packed);
  std::string half(const std::string& r, int elem, int epr);
  std::string thread_offset(const plan::LdInstr& f, int64_t stride, int64_t col_bytes);
  void store_pair(const plan::StoreStep& st, const std::string& x, const std::string& y, const std::string& packed,
                  const std::string& row, const std::string& col);

  // mma.cpp
  void mma(const plan::MmaStep& m, const std::string& L);
  void wgmma(const plan::MmaStep& m, const std::string& L);
  void a_fragments(const plan::MmaStep& m, const std::vector<std::string>& out);
};

}  // namespace ptxgen::emit::detail
