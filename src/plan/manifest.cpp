// The launch manifest a host program reads: entry, parameters in order, grid, block, cluster,
// dynamic shared memory, every tensor (dtype, shape, layout) and the arguments of
// cuTensorMapEncodeTiled for every tensor map (docs/build.md, "The manifest").
#include <nlohmann/json.hpp>

#include "internal.hpp"

namespace ptxgen::plan {

namespace {

using ojson = nlohmann::ordered_json;

// The CUtensorMapSwizzle enumerator a manifest names for a shared-memory swizzle.
std::string cu_swizzle(isa::Swizzle s) {
  switch (s) {
    case isa::Swizzle::none: return "CU_TENSOR_MAP_SWIZZLE_NONE";
    case isa::Swizzle::b32: return "CU_TENSOR_MAP_SWIZZLE_32B";
    case isa::Swizzle::b64: return "CU_TENSOR_MAP_SWIZZLE_64B";
    case isa::Swizzle::b128: return "CU_TENSOR_MAP_SWIZZLE_128B";
    case isa::Swizzle::b128_base32b: return "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B";
  }
  return "?";
}

// A manifest's tensor map: the arguments of cuTensorMapEncodeTiled for a 2-D map (dims and box in
// elements of `data_type`, innermost first; no interleave, unit element strides, no OOB fill mode).
// A rank-3 map (a 3-D tensor) adds its planes: boxes one plane deep.
ojson tensor_map_entry(const TensorMap& m) {
  const bool r3 = m.rank == 3;
  ojson j = {{"param", m.param},
          {"tensor", m.tensor},
          {"data_type", m.data_type},
          {"rank", m.rank},
          {"global_dims", r3 ? ojson{m.dim_inner, m.dim_outer, m.dim_planes} : ojson{m.dim_inner, m.dim_outer}},
          {"global_strides_bytes", r3 ? ojson{m.stride_bytes, m.plane_stride_bytes} : ojson{m.stride_bytes}},
          {"box_dims", r3 ? ojson{m.box_inner, m.box_outer, 1} : ojson{m.box_inner, m.box_outer}},
          {"element_strides", r3 ? ojson{1, 1, 1} : ojson{1, 1}},
          {"interleave", "CU_TENSOR_MAP_INTERLEAVE_NONE"},
          {"swizzle", cu_swizzle(m.swizzle)},
          {"l2_promotion", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"},
          {"oob_fill", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"}};
  // The kernel reads it only where the tensor's rows are 16-byte multiples apart; else zeros.
  if (m.optional) j["optional"] = true;
  return j;
}

std::string dt(isa::DType t) { return std::string(isa::name(t)); }

// The accumulator type of the kernel's MMAs (D's view, or the wgmma register set).
std::optional<isa::DType> accumulator(const Plan& p) {
  for (const auto& r : p.roles)
    for (const auto& s : r.steps)
      for (const Step* x : {&s}) {
        auto find = [&](const Step& st) -> std::optional<isa::DType> {
          if (st.kind != StepKind::mma) return std::nullopt;
          if (st.mma.engine == ir::Engine::wgmma) return st.mma.acc_dtype;
          if (st.mma.instrs.empty()) return std::nullopt;
          for (const auto& [n, v] : p.views)
            if (v.alloc == st.mma.instrs[0].d_alloc) return v.dtype == isa::DType::f32 || v.dtype == isa::DType::f16 || v.dtype == isa::DType::s32 ? std::optional(v.dtype) : std::nullopt;
          return std::nullopt;
        };
        if (auto t = find(*x)) return t;
        for (const auto& b : x->body)
          if (auto t = find(b)) return t;
      }
  return std::nullopt;
}

}  // namespace

std::string manifest(const Plan& p) {
  ojson j;
  j["ptxgen"] = 1;
  j["entry"] = p.ir().name;
  j["target"] = std::string(isa::target_info(p.ir().target).name);
  const bool program = p.ir().source == "program";
  if (program) j["level"] = "program";
  if (p.ir().grid.tiled || !p.ir().size_params.empty()) {
    ojson problem = ojson::object();
    ojson derived = ojson::object();
    for (const auto& s : p.ir().size_params) {
      if (s.of.empty()) problem[s.name] = s.value;
      else derived[s.name] = {{"of", s.of}, {"div", s.div}, {"mul", s.mul}, {"value", s.value}};
      if (s.exact) derived[s.name]["exact"] = true;  // of a multiple of div, or the launch is refused
    }
    j["problem"] = problem;
    // Sizes the kernel computes from the problem's: ceil(of / div) * mul.
    if (!derived.empty()) j["derived_sizes"] = derived;
  }
  if (p.ir().grid.tiled) {
    j["tile"] = {{"m", p.ir().grid.tile_m}, {"n", p.ir().grid.tile_n}, {"k", p.ir().grid.tile_k}};
    // A program names the sizes its grid walks (a gemm's are m and n; with a gated activation m
    // and d = n / 2, D's columns, tile.n then D's tile: half of the spec's).
    if (program || p.ir().grid.n_param != "n") j["grid_sizes"] = {p.ir().grid.m_param, p.ir().grid.n_param};
    j["cta_group"] = p.ir().cta_group;
    if (auto acc = accumulator(p)) j["accumulator"] = dt(*acc);
    if (!p.ir().epilogue_ops.empty()) j["epilogue_ops"] = p.ir().epilogue_ops;
    for (const auto& [name, value] : p.ir().epilogue_constants) j["epilogue_constants"][name] = value;
    const int block = p.ir().grid.cluster_m * p.ir().grid.cluster_n;
    if (block > 1) j["cluster_tiles"] = {{"m", p.ir().grid.cluster_m}, {"n", p.ir().grid.cluster_n}};
    if (p.ir().grid.persistent) {
      j["schedule"] = "persistent";
      if (block > 1)
        j["grid_rule"] = "x = min(ceil(ceil(" + p.ir().grid.n_param + " / tile.n) / " + std::to_string(p.ir().grid.cluster_n) + ") * ceil(ceil(" +
                         p.ir().grid.m_param + " / tile.m) / " + std::to_string(p.ir().grid.cluster_m) + "), the clusters the device holds at once " +
                         "(cuOccupancyMaxActiveClusters)) * " + std::to_string(block * p.ir().cta_group) + ", y = z = 1: each cluster of " +
                         std::to_string(block * p.ir().cta_group) + " CTAs walks the blocks of cluster_tiles tiles c, c + gridDim.x / " +
                         std::to_string(block * p.ir().cta_group) + ", ..., CTA rank r taking tile (q / cluster_tiles.n, q % cluster_tiles.n) of each, q = r" +
                         (p.ir().cta_group > 1 ? " / " + std::to_string(p.ir().cta_group) : std::string()) + "; the kernel takes its sizes as parameters";
      else if (!p.ir().grid.groups_param.empty())
        // A grouped walk: all groups' tiles in order, each group's counted from its entry of the
        // device array; the bound is every group's capacity (masked) or A's rows (contiguous).
        j["grid_rule"] = "x = min(ceil(" + p.ir().grid.n_param + " / tile.n) * ceil(" + p.ir().grid.m_param + " / tile.m)" +
                         (p.ir().grid.group_rows.empty() ? std::string() : " * " + p.ir().grid.groups_param) +
                         ", the device's multiprocessor count), y = z = 1: each CTA walks the tiles x, x + gridDim.x, ... of all groups' tiles in "
                         "order, group g's " + (p.ir().grid.group_rows.empty() ? "those of its segment of A's rows, ending at " + p.ir().grid.group_ends + "[g]"
                                                                                    : "ceil(" + p.ir().grid.group_rows + "[g] / tile.m) tile rows") +
                         " by ceil(" + p.ir().grid.n_param + " / tile.n); the kernel takes its sizes as parameters";
      else if (p.ir().cta_group == 1)
        j["grid_rule"] = "x = min(ceil(" + p.ir().grid.n_param + " / tile.n) * ceil(" + p.ir().grid.m_param +
                         " / tile.m), the device's multiprocessor count), y = z = 1: each CTA walks the tiles x, x + gridDim.x, ...; "
                         "the kernel takes its sizes as parameters";
      else
        j["grid_rule"] = "x = min(ceil(" + p.ir().grid.n_param + " / tile.n) * ceil(" + p.ir().grid.m_param + " / tile.m), the device's multiprocessor count / " +
                         std::to_string(p.ir().cta_group) + ") * " + std::to_string(p.ir().cta_group) + ", y = z = 1: each pair of CTAs (2p, 2p + 1) walks "
                         "the tiles p, p + gridDim.x / 2, ...; the kernel takes its sizes as parameters";
    } else {
      j["grid_rule"] = "x = ceil(" + p.ir().grid.n_param + " / tile.n) * cta_group, y = ceil(" + p.ir().grid.m_param +
                       " / tile.m), each rounded up to the cluster" +
                       (p.ir().grid.groups_param.empty() ? std::string()
                        : !p.ir().grid.group_rows.empty()
                            ? ", z = " + p.ir().grid.groups_param + " (one group per z; each CTA reads " + p.ir().grid.group_rows +
                                  "[z] and exits if its first row is at or past it)"
                            : std::string(" (m the rows of A; each CTA finds its group's segment in ") + p.ir().grid.group_ends +
                                  " and exits if its first row is in a segment's padding or past every segment)") +
                       "; the kernel takes its sizes as parameters";
    }
    // Grouped GEMM (docs/spec.md, "Grouped GEMM"): A, B and D one plane per group, and the device
    // array of the groups' valid rows.
    if (!p.ir().grid.group_rows.empty())
      j["groups"] = {{"layout", "masked"}, {"count", p.ir().grid.groups_param}, {"rows", p.ir().grid.group_rows}};
    else if (!p.ir().grid.groups_param.empty())
      j["groups"] = {{"layout", "contiguous"}, {"count", p.ir().grid.groups_param}, {"ends", p.ir().grid.group_ends}, {"align", p.ir().grid.group_align}};
    j["requirements"] = "outputs 16-byte aligned; inputs as the tensor maps describe (row strides multiples of 16 bytes)";
  } else {
    // One CTA of `threads` threads runs the whole program (no %ctaid), or one cluster of two for a
    // CTA pair (%cluster_ctarank picks the half).
    j["requirements"] = "every tensor row-major, rows tightly packed (leading dimension = columns), its address 16-byte aligned";
  }
  j["block"] = {p.ir().threads, 1, 1};
  j["grid"] = {p.launch.x, p.launch.y, p.launch.z};
  j["cluster"] = p.ir().cluster;
  j["dynamic_shared_memory_bytes"] = p.smem_bytes;
  ojson params = ojson::array();
  for (const auto& g : p.ir().globals)
    if (!g.param.empty()) params.push_back({{"name", g.param}, {"kind", "global_pointer"}, {"tensor", g.name}});
  for (const auto& m : p.tensor_maps) params.push_back({{"name", m.param}, {"kind", "tensor_map"}, {"tensor", m.global}});
  for (const auto& s : p.ir().size_params)
    if (s.of.empty()) params.push_back({{"name", s.name}, {"kind", "u32"}});
  j["params"] = params;
  ojson tensors = ojson::object();
  for (const auto& g : p.ir().globals) {
    if (g.scale_vec > 0) {
      // A block-scale factor tensor in the 128x4 layout (docs/spec.md, "Block scaling"): the
      // factors of dims[0] (m or n) rows by ceil(k / vec) factors, padded to 128 rows and 4 factors.
      tensors[g.name] = {{"dtype", dt(g.dtype)},
                         {"layout", "128x4"},
                         {"scales", g.scales},
                         {"vec", g.scale_vec},
                         {"dims", {g.dims[0], g.dims[1]}},
                         {"shape", {g.planes * 128, g.rows / 32 * 4}},
                         {"bytes", g.planes * g.rows * g.cols}};
      continue;
    }
    if (!g.metadata_of.empty()) {
      // Sparsity metadata of sparse A (docs/spec.md, "Sparse A"): atoms of 128 rows by 128 (tf32:
      // 64) elements of K, 16 bytes a row, row-stripe first: m padded to 128 rows, k to an atom;
      // `kind` names the MMA kind, whose atom order the tensor follows.
      tensors[g.name] = {{"dtype", dt(g.dtype)},
                         {"layout", "128x" + std::to_string(isa::sparse_atom_k(g.sparse_kind)) + " atoms"},
                         {"kind", isa::name(g.sparse_kind)},
                         {"metadata_of", g.metadata_of},
                         {"sparsity", isa::sparse_granularity(g.sparse_kind)},
                         {"dims", {g.dims[0], g.dims[1]}},
                         {"shape", {g.rows, g.planes * 16}},
                         {"bytes", g.planes * g.rows * g.cols}};
      continue;
    }
    ojson t = {{"dtype", dt(g.dtype)}};
    if (g.compressed) t["sparse"] = isa::sparse_granularity(g.sparse_kind);  // its k extent holds half of k's elements
    if (program) {
      t["storage_bits"] = g.bits;
      // 4- and 6-bit types: padded (16 elements, then padding to 16 bytes: 8 bits per element on
      // average; ptxgen/program.hpp) or, e2m1 only, packed two per byte.
      if (isa::value_bits(g.dtype) < 8) t["format"] = g.bits < 8 ? "packed" : "padded";
    }
    // Logical dimensions: stored as rows x cols, or transposed (a gemm operand's M x K stored K x M).
    const bool named = !g.dims[0].empty();
    const bool transposed = named && g.dims[0] != g.rows_param && g.dims[1] == g.rows_param;
    t["shape"] = transposed ? ojson{g.cols, g.rows} : ojson{g.rows, g.cols};
    // One plane per group ([G, rows, cols] as stored): the group is the outermost dimension.
    if (g.grouped) t["groups"] = g.planes_param;
    // A program tensor's extent is a size the kernel takes ("m"), or fixed ("rows"/"cols").
    const std::string rows = g.rows_param.empty() ? "rows" : g.rows_param, cols = g.cols_param.empty() ? "cols" : g.cols_param;
    t["dims"] = named ? ojson{g.dims[0], g.dims[1]} : ojson{rows, cols};
    t["contiguous"] = named ? (transposed ? g.dims[0] : g.dims[1]) : cols;
    t["leading_dimension"] = g.ld;
    tensors[g.name] = t;
  }
  j["tensors"] = tensors;
  if (!p.tensor_maps.empty() || p.ir().grid.tiled) {
    ojson maps = ojson::array();
    for (const auto& m : p.tensor_maps) maps.push_back(tensor_map_entry(m));
    j["tensor_maps"] = maps;
  }
  return j.dump(2) + "\n";
}

}  // namespace ptxgen::plan
