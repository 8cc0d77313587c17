// The tcgen05 epilogue's TMA store of one box (plan::StoreStep with tcgen05.ld registers): the
// warps that hold the box's rows convert their registers to D's type and write them into a stage of
// the 128-byte swizzled staging ring, and one thread stores the stage with cp.async.bulk.tensor
// (PTX ISA 9.7.9.25.5.1), which writes only what lies inside D (5.5: the bounding box is clipped).
#include <stdexcept>

#include "emitter.hpp"

namespace ptxgen::emit::detail {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
}  // namespace

// Per box:
//   the issuing thread (lane 0 of the role's first warp) waits until at most `pending` of its bulk
//   groups still read shared memory: the store that last read this stage has read it
//   (cp.async.bulk.wait_group.read, 9.7.9.25.4.2); the role's warps meet (named barrier 1);
//   each thread writes its elements of the box, row r's 16-byte chunk c at chunk c ^ (r % 8) of
//   the 128-byte row (Table 41's 128-byte swizzle, on the absolute address: the stage starts on a
//   1024-byte boundary), so the eight rows of one store instruction hit eight different chunks;
//   fence.proxy.async makes the writes visible to the async proxy (9.7.13.4.3); the warps meet
//   again; the issuing thread stores the box at (column, row) of D's map and commits the group.
void Emitter::box_store(const plan::StoreStep& st, const std::string& L) {
  const plan::RegDef& d = st.src;
  const auto& rs = regs.at(d.name);
  const int es = isa::value_bits(st.to) / 8;
  const int row_bytes = st.box_cols * es;  // one 128-byte swizzle row
  const int first = role ? role->ir().first_warp : 0, threads = 32 * (role ? role->ir().warps : 1);
  const std::string issuer = w.pred(), stage = w.r32();
  // A box loaded in pieces (plan::StoreStep::piece_col): the first piece waits for the stage, each
  // writes its columns, the last stores the box.
  const bool first_piece = st.piece_col == 0;
  if (st.piece_last) w.ins(spell::setp(Cmp::ne, Ty::u32) + " " + issuer + ", " + tid + ", " + s(32 * first), "all but the issuing thread");
  w.ins(spell::alu(Op::add, Ty::u32) + " " + stage + ", " + base + ", " + s(st.stage_offset), "the staging stage of this box");
  if (first_piece) {
    if (st.pending >= 0) {
      const std::string p = st.piece_last ? issuer : w.pred();
      if (!st.piece_last) w.ins(spell::setp(Cmp::ne, Ty::u32) + " " + p + ", " + tid + ", " + s(32 * first), "all but the issuing thread");
      w.ins("@!" + p + " " + spell::bulk_wait_read() + " " + s(st.pending), "the stage's previous box has been read");
    }
    w.ins(spell::bar_sync() + " 1, " + s(threads), "the stage is free for every thread of the role");
    // Over the operand ring, which the MMAs read through the async proxy: their reads (complete with
    // the accumulator's barrier) are ordered before these generic writes.
    if (st.overlay) w.ins(spell::proxy_fence());
  }
  for_warps(d, L, [&](const std::vector<const plan::LdInstr*>& fs, const std::string& wrows) {
    for (const plan::LdInstr* f : fs) {
      if (f->pack || d.elems_per_reg != 1) throw std::logic_error("a TMA store of packed registers");
      // This thread's first row and column of the fragment (isa::ld_cell of register 0).
      const std::string row = w.r32(), rx = w.r32(), wrow = w.r32();
      int per_unit = 0;  // registers of one shared-memory store
      std::string lchunk, within;
      switch (f->shape) {
        case isa::LdShape::s32x32b:  // lane t, column 0: whole 16-byte chunks of one row
          w.ins(spell::alu(Op::add, Ty::u32) + " " + row + ", " + lane + ", " + s(f->row0));
          per_unit = 16 / es;
          break;
        case isa::LdShape::s16x256b: {  // lane t/4 (+ 8), columns 2(t%4) + {0, 1}: pairs
          lchunk = w.r32();
          within = w.r32();
          w.ins(spell::alu(Op::shr, Ty::u32) + " " + row + ", " + lane + ", 2");
          w.ins(spell::alu(Op::add, Ty::u32) + " " + row + ", " + row + ", " + s(f->row0));
          w.ins(spell::alu(Op::and_, Ty::b32) + " " + lchunk + ", " + lane + ", 3");
          w.ins(spell::alu(Op::mul_lo, Ty::u32) + " " + lchunk + ", " + lchunk + ", " + s(2 * es), "its byte in 8 columns");
          w.ins(spell::alu(Op::and_, Ty::b32) + " " + within + ", " + lchunk + ", 15");
          w.ins(spell::alu(Op::shr, Ty::u32) + " " + lchunk + ", " + lchunk + ", 4");
          per_unit = 2;
          break;
        }
        default: throw std::logic_error("a TMA store of an unsupported tcgen05.ld shape");
      }
      if (!wrows.empty()) w.ins(spell::alu(Op::add, Ty::u32) + " " + row + ", " + row + ", " + wrows, "the rows of this warp");
      w.ins(spell::alu(Op::and_, Ty::b32) + " " + rx + ", " + row + ", 7", "the row's swizzle (r % 8; the same 8 rows on)");
      w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + wrow + ", " + row + ", " + s(row_bytes) + ", " + stage);
      if (!within.empty()) w.ins(spell::alu(Op::add, Ty::u32) + " " + wrow + ", " + wrow + ", " + within);
      for (int j = 0; j < f->regs; j += per_unit) {
        const isa::LdCell c = isa::ld_cell(f->shape, 0, j);
        const int64_t col = st.piece_col + f->elem0 + c.column;  // the register part of the element column in the box
        if ((col * es) % 16 + (per_unit == 2 ? 0 : per_unit * es) > 16 || j + per_unit > f->regs)
          throw std::logic_error("a TMA store unit across a 16-byte chunk");
        std::vector<std::string> v;
        for (int u = 0; u < per_unit; u += 2) {
          const isa::LdCell a = isa::ld_cell(f->shape, 0, j + u), b = isa::ld_cell(f->shape, 0, j + u + 1);
          if (b.lane != a.lane || b.column != a.column + 1) throw std::logic_error("registers of a pair are not adjacent");
          for (const auto& x : pair_out(st, rs.at(static_cast<size_t>(f->first_reg + j + u)), rs.at(static_cast<size_t>(f->first_reg + j + u + 1)), ""))
            v.push_back(x);
        }
        // An 8-bit D: pair_out gives a 16-bit register per pair of columns. Where the thread holds
        // a whole chunk (.32x32b: 16 columns of its row) two pairs make each 32-bit word, the lower
        // columns in the low half (first in memory): one st.shared.v4.b32 per chunk.
        bool half = false;
        if (es == 1 && v.size() > 1) {
          std::vector<std::string> words;
          for (size_t i = 0; i + 1 < v.size(); i += 2) {
            words.push_back(w.r32());
            w.ins(spell::alu(Op::mov, Ty::b32) + " " + words.back() + ", {" + v[i] + ", " + v[i + 1] + "}");
          }
          v = words;
        } else if (es == 1) {
          half = true;  // .16x256b: the thread's one pair, two bytes
        }
        const std::string a = w.r32();
        const int64_t chunk = col * es / 16;
        if (lchunk.empty()) {
          w.ins(spell::alu(Op::xor_, Ty::b32) + " " + a + ", " + rx + ", " + s(chunk));
        } else {
          w.ins(spell::alu(Op::add, Ty::u32) + " " + a + ", " + lchunk + ", " + s(chunk));
          w.ins(spell::alu(Op::xor_, Ty::b32) + " " + a + ", " + a + ", " + rx);
        }
        w.ins(spell::alu(Op::mad_lo, Ty::u32) + " " + a + ", " + a + ", 16, " + wrow);
        const int64_t off = int64_t{c.lane} * row_bytes + (col * es) % 16;  // 8 rows on: the same swizzle
        const std::string at = "[" + a + (off ? "+" + s(off) : "") + "]";
        std::string list;
        for (size_t i = 0; i < v.size(); ++i) list += (i ? ", " : "") + v[i];
        if (half) w.ins(spell::st(Space::shared, Ty::b16) + " " + at + ", " + v[0]);
        else if (v.size() == 1) w.ins(spell::st(Space::shared, Ty::b32) + " " + at + ", " + v[0]);
        else w.ins(spell::st(Space::shared, Ty::b32, static_cast<int>(v.size())) + " " + at + ", {" + list + "}");
      }
    }
  });
  if (!st.piece_last) return;  // the box's later pieces write the rest of the stage
  // The writes reach the async proxy before TMA reads them (9.7.13.4.3), every thread's before
  // the issuing thread's store.
  w.ins(spell::proxy_fence());
  w.ins(spell::bar_sync() + " 1, " + s(threads), "the box is in shared memory");
  w.ins("@" + issuer + " " + spell::bra() + " " + L + "_done");
  const std::string row0 = affine(st.row0), col0 = affine(st.col0);
  const std::string plane = st.map.rank == 3 ? ", " + affine(st.plane) : "";  // a grouped D: the group's plane
  w.ins(spell::tma_store(st.map.rank) + " [" + tmap.at(st.map.param) + ", {" + col0 + ", " + row0 + plane + "}], [" + stage + "]");
  w.ins(spell::bulk_commit());
  w.label(L + "_done");
}

}  // namespace ptxgen::emit::detail
