// See npy.hpp. The format (numpy.lib.format): the magic "\x93NUMPY", a major and a minor version
// byte, the header's length (2 bytes little-endian in version 1, 4 in versions 2 and 3), the header:
// a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces
// and a newline, then the data, C or Fortran order, each element `descr` (byte order, kind, size).
#include "npy.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

namespace ptxgen::cli {

namespace {

// The value of `key` in the header dict: the text from after "'key':" up to the next top-level
// comma or the closing brace (a shape's tuple kept whole).
bool field(const std::string& h, const std::string& key, std::string& out) {
  const size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t i = h.find(':', k);
  if (i == std::string::npos) return false;
  ++i;
  while (i < h.size() && h[i] == ' ') ++i;
  int depth = 0;
  size_t j = i;
  for (; j < h.size(); ++j) {
    if (h[j] == '(') ++depth;
    if (h[j] == ')') --depth;
    if (depth == 0 && (h[j] == ',' || h[j] == '}')) break;
  }
  out = h.substr(i, j - i);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return true;
}

}  // namespace

std::string read_npy(const std::string& bytes, sim::InputArray& out) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return "not a .npy file (no \\x93NUMPY magic)";
  const auto u8 = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])); };
  const uint32_t major = u8(6);
  if (major < 1 || major > 3) return ".npy format version " + std::to_string(major) + " (read: 1 to 3)";
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_bytes) return "truncated header";
  size_t hlen = 0;
  for (size_t i = 0; i < len_bytes; ++i) hlen |= static_cast<size_t>(u8(8 + i)) << (8 * i);
  const size_t start = 8 + len_bytes;
  if (hlen > bytes.size() - start) return "truncated header (" + std::to_string(hlen) + " bytes announced)";
  const std::string h = bytes.substr(start, hlen);
  std::string descr, order, shape;
  if (!field(h, "descr", descr) || !field(h, "fortran_order", order) || !field(h, "shape", shape))
    return "header without 'descr', 'fortran_order' and 'shape': " + h;
  // descr: '<f4' and the like; one-byte types may say '|'. Big-endian data is not read.
  if (descr.size() < 5 || descr.front() != '\'' || descr.back() != '\'') return "descr " + descr + " (read: a simple type such as '<f4')";
  const std::string d = descr.substr(1, descr.size() - 2);
  static const std::map<std::string, int> sizes = {{"f8", 8}, {"f4", 4}, {"f2", 2}, {"i1", 1}, {"i2", 2}, {"i4", 4}, {"i8", 8},
                                                   {"u1", 1}, {"u2", 2}, {"u4", 4}, {"u8", 8}, {"b1", 1}};
  const std::string t = d.substr(1);
  if (!sizes.count(t) || (d[0] != '<' && d[0] != '|' && d[0] != '=') || (d[0] == '|' && sizes.at(t) != 1))
    return "descr '" + d + "' (read: little-endian f2, f4, f8, i1-i8, u1-u8, b1)";
  if (d[0] == '=' && std::endian::native != std::endian::little) return "descr '" + d + "' on a big-endian host";
  if (order != "False" && order != "True") return "fortran_order " + order;
  const bool fortran = order == "True";
  // shape: (), (n,), (r, c) or more.
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') return "shape " + shape;
  std::vector<int64_t> dims;
  std::string num;
  for (size_t i = 1; i < shape.size(); ++i) {
    const char c = shape[i];
    if (c >= '0' && c <= '9') {
      num += c;
      if (num.size() > 12) return "shape " + shape + ": an extent past 10^12";
    } else if (c == ',' || c == ')') {
      if (!num.empty()) dims.push_back(std::stoll(num));
      num.clear();
    } else if (c != ' ' && c != 'L') {
      return "shape " + shape;
    }
  }
  if (dims.empty() || dims.size() > 2) return "shape " + shape + ": a 1- or 2-D array is read";
  const int64_t rows = dims.size() == 2 ? dims[0] : 1, cols = dims.back();
  const size_t item = static_cast<size_t>(sizes.at(t));
  const size_t data = bytes.size() - start - hlen;
  // Compared by division first, so that no product of the extents can overflow.
  const uint64_t elems = data / item;
  const bool fits = cols == 0 || static_cast<uint64_t>(rows) <= elems / static_cast<uint64_t>(cols);
  if (!fits || static_cast<uint64_t>(rows * cols) * item != data)
    return "shape " + shape + " of " + t + " (" + std::to_string(item) + " bytes each) does not match the file's " + std::to_string(data) +
           " bytes of data";
  if (rows * cols == 0) return "shape " + shape + ": an empty array";
  out.ndim = static_cast<int>(dims.size());
  out.rows = rows;
  out.cols = cols;
  out.v.assign(static_cast<size_t>(rows * cols), 0.0);
  const char* p = bytes.data() + start + hlen;
  for (int64_t i = 0; i < rows * cols; ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, p + static_cast<size_t>(i) * item, item);  // little-endian host (checked above for '=')
    double v = 0;
    const char kind = t[0];
    if (kind == 'f') {
      v = item == 8 ? std::bit_cast<double>(raw)
          : item == 4 ? static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(raw)))
                      : sim::f16_value(static_cast<uint16_t>(raw));
    } else if (kind == 'i') {
      const int shift = static_cast<int>(64 - 8 * item);
      v = static_cast<double>(static_cast<int64_t>(raw << shift) >> shift);
    } else {
      v = static_cast<double>(raw);
    }
    // Fortran order: element (r, c) is stored at c * rows + r.
    const int64_t r = fortran ? i % rows : i / cols, c = fortran ? i / rows : i % cols;
    out.v[static_cast<size_t>(r * cols + c)] = v;
  }
  return "";
}

}  // namespace ptxgen::cli
