// What the simulator's tests share: element encodings and random inputs per dtype (PTX ISA 9.1
// §5.2), and launches built from a kernel's launch manifest (the JSON `ptxgen manifest` prints):
// tensor maps as a host would encode them with cuTensorMapEncodeTiled.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "num.hpp"
#include "ptxgen/sim.hpp"

namespace ptxgen::sim {

// An element type by its spec name: storage bits, decoding, and random encodings.
struct Dtype {
  std::string name;
  int bits = 0;
  double decode(uint32_t b) const {
    using namespace ksim::num;
    if (name == "bf16") return bf16(b);
    if (name == "f16") return f16(b);
    if (name == "f32") return f32_of(b);
    if (name == "tf32") return tf32(b);
    if (name == "e4m3") return ksim::num::decode(kE4M3, b);
    if (name == "e5m2") return ksim::num::decode(kE5M2, b);
    if (name == "e2m3") return ksim::num::decode(kE2M3, b);
    if (name == "e3m2") return ksim::num::decode(kE3M2, b);
    if (name == "e2m1") return ksim::num::decode(kE2M1, b);
    if (name == "ue8m0") return ue8m0(b);
    if (name == "ue4m3") return ksim::num::decode(kUE4M3, b & 0x7F);
    if (name == "s8") return static_cast<int8_t>(b & 0xFF);
    if (name == "s32") return static_cast<int32_t>(b);
    return static_cast<double>(b);  // u8, b8
  }
  // Random encodings: moderate magnitudes (|v| <= 4 for the wide floats), no NaN or infinity;
  // scale factors 2^-2 .. 2^2.
  uint32_t random(std::mt19937& rng) const {
    using namespace ksim::num;
    if (name == "bf16" || name == "f16" || name == "tf32" || name == "f32") {
      const double v = std::uniform_real_distribution<double>(-4.0, 4.0)(rng);
      if (name == "bf16") return encode_rn(kBF16, v);
      if (name == "f16") return encode_rn(kF16, v);
      const uint32_t b = bits_of(static_cast<float>(v));
      return name == "tf32" ? b & 0xFFFFE000u : b;
    }
    if (name == "ue8m0") return 127 - 2 + static_cast<uint32_t>(rng() % 5);
    if (name == "ue4m3") return encode_rn(kUE4M3, std::ldexp(1.0, static_cast<int>(rng() % 5) - 2) * (1.0 + 0.125 * (rng() % 8)));
    for (;;) {
      const uint32_t b = static_cast<uint32_t>(rng()) & ((1u << bits) - 1);
      const double v = decode(b);
      if (std::isfinite(v) && std::fabs(v) <= 64) return b;
    }
  }
};

inline Dtype dtype(const std::string& n) {
  static const std::map<std::string, int> bits = {{"bf16", 16}, {"f16", 16}, {"f32", 32}, {"tf32", 32}, {"s32", 32},
                                                  {"e4m3", 8},  {"e5m2", 8}, {"e2m3", 6},  {"e3m2", 6},  {"e2m1", 4},
                                                  {"s8", 8},    {"u8", 8},   {"b8", 8},    {"ue8m0", 8}, {"ue4m3", 8}};
  auto it = bits.find(n);
  if (it == bits.end()) throw std::runtime_error("no dtype " + n);
  return {n, it->second};
}

// Bits of element `i` of a packed array of `bits`-bit elements, and writing them.
inline uint32_t get_bits(const std::vector<uint8_t>& m, uint64_t bit, int bits) {
  uint64_t w = 0;
  for (int i = 0; i < 8 && bit / 8 + static_cast<uint64_t>(i) < m.size(); ++i) w |= uint64_t{m[bit / 8 + static_cast<uint64_t>(i)]} << (8 * i);
  return static_cast<uint32_t>((w >> (bit % 8)) & ((uint64_t{1} << bits) - 1));
}
inline void put_bits(std::vector<uint8_t>& m, uint64_t bit, int bits, uint32_t v) {
  for (int i = 0; i < bits; ++i) {
    const uint64_t b = bit + static_cast<uint64_t>(i);
    m[b / 8] = static_cast<uint8_t>((m[b / 8] & ~(1u << (b % 8))) | (((v >> i) & 1u) << (b % 8)));
  }
}

// A tensor map from the manifest's description: element bits from the data type (the 16U4/16U6
// types: packed 4/6-bit elements in global memory, 16 to 16 bytes in shared memory), the swizzle
// mode, the box; dims, row stride and address as the host sets them for the problem at hand.
// A rank-3 map (the block-scale factors) also takes its planes and their stride.
inline ksim::TensorMap tensor_map(const nlohmann::json& t, uint64_t global, uint64_t inner, uint64_t outer, uint64_t stride,
                                  uint64_t planes = 1, uint64_t plane_stride = 0) {
  ksim::TensorMap m;
  const std::string type = t.at("data_type"), sw = t.at("swizzle");
  static const std::map<std::string, std::pair<int, int>> types = {
      {"CU_TENSOR_MAP_DATA_TYPE_UINT8", {8, 8}},          {"CU_TENSOR_MAP_DATA_TYPE_UINT16", {16, 16}},
      {"CU_TENSOR_MAP_DATA_TYPE_UINT32", {32, 32}},       {"CU_TENSOR_MAP_DATA_TYPE_INT32", {32, 32}},
      {"CU_TENSOR_MAP_DATA_TYPE_FLOAT16", {16, 16}},      {"CU_TENSOR_MAP_DATA_TYPE_FLOAT32", {32, 32}},
      {"CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", {16, 16}},     {"CU_TENSOR_MAP_DATA_TYPE_TFLOAT32", {32, 32}},
      {"CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B", {4, 8}},  {"CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B", {6, 8}},
      {"CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B", {4, 4}}};  // dense: two e2m1 per byte in shared memory too
  static const std::map<std::string, std::pair<int, int>> modes = {
      {"CU_TENSOR_MAP_SWIZZLE_NONE", {0, 16}}, {"CU_TENSOR_MAP_SWIZZLE_32B", {32, 16}}, {"CU_TENSOR_MAP_SWIZZLE_64B", {64, 16}},
      {"CU_TENSOR_MAP_SWIZZLE_128B", {128, 16}}, {"CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B", {128, 32}}};
  if (!types.count(type) || !modes.count(sw)) throw std::runtime_error("tensor map " + type + " / " + sw + " not simulated");
  const int rank = t.at("rank");
  if (t.at("interleave") != "CU_TENSOR_MAP_INTERLEAVE_NONE" || (rank != 2 && rank != 3) ||
      t.at("oob_fill") != "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE")
    throw std::runtime_error("tensor map mode not simulated");
  m.rank = rank;
  if (rank == 3) {
    m.dims[2] = planes;
    m.stride2 = plane_stride;
    m.box[2] = t.at("box_dims")[2];
  }
  std::tie(m.elem_bits, m.smem_bits) = types.at(type);
  std::tie(m.swizzle, m.atom) = modes.at(sw);
  m.global = global;
  m.dims[0] = inner;
  m.dims[1] = outer;
  m.stride = stride;
  m.box[0] = t.at("box_dims")[0];
  m.box[1] = t.at("box_dims")[1];
  return m;
}

// A tensor's report (ptxgen/sim.hpp), its values kept when it is small enough to print.
inline TensorReport tensor_report(const std::string& name, int64_t rows, int64_t cols) {
  TensorReport r;
  r.name = name;
  r.rows = rows;
  r.cols = cols;
  if (rows * cols <= TensorReport::kKeep) {
    r.got.assign(static_cast<size_t>(rows * cols), NAN);
    r.want.assign(static_cast<size_t>(rows * cols), NAN);
  }
  return r;
}
// One element (row i, column j) compared: `bound` 0 asks for equal values (raw bits, s32).
inline void tally(TensorReport& r, int64_t i, int64_t j, double got, double want, double bound) {
  const double err = std::fabs(got - want);
  const double ratio = std::isnan(err) ? INFINITY : bound > 0 ? err / bound : err == 0 ? 0.0 : INFINITY;
  ++r.checked;
  if (!(err <= r.max_abs)) r.max_abs = std::isnan(err) ? INFINITY : err;
  if (want != 0 && !(err / std::fabs(want) <= r.max_rel)) r.max_rel = std::isnan(err) ? INFINITY : err / std::fabs(want);
  if (!(ratio <= r.worst) || r.checked == 1) r.worst = ratio, r.bound = bound;
  if (ratio > 1 && r.first.size() < TensorReport::kFirst) r.first.push_back(Mismatch{i, j, got, want, bound});
  if (!r.got.empty() && i >= 0 && i < r.rows && j >= 0 && j < r.cols) {
    r.got[static_cast<size_t>(i * r.cols + j)] = got;
    r.want[static_cast<size_t>(i * r.cols + j)] = want;
  }
}

inline ksim::Param value(const std::string& name, uint64_t v) {
  ksim::Param p;
  p.name = name;
  p.value = v;
  return p;
}
inline ksim::Param map_param(const std::string& name, const ksim::TensorMap& m) {
  ksim::Param p;
  p.name = name;
  p.is_tensor_map = true;
  p.map = m;
  return p;
}

}  // namespace ptxgen::sim
