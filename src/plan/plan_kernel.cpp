// The TMA loads of one pipeline stage, and the launch manifest a host program reads.
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "internal.hpp"

namespace ptxgen::plan {

namespace detail {

namespace {

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

}  // namespace

nlohmann::ordered_json tensor_map_entry(const std::string& param, const std::string& tensor, const std::string& data_type,
                                        int64_t dim_inner, int64_t dim_outer, int64_t stride_bytes, int box_inner,
                                        int box_outer, isa::Swizzle swizzle) {
  return {{"param", param},
          {"tensor", tensor},
          {"data_type", data_type},
          {"rank", 2},
          {"global_dims", {dim_inner, dim_outer}},
          {"global_strides_bytes", {stride_bytes}},
          {"box_dims", {box_inner, box_outer}},
          {"element_strides", {1, 1}},
          {"interleave", "CU_TENSOR_MAP_INTERLEAVE_NONE"},
          {"swizzle", cu_swizzle(swizzle)},
          {"l2_promotion", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"},
          {"oob_fill", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"}};
}

int box_extent(int extent, int step) {
  for (int d = std::min(extent, isa::kTmaBoxMax); d > 0; --d)
    if (extent % d == 0 && d % step == 0) return d;
  return 0;
}

namespace {

// Boxes are one swizzle width (16 bytes without swizzle) of the contiguous dimension by whole
// rows: exactly the arrangement isa::make_tile_layout describes (src/isa/layout.cpp).
void operand_loads(Plan& p, const OperandTile& t, const spec::Operand& op, int64_t mn_extent, int64_t k_extent) {
  const isa::TileLayout& l = t.layout;
  const int w = isa::bytes(l.swizzle);
  TensorMap tm;
  tm.param = t.name == 'A' ? "tmap_a" : "tmap_b";
  tm.tensor = t.name;
  tm.dtype = op.dtype;
  tm.k_contiguous = op.major == isa::Major::k;
  tm.dim_inner = tm.k_contiguous ? k_extent : mn_extent;
  tm.dim_outer = tm.k_contiguous ? mn_extent : k_extent;
  tm.stride_bytes = spec::leading_dimension(op, tm.dim_inner) * isa::value_bits(op.dtype) / 8;
  tm.box_inner = w * 8 / l.bits;
  tm.swizzle = l.swizzle;
  uint32_t bytes = 0;
  if (tm.k_contiguous) {
    tm.box_outer = box_extent(l.mn, 8);
    const int cols = l.k * l.bits / 8 / w;
    for (int c = 0; c < cols; ++c)
      for (int r0 = 0; r0 < l.mn; r0 += tm.box_outer) {
        p.kernel.loads.push_back({t.name, static_cast<uint32_t>((c * l.mn + r0) * w), c * tm.box_inner, r0});
        bytes += static_cast<uint32_t>(tm.box_outer * w);
      }
  } else {
    tm.box_outer = box_extent(l.k, l.atom_k);
    const int atoms = l.mn * l.bits / 8 / w;
    for (int c = 0; c < atoms; ++c)
      for (int k0 = 0; k0 < l.k; k0 += tm.box_outer) {
        p.kernel.loads.push_back({t.name, static_cast<uint32_t>((c * l.k + k0) * w), c * tm.box_inner, k0});
        bytes += static_cast<uint32_t>(tm.box_outer * w);
      }
  }
  if (tm.box_outer == 0 || bytes != l.bytes) throw std::logic_error("TMA boxes do not cover the operand tile");
  p.kernel.tx_bytes += bytes;
  p.kernel.tensor_maps.push_back(tm);
}

}  // namespace

void plan_tma(Plan& p) {
  const spec::Gemm& g = *p.spec.gemm;
  operand_loads(p, p.shapes.a, g.a, g.m, g.k);
  operand_loads(p, p.shapes.b, g.b, g.n, g.k);
}

}  // namespace detail

namespace {

std::string cu_data_type(isa::DType t, int smem_bits) {
  switch (t) {
    case isa::DType::f16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case isa::DType::bf16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case isa::DType::tf32: return "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32";
    case isa::DType::f32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    case isa::DType::e2m1: return smem_bits == 8 ? "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B" : "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B";
    case isa::DType::e2m3:
    case isa::DType::e3m2: return "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B";
    default: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";  // e4m3, e5m2, s8, u8: bytes
  }
}


}  // namespace

std::string manifest(const Plan& p) {
  if (p.program) return program_manifest(p);
  using ojson = nlohmann::ordered_json;
  const spec::Gemm& g = *p.spec.gemm;
  const Kernel& k = p.kernel;
  ojson j;
  j["ptxgen"] = 1;
  j["entry"] = p.spec.name;
  j["target"] = std::string(isa::target_info(p.spec.target).name);
  j["problem"] = {{"m", g.m}, {"n", g.n}, {"k", g.k}};
  j["tile"] = {{"m", g.tile.m}, {"n", g.tile.n}, {"k", g.tile.k}};
  j["cta_group"] = p.shapes.cta_group;
  j["accumulator"] = std::string(isa::name(g.accumulator));
  j["grid_rule"] = "x = ceil(n / tile.n) * cta_group, y = ceil(m / tile.m), each rounded up to the cluster; "
                   "the kernel takes m, n, k as parameters";
  j["requirements"] = "D 16-byte aligned; A and B as the tensor maps describe (row strides multiples of 16 bytes)";
  j["block"] = {k.threads, 1, 1};
  const Grid gr = grid(p);
  j["grid"] = {gr.x, gr.y, gr.z};
  j["cluster"] = k.cluster;
  j["dynamic_shared_memory_bytes"] = p.shapes.smem.dynamic_bytes;
  j["params"] = ojson::array({
      {{"name", "tmap_a"}, {"kind", "tensor_map"}, {"tensor", "A"}},
      {{"name", "tmap_b"}, {"kind", "tensor_map"}, {"tensor", "B"}},
      {{"name", "d"}, {"kind", "global_pointer"}, {"tensor", "D"}},
      {{"name", "m"}, {"kind", "u32"}},
      {{"name", "n"}, {"kind", "u32"}},
      {{"name", "k"}, {"kind", "u32"}},
  });
  auto tensor = [](isa::DType t, int64_t rows, int64_t cols, bool row_major, const char* rows_name,
                   const char* cols_name, int64_t ld) {
    return ojson{{"dtype", std::string(isa::name(t))},
                 {"shape", {rows, cols}},
                 {"dims", {rows_name, cols_name}},
                 {"contiguous", row_major ? cols_name : rows_name},
                 {"leading_dimension", ld}};
  };
  const bool a_rm = g.a.major == isa::Major::k, b_rm = g.b.major == isa::Major::mn;
  j["tensors"] = {
      {"A", tensor(g.a.dtype, g.m, g.k, a_rm, "m", "k", spec::leading_dimension(g.a, a_rm ? g.k : g.m))},
      {"B", tensor(g.b.dtype, g.k, g.n, b_rm, "k", "n", spec::leading_dimension(g.b, b_rm ? g.n : g.k))},
      {"D", tensor(g.d, g.m, g.n, true, "m", "n", g.n)},
  };
  ojson maps = ojson::array();
  for (const TensorMap& t : k.tensor_maps) {
    const OperandTile& op = t.tensor == 'A' ? p.shapes.a : p.shapes.b;
    maps.push_back(detail::tensor_map_entry(t.param, std::string(1, t.tensor), cu_data_type(t.dtype, op.layout.bits),
                                            t.dim_inner, t.dim_outer, t.stride_bytes, t.box_inner, t.box_outer,
                                            t.swizzle));
  }
  j["tensor_maps"] = maps;
  return j.dump(2) + "\n";
}

}  // namespace ptxgen::plan
