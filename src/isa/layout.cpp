// Canonical shared-memory layouts (PTX ISA 9.1 §9.7.16.3.3; the same table for wgmma in
// §9.7.15.5.1.2.1) and the LBO/SBO meaning of §9.7.16.3.1.1 (leading dimension byte offset) and
// §9.7.16.3.2 (stride dimension byte offset), for tiles stored the way TMA boxes write them.
#include <stdexcept>

#include "ptxgen/isa.hpp"

namespace ptxgen::isa {

std::optional<std::string> make_tile_layout(TileLayout& t) {
  if (t.bits <= 0 || 128 % t.bits != 0) return "element size does not divide 16 bytes";
  if (t.mn <= 0 || t.k <= 0) return "empty tile";
  const int s = bytes(t.swizzle);        // bytes of one swizzle row (16 for none)
  const int per16 = 128 / t.bits;        // elements in one 16-byte column (T of §9.7.16.3.3)
  const int64_t k_bytes = int64_t{t.k} * t.bits / 8;
  const int64_t mn_bytes = int64_t{t.mn} * t.bits / 8;
  if (t.major == Major::k) {
    if (t.swizzle == Swizzle::b128_base32b)
      return "128B swizzling with 32B atomicity has no K-major atom (Table 55)";
    if (t.mn % 8 != 0) return "K-major tiles are whole 8-row core matrices: rows must be a multiple of 8";
    if (int64_t{t.k} * t.bits % 8 != 0 || k_bytes % s != 0)
      return "the K extent (" + std::to_string(k_bytes) + " B) is not a multiple of the " +
             std::to_string(s) + "-byte swizzle atom row";
    t.atom_mn = 8;
    t.atom_k = s / 16 * per16;
    if (t.swizzle == Swizzle::none) {
      // 8x1 core matrices of 8 rows x 16 B: SBO steps 8 rows (128 B), LBO steps one 16-byte
      // K column (a whole column of core matrices, `mn` rows of 16 B).
      t.sbo = 128;
      t.lbo = static_cast<uint32_t>(t.mn) * 16;
    } else {
      // Rows are S bytes apart; SBO steps 8 rows. LBO is "not used, assumed to be 1" (§9.7.16.3.1.1):
      // we store the encoded value 1, i.e. 16 bytes.
      t.sbo = static_cast<uint32_t>(8 * s);
      t.lbo = 16;
    }
  } else {
    const int atom_k = t.swizzle == Swizzle::b128_base32b ? 4 : 8;
    if (mn_bytes % s != 0 || int64_t{t.mn} * t.bits % 8 != 0)
      return "the M/N extent (" + std::to_string(mn_bytes) + " B) is not a multiple of the " +
             std::to_string(s) + "-byte swizzle atom row";
    if (t.k % atom_k != 0)
      return "MN-major tiles are whole " + std::to_string(atom_k) + "-row K groups";
    t.atom_mn = s / 16 * per16;
    t.atom_k = atom_k;
    if (t.swizzle == Swizzle::none) {
      // 1x8 core matrices (16 B of MN by 8 K rows): LBO steps 8 K rows (128 B, "interleave: stride
      // from the first 8 columns to the next 8"), SBO steps one 16-byte MN column of `k` rows.
      t.lbo = 128;
      t.sbo = static_cast<uint32_t>(t.k) * 16;
    } else {
      // LBO steps one MN atom column (`k` rows of S bytes), SBO steps one K group of atom_k rows.
      t.lbo = static_cast<uint32_t>(t.k) * static_cast<uint32_t>(s);
      t.sbo = static_cast<uint32_t>(atom_k * s);
    }
  }
  const int64_t total = tile_bytes(t.mn, t.k, t.bits);
  if (total >= kSmemDescRange || t.lbo >= kSmemDescRange || t.sbo >= kSmemDescRange)
    return "the tile does not fit the 18-bit shared-memory address space of a descriptor";
  t.bytes = static_cast<uint32_t>(total);
  return std::nullopt;
}

uint32_t tile_offset(const TileLayout& t, int mn0, int k0) {
  const uint32_t s = static_cast<uint32_t>(bytes(t.swizzle));
  const uint32_t kb = static_cast<uint32_t>(int64_t{k0} * t.bits / 8);  // K offset in bytes
  if (t.major == Major::k) {
    const uint32_t rows = static_cast<uint32_t>(mn0 / 8) * t.sbo;
    if (t.swizzle == Swizzle::none) return (kb / 16) * t.lbo + rows;
    // Whole S-byte K columns are separate boxes of `mn` rows; inside one, the K offset is a plain
    // byte offset within the swizzled row (the K advance inside a swizzle atom, §9.7.16.3.3).
    return (kb / s) * static_cast<uint32_t>(t.mn) * s + kb % s + rows;
  }
  const uint32_t mn_atoms = static_cast<uint32_t>(mn0 / t.atom_mn);
  // A start inside an MN atom (an 8-bit tile with 128-byte swizzle holds 128 rows per atom row, and
  // an M = 64 group starts at row 64): a byte offset inside the swizzled row, as the K advance of a
  // K-major tile is (the swizzle follows the address bits, docs/architecture.md item 3).
  const int64_t in_atom = int64_t{mn0 % t.atom_mn} * t.bits / 8;
  if (in_atom % 16 != 0) throw std::logic_error("a descriptor start inside a 16-byte MN column");
  if (t.swizzle == Swizzle::none) return mn_atoms * t.sbo + static_cast<uint32_t>(k0) * 16 + static_cast<uint32_t>(in_atom);
  return mn_atoms * t.lbo + static_cast<uint32_t>(k0) * s + static_cast<uint32_t>(in_atom);
}

}  // namespace ptxgen::isa
