// The program level's sizes, grid, loop and roles (docs/spec.md, "Sizes and a grid", "Loops and
// roles"), judged on the spec before it is lowered: a program whose structure is refused here is
// not lowered (the pipeliner, src/lower/pipeline.cpp, takes a loop and roles it can plan).
#include <array>
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "context.hpp"

#include "ptxgen/diag.hpp"

namespace ptxgen::rules {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

struct Structure {
  const spec::Program& p;
  std::vector<verify::Problem> out;

  void problem(const char* rule, const std::string& ptr, const std::string& msg, std::vector<std::string> help = {}) {
    out.push_back({rule, ptr, msg, std::move(help)});
  }

  const spec::Size* size(const std::string& n) const {
    for (const auto& z : p.sizes)
      if (z.name == n) return &z;
    return nullptr;
  }
  const spec::GlobalTensor* global(const std::string& n) const {
    for (const auto& g : p.globals)
      if (g.name == n) return &g;
    return nullptr;
  }
  const spec::SmemTile* tile(const std::string& n) const {
    for (const auto& t : p.smem)
      if (t.name == n) return &t;
    return nullptr;
  }

  // PROGRAM-SIZE: every name used as a size is declared, and sizes are names a kernel parameter
  // and the launch header can take.
  void sizes() {
    for (const auto& z : p.sizes) {
      const bool reserved = z.name == "rows" || z.name == "cols" || z.name.rfind("p_", 0) == 0 || z.name.rfind("tmap_", 0) == 0 ||
                            z.name.rfind(plan::kPlannerPrefix, 0) == 0;
      if (!spec::valid_name(z.name) || reserved)
        problem("PROGRAM-SIZE", z.ptr,
                "\"" + z.name + "\" cannot name a size: sizes are .u32 kernel parameters, " +
                    (reserved ? "and rows, cols, p_*, tmap_* and ptxgen_* are names ptxgen gives other things"
                              : "[A-Za-z_][A-Za-z0-9_]*, at most 64 characters"),
                {"rename it"});
    }
    auto need = [&](const std::string& n, const std::string& ptr, const std::string& what) {
      if (!n.empty() && !size(n))
        problem("PROGRAM-SIZE", ptr, what + " names the size \"" + n + "\", which /program/sizes does not declare",
                {"declare it: \"sizes\": {\"" + n + "\": VALUE}, the problem size the kernel takes at run time"});
    };
    // A derived size comes from a size the kernel takes (one level: its value is computed once).
    for (const auto& z : p.sizes) {
      if (!z.of) continue;
      const spec::Size* b = size(z.of.name);
      if (!b) need(z.of.name, z.of.ptr, "the derived size \"" + z.name + "\"");
      else if (b->of)
        problem("PROGRAM-SIZE", z.of.ptr, "\"" + z.name + "\" derives from \"" + b->name + "\", which is derived itself",
                {"derive it from the size \"" + b->of.name + "\" the kernel takes (fold the two divisions into one)"});
      else if (z.exact && b->value % z.div)
        // The launch header and `ptxgen simulate` refuse such a size at run time; the spec's own
        // value is the kernel's example size, which the rules and the plan check.
        problem("PROGRAM-SIZE", b->ptr,
                "\"" + b->name + "\" = " + std::to_string(b->value) + " is not a multiple of " + std::to_string(z.div) +
                    ", which the exact derived size \"" + z.name + "\" asks of it",
                {"use a multiple of " + std::to_string(z.div) + ", or drop \"exact\" at " + z.exact_ptr});
    }
    for (const auto& g : p.globals) {
      need(g.rows_size, g.ptr + "/shape/0", "the rows of \"" + g.name + "\"");
      need(g.cols_size, g.ptr + "/shape/1", "the columns of \"" + g.name + "\"");
    }
    if (p.grid) {
      need(p.grid->m.name, p.grid->m.ptr == p.grid->ptr ? p.grid->ptr : p.grid->m.ptr, "the grid's rows");
      need(p.grid->n.name, p.grid->n.ptr == p.grid->ptr ? p.grid->ptr : p.grid->n.ptr, "the grid's columns");
    }
    each([&](const spec::Op& o, bool) {
      if (o.kind == spec::OpKind::loop) need(o.over.name, o.over.ptr, "the loop");
    });
  }

  void each(const std::function<void(const spec::Op&, bool)>& f) const {
    for (const auto& o : p.ops) {
      f(o, false);
      for (const auto& b : o.body) f(b, true);
    }
  }

  // PROGRAM-GRID: positions that step with the CTA's tile need a grid, and a position that steps
  // (with the tile or the iteration) lies in a dimension whose extent is a size, so that the
  // kernel's tensor maps zero-fill past it and its stores stop at it.
  void grid() {
    each([&](const spec::Op& o, bool) {
      if (o.kind != spec::OpKind::load && o.kind != spec::OpKind::store) return;
      const spec::GlobalTensor* g = global(o.kind == spec::OpKind::load ? o.src.name : o.dst.name);
      for (size_t i = 0; i < 2; ++i) {
        const spec::AtStep& st = o.at_step[i];
        const std::string ptr = ptr_join(o.at_ptr, i);
        if ((st.m_tile || st.n_tile) && !p.grid) {
          problem("PROGRAM-GRID", ptr, "the position steps with the CTA's output tile, but the program has no grid",
                  {"add \"grid\": {\"tile\": [TM, TN]} (one CTA per output tile), or drop \"m_tile\" / \"n_tile\""});
          continue;
        }
        if (!st.any() || !g) continue;
        const std::string& named = i ? g->cols_size : g->rows_size;
        if (named.empty())
          problem("PROGRAM-GRID", ptr,
                  "the position steps with the tile or the iteration along the " + std::string(i ? "columns" : "rows") + " of \"" +
                      g->name + "\", whose extent " + s(i ? g->cols : g->rows) +
                      " is fixed: nothing would keep the tiles or blocks past it inside the tensor",
                  {"give \"" + g->name + "\" a size there (\"shape\": [..., \"NAME\"] with NAME in /program/sizes); the kernel "
                   "then takes it at run time, loads zero-fill past it and stores stop at it"});
      }
    });
  }

  // LOAD-PLACE: a load that places its rows in layout F's lanes (docs/spec.md, "M = 64") fills
  // 128-row slabs of a K-major tile, which a 128-row tcgen05.cp (it reads K-major tiles,
  // §9.7.16.9.2) copies row i to lane i; the layout-F view of the copy then reads its rows in order.
  void places() {
    each([&](const spec::Op& o, bool) {
      if (o.kind != spec::OpKind::load || o.place == spec::Place::rows) return;
      const spec::SmemTile* t = tile(o.dst.name);
      if (!t) return;
      if (t->major != isa::Major::k)
        problem("LOAD-PLACE", o.place_ptr,
                "\"place\" puts the rows the load reads where a 128-row tcgen05.cp moves them into layout F's lanes; tcgen05.cp "
                "reads K-major tiles, and \"" + t->name + "\" is MN-major",
                {"make \"" + t->name + "\" K-major (\"major\": \"k\")", "or drop \"place\""});
      else if (t->rows % 128 != 0)
        problem("LOAD-PLACE", o.place_ptr,
                "\"place\" fills 128-row slabs (each 16 rows of an M = 64 group in lanes 32 q + r % 16 + the alignment of a "
                "128-row copy), and \"" + t->name + "\" has " + s(t->rows) + " rows",
                {"give \"" + t->name + "\" " + s((t->rows + 127) / 128 * 128) + " rows (whole slabs; a layout_f::0 or ::16 load fills "
                 "half of each)"});
    });
  }

  // PROGRAM-COVERAGE, on the positions alone (docs/spec.md, "Coverage"): a load's or store's
  // position steps with a walker of the program -- the grid's tile rows ("m_tile"), its tile
  // columns ("n_tile") or the loop's iteration ("k_block") -- along a dimension whose extent is the
  // walker's size or a size derived from it (ceil(S / div) * mul); one step of the walker then
  // covers one unit of it (the grid's tile, the loop's block) of that extent, scaled as the extent
  // is. A step that differs leaves part of the tensor unread or unwritten, or has CTAs (iterations)
  // reach the same elements twice. Which elements each op covers inside one step is the
  // verifiers' part (verify_coverage.cpp), which needs the tiles' and register sets' extents.
  struct Walker {
    const char* key;    // "m_tile"
    const char* per;    // "tile row"
    std::string size;   // the size it walks ("" for a loop of fixed trips)
    int64_t unit = 0;   // the grid's tile rows / columns, the loop's block
    int64_t steps = 0;  // how many tile rows / columns / iterations at the spec's sizes
    std::string unit_ptr, unit_words;
  };
  struct Stepping {
    const spec::Op* op;
    size_t dim;
    int64_t step, div, mul;  // the step, and how the extent derives from the walker's size
    const spec::GlobalTensor* g;
  };

  int64_t value(const std::string& n) const {
    const spec::Size* z = size(n);
    if (!z) return 0;
    if (!z->of) return z->value;
    const spec::Size* b = size(z->of.name);
    const int64_t v = b ? b->value : 0;
    return (v + z->div - 1) / z->div * z->mul;
  }

  void coverage() {
    const spec::Op* lp = nullptr;
    for (const auto& o : p.ops)
      if (o.kind == spec::OpKind::loop && !lp) lp = &o;
    std::array<Walker, 3> w;
    if (p.grid) {
      const int64_t m = value(p.grid->m.name), n = value(p.grid->n.name);
      w[0] = {"m_tile", "tile row", p.grid->m.name, p.grid->tile_m, (m + p.grid->tile_m - 1) / p.grid->tile_m, p.grid->tile_ptr + "/0",
              "the grid's tile is " + s(p.grid->tile_m) + " rows (of the size \"" + p.grid->m.name + "\")"};
      w[1] = {"n_tile", "tile column", p.grid->n.name, p.grid->tile_n, (n + p.grid->tile_n - 1) / p.grid->tile_n,
              p.grid->tile_ptr + "/1", "the grid's tile is " + s(p.grid->tile_n) + " columns (of the size \"" + p.grid->n.name + "\")"};
    }
    if (lp) {
      const int64_t v = lp->over.name.empty() ? 0 : value(lp->over.name);
      w[2] = {"k_block", "iteration", lp->over.name, lp->block, lp->block ? std::max<int64_t>(1, (v + lp->block - 1) / lp->block) : lp->trips,
              lp->block_ptr, "the loop's block is " + s(lp->block) + " (of the size \"" + lp->over.name + "\")"};
    }
    std::array<std::vector<Stepping>, 3> by;  // the steps along sizes each walker walks
    std::map<std::string, std::array<bool, 2>> stored_steps;  // a stored global -> a store steps with m_tile, n_tile
    std::map<std::string, const spec::Op*> first_store;
    each([&](const spec::Op& o, bool in_loop) {
      if (o.kind != spec::OpKind::load && o.kind != spec::OpKind::store) return;
      const bool load = o.kind == spec::OpKind::load;
      const spec::GlobalTensor* g = global(load ? o.src.name : o.dst.name);
      if (!g) return;
      if (!load) {
        first_store.emplace(g->name, &o);
        auto& st = stored_steps[g->name];
        for (const auto& a : o.at_step) st[0] = st[0] || a.m_tile, st[1] = st[1] || a.n_tile;
        // A store the loop runs writes in every iteration: where it does not step with the
        // iteration, each iteration writes the same elements again.
        if (in_loop && !o.at_step[0].k_block && !o.at_step[1].k_block)
          problem("PROGRAM-COVERAGE", r_at(o),
                  "this store runs in every iteration of the loop, and its position does not step with the iteration (\"k_block\"): "
                  "each of the " + s(w[2].steps) + " iterations writes the same elements of \"" + g->name + "\" again",
                  {"step the store with the iteration along the dimension it writes block by block (\"k_block\")",
                   "or move it after the loop, where it runs once"});
      }
      for (size_t i = 0; i < 2; ++i) {
        const spec::AtStep& st = o.at_step[i];
        const std::array<int64_t, 3> steps = {st.m_tile, st.n_tile, st.k_block};
        const int walkers = (steps[0] != 0) + (steps[1] != 0) + (steps[2] != 0);
        if (walkers == 0) continue;
        const std::string dim = i ? "columns" : "rows";
        if (walkers > 1) {
          problem("PROGRAM-COVERAGE", ptr_join(o.at_ptr, i),
                  "the position steps along the " + dim + " of \"" + g->name + "\" with more than one of the tile row, the tile column "
                  "and the iteration: one dimension of a tensor is walked by one of them, so the positions of different tiles or "
                  "iterations fall on the same elements",
                  {"keep the one step that walks this dimension"});
          continue;
        }
        const size_t wi = steps[0] ? 0 : steps[1] ? 1 : 2;
        const Walker& x = w[wi];
        if (x.size.empty()) continue;  // a loop of fixed trips walks no size: nothing to compare
        const std::string& named = i ? g->cols_size : g->rows_size;
        const spec::Size* z = size(named);
        if (!z) continue;  // a fixed extent: PROGRAM-GRID
        const std::string base = z->of ? z->of.name : z->name;
        if (base != x.size) {
          problem("PROGRAM-COVERAGE", ptr_join(o.at_ptr, i),
                  "the position steps with the " + std::string(x.per) + " (\"" + x.key + "\"), which walks the size \"" + x.size +
                      "\", along the " + dim + " of \"" + g->name + "\", whose extent is the size \"" + named + "\"" +
                      (z->of ? " (derived from \"" + base + "\")" : "") + ": the " + s(x.steps) + " " + x.per + "s at the spec's sizes "
                      "cover \"" + x.size + "\", not this extent",
                  {"step with what walks \"" + base + "\", or give \"" + g->name + "\" an extent derived from \"" + x.size +
                   "\" ({\"of\": \"" + x.size + "\", \"div\": D, \"mul\": M})"});
          continue;
        }
        by[wi].push_back({&o, i, steps[wi], z->of ? z->div : 1, z->of ? z->mul : 1, g});
      }
    });
    // Each walker: one step is one unit (the grid's tile, the loop's block) of the extent, scaled as
    // the extent derives from the walker's size. When every op steps by the same other unit, the
    // grid's tile or the loop's block is what contradicts them; else each op that differs.
    for (size_t wi = 0; wi < 3; ++wi) {
      const Walker& x = w[wi];
      std::set<int64_t> implied;
      bool whole = true;
      for (const Stepping& e : by[wi]) {
        if (e.step * e.div % e.mul != 0) whole = false;
        else implied.insert(e.step * e.div / e.mul);
      }
      if (by[wi].empty()) continue;
      if (whole && implied.size() == 1 && *implied.begin() != x.unit) {
        const int64_t u = *implied.begin();
        const bool grid = wi < 2;
        std::string consequence;
        if (u < x.unit)
          consequence = grid ? "each CTA's loads and stores cover " + s(u) + " of its " + s(x.unit) + ": the rest of every tile is never "
                               "computed, and the last tiles' part of the output is never written"
                             : "the " + s(x.steps) + " iterations read " + s(u) + " of every " + s(x.unit) + " elements of \"" + x.size +
                                   "\": the rest is never read";
        else
          consequence = grid ? "the CTAs of neighbouring tiles load and store " + s(u) + " elements " + s(x.unit) +
                                   " apart: they write the same elements twice (a race), and the last tiles reach past the output"
                             : "the iterations step " + s(u) + " elements of \"" + x.size + "\" while the loop counts blocks of " + s(x.unit) +
                                   ": the last " + s(x.steps - (value(x.size) + u - 1) / u) + " of its " + s(x.steps) + " iterations read only what lies past the tensors";
        problem("PROGRAM-COVERAGE", x.unit_ptr,
                x.unit_words + ", and every load and store that steps with the " + x.per + " steps " + s(u) + " per " + x.per +
                    " (as " + ptr_join(by[wi][0].op->at_ptr, by[wi][0].dim) + "): " + consequence,
                {"make it " + s(u) + ", what the loads and stores step", "or step the loads and stores by " + s(x.unit) + " per " + x.per});
        continue;
      }
      for (const Stepping& e : by[wi]) {
        if (e.step * e.div == x.unit * e.mul) continue;
        const bool load = e.op->kind == spec::OpKind::load;
        const bool grid = wi < 2;
        const std::string of = "\"" + e.g->name + "\"'s " + (e.dim ? "columns" : "rows");
        const std::string unit = e.div == 1 && e.mul == 1 ? s(x.unit)
                                                          : s(x.unit) + " x " + s(e.mul) + " / " + s(e.div) + " (its extent is ceil(" + x.size +
                                                                " / " + s(e.div) + ") x " + s(e.mul) + ")";
        const bool less = e.step * e.div < x.unit * e.mul;
        std::string consequence;
        if (!grid)
          consequence = less ? "the iterations read only part of every block of it: the rest is never read"
                             : "the iterations step past what the loop's blocks cover: elements between them are never " +
                                   std::string(load ? "read" : "written") + ", and the last iterations reach past the tensor";
        else if (load)
          consequence = "the CTA of each " + std::string(x.per) + " reads other elements of it than the ones its output tile needs (" +
                        "its " + x.per + " of the stores lies " + s(x.unit) + " further per " + x.per + ")";
        else
          consequence = less ? "the CTAs of neighbouring tiles write within " + s(e.step) + " elements of each other: they write the same "
                               "elements twice (a race), and the last part of the tensor is never written"
                             : "the CTAs' stores leave elements between their tiles unwritten, and the last tiles store past what they computed";
        problem("PROGRAM-COVERAGE", ptr_join(e.op->at_ptr, e.dim),
                "the " + std::string(load ? "load" : "store") + " steps " + s(e.step) + " of " + of + " per " + x.per + ", and " + x.unit_words +
                    ", which is " + unit + " of them: " + consequence,
                {"step by " + (e.div == 1 && e.mul == 1 ? s(x.unit) : "the " + std::string(x.per) + "'s share of the extent") + " per " + x.per});
      }
    }
    // A grid of several tile rows (columns) at the spec's sizes, and no store into a tensor steps
    // with the tile row (column): every tile row's CTAs write the same elements.
    for (const auto& [name, st] : stored_steps)
      for (size_t wi = 0; wi < 2; ++wi)
        if (p.grid && !st[wi] && w[wi].steps > 1)
          problem("PROGRAM-COVERAGE", r_at(*first_store.at(name)),
                  "the grid has " + s(w[wi].steps) + " " + w[wi].per + "s at the spec's sizes (" + w[wi].size + " = " + s(value(w[wi].size)) +
                      ", " + w[wi].unit_words + "), and no store into \"" + name + "\" steps with the " + w[wi].per + " (\"" + w[wi].key +
                      "\"): the CTAs of every " + w[wi].per + " write the same elements of it (a race), and what the other tiles compute is never stored",
                  {"step the store with the " + std::string(w[wi].per) + " (\"" + w[wi].key + "\": " + s(w[wi].unit) + ")",
                   "or make the grid's tile as large as the problem along it"});
  }
  static std::string r_at(const spec::Op& o) { return o.has_at ? o.at_ptr : o.ptr; }

  // PROGRAM-LOOP: one loop, of a program with roles, over a size in blocks or a fixed count, that
  // steps what it steps; rings live in it.
  void loop() {
    const spec::Op* first = nullptr;
    for (const auto& o : p.ops) {
      if (o.kind != spec::OpKind::loop) continue;
      if (first) {
        problem("PROGRAM-LOOP", o.ptr, "a second loop: a program has one loop (over K blocks), " + first->ptr + "",
                {"put the ops of both in one loop"});
        continue;
      }
      first = &o;
      if (p.roles.empty())
        problem("PROGRAM-LOOP", o.ptr,
                "a loop runs its ops pipelined across warp roles, and this program has none: ptxgen plans the mbarriers "
                "between roles, not between the iterations of one role",
                {"declare \"roles\" (e.g. a producer warp for the loads, an MMA warp, epilogue warps) and give each op its "
                 "\"role\""});
      const bool by_size = !o.over.name.empty();
      if (by_size == (o.trips > 0) || (by_size && !o.block))
        problem("PROGRAM-LOOP", o.ptr, "a loop runs over a size in blocks (\"over\" and \"block\") or a fixed number of times "
                                       "(\"trips\"), one of the two",
                {"write \"over\": \"k\", \"block\": 64 or \"trips\": N"});
      if (o.body.empty()) problem("PROGRAM-LOOP", o.body_ptr, "the loop has no ops");
      for (const auto& b : o.body)
        if (b.kind == spec::OpKind::loop)
          problem("PROGRAM-LOOP", b.ptr, "a loop inside a loop: a program has one loop", {"flatten the inner loop into the outer"});
    }
    // Positions that step with the iteration, and "after_first", are in the loop; rings are used
    // only there, all of one depth (the barriers that guard them have that many stages).
    int ring = 0;
    std::string ring_ptr;
    each([&](const spec::Op& o, bool in_loop) {
      for (size_t i = 0; i < 2; ++i)
        if (o.at_step[i].k_block && !in_loop)
          problem("PROGRAM-LOOP", ptr_join(o.at_ptr, i), "the position steps with the loop's iteration (\"k_block\") outside the loop",
                  {"move the op into the loop, or drop \"k_block\""});
      if (o.accumulate_after_first && !in_loop)
        problem("PROGRAM-LOOP", o.accumulate_ptr, "\"after_first\" accumulates from the loop's second iteration on; this mma is not in a loop",
                {"write \"accumulate\": false or true"});
      for (const spec::Ref* r : {&o.src, &o.dst, &o.a, &o.b}) {
        const spec::SmemTile* t = *r ? tile(r->name) : nullptr;
        if (!t || t->stages == 1) continue;
        if (!in_loop)
          problem("PROGRAM-LOOP", r->ptr, "the tile \"" + t->name + "\" is a ring of " + s(t->stages) +
                                              " stages, which ops in the loop cycle through; this op is outside the loop",
                  {"drop \"stages\" from the tile, or use another tile here"});
        else if (ring && t->stages != ring)
          problem("PROGRAM-LOOP", t->stages_ptr, "the rings of one loop have one depth: \"" + t->name + "\" has " + s(t->stages) +
                                                     " stages, " + ring_ptr + " " + s(ring),
                  {"give every ring tile the same \"stages\""});
        else if (in_loop) ring = t->stages, ring_ptr = t->stages_ptr;
      }
    });
  }

  // PROGRAM-ROLE: roles are consecutive warps of the CTA, disjoint; with roles every op names one
  // (and no op otherwise), loads go by TMA, ptxgen synchronizes the roles (no commit or wait of the
  // spec's), and a register set stays with the warps that loaded it.
  void roles() {
    const int warps = (p.threads + 31) / 32;
    std::map<int, std::string> owner;
    for (const auto& r : p.roles) {
      std::vector<int> w = r.warps;
      std::sort(w.begin(), w.end());
      bool ok = !w.empty();
      for (size_t i = 1; i < w.size() && ok; ++i) ok = w[i] == w[i - 1] + 1;
      if (!ok) {
        problem("PROGRAM-ROLE", r.warps_ptr, "the warps of role \"" + r.name + "\" are not consecutive: a role is warps w .. w + n - 1",
                {"list consecutive warps, e.g. [0, 1, 2, 3]"});
        continue;
      }
      for (int x : w) {
        if (x >= warps) {
          problem("PROGRAM-ROLE", r.warps_ptr, "role \"" + r.name + "\" names warp " + s(x) + "; the program has " + s(p.threads) +
                                                   " threads (" + s(warps) + " warps)",
                  {"raise \"threads\" or use warps below " + s(warps)});
          break;
        }
        auto [it, fresh] = owner.emplace(x, r.name);
        if (!fresh) {
          problem("PROGRAM-ROLE", r.warps_ptr, "warp " + s(x) + " is in roles \"" + it->second + "\" and \"" + r.name +
                                                   "\": a warp runs one role",
                  {"give each role its own warps"});
          break;
        }
      }
    }
    auto known = [&](const std::string& n) {
      return std::any_of(p.roles.begin(), p.roles.end(), [&](const spec::Role& r) { return r.name == n; });
    };
    std::map<std::string, std::string> regs_role;  // register set -> the role of its latest tmem_load
    each([&](const spec::Op& o, bool) {
      if (o.kind == spec::OpKind::loop) return;
      if (p.roles.empty()) {
        if (o.role)
          problem("PROGRAM-ROLE", o.role.ptr, "\"role\" names the warps that run an op; this program declares no roles",
                  {"declare \"roles\", or drop \"role\""});
        return;
      }
      if (!o.role) {
        problem("PROGRAM-ROLE", o.ptr, "a program with roles gives every op one: which warps run " + std::string(spec::name(o.kind)) + "?",
                {"add \"role\": NAME, a role of /program/roles"});
        return;
      }
      if (!known(o.role.name)) {
        problem("PROGRAM-ROLE", o.role.ptr, "\"" + o.role.name + "\" is not a role of /program/roles", {"declare it, or name a declared role"});
        return;
      }
      if (o.kind == spec::OpKind::commit || o.kind == spec::OpKind::wait)
        problem("PROGRAM-ROLE", o.ptr,
                "ptxgen plans the mbarriers between the roles of a program (the waits, commits and arrivals the order of "
                "its ops needs): the spec writes no " + std::string(spec::name(o.kind)),
                {"drop the commit and wait ops"});
      if (o.kind == spec::OpKind::load && !o.tma)
        problem("PROGRAM-ROLE", o.via_ptr.empty() ? o.ptr : o.via_ptr,
                "a load of a program with roles goes by TMA: one thread of its role issues it and the roles that read the "
                "tile wait on its mbarrier",
                {"add \"via\": \"tma\""});
      // The warps a tcgen05.ld/st lists run it: they are the role's.
      for (size_t i = 0; i < o.warps.size(); ++i) {
        const auto& role = *std::find_if(p.roles.begin(), p.roles.end(), [&](const spec::Role& r) { return r.name == o.role.name; });
        if (std::find(role.warps.begin(), role.warps.end(), o.warps[i]) == role.warps.end()) {
          problem("PROGRAM-ROLE", ptr_join(o.warps_ptr, i),
                  "warp " + s(o.warps[i]) + " is not in role \"" + role.name + "\", which runs this " + std::string(spec::name(o.kind)),
                  {"list warps of the role, or run the op in the role warp " + s(o.warps[i]) + " belongs to"});
          break;
        }
      }
      if (o.kind == spec::OpKind::tmem_load || o.kind == spec::OpKind::fill) regs_role[o.regs.name] = o.role.name;
      if ((o.kind == spec::OpKind::tmem_store || o.kind == spec::OpKind::store) && regs_role.count(o.regs.name) &&
          regs_role[o.regs.name] != o.role.name)
        problem("PROGRAM-ROLE", o.role.ptr,
                "the registers \"" + o.regs.name + "\" were loaded by role \"" + regs_role[o.regs.name] +
                    "\": registers belong to the threads that hold them, and role \"" + o.role.name + "\" runs other warps",
                {"run this op in role \"" + regs_role[o.regs.name] + "\""});
      // MATH-ROLES: arithmetic computes on the registers of the warps that run it, so its operands
      // are the registers of its own role; its result is that role's too.
      if (o.kind == spec::OpKind::math || o.kind == spec::OpKind::read || o.kind == spec::OpKind::reduce ||
          o.kind == spec::OpKind::amax || o.kind == spec::OpKind::quantize) {
        const std::string what(o.kind == spec::OpKind::math ? spec::math_name(o) : spec::name(o.kind));
        const std::array<const spec::Ref*, 3> in = {o.kind == spec::OpKind::read ? &o.like : &o.a, &o.b, &o.c};
        for (size_t i = 0; i < in.size(); ++i) {
          const spec::Ref* x = in[i];
          if (!*x || (o.kind == spec::OpKind::math && o.value[i]) || !regs_role.count(x->name) || regs_role[x->name] == o.role.name) continue;
          problem("MATH-ROLES", o.role.ptr,
                  "\"" + what + "\" computes on the registers \"" + x->name + "\" of role \"" + regs_role[x->name] +
                      "\": registers belong to the threads that hold them, and role \"" + o.role.name + "\" runs other warps",
                  {"run this op in role \"" + regs_role[x->name] + "\""});
          break;
        }
        if (o.regs) regs_role[o.regs.name] = o.role.name;  // an amax writes no registers
      }
    });
  }

  // A CTA pair's roles (src/lower/pipeline.cpp): the role that issues tcgen05.cp/mma runs in CTA
  // 0 only, and every barrier it waits on is CTA 0's; a thread waits only on its own CTA's barrier
  // (mbarrier.try_wait is .shared::cta), so nothing a role of both CTAs waits for may complete on
  // CTA 0's barrier alone.
  void pair_roles() {
    if (p.roles.empty() || p.cta_group != 2) return;
    // PAIR-ROLE-ISSUE: the issuing role issues nothing else. Its waits (for the loads' bytes, on
    // CTA 0's barrier) would leave CTA 1's threads of the role waiting forever.
    std::map<std::string, const spec::Op*> issues;  // role -> its first tcgen05.cp/mma
    each([&](const spec::Op& o, bool) {
      if ((o.kind == spec::OpKind::copy || o.kind == spec::OpKind::mma) && o.role && !issues.count(o.role.name)) issues[o.role.name] = &o;
    });
    std::set<std::string> told;
    each([&](const spec::Op& o, bool) {
      if (o.kind == spec::OpKind::loop || o.kind == spec::OpKind::copy || o.kind == spec::OpKind::mma || !o.role) return;
      const auto i = issues.find(o.role.name);
      if (i == issues.end() || !told.insert(o.role.name).second) return;
      problem("PAIR-ROLE-ISSUE", o.role.ptr,
              "role \"" + o.role.name + "\" issues the pair's tcgen05 " + std::string(spec::name(i->second->kind)) + " (" + i->second->ptr +
                  "), which runs in CTA 0 only, and this " + std::string(spec::name(o.kind)) +
                  ", which both CTAs run: its CTA 1 threads would wait on barriers that complete in CTA 0 alone",
              {"give the " + std::string(spec::name(o.kind)) + " a role of its own (a producer warp for loads, epilogue warps for "
               "tmem_load, tmem_store and store)"});
    });
    // PAIR-ROLE-RELOAD: a load into a tile no op read since the last load into it waits for that
    // load's bytes, which complete on CTA 0's barrier only. Walk the order as the pipeliner does:
    // the ops before the loop, the loop twice (what an iteration leaves to the next), the ops after.
    std::map<std::string, bool> loaded;  // tile -> its last access was a load
    std::set<const spec::Op*> reported;
    auto visit = [&](const spec::Op& o) {
      if (o.kind == spec::OpKind::load) {
        auto& last = loaded[o.dst.name];
        if (last && reported.insert(&o).second)
          problem("PAIR-ROLE-RELOAD", o.dst.ptr,
                  "this load writes \"" + o.dst.name + "\" again before any op read what the load before it brought: it would "
                  "wait for those bytes, which in a CTA pair complete on CTA 0's barrier only, so CTA 1's loads could never go on",
                  {"drop the earlier load, or read the tile (copy or mma) between the two loads"});
        last = true;
        return;
      }
      for (const spec::Ref* r : {&o.src, &o.a, &o.b})
        if ((o.kind == spec::OpKind::copy || o.kind == spec::OpKind::mma) && *r && tile(r->name)) loaded[r->name] = false;
    };
    in_planned_order(visit);
  }

  // The ops in the order the pipeliner walks them: those before the loop, the loop's body twice
  // (what one iteration leaves to the next), those after.
  template <typename F>
  void in_planned_order(F&& visit) const {
    const spec::Op* lp = nullptr;
    for (const auto& o : p.ops)
      if (o.kind == spec::OpKind::loop && !lp) lp = &o;
    for (const auto& o : p.ops) {
      if (&o == lp) {
        for (int pass = 0; pass < 2; ++pass)
          for (const auto& b : o.body) visit(b);
      } else if (o.kind != spec::OpKind::loop) {
        visit(o);
      }
    }
  }

  // LOAD-RELOAD (one CTA): the pipeliner gives a run of consecutive TMA loads of one role one
  // barrier, armed once for the run's bytes (src/lower/pipeline.cpp). A second load into a tile
  // the run already writes would first wait for the earlier load's bytes (two TMA writes of one
  // tile are not ordered) on that same barrier, before the run's arming: it never completes.
  // (A pair's reloads are PAIR-ROLE-RELOAD, which refuses them across runs too.)
  void run_reloads() {
    if (p.roles.empty() || p.cta_group == 2) return;
    std::set<std::string> run;  // the tiles the current run writes
    std::string run_role;
    std::set<const spec::Op*> reported;
    auto visit = [&](const spec::Op& o) {
      if (o.kind != spec::OpKind::load || !o.tma || !o.role || o.role.name != run_role) run.clear();
      if (o.kind != spec::OpKind::load || !o.tma || !o.role) return;
      run_role = o.role.name;
      if (!run.insert(o.dst.name).second && reported.insert(&o).second)
        problem("LOAD-RELOAD", o.dst.ptr,
                "this TMA load writes \"" + o.dst.name + "\" again in the same run of loads as an earlier one, before any op read "
                "it: the run shares one barrier, armed once for all its bytes, and this load would first wait on it for the earlier "
                "load's bytes, before it is armed",
                {"drop the earlier load (its bytes are overwritten unread)", "or read the tile (copy or mma) between the two loads"});
    };
    in_planned_order(visit);
  }
};

}  // namespace

const std::vector<verify::Problem>& program_structure(const Context& c) {
  if (!c.structure) {
    c.structure.emplace();
    if (c.spec.program) {
      Structure st{*c.spec.program, {}};
      st.sizes();
      st.grid();
      st.loop();
      st.roles();
      st.pair_roles();
      st.run_reloads();
      st.places();
      // Coverage compares positions with sizes, the grid and the loop the other rules passed.
      if (st.out.empty()) st.coverage();
      *c.structure = std::move(st.out);
    }
  }
  return *c.structure;
}

namespace {
void report(const Context& c, Diagnostics& d, const char* id) {
  for (const auto& p : program_structure(c))
    if (p.rule == id) d.error(p.rule, p.pointer, p.message).help = p.help;
}
}  // namespace

void check_program_size(const Context& c, Diagnostics& d) { report(c, d, "PROGRAM-SIZE"); }
void check_program_grid(const Context& c, Diagnostics& d) { report(c, d, "PROGRAM-GRID"); }
void check_program_loop(const Context& c, Diagnostics& d) { report(c, d, "PROGRAM-LOOP"); }
void check_program_role(const Context& c, Diagnostics& d) { report(c, d, "PROGRAM-ROLE"); }
void check_math_roles(const Context& c, Diagnostics& d) { report(c, d, "MATH-ROLES"); }
void check_pair_role_issue(const Context& c, Diagnostics& d) { report(c, d, "PAIR-ROLE-ISSUE"); }
void check_pair_role_reload(const Context& c, Diagnostics& d) { report(c, d, "PAIR-ROLE-RELOAD"); }
void check_load_reload(const Context& c, Diagnostics& d) { report(c, d, "LOAD-RELOAD"); }
void check_load_place(const Context& c, Diagnostics& d) { report(c, d, "LOAD-PLACE"); }
// PROGRAM-COVERAGE: the positions against the grid and the loop (here, on the spec), then what the
// ops of each step cover (the verifiers', verify_coverage.cpp, on a kernel lowered once these passed).
void check_program_coverage(const Context& c, Diagnostics& d) {
  report(c, d, "PROGRAM-COVERAGE");
  if (!c.spec.program) return;
  lowered(c, d);
  for (const auto& p : c.problems)
    if (p.rule == "PROGRAM-COVERAGE") d.error(p.rule, p.pointer, p.message).help = p.help;
}

// OP-MMA-A-ORDER: a warning (the verifiers', verify_coverage.cpp); the spec says "place".
void check_op_mma_a_order(const Context& c, Diagnostics& d) {
  if (!c.spec.program) return;
  lowered(c, d);
  for (const auto& p : c.warnings)
    if (p.rule == "OP-MMA-A-ORDER") d.warning(p.rule, p.pointer, p.message).help = p.help;
}

}  // namespace ptxgen::rules
