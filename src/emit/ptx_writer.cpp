#include "ptx_writer.hpp"

#include <cstdio>
#include <cstring>

namespace ptxgen::emit {

std::string PtxWriter::r32() { return "%r" + std::to_string(n32_++); }
std::string PtxWriter::r64() { return "%rd" + std::to_string(n64_++); }
std::string PtxWriter::pred() { return "%p" + std::to_string(np_++); }
std::string PtxWriter::r16() { return "%rs" + std::to_string(n16_++); }
std::string PtxWriter::r8() { return "%rb" + std::to_string(n8_++); }

std::string PtxWriter::fresh_label(const std::string& stem) { return "$L_" + stem + "_" + std::to_string(nlabel_++); }

void PtxWriter::ins(const std::string& text) { lines_.push_back("\t" + text + ";"); }

void PtxWriter::ins(const std::string& text, const std::string& comment) {
  std::string line = "\t" + text + ";";
  if (line.size() < 56) line.append(56 - line.size(), ' ');
  else line += ' ';
  lines_.push_back(line + "// " + comment);
}

void PtxWriter::comment(const std::string& text) { lines_.push_back("\t// " + text); }
void PtxWriter::label(const std::string& name) { lines_.push_back(name + ":"); }
void PtxWriter::blank() { lines_.push_back(""); }

std::string PtxWriter::body() const {
  std::string out;
  if (np_) out += "\t.reg .pred \t%p<" + std::to_string(np_) + ">;\n";
  if (n8_) out += "\t.reg .b8 \t%rb<" + std::to_string(n8_) + ">;\n";
  if (n16_) out += "\t.reg .b16 \t%rs<" + std::to_string(n16_) + ">;\n";
  if (n32_) out += "\t.reg .b32 \t%r<" + std::to_string(n32_) + ">;\n";
  if (n64_) out += "\t.reg .b64 \t%rd<" + std::to_string(n64_) + ">;\n";
  out += "\n";
  for (const auto& l : lines_) out += l + "\n";
  return out;
}

std::string f32_imm(float v) {
  uint32_t u = 0;
  std::memcpy(&u, &v, sizeof u);
  char buf[16];
  std::snprintf(buf, sizeof buf, "0f%08X", u);
  return buf;
}

std::string hex(uint64_t v) {
  char buf[24];
  if (v > 0xFFFFFFFFull) std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  else std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string imm(uint64_t v) { return v < 65536 ? std::to_string(v) : hex(v); }

}  // namespace ptxgen::emit
