// What the simulator's tests share: element encodings and random inputs per dtype (PTX ISA 9.1
// §5.2), and launches built from a kernel's launch manifest (the JSON `ptxgen manifest` prints):
// tensor maps as a host would encode them with cuTensorMapEncodeTiled.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
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

// The encoding of `v` in `dt` for a given input (ptxgen simulate --inputs): the nearest value (ties
// to even), as the host's conversion of a user's data would write it; nullopt where the type holds
// nothing near: not finite, beyond its largest finite value, not an integer of an integer type (s8,
// u8, b8, s32), not a power of two in 2^-127 .. 2^127 for ue8m0.
inline std::optional<uint32_t> encode_input(const Dtype& dt, double v) {
  using namespace ksim::num;
  if (!std::isfinite(v)) return std::nullopt;
  const std::string& n = dt.name;
  if (n == "s8" || n == "u8" || n == "b8" || n == "s32") {
    const double lo = n == "s8" ? -128 : n == "s32" ? -2147483648.0 : 0, hi = n == "s8" ? 127 : n == "s32" ? 2147483647.0 : 255;
    if (v != std::nearbyint(v) || v < lo || v > hi) return std::nullopt;
    return static_cast<uint32_t>(static_cast<int64_t>(v)) & (dt.bits == 32 ? 0xFFFFFFFFu : 0xFFu);
  }
  if (n == "ue8m0") {
    int e = 0;
    if (v <= 0 || std::frexp(v, &e) != 0.5 || e - 1 < -127 || e - 1 > 127) return std::nullopt;
    return static_cast<uint32_t>(e - 1 + 127);
  }
  static const std::map<std::string, Format> formats = {{"tf32", Format{8, 10, true}}, {"bf16", kBF16}, {"f16", kF16},
                                                        {"e4m3", kE4M3}, {"e5m2", kE5M2}, {"e2m3", kE2M3},
                                                        {"e3m2", kE3M2}, {"e2m1", kE2M1}, {"ue4m3", kUE4M3}};
  if (n == "f32") {
    if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max())) return std::nullopt;
    return bits_of(static_cast<float>(v));
  }
  auto f = formats.find(n);
  if (f == formats.end() || (f->second.unsigned_ && v < 0)) return std::nullopt;
  // The largest finite value: IEEE formats keep the all-ones exponent for infinity and NaN, e4m3
  // only the all-ones encoding for NaN, the 4- and 6-bit types none. Beyond it is an error, not a
  // saturation or an infinity nobody asked for.
  const Format& x = f->second;
  const int emax = x.ieee ? (1 << x.ebits) - 2 - x.bias() : (1 << x.ebits) - 1 - x.bias();
  const double top = (2.0 - std::ldexp(1.0, -(x.fn ? x.mbits - 1 : x.mbits))) * std::ldexp(1.0, emax);
  if (std::fabs(v) > top) return std::nullopt;
  const uint32_t b = encode_rn(x, v);
  return n == "tf32" ? b << 13 : b;
}

// The values --inputs gives the tensor `name`, checked against its shape in this run (rows x cols);
// nullptr where it gives none. Records the name in `used` (what the run took: every given name must
// be one, inputs_all_used).
inline const InputArray* input_for(const Inputs& in, std::set<std::string>& used, const std::string& name, int64_t rows, int64_t cols) {
  auto it = in.find(name);
  if (it == in.end()) return nullptr;
  used.insert(name);
  const InputArray& a = it->second;
  const bool ok = a.ndim == 2 ? a.rows == rows && a.cols == cols
                              : (rows == 1 && a.cols == cols) || (cols == 1 && a.cols == rows);
  if (!ok)
    throw std::runtime_error(name + ".npy: shape " +
                             (a.ndim == 2 ? "[" + std::to_string(a.rows) + ", " + std::to_string(a.cols) + "]"
                                          : "[" + std::to_string(a.cols) + "]") +
                             ", but the run's " + name + " is " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " (rows x columns of its dims at the run's sizes; a vector for one row or column)");
  return &a;
}
// Element (r, c) of a given input in its tensor's type; an error naming the element where the type
// holds nothing near it.
inline uint32_t input_bits(const Dtype& dt, const std::string& name, const InputArray& a, int64_t r, int64_t c) {
  const size_t i = a.ndim == 2 ? static_cast<size_t>(r * a.cols + c) : static_cast<size_t>(r + c);
  const double v = a.v[i];
  if (auto b = encode_input(dt, v)) return *b;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  const std::string& n = dt.name;
  const bool integer = n == "s8" || n == "u8" || n == "b8" || n == "s32";
  throw std::runtime_error(name + ".npy: element (" + std::to_string(r) + ", " + std::to_string(c) + ") = " + buf + " is not " +
                           (integer       ? "an integer in " + n + "'s range"
                            : n == "ue8m0" ? "a power of two from 2^-127 to 2^127 (ue8m0)"
                                           : "a finite value within " + n + "'s largest finite magnitude") +
                           " (" + name + " is " + n + ")");
}
// Every name --inputs gave must be an input the run took: a typo or an output is an error.
inline void inputs_all_used(const Inputs& in, const std::set<std::string>& used, const std::vector<std::string>& inputs) {
  for (const auto& [name, a] : in)
    if (!used.count(name)) {
      std::string list;
      for (const auto& x : inputs) list += (list.empty() ? "" : ", ") + x;
      throw std::runtime_error(name + ".npy: the kernel has no input " + name + " this run reads (its inputs: " + list + ")");
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
