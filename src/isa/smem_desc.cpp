// Shared-memory matrix descriptors.
//  sm_100 (tcgen05): PTX ISA 9.1 §9.7.16.4.1, Table 40.
//  sm_90  (wgmma):   PTX ISA 9.1 §9.7.15.5.1.2.2.
#include "ptxgen/isa.hpp"

namespace ptxgen::isa {

namespace {
bool encodable(uint32_t bytes) { return bytes % 16 == 0 && bytes < (1u << 18); }
uint64_t get(uint64_t w, int lo, int hi) { return (w >> lo) & ((uint64_t{1} << (hi - lo + 1)) - 1); }
}  // namespace

std::optional<uint64_t> encode(const SmemDesc& d) {
  if (!encodable(d.start_address) || !encodable(d.lbo) || !encodable(d.sbo)) return std::nullopt;
  if (d.base_offset > 7) return std::nullopt;
  uint64_t w = 0;
  w |= uint64_t{matrix_descriptor_encode(d.start_address)} << 0;  // bits 0-13
  w |= uint64_t{matrix_descriptor_encode(d.lbo)} << 16;           // bits 16-29
  w |= uint64_t{matrix_descriptor_encode(d.sbo)} << 32;           // bits 32-45
  w |= uint64_t{d.base_offset} << 49;                             // bits 49-51
  if (d.format == DescFormat::sm100) {
    w |= uint64_t{1} << 46;                        // bits 46-48: fixed constant 0b001
    w |= uint64_t{d.lbo_mode ? 1u : 0u} << 52;     // bit 52: LBO mode
    w |= uint64_t(code_sm100(d.swizzle)) << 61;    // bits 61-63: swizzling mode
  } else {
    const int code = code_sm90(d.swizzle);
    if (code < 0 || d.lbo_mode) return std::nullopt;
    w |= uint64_t(code) << 62;                     // bits 62-63: swizzling mode
  }
  return w;
}

DecodedSmemDesc decode_smem_desc(uint64_t w, DescFormat format) {
  DecodedSmemDesc r;
  SmemDesc& d = r.desc;
  d.format = format;
  d.start_address = static_cast<uint32_t>(get(w, 0, 13) << 4);
  d.lbo = static_cast<uint32_t>(get(w, 16, 29) << 4);
  d.sbo = static_cast<uint32_t>(get(w, 32, 45) << 4);
  d.base_offset = static_cast<unsigned>(get(w, 49, 51));
  if (get(w, 14, 15) || get(w, 30, 31)) r.problems.push_back("bits 14-15 / 30-31 are not zero");
  if (format == DescFormat::sm100) {
    if (get(w, 46, 48) != 1) r.problems.push_back("bits 46-48 are not the fixed constant 0b001");
    d.lbo_mode = get(w, 52, 52);
    if (get(w, 53, 60)) r.problems.push_back("bits 53-60 are not zero");
    auto s = swizzle_from_code_sm100(static_cast<int>(get(w, 61, 63)));
    if (!s) r.problems.push_back("swizzling mode " + std::to_string(get(w, 61, 63)) + " is invalid");
    d.swizzle = s.value_or(Swizzle::none);
  } else {
    if (get(w, 46, 48) || get(w, 52, 61)) r.problems.push_back("reserved bits are not zero");
    d.swizzle = *swizzle_from_code_sm90(static_cast<int>(get(w, 62, 63)));
  }
  return r;
}

std::vector<Field> fields(const SmemDesc& d) {
  std::vector<Field> v;
  auto bytes_str = [](uint32_t b) { return std::to_string(b) + " B"; };
  v.push_back({"start_address", 0, 13, matrix_descriptor_encode(d.start_address),
               bytes_str(d.start_address)});
  v.push_back({"leading_byte_offset", 16, 29, matrix_descriptor_encode(d.lbo), bytes_str(d.lbo)});
  v.push_back({"stride_byte_offset", 32, 45, matrix_descriptor_encode(d.sbo), bytes_str(d.sbo)});
  if (d.format == DescFormat::sm100) v.push_back({"version", 46, 48, 1, "0b001 (fixed)"});
  v.push_back({"base_offset", 49, 51, d.base_offset, std::to_string(d.base_offset)});
  if (d.format == DescFormat::sm100) {
    v.push_back({"lbo_mode", 52, 52, d.lbo_mode, d.lbo_mode ? "absolute" : "relative"});
    v.push_back({"layout_type", 61, 63, static_cast<uint64_t>(code_sm100(d.swizzle)),
                 std::string(d.swizzle == Swizzle::none ? "no swizzle" : name(d.swizzle))});
  } else {
    v.push_back({"layout_type", 62, 63, static_cast<uint64_t>(code_sm90(d.swizzle)),
                 std::string(d.swizzle == Swizzle::none ? "no swizzle" : name(d.swizzle))});
  }
  return v;
}

}  // namespace ptxgen::isa
