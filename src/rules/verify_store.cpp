// A program's store by TMA (docs/spec.md, "TMA stores"): what the staging path of the gemm
// template's tcgen05 epilogue takes (plan::plan_box_store, emit's box_store), worded per field.
// The registers are one box of D: a tcgen05.ld of one 128-byte row of D's columns by the view's
// rows, one unpacked element a register, moved by .32x32b or .16x256b. The threads write them
// into a stage of a staging tile that is K-major with the 128-byte swizzle (PTX ISA 9.1 §5.5.7:
// 16-byte chunk c of row r at chunk c ^ (r % 8)), which is what a box of the tensor map reads,
// and one thread writes the box with cp.async.bulk.tensor (§9.7.9.27.1.2), which TMA clips to D's
// extents (§5.5). The tile's stages take the role's stores through it in turn
// (cp.async.bulk.wait_group.read, §9.7.9.27.2.2), so it belongs to the stores of one role.
#include "verify.hpp"

namespace ptxgen::rules::verify {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
std::string dt(isa::DType t) { return std::string(isa::name(t)); }
}  // namespace

bool tma_store(Ctx& c, const ir::Op& op, const plan::RegDef& src, const ir::Global& g) {
  // The gemm template's epilogue builds its own staging (boxes loaded in pieces, a ring laid over
  // the operands, CTA pairs), which its rules judge on the spec (EPILOGUE-TMA, D-FP8).
  if (c.k.source != "program") return true;
  const ir::Store& o = *op.as<ir::Store>();
  const std::string via = op.ptr + "/via";
  auto refuse = [&](const std::string& ptr, const std::string& msg, std::vector<std::string> help) {
    c.problem("STORE-TMA", ptr, msg, std::move(help));
    return false;
  };
  // ptxgen's refusals, not the hardware's: what the staging path has not been built for.
  if (c.pair())
    return refuse(via, "a CTA pair stores by TMA only in the gemm template; a program's TMA store is one CTA's (ptxgen's refusal)",
                  {"store directly (drop \"via\"), or use one CTA (\"cta_group\": 1)"});
  for (const auto& r : c.k.roles)
    for (const auto& n : r.nodes)
      for (const auto& b : n.loop.body)
        if (&b == &op)
          return refuse(via, "a TMA store inside the loop: the stages of its staging tile are assigned in the listed order, once per op",
                        {"store after the loop, or directly (drop \"via\")"});
  const int es = isa::value_bits(g.dtype) / 8, row = isa::bytes(isa::Swizzle::b128);
  if (es < 1)
    return refuse(o.dst.ptr, "\"" + g.name + "\" is " + dt(g.dtype) + ", two elements a byte, which the staging tile's 16-byte chunks of "
                                 "converted pairs do not hold; a 4-bit tensor is stored directly",
                  {"store directly (drop \"via\")"});
  const int64_t box = row / es;  // columns of one 128-byte row of D
  if (g.cols * es % 16)
    return refuse(g.ptr + "/shape", "\"" + g.name + "\" has " + s(g.cols) + " columns of " + s(es) + " bytes: its rows are " + s(g.cols * es) +
                                        " bytes apart, and a tensor map's row stride is a multiple of 16 bytes (§5.5)",
                  {"use a number of columns whose bytes are a multiple of 16, or store directly (drop \"via\")"});
  bool moved = src.elems_per_reg == 1 && !src.wgmma;
  for (const auto& f : src.frags) moved = moved && !f.pack && (f.shape == isa::LdShape::s32x32b || f.shape == isa::LdShape::s16x256b);
  if (!moved)
    return refuse(o.regs.ptr, "a TMA store writes registers of one element each, moved by .32x32b or .16x256b, into the staging tile; \"" +
                                  src.name + "\" " + (src.elems_per_reg != 1 ? "packs " + s(src.elems_per_reg) + " elements into each register" : "was loaded with another shape"),
                  {"load an unpacked view (f32, one element a column) with shape 32x32b or 16x256b"});
  if (src.row_elements != box)
    return refuse(o.regs.ptr, "a TMA store writes one box of 128 bytes of each row, " + s(box) + " " + dt(g.dtype) + " columns; \"" + src.name +
                                  "\" holds " + s(src.row_elements),
                  {"load a view of " + s(box) + " columns (a slice of the accumulator) into the registers, one store per box"});
  if (!c.tile(o.via, "store staging tile")) return false;
  const ir::Tile& t = *c.tiles.at(o.via.name);
  if (t.dtype != g.dtype)
    return refuse(t.ptr + "/dtype", "the staging tile \"" + t.name + "\" is " + dt(t.dtype) + "; the store stages \"" + g.name + "\"'s " +
                                        dt(g.dtype) + " elements, as the tensor map reads them",
                  {"declare \"" + t.name + "\" with \"dtype\": \"" + dt(g.dtype) + "\""});
  if (t.major != isa::Major::k)
    return refuse(t.major_ptr, "the staging tile \"" + t.name + "\" is MN-major; a box of the map is rows of 128 bytes, a K-major tile",
                  {"declare \"" + t.name + "\" with \"major\": \"k\""});
  if (t.swizzle != isa::Swizzle::b128)
    return refuse(t.swizzle_ptr, "the staging tile \"" + t.name + "\" has swizzle " + std::string(isa::name(t.swizzle)) +
                                     "; the store writes rows of 128 bytes with the 128-byte swizzle, which its tensor map reads",
                  {"declare \"" + t.name + "\" with \"swizzle\": 128"});
  if (t.cols != box || t.rows < src.rows)
    return refuse(t.shape_ptr, "the staging tile \"" + t.name + "\" is " + s(t.rows) + " x " + s(t.cols) + "; the box is " + s(src.rows) +
                                   " rows of " + s(box) + " " + dt(g.dtype) + " columns (128 bytes)",
                  {"declare \"" + t.name + "\" with \"shape\": [" + s(src.rows) + ", " + s(box) + "]"});
  // The TMA stores into one global share its tensor map, whose box is their rows.
  for (const ir::Op* x : all_ops(c.k)) {  // the first accepted one, in program order
    const auto* st = x->as<ir::Store>();
    const auto shape = c.stored.find(x);
    if (!st || !st->tma || st->dst.name != g.name || shape == c.stored.end()) continue;
    if (shape->second[0] != src.rows)
      return refuse(o.regs.ptr, "the TMA stores into \"" + g.name + "\" share its tensor map, whose box is " + s(shape->second[0]) +
                                    " rows (the store at " + x->ptr + "); \"" + src.name + "\" holds " + s(src.rows),
                    {"store registers of " + s(shape->second[0]) + " rows by TMA here, or store these directly (drop \"via\")"});
    break;
  }
  // The tile is the staging ring of one role's stores, and nothing else's.
  const ir::Role* mine = nullptr;
  for (const auto& r : c.k.roles)
    for (const auto& n : r.nodes)
      if (&n.op == &op) mine = &r;
  for (const auto& r : c.k.roles)
    for (const auto& n : r.nodes) {
      std::vector<const ir::Op*> ops = {&n.op};
      if (n.is_loop) {
        ops.clear();
        for (const auto& b : n.loop.body) ops.push_back(&b);
      }
      for (const ir::Op* x : ops) {
        bool uses = false;
        if (const auto* l = x->as<ir::Load>()) uses = l->dst.name == t.name;
        else if (const auto* cp = x->as<ir::Copy>()) uses = cp->src.name == t.name;
        else if (const auto* m = x->as<ir::Mma>()) uses = m->a.name == t.name || m->b.name == t.name;
        else if (const auto* st = x->as<ir::Store>(); st && st->tma && x != &op) uses = st->via.name == t.name && &r != mine;
        if (uses)
          return refuse(o.via.ptr, "the staging tile \"" + t.name + "\" is also used by the op at " + x->ptr +
                                       ": a staging tile is the stores' of one role alone, whose issuing thread knows when TMA has read it",
                        {"declare a tile of its own for the staging"});
      }
    }
  return true;
}

}  // namespace ptxgen::rules::verify
