// The program level into the kernel IR: each global tensor a .u64 parameter (its extents the
// spec's, or sizes the kernel takes at run time), each TMA load its own tensor map, a grid of
// output tiles when the program has one. Without roles, one role of all warps runs the ops in the
// order listed (the planner orders them and inserts the syncs between their threads); with roles,
// each role its own ops, and pipeline.cpp plans the mbarriers between them.
#include "ptxgen/lower.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "pipeline.hpp"

namespace ptxgen::lower {

// Each kind takes the fields the parser reads for it (parse_program.cpp).
namespace {

ir::Position position(const spec::Op& o) {
  // A pair's CTA r works at `at` + r * per_cta; a grid's CTA at its tile, a loop at its iteration.
  ir::Position x;
  for (size_t i = 0; i < 2; ++i) {
    x.at[i].base = o.at[i];
    x.at[i].rank = o.per_cta[i];
    x.at[i].m_tile = o.at_step[i].m_tile;
    x.at[i].n_tile = o.at_step[i].n_tile;
    x.at[i].k_block = o.at_step[i].k_block;
  }
  x.at_ptr = o.at_ptr;
  x.per_cta_ptr = o.per_cta_ptr;
  x.has_per_cta = o.has_per_cta;
  return x;
}

ir::TmemAccess access(const spec::Op& o) {
  ir::TmemAccess x;
  x.shape = o.shape;
  x.num = o.num;
  x.pack = o.pack;
  x.warps = o.warps;
  x.shape_ptr = o.shape_ptr;
  x.num_ptr = o.num_ptr;
  x.pack_ptr = o.pack_ptr;
  x.warps_ptr = o.warps_ptr;
  return x;
}

// An activation (docs/spec.md, "Activations"): one ir::Math per step of its composition
// (activations(), ptxgen/math_fn.hpp), each operand the op's "a", an earlier step's temporary or
// the step's constant, the last step writing "regs". The steps carry the activation, so the rules
// and the plan name it rather than its inner functions; every step points at the op.
std::vector<ir::Op> activation(const spec::Op& o) {
  const ActivationInfo& act = info(*o.activation);
  std::vector<ir::Op> out;
  // A gated activation (docs/spec.md, "Activations"): the gate's activation into a temporary
  // (named as its steps' are, after the op's result), then regs = that times up ("b").
  const ir::Ref gated = {ir::activation_temporary(o.regs.name, act.a, static_cast<int>(act.steps.size())), o.ptr + "/op"};
  for (size_t i = 0; i < act.steps.size(); ++i) {
    const ComposeStep& st = act.steps[i];
    ir::Math m;
    m.fn = st.fn;
    m.approx = st.approx;
    m.approx_ptr = o.approx_ptr;
    m.of = ir::Math::Of{*o.activation, i, o.approx, o.regs.name, o.a.name, o.glu.has_value(), o.glu ? o.b.name : std::string()};
    for (size_t k = 0; k < 2; ++k) {  // a constant operand: its number
      if (!o.value[k] || (k == 1 && !o.glu)) continue;
      char b[40];
      std::snprintf(b, sizeof b, "%.9g", *o.value[k]);
      (k == 0 ? m.of->input : m.of->up) = b;
    }
    auto temporary = [&](int t) { return ir::Ref{ir::activation_temporary(o.regs.name, act.a, t), o.ptr + "/op"}; };
    m.regs = i + 1 < act.steps.size() ? temporary(st.out) : o.glu ? gated : o.regs;
    const std::array<ir::Ref*, 3> in = {&m.a, &m.b, &m.c};
    for (size_t k = 0; k < static_cast<size_t>(info(st.fn).operands); ++k) {
      if (st.in[k] == ComposeStep::kConstant) {
        m.value[k] = st.value[k];
        in[k]->ptr = o.ptr + "/op";
      } else if (st.in[k] == ComposeStep::kInput) {
        *in[k] = o.a;  // a register set, or (MATH-OPERANDS) a number
        m.value[k] = o.value[0];
      } else {
        *in[k] = temporary(st.in[k]);
      }
    }
    ir::Op x;
    x.ptr = o.ptr;
    x.body = std::move(m);
    out.push_back(std::move(x));
  }
  if (o.glu) {
    ir::Math m;
    m.fn = MathFn::mul;
    m.regs = o.regs;
    m.a = gated;
    m.b = o.b;
    m.value[1] = o.value[1];  // a number there is MATH-OPERANDS' to judge with the other operands
    m.approx_ptr = o.approx_ptr;
    m.of = out.back().as<ir::Math>()->of;  // the op's last step: the words of its first
    m.of->step = act.steps.size();
    ir::Op x;
    x.ptr = o.ptr;
    x.body = std::move(m);
    out.push_back(std::move(x));
  }
  return out;
}

// A load with a "place" other than rows (docs/spec.md, "M = 64"): the rows it reads go to the
// lanes of data-path layout F (PTX ISA 9.1 §9.7.16.10.5.6, Figure 215: an M = 64 MMA's row r, of
// the 16-row piece q = r / 16, sits in lane 32 q + r % 16 + the alignment, 0 or 16, which A, D and
// the metadata share, §9.7.16.10.5's table), which a 128-row
// tcgen05.cp (.128x256b / .128x128b: tile row i to lane i, §9.7.16.9.2) gives tile row 32 q + r % 16
// + the alignment. So each 16 rows of the global go to their own 16 tile rows, as the gemm
// template's TMA boxes do (src/lower/gemm.cpp): one piece of 16 rows per 16-row run, in order,
// sharing the load's tensor map. `layout_f` fills both alignments of each 128-row slab (two M
// groups), `layout_f::0` / `::16` one, reading half as many rows. LOAD-PLACE keeps the tile K-major
// and whole slabs; the rows left to the other alignment keep what they held.
std::vector<ir::Op> placed_load(const spec::Program& p, const spec::Op& o, ir::Op x) {
  const spec::SmemTile* t = nullptr;
  for (const auto& y : p.smem)
    if (y.name == o.dst.name) t = &y;
  if (!t || t->rows % 128 != 0) return {std::move(x)};  // LOAD-PLACE
  const bool both = o.place == spec::Place::layout_f;
  const int align = o.place == spec::Place::layout_f_16 ? 16 : 0;
  const int rows = both ? t->rows : t->rows / 2;  // the global rows it reads
  std::vector<ir::Op> out;
  for (int r = 0; r < rows; r += 16) {
    ir::Op piece = x;
    ir::Load& l = *piece.as<ir::Load>();
    const int slab = both ? r / 128 : r / 64, g = both ? r % 128 / 64 : 0, i = r % 64;
    l.pos.at[0].base += r;
    l.tile_row0 = 128 * slab + 32 * (i / 16) + (both ? 16 * g : align);
    l.load_rows = 16;
    out.push_back(std::move(piece));
  }
  return out;
}

}  // namespace

std::vector<ir::Op> lower_op(const spec::Program& p, const spec::Op& o) {
  if (o.kind == spec::OpKind::math && o.activation) return activation(o);
  ir::Op x;
  x.ptr = o.ptr;
  switch (o.kind) {
    case spec::OpKind::loop: x.body = ir::Wait{}; break;  // a loop is a node, not an op
    case spec::OpKind::load: {
      ir::Load l;
      l.src = o.src;
      l.dst = o.dst;
      l.pos = position(o);
      l.tma = o.tma;
      l.via_ptr = o.via_ptr;
      l.place_ptr = o.place_ptr;
      x.body = std::move(l);
      if (o.place != spec::Place::rows) return placed_load(p, o, std::move(x));
      break;
    }
    case spec::OpKind::copy: {
      ir::Copy c;
      c.src = o.src;
      c.dst = o.dst;
      c.rows = o.rows;
      c.cols = o.cols;
      c.rows_ptr = o.rows_ptr;
      c.cols_ptr = o.cols_ptr;
      x.body = std::move(c);
      break;
    }
    case spec::OpKind::mma: {
      ir::Mma m;
      m.a = o.a;
      m.b = o.b;
      m.d = o.d;
      m.scale_a = o.scale_a;
      m.scale_b = o.scale_b;
      m.metadata = o.metadata;
      m.accumulate = o.accumulate;
      m.accumulate_after_first_iteration = o.accumulate_after_first;
      m.vec = o.vec;
      m.vec_ptr = o.vec_ptr;
      m.scale_ptr = o.scale_ptr;
      m.sparse_ptr = o.sparse_ptr;
      m.kind_override = o.kind_override;
      m.kind_ptr = o.kind_ptr;
      x.body = std::move(m);
      break;
    }
    case spec::OpKind::tmem_load: {
      ir::TmemLoad l;
      l.src = o.src;
      l.regs = o.regs;
      l.access = access(o);
      x.body = std::move(l);
      break;
    }
    case spec::OpKind::fill: {
      ir::Fill f;
      f.like = o.like;
      f.regs = o.regs;
      f.access = access(o);
      f.value = o.value[0].value_or(0);
      f.value_ptr = o.a.ptr;
      x.body = std::move(f);
      break;
    }
    case spec::OpKind::tmem_store: {
      ir::TmemStore st;
      st.regs = o.regs;
      st.dst = o.dst;
      st.access = access(o);
      x.body = std::move(st);
      break;
    }
    case spec::OpKind::store: {
      ir::Store st;
      st.regs = o.regs;
      st.dst = o.dst;
      st.pos = position(o);
      st.tma = o.tma;
      st.via = o.stage;  // the stage, pending and map: lower_program; a stage without tma: STORE-TMA
      x.body = std::move(st);
      break;
    }
    case spec::OpKind::reduce: {
      ir::Reduce rd;
      rd.fn = o.reduce_fn;
      rd.regs = o.regs;
      rd.a = o.a;
      x.body = std::move(rd);
      break;
    }
    case spec::OpKind::amax: {
      ir::Amax am;
      am.a = o.a;
      am.dst = o.dst;
      am.of = o.of;
      am.pos = position(o);
      x.body = std::move(am);
      break;
    }
    case spec::OpKind::quantize: {
      // The elements' type is `of`'s (what the store of the result converts to); the format gives
      // the factors' type and block.
      ir::Quantize q;
      q.regs = o.regs;
      q.a = o.a;
      q.dst = o.dst;
      q.of = o.of;
      q.pos = position(o);
      const spec::Quantize f = o.quantize.value_or(spec::Quantize::mxfp8);
      q.vec = spec::quantize_vec(f);
      q.scale = spec::quantize_scale(f);
      q.elem = f == spec::Quantize::mxfp8 ? isa::DType::e4m3 : isa::DType::e2m1;
      for (const auto& g : p.globals)
        if (g.name == o.of.name) q.elem = g.dtype;
      x.body = std::move(q);
      break;
    }
    case spec::OpKind::read: {
      ir::Read rd;
      rd.src = o.src;
      rd.regs = o.regs;
      rd.like = o.like;
      rd.pos = position(o);
      x.body = std::move(rd);
      break;
    }
    case spec::OpKind::commit: {
      ir::Commit c;
      c.barrier = o.barrier;
      x.body = std::move(c);
      break;
    }
    case spec::OpKind::math: {
      ir::Math m;
      m.fn = o.fn;
      m.regs = o.regs;
      m.a = o.a;
      m.b = o.b;
      m.c = o.c;
      m.value = o.value;
      m.approx = o.approx;
      m.approx_ptr = o.approx_ptr;
      m.convert_to = o.convert_to;
      m.dtype_ptr = o.dtype_ptr;
      x.body = std::move(m);
      break;
    }
    case spec::OpKind::wait: {
      ir::Wait w;
      w.barrier = o.barrier;
      x.body = std::move(w);
      break;
    }
  }
  return {std::move(x)};
}

ir::Kernel lower_program(const spec::Spec& s) {
  const spec::Program& p = *s.program;
  ir::Kernel k;
  k.name = s.name;
  k.target = s.target;
  k.engine = ir::Engine::tcgen05;
  k.source = "program";
  k.threads = p.threads;
  k.threads_ptr = p.threads_ptr;
  k.cta_group = p.cta_group;
  k.cta_group_ptr = p.cta_group_ptr;
  k.cluster = {p.cta_group, 1, 1};  // a pair is one cluster of two CTAs
  for (const auto& z : p.sizes) k.size_params.push_back({z.name, z.value, z.of.name, z.div, z.mul, z.exact});
  if (p.grid) {
    const spec::Op* loop = nullptr;
    for (const auto& o : p.ops)
      if (o.kind == spec::OpKind::loop && !loop) loop = &o;
    k.grid = {true, p.grid->tile_m, p.grid->tile_n, loop ? loop->block : 0, p.grid->m.name, p.grid->n.name, p.grid->raster, false};
  }
  for (const auto& g : p.globals) {
    ir::Global x;
    x.name = g.name;
    x.ptr = g.ptr;
    x.format_ptr = g.format_ptr;
    x.dtype = g.dtype;
    x.format = g.format;
    x.rows = g.rows;
    x.cols = g.cols;
    x.ld = g.cols;
    x.rows_param = g.rows_size;
    x.cols_param = g.cols_size;
    x.ld_param = g.cols_size;  // rows tightly packed
    x.param = "p_" + g.name;  // the .u64 address parameter
    k.globals.push_back(x);
  }
  for (const auto& t : p.smem) {
    ir::Tile x;
    x.name = t.name;
    x.ptr = t.ptr;
    x.dtype = t.dtype;
    x.format = t.format;
    x.rows = t.rows;
    x.cols = t.cols;
    x.major = t.major;
    x.swizzle = t.swizzle;
    x.align = t.align;
    x.align_ptr = t.align_ptr;
    x.swizzle_ptr = t.swizzle_ptr;
    x.major_ptr = t.major_ptr;
    x.format_ptr = t.format_ptr;
    x.shape_ptr = t.ptr + "/shape";
    x.stages = t.stages;
    k.tiles.push_back(x);
  }
  k.views = p.views;
  // A store into a tensor of run-time extents writes what lies inside them. So does one into an
  // 8-bit float (e4m3, e5m2) or packed e2m1 tensor, whose elements the store converts in pairs
  // (cvt.rn.satfinite.{e4m3x2,e5m2x2,e2m1x2}.f32, §9.7.9.21): the clipped store is the one that
  // writes them (its static extents are STORE-BOUNDS' to judge as for any store).
  std::set<std::string> runtime;
  for (const auto& g : p.globals)
    if (!g.rows_size.empty() || !g.cols_size.empty() || g.dtype == isa::DType::e4m3 || g.dtype == isa::DType::e5m2 ||
        (g.dtype == isa::DType::e2m1 && g.format == spec::SubByte::packed))
      runtime.insert(g.name);
  if (!p.roles.empty()) {
    pipeline(p, k);
  } else {
    ir::Role all;
    all.name = "all";
    all.first_warp = 0;
    all.warps = (p.threads + 31) / 32;
    for (const auto& o : p.ops)
      for (auto& x : lower_op(p, o)) {
        ir::Node n;
        n.op = std::move(x);
        all.nodes.push_back(std::move(n));
      }
    k.roles.push_back(all);
  }
  // The pieces of one placed load share one tensor map, named as the first piece's own would be
  // (tmap_I, I its index in the role: plan/order.cpp), so no other load's name collides with it.
  for (auto& r : k.roles) {
    int i = 0;
    std::map<std::string, std::string> maps;  // a placed load's pointer -> its pieces' map
    auto name = [&](ir::Op& o) {
      if (ir::Load* l = o.as<ir::Load>(); l && l->tile_row0 >= 0 && l->map_param.empty())
        l->map_param = maps.emplace(o.ptr, "tmap_" + std::to_string(i)).first->second;
      ++i;
    };
    for (auto& n : r.nodes) {
      if (!n.is_loop) name(n.op);
      else
        for (auto& o : n.loop.body) name(o);
    }
  }
  // TMA stores (docs/spec.md, "TMA stores"): the j-th store through a staging tile of S stages, in
  // its role's order, writes stage j % S once at most S - 1 bulk groups of the role's issuing
  // thread still read (cp.async.bulk.wait_group.read, PTX ISA 9.1 §9.7.9.27.2.2): the store that
  // read that stage before is S groups back, every store since a group of its own. STORE-TMA keeps
  // a staging tile to the stores of one role, outside a loop. The TMA stores into one global share
  // its tensor map tmap_NAME (STORE-TMA: boxes of the same rows).
  std::map<std::string, int> through;
  for (auto& r : k.roles)
    for (auto& n : r.nodes) {
      ir::Store* st = n.is_loop ? nullptr : n.op.as<ir::Store>();
      if (!st || !st->tma) continue;
      int stages = 1;
      for (const auto& t : p.smem)
        if (t.name == st->via.name) stages = std::max(1, t.stages);
      st->via_stage = through[st->via.name]++ % stages;
      st->pending = stages - 1;
      st->map_param = "tmap_" + st->dst.name;
    }
  for (auto& r : k.roles)
    for (auto& n : r.nodes) {
      auto clip = [&](ir::Op& o) {
        if (auto* st = o.as<ir::Store>(); st && runtime.count(st->dst.name)) st->clip = true;
      };
      clip(n.op);
      for (auto& o : n.loop.body) clip(o);
    }
  return k;
}

ir::Kernel lower(const spec::Spec& s) {
  ir::Kernel k = s.program ? lower_program(s) : lower_gemm(s);
  // Every global states its storage bits and row stride, so what reads the IR (the planner, the
  // emitter, the manifest) needs no default of its own.
  for (auto& g : k.globals) {
    if (!g.bits) g.bits = isa::storage_bits(g.dtype, g.format);
    if (!g.ld) g.ld = g.cols;
  }
  return k;
}

}  // namespace ptxgen::lower
