// A small helper for writing PTX text: instruction lines, comments, labels, and registers named
// in order of first use so output is deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ptxgen::emit {

class PtxWriter {
 public:
  // Fresh registers: "%r7", "%rd3", "%p2", "%rs0".
  std::string r32();
  std::string r64();
  std::string pred();
  std::string r16();
  std::string r8();  // a .b8 register: what cvt to .e2m1x2 writes (§9.7.9.21)

  std::string fresh_label(const std::string& stem);   // "$L_stem_3": unique, in order of creation

  void ins(const std::string& text);                  // "\t" + text + ";"
  void ins(const std::string& text, const std::string& comment);
  void comment(const std::string& text);              // "\t// " + text
  void label(const std::string& name);                // name + ":"
  void blank();

  // The register declarations for everything allocated, then the body.
  std::string body() const;

 private:
  int n32_ = 0, n64_ = 0, np_ = 0, n16_ = 0, n8_ = 0, nlabel_ = 0;
  std::vector<std::string> lines_;
};

std::string imm(uint64_t v);   // decimal below 2^16, else hex
std::string hex(uint64_t v);
// An f32 immediate: 0f and the value's 8 hexadecimal digits (PTX ISA 9.1 §4.5.1), exact for every f32.
std::string f32_imm(float v);

}  // namespace ptxgen::emit
