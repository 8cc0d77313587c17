// The tcgen05 epilogue's TMA stores (gemm_epilogue.hpp): D's accumulator cells to registers by
// tcgen05.ld one box of D at a time, through a stage of a 128-byte swizzled staging ring to
// global memory by cp.async.bulk.tensor, which writes only what lies inside m x n (§5.5).
#include <stdexcept>

#include "gemm_epilogue.hpp"

namespace ptxgen::lower::detail {

namespace {
const char* kPtr = "/gemm";
const char* kEpiloguePtr = "/gemm/epilogue";
// The columns of one tcgen05.ld piece of a fused epilogue's box (tma_epilogue): 32 f32 registers
// of the accumulator and 32 of each fused read a thread.
constexpr int kPiece = 32;
}  // namespace

ir::Position up_position(ir::Position pos) {
  pos.at[1].size = "d";
  pos.at[1].size_mul = 1;
  return pos;
}

std::vector<ir::Op> fused_epilogue(const spec::Gemm& g, const std::string& regs, const ir::Position& pos, const std::string& up) {
  std::vector<ir::Op> out;
  auto op = [&](auto body) {
    ir::Op o;
    o.ptr = kPtr;
    o.body = std::move(body);
    out.push_back(std::move(o));
  };
  auto at = [](const char* member) { return std::string(kPtr) + "/" + member; };
  // An input tensor read where the store of `set` writes (at `where`), into the set SET_NAME (a
  // vector broadcasts).
  auto read = [&](const char* input, const char* member, const std::string& set, const ir::Position& where) {
    ir::Read r;
    r.src = {input, at(member)};
    r.regs = {set + "_" + input, at(member)};
    r.like = {set, kPtr};
    r.pos = where;
    op(r);
    return r.regs;
  };
  // A constant of 1 multiplies by nothing: no instruction for it (x * 1 is x for every f32 x). An
  // input alpha or beta (one f32, as D's scale) is read before its step, a read of a 1 x 1 tensor
  // broadcasting its one register to every element: the same mul.rn / fma.rn with a register in
  // place of the immediate.
  if ((g.alpha && *g.alpha != 1) || g.alpha_input) {
    ir::Math m;
    m.fn = MathFn::mul;
    m.regs = {regs, at("alpha")};
    m.a = {regs, kPtr};
    if (g.alpha_input) {
      m.b = read("alpha", "alpha", regs, pos);
    } else {
      m.b.ptr = at("alpha");
      m.value[1] = *g.alpha;
    }
    op(m);
  }
  if (g.c) {
    const ir::Ref c = read("C", "c", regs, pos);
    ir::Math m;
    m.regs = {regs, at("c")};
    if ((g.beta && *g.beta != 1) || g.beta_input) {  // beta C + acc, rounded once (fma.rn.f32)
      m.fn = MathFn::fma;
      m.a = c;
      if (g.beta_input) {
        m.b = read("beta", "beta", regs, pos);
      } else {
        m.b.ptr = at("beta");
        m.value[1] = *g.beta;
      }
      m.c = {regs, kPtr};
    } else {
      m.fn = MathFn::add;
      m.a = {regs, kPtr};
      m.b = c;
    }
    op(m);
  }
  // set += the input read where set's store writes (at `where`), add.rn.f32.
  auto add_input = [&](const char* input, const std::string& set, const ir::Position& where) {
    ir::Math m;
    m.fn = MathFn::add;
    m.regs = {set, at(input)};
    m.a = {set, kPtr};
    m.b = read(input, input, set, where);
    op(m);
  };
  if (g.bias) {
    add_input("bias", regs, pos);
    if (!up.empty()) add_input("bias", up, up_position(pos));  // up's bias: n / 2 elements on
  }
  const std::optional<Activation> act = g.glu ? std::optional<Activation>(glu_gate(*g.glu)) : g.activation;
  if (act) {
    const ActivationInfo& a = info(*act);
    const std::string p = std::string(kPtr) + "/activation";
    auto temp = [&](int t) { return regs + "_" + std::string(a.name) + std::to_string(t); };
    for (size_t i = 0; i < a.steps.size(); ++i) {
      const ComposeStep& c = a.steps[i];
      ir::Math m;
      m.fn = c.fn;
      m.approx = c.approx;
      // The plan names the activation and the step, as for the program op; the template asks for
      // the composition's own instruction forms (MATH-APPROX has nothing to refuse).
      m.of = ir::Math::Of{*act, i, a.approx, regs, regs, !up.empty(), up};
      m.regs = {i + 1 == a.steps.size() ? regs : temp(c.out), p};
      const std::array<ir::Ref*, 3> in = {&m.a, &m.b, &m.c};
      for (size_t k = 0; k < 3; ++k) {
        if (static_cast<int>(k) >= ptxgen::info(c.fn).operands) break;
        if (c.in[k] == ComposeStep::kConstant) m.value[k] = c.value[k], in[k]->ptr = p;
        else *in[k] = {c.in[k] == ComposeStep::kInput ? regs : temp(c.in[k]), p};
      }
      op(m);
    }
  }
  if (!up.empty()) {  // gated: the activated gate times up, element by element
    ir::Math m;
    m.fn = MathFn::mul;
    m.of = ir::Math::Of{*act, info(*act).steps.size(), info(*act).approx, regs, regs, true, up};
    m.regs = {regs, at("activation")};
    m.a = {regs, kPtr};
    m.b = {up, kPtr};
    op(m);
  }
  if (g.residual) add_input("residual", regs, pos);
  if (g.amax) {  // of the values D's conversion takes, inside D
    ir::Amax a;
    a.a = {regs, at("amax")};
    a.dst = {"amax", at("amax")};
    a.of = {"D", kPtr};
    a.pos = pos;
    op(a);
  }
  if (g.d_scale) {  // one element, read once per thread (a read of a 1 x 1 tensor broadcasts it)
    ir::Math m;
    m.fn = MathFn::mul;
    m.regs = {regs, at("d/scale")};
    m.a = {regs, kPtr};
    m.b = read("d_scale", "d/scale", regs, pos);
    op(m);
  }
  if (g.quantize) {  // last: the values D's conversion takes, over their blocks' factors
    ir::Quantize q;
    q.regs = {regs, at("quantize")};
    q.a = {regs, at("quantize")};
    q.dst = {"SFD", at("quantize")};
    q.of = {"D", kPtr};
    q.pos = pos;
    q.vec = spec::quantize_vec(*g.quantize);
    q.elem = g.d;
    q.scale = spec::quantize_scale(*g.quantize);
    op(q);
  }
  return out;
}

void tma_epilogue(ir::Kernel& k, ir::Role& epi, const std::vector<Segment>& segments, const TmaEpilogue& e) {
  const int es = isa::value_bits(e.d) / 8;
  const int box = isa::bytes(isa::Swizzle::b128) / es;  // columns of one 128-byte row of D
  int boxes = 0, rows = 0;
  for (const Segment& s : segments) {
    boxes += (s.c1 - s.c0 + box - 1) / box;
    if (rows && s.rows != rows) throw std::logic_error("epilogue segments of different rows share one tensor map");
    rows = s.rows;
  }
  const int stages = boxes % 2 == 0 ? 2 : 1;
  const bool fused = !fused_epilogue(*e.fused, "acc_regs", {}, e.up_offset ? "up_regs" : "").empty();
  k.chosen.push_back("epilogue: D by TMA in " + std::to_string(boxes) + " boxes of " + std::to_string(box) + " " +
                     std::string(isa::name(e.d)) + " columns x " + std::to_string(rows) + " rows per tile, through a staging ring of " +
                     std::to_string(stages) + (stages == 2 ? " stages (an even number of boxes: box j waits for box j - 2's reads)"
                                                           : " stage (an odd number of boxes: box j waits for box j - 1's reads)") +
                     (e.persistent ? " of its own" : " laid over the operand ring where it fits") +
                     (fused && box > kPiece ? "; each box loaded, computed on and staged in tcgen05.ld pieces of " + std::to_string(kPiece) +
                                                  " columns, so that the fused ops' registers live one piece at a time"
                                            : ""));
  // The staging ring: rows x one 128-byte row of D per stage, K-major with the 128-byte swizzle, as
  // a TMA box of the map reads it. A data-parallel CTA's ring is free once the accumulator is
  // complete (every MMA, and so every load, finished), so the planner lays the staging ring over it
  // where it fits; a persistent CTA's producer is already loading the next tile into it.
  ir::Tile t;
  t.name = "d_stage";
  t.ptr = t.shape_ptr = t.swizzle_ptr = t.major_ptr = kEpiloguePtr;
  t.dtype = e.d;
  t.rows = rows;
  t.cols = box;
  t.major = isa::Major::k;
  t.swizzle = isa::Swizzle::b128;
  t.stages = stages;
  if (!e.persistent) t.overlay = "a";
  k.tiles.push_back(t);
  int j = 0;
  const int last_box = boxes - 1;
  for (const Segment& s : segments)
    for (int c = s.c0; c < s.c1; c += box, ++j) {
      const int w = std::min(box, s.c1 - c);
      // A fused epilogue loads a whole box in pieces of kPiece columns, each read, computed on and
      // written into the stage before the next is loaded: the box's registers and the reads fused
      // with them (a bias along n is a register a column in each thread, .32x32b giving each lane
      // one row) live one piece at a time, not a box (64 columns of a 16-bit D, 128 of an 8-bit
      // one) at a time, which ptxas spills. Without fused ops one tcgen05.ld a box is the fewest
      // instructions and its registers fit.
      const int piece = fused && w == box ? std::min(w, kPiece) : w;
      for (int p = 0; p < w; p += piece) {
        const std::string name = "box" + std::to_string(j) + (piece < w ? "_" + std::to_string(p / piece) : "");
        ir::TmemView v;
        v.kind = ir::TmemView::Kind::slice;
        v.name = name;
        v.ptr = kPtr;
        v.of = {s.cells, kPtr};
        if (s.l0 || s.l1 != 128) v.lanes = std::array<int64_t, 2>{s.l0, s.l1};
        v.cols = std::array<int64_t, 2>{c + p, c + p + piece};
        k.views.push_back(v);
        auto load = [&](const std::string& view, const std::string& regs) {
          ir::Node ld;
          ld.op.ptr = kPtr;
          ir::TmemLoad& l = ld.op.body.emplace<ir::TmemLoad>();
          l.src = {view, kPtr};
          l.regs = {regs, kPtr};
          l.access.shape = s.shape;
          l.tmem_ring = e.ring;
          epi.nodes.push_back(ld);
        };
        load(v.name, "acc_regs");
        if (e.up_offset) {  // gated: the piece's up columns, up_offset on in the accumulator
          ir::TmemView u = v;
          u.name = name + "_up";
          u.cols = std::array<int64_t, 2>{c + p + e.up_offset, c + p + e.up_offset + piece};
          k.views.push_back(u);
          load(u.name, "up_regs");
        }
        // The tile's last tcgen05.ld: the accumulator buffer is read out (the planner waits for the
        // load, §9.7.16.6.4.4, before the arrival), and the rest works from registers.
        if (e.release && j == last_box && p + piece >= w) {
          ir::Node n;
          n.op = *e.release;
          epi.nodes.push_back(std::move(n));
        }
        ir::Position at;
        at.at[0] = s.row;
        at.at[1].n_tile = e.tile_n;
        at.at[1].base = s.col + (c - s.c0) + p;
        for (ir::Op& f : fused_epilogue(*e.fused, "acc_regs", at, e.up_offset ? "up_regs" : "")) {
          ir::Node n;
          n.op = std::move(f);
          epi.nodes.push_back(std::move(n));
        }
        ir::Node st;
        st.op.ptr = kPtr;
        ir::Store& x = st.op.body.emplace<ir::Store>();
        x.regs = {"acc_regs", kPtr};
        x.dst = {"D", kPtr};
        x.clip = true;
        x.pos.at[0] = s.row;
        x.pos.at[1].n_tile = e.tile_n;
        x.pos.at[1].base = s.col + (c - s.c0);  // the box's: its TMA store writes from there
        x.tma = true;
        x.via = {t.name, kEpiloguePtr};
        x.map_param = "tmap_d";
        x.via_stage = j % stages;
        x.pending = stages - 1;
        x.piece_col = p;
        x.piece_last = p + piece >= w;
        epi.nodes.push_back(st);
      }
    }
}

}  // namespace ptxgen::lower::detail
