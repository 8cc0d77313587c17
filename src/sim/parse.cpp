// PTX text -> the decoded kernel (internal.hpp): every instruction parsed once, registers resolved
// to slots, labels to instruction indices, so that running it needs no string work. Supports the
// instructions ptxgen's emitters write for the sm_100a family (tcgen05) and sm_90a (wgmma,
// setmaxnreg), spelled as the PTX ISA gives them; anything else is an Error naming the line.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "internal.hpp"

namespace ksim {

void KernelDeleter::operator()(Kernel* k) const { delete k; }

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

std::vector<std::string> split_top(const std::string& s, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == sep && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.' && !(i > 0 && s[i - 1] == ':')) {  // "::" parts stay with their modifier
      out.push_back(cur);
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  out.push_back(cur);
  return out;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

struct Parser {
  Kernel& k;
  std::map<std::string, std::pair<uint32_t, uint32_t>> reg_ranges;  // prefix -> (first slot, count)
  std::map<std::string, uint32_t> reg_single;
  std::map<std::string, int> shared_syms;
  std::map<std::string, uint32_t> labels;
  std::vector<std::pair<size_t, std::string>> branch_fix;  // (instruction, label)
  int line = 0;
  std::string text;

  [[noreturn]] void fail(const std::string& why) const {
    throw Error("ptx line " + std::to_string(line) + ": " + why + ": `" + text + "`");
  }

  void declare_regs(const std::string& decl) {  // ".reg .b32 %r<853>" or ".reg .pred p, q"
    std::istringstream in(decl);
    std::string dot_reg, type, rest;
    in >> dot_reg >> type;
    std::getline(in, rest);
    for (std::string name : split_top(rest, ',')) {
      if (!name.empty() && name.back() == ';') name.pop_back();
      name = trim(name);
      const auto lt = name.find('<');
      if (lt != std::string::npos) {
        const uint32_t n = static_cast<uint32_t>(std::stoul(name.substr(lt + 1)));
        reg_ranges[name.substr(0, lt)] = {k.slots, n};
        for (uint32_t i = 0; i < n; ++i) k.slot_names.push_back(name.substr(0, lt) + std::to_string(i));
        k.slots += n;
      } else {
        reg_single[name] = k.slots++;
        k.slot_names.push_back(name);
      }
    }
  }

  uint32_t slot(const std::string& name) const {
    auto it = reg_single.find(name);
    if (it != reg_single.end()) return it->second;
    size_t d = name.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(name[d - 1]))) --d;
    auto r = reg_ranges.find(name.substr(0, d));
    if (r == reg_ranges.end() || d == name.size()) fail("undeclared register " + name);
    const uint32_t i = static_cast<uint32_t>(std::stoul(name.substr(d)));
    if (i >= r->second.second) fail("register " + name + " beyond its declaration");
    return r->second.first + i;
  }

  static bool special_of(const std::string& s, uint32_t& id) {
    static const std::map<std::string, uint32_t> m = {
        {"%tid.x", sp_tid_x}, {"%tid.y", sp_tid_y}, {"%tid.z", sp_tid_z}, {"%ntid.x", sp_ntid_x}, {"%ntid.y", sp_ntid_y},
        {"%ntid.z", sp_ntid_z}, {"%ctaid.x", sp_ctaid_x}, {"%ctaid.y", sp_ctaid_y}, {"%ctaid.z", sp_ctaid_z},
        {"%nctaid.x", sp_nctaid_x}, {"%nctaid.y", sp_nctaid_y}, {"%nctaid.z", sp_nctaid_z},
        {"%cluster_ctarank", sp_cluster_ctarank}, {"%cluster_nctarank", sp_cluster_nctarank},
        {"%cluster_ctaid.x", sp_cluster_ctaid_x}, {"%cluster_ctaid.y", sp_cluster_ctaid_y},
        {"%cluster_ctaid.z", sp_cluster_ctaid_z}, {"%cluster_nctaid.x", sp_cluster_nctaid_x},
        {"%cluster_nctaid.y", sp_cluster_nctaid_y}, {"%cluster_nctaid.z", sp_cluster_nctaid_z},
        {"%clusterid.x", sp_clusterid_x}, {"%clusterid.y", sp_clusterid_y}, {"%clusterid.z", sp_clusterid_z},
        {"%nclusterid.x", sp_nclusterid_x}, {"%nclusterid.y", sp_nclusterid_y}, {"%nclusterid.z", sp_nclusterid_z},
        {"%laneid", sp_laneid}, {"%warpid", sp_warpid}};
    auto it = m.find(s);
    if (it == m.end()) return false;
    id = it->second;
    return true;
  }

  bool number(const std::string& s, int64_t& v) const {
    if (s.empty()) return false;
    size_t i = 0;
    bool neg = false;
    if (s[0] == '-') neg = true, i = 1;
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    uint64_t u = 0;
    if (s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
      u = std::stoull(s.substr(i + 2), nullptr, 16);
    } else if (s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'f' || s[i + 1] == 'F')) {
      u = std::stoull(s.substr(i + 2), nullptr, 16);  // 0fXXXXXXXX: f32 bits
    } else {
      for (size_t j = i; j < s.size(); ++j) {
        if (s[j] == 'U' && j + 1 == s.size()) break;
        if (!std::isdigit(static_cast<unsigned char>(s[j]))) return false;
        u = u * 10 + static_cast<uint64_t>(s[j] - '0');
      }
    }
    v = neg ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
    return true;
  }

  int param_index(const std::string& s) const {
    for (size_t i = 0; i < k.params.size(); ++i)
      if (k.params[i].name == s) return static_cast<int>(i);
    return -1;
  }

  Opnd operand(const std::string& s) {
    Opnd o;
    if (s.empty()) fail("empty operand");
    if (s == "_") {
      o.kind = Opnd::sink;
      return o;
    }
    if (s[0] == '{') {
      o.kind = Opnd::vec;
      o.r = static_cast<uint32_t>(k.pool.size());
      for (const auto& e : split_top(s.substr(1, s.size() - 2), ',')) {
        k.pool.push_back(e == "_" ? kSinkSlot : slot(e));
        ++o.count;
      }
      return o;
    }
    if (s[0] == '[') {
      o.kind = Opnd::mem;
      std::string in = trim(s.substr(1, s.size() - 2));
      std::string base = in, off;
      const auto plus = in.find('+');
      if (plus != std::string::npos) base = trim(in.substr(0, plus)), off = trim(in.substr(plus + 1));
      o.r = kNoReg;
      if (!off.empty() && !number(off, o.imm)) fail("bad address offset " + off);
      int64_t v;
      if (base[0] == '%') {
        o.r = slot(base);
      } else if (number(base, v)) {
        o.imm += v;
      } else if (param_index(base) >= 0) {
        o.kind = Opnd::param;
        o.r = static_cast<uint32_t>(param_index(base));
      } else if (shared_syms.count(base)) {
        o.r = kNoReg;
        o.neg = true;  // relative to the shared symbol
      } else {
        fail("unknown address " + base);
      }
      return o;
    }
    if (s[0] == '!') {
      o = operand(s.substr(1));
      if (o.kind != Opnd::reg) fail("negation of a non-register");
      o.neg = true;
      return o;
    }
    uint32_t id;
    if (special_of(s, id)) {
      o.kind = Opnd::special;
      o.r = id;
      return o;
    }
    if (s[0] == '%') {
      o.kind = Opnd::reg;
      o.r = slot(s);
      return o;
    }
    if (number(s, o.imm)) {
      o.kind = Opnd::immediate;
      return o;
    }
    if (param_index(s) >= 0) {
      o.kind = Opnd::special;
      o.r = sp_param0 + static_cast<uint32_t>(param_index(s));
      return o;
    }
    if (shared_syms.count(s)) {
      o.kind = Opnd::special;
      o.r = sp_smem_symbol;
      return o;
    }
    if (s[0] == '$' || std::isalpha(static_cast<unsigned char>(s[0]))) {
      o.kind = Opnd::label;
      return o;
    }
    fail("cannot read operand " + s);
  }

  Ty type_of(const std::string& t) const {
    static const std::map<std::string, Ty> m = {
        {"b8", {Cls::b, 8}},     {"b16", {Cls::b, 16}},   {"b32", {Cls::b, 32}},    {"b64", {Cls::b, 64}},
        {"u8", {Cls::u, 8}},     {"u16", {Cls::u, 16}},   {"u32", {Cls::u, 32}},    {"u64", {Cls::u, 64}},
        {"s8", {Cls::s, 8}},     {"s16", {Cls::s, 16}},   {"s32", {Cls::s, 32}},    {"s64", {Cls::s, 64}},
        {"f16", {Cls::f, 16, 1}}, {"bf16", {Cls::f, 16, 2}}, {"f32", {Cls::f, 32, 0}}, {"f64", {Cls::f, 64, 0}},
        {"f16x2", {Cls::f, 32, 17}}, {"bf16x2", {Cls::f, 32, 18}}, {"pred", {Cls::pred, 1}},
        {"e4m3x2", {Cls::f, 16, 19}}, {"e5m2x2", {Cls::f, 16, 20}}, {"e2m1x2", {Cls::f, 8, 21}}};
    auto it = m.find(t);
    if (it == m.end()) fail("unknown type ." + t);
    return it->second;
  }
  bool is_type(const std::string& t) const {
    static const char* ts[] = {"b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32",
                               "s64", "f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "pred", "e4m3x2", "e5m2x2", "e2m1x2"};
    for (const char* x : ts)
      if (t == x) return true;
    return false;
  }

  static Space space_of(const std::vector<std::string>& mods) {
    for (const auto& m : mods) {
      if (m == "global") return sp_global;
      if (m == "shared" || m == "shared::cta") return sp_shared_cta;
      if (m == "shared::cluster") return sp_shared_cluster;
      if (m == "param") return sp_param;
    }
    return sp_none;
  }
  static bool has(const std::vector<std::string>& mods, const char* m) {
    for (const auto& x : mods)
      if (x == m) return true;
    return false;
  }
  void cta_group_of(const std::vector<std::string>& mods, Ins& in) {
    in.cta_group = has(mods, "cta_group::2") ? 2 : 1;
    if (k.cta_group && k.cta_group != in.cta_group)
      fail("tcgen05 instructions of one kernel must all specify the same .cta_group (PTX ISA 9.7.16.10.9.1)");
    k.cta_group = in.cta_group;
  }

  // The f32 instructions of §9.7.3 that are simulated, with exactly the modifiers simulated: .rn
  // add/sub/mul/fma, plain min/max/neg/abs, .approx ex2/lg2/tanh/rsqrt, .approx or .rn rcp/sqrt.
  // Anything else of type .f32 (.ftz, .sat, other roundings, .NaN, mad, div, ...) stays refused.
  // The packed half-precision ones of §9.7.4 likewise (.f16x2, .bf16x2): .rn add/sub/mul/fma, plain
  // min/max/neg/abs, .approx tanh, and ex2 as .approx.f16x2 and .approx.ftz.bf16x2 (its only form).
  bool float_math(const std::string& base, const std::vector<std::string>& mods, Ins& in) const {
    if (mods.empty() || (mods.back() != "f32" && mods.back() != "f16x2" && mods.back() != "bf16x2")) return false;
    const bool x2 = mods.back() != "f32", bf = mods.back() == "bf16x2";
    const std::vector<std::string> m(mods.begin(), mods.end() - 1);
    const bool none = m.empty(), rn = m.size() == 1 && m[0] == "rn", approx = m.size() == 1 && m[0] == "approx";
    if (x2) {
      const bool ftz = m.size() == 2 && m[0] == "approx" && m[1] == "ftz";
      struct H {
        const char* base;
        FFn fn;
        bool ok;
      };
      const H hs[] = {{"add", FFn::add, rn},   {"sub", FFn::sub, rn},   {"mul", FFn::mul, rn},     {"fma", FFn::fma, rn},
                      {"min", FFn::min, none}, {"max", FFn::max, none}, {"neg", FFn::neg, none},   {"abs", FFn::abs, none},
                      {"tanh", FFn::tanh, approx}, {"ex2", FFn::ex2, bf ? ftz : approx}};
      for (const H& h : hs)
        if (base == h.base && h.ok) {
          in.op = Op::fmath;
          in.fn = h.fn;
          in.ty = {Cls::f, 32, static_cast<uint8_t>(bf ? 18 : 17)};
          return true;
        }
      return false;
    }
    struct F {
      const char* base;
      FFn fn;
      int form;  // 0: no modifier, 1: .rn, 2: .approx
    };
    static const F fs[] = {{"add", FFn::add, 1},       {"sub", FFn::sub, 1},         {"mul", FFn::mul, 1},     {"fma", FFn::fma, 1},
                           {"min", FFn::min, 0},       {"max", FFn::max, 0},         {"neg", FFn::neg, 0},     {"abs", FFn::abs, 0},
                           {"ex2", FFn::ex2, 2},       {"lg2", FFn::lg2, 2},         {"tanh", FFn::tanh, 2},   {"rsqrt", FFn::rsqrt, 2},
                           {"rcp", FFn::rcp_approx, 2}, {"rcp", FFn::rcp_rn, 1},     {"sqrt", FFn::sqrt_approx, 2},
                           {"sqrt", FFn::sqrt_rn, 1}};
    for (const F& f : fs)
      if (base == f.base && (f.form == 0 ? none : f.form == 1 ? rn : approx)) {
        in.op = Op::fmath;
        in.fn = f.fn;
        in.ty = {Cls::f, 32, 0};
        return true;
      }
    return false;
  }

  void instruction(std::string s) {
    Ins in;
    in.line = static_cast<uint32_t>(line);
    if (s[0] == '@') {
      const auto sp = s.find_first_of(" \t");
      std::string g = s.substr(1, sp - 1);
      if (g[0] == '!') in.guard_neg = true, g = g.substr(1);
      in.guard = static_cast<int32_t>(slot(g));
      s = trim(s.substr(sp));
    }
    const auto sp = s.find_first_of(" \t");
    const std::string opcode = s.substr(0, sp);
    std::vector<std::string> args;
    if (sp != std::string::npos) args = split_top(s.substr(sp), ',');
    const auto parts = split_dots(opcode);
    const std::string& base = parts[0];
    const std::vector<std::string> mods(parts.begin() + 1, parts.end());
    auto last_type = [&]() { return type_of(mods.back()); };
    for (size_t i = 0; i < args.size() && i < 8; ++i) {
      if (base == "bra" || base == "cp" || base == "elect") break;
      in.o[i] = operand(args[i]);
    }
    if (args.size() > 8) fail("too many operands");
    in.nops = static_cast<uint8_t>(args.size());
    auto need = [&](size_t n) {
      if (args.size() != n) fail("expected " + std::to_string(n) + " operands");
    };
    static const std::map<std::string, Op> alu = {
        {"add", Op::add}, {"sub", Op::sub}, {"div", Op::div}, {"rem", Op::rem}, {"min", Op::min}, {"max", Op::max},
        {"and", Op::and_}, {"or", Op::or_}, {"xor", Op::xor_}, {"shl", Op::shl}, {"shr", Op::shr}, {"not", Op::not_},
        {"bfe", Op::bfe}, {"selp", Op::selp}, {"neg", Op::neg}};
    if (float_math(base, mods, in)) {
      need(in.fn == FFn::fma ? 4 : (in.fn == FFn::add || in.fn == FFn::sub || in.fn == FFn::mul || in.fn == FFn::min ||
                                    in.fn == FFn::max)
                                       ? 3
                                       : 2);
    } else if (base == "mov") {
      in.ty = last_type();
      need(2);
      in.op = in.o[0].kind == Opnd::vec ? Op::mov_unpack : in.o[1].kind == Opnd::vec ? Op::mov_pack : Op::mov;
    } else if (base == "set") {
      // set.CMP.f32.f32 d, a, b (§9.7.6.1), the ordered comparisons only; other forms are not simulated.
      static const std::map<std::string, uint8_t> cmp = {{"eq", 0}, {"ne", 1}, {"lt", 2}, {"le", 3}, {"gt", 4}, {"ge", 5}};
      if (mods.size() != 3 || !cmp.count(mods[0]) || mods[1] != "f32" || mods[2] != "f32") fail("unsupported set form (only set.CMP.f32.f32)");
      in.op = Op::fset;
      in.cmp = cmp.at(mods[0]);
      in.ty = {Cls::f, 32, 0};
      need(3);
    } else if (alu.count(base)) {
      in.op = alu.at(base);
      in.ty = last_type();
      need(in.op == Op::not_ || in.op == Op::neg ? 2 : (in.op == Op::bfe || in.op == Op::selp) ? 4 : 3);
      // selp moves bits (§9.7.6.3): its .f32 form is the .b32 one.
      if (in.ty.cls == Cls::f && in.op != Op::selp) fail("floating-point arithmetic is not simulated");
    } else if (base == "mul" || base == "mad") {
      in.ty = last_type();
      const std::string& mode = mods.at(0);
      if (base == "mad") {
        if (mode != "lo" && mode != "wide") fail("only mad.lo and mad.wide");
        in.op = mode == "lo" ? Op::mad_lo : Op::mad_wide;
        need(4);
      } else {
        in.op = mode == "lo" ? Op::mul_lo : mode == "hi" ? Op::mul_hi : mode == "wide" ? Op::mul_wide : Op::nop;
        if (in.op == Op::nop) fail("unknown mul mode");
        need(3);
      }
    } else if (base == "setp") {
      static const std::map<std::string, uint8_t> cmp = {{"eq", 0}, {"ne", 1}, {"lt", 2}, {"le", 3}, {"gt", 4}, {"ge", 5},
                                                          {"lo", 2}, {"ls", 3}, {"hi", 4}, {"hs", 5}};
      in.op = Op::setp;
      if (!cmp.count(mods.at(0))) fail("unknown comparison");
      in.cmp = cmp.at(mods[0]);
      in.ty = last_type();
      if (mods.size() == 3) in.boolop = mods[1] == "and" ? 1 : mods[1] == "or" ? 2 : mods[1] == "xor" ? 3 : 9;
      if (in.boolop == 9 || args[0].find('|') != std::string::npos) fail("unsupported setp form");
      if (in.ty.cls == Cls::f && (in.ty.bits != 32 || mods.size() != 2)) fail("unsupported floating-point setp form (only setp.CMP.f32)");
      need(in.boolop ? 4 : 3);
    } else if (base == "cvt") {
      in.op = Op::cvt;
      std::vector<std::string> ts;
      for (const auto& m : mods)
        if (is_type(m)) ts.push_back(m);
        else if (m == "satfinite") in.wg_sat = 1;  // a value beyond the type's range: its largest finite one
        else if (m != "rn" && m != "rni" && m != "rzi") fail("unsupported cvt modifier ." + m);
      if (ts.size() != 2) fail("cvt needs two types");
      in.ty = type_of(ts[0]);
      in.ty2 = type_of(ts[1]);
      // Packed destinations take two sources (a, b), unpacking ones (.f16x2 from .e4m3x2) one.
      need((in.ty.fmt & 16) && in.ty2.fmt != 19 && in.ty2.fmt != 20 ? 3 : 2);
    } else if (base == "cvta") {
      in.op = Op::cvta;
      need(2);
    } else if (base == "mapa") {
      in.op = Op::mapa;
      if (!has(mods, "shared::cluster")) fail("mapa of a generic address is not simulated");
      need(3);
    } else if (base == "ld" || base == "st") {
      in.op = base == "ld" ? Op::ld : Op::st;
      in.cmp = space_of(mods);
      if (in.cmp == sp_none) fail("generic ld/st is not simulated");
      in.ty = last_type();
      for (const auto& m : mods)
        if (m == "v2" || m == "v4") in.vec = static_cast<uint8_t>(m[1] - '0');
      need(2);
    } else if (base == "red") {
      // red{.relaxed}{.gpu}.global.max.u32 [a], b (PTX ISA 9.1 §9.7.13.6); other ops, types and spaces
      // are not simulated.
      if (!has(mods, "global") || !has(mods, "max") || !has(mods, "u32")) fail("unsupported red form (only red.global.max.u32)");
      for (const auto& m : mods)
        if (m != "global" && m != "max" && m != "u32" && m != "relaxed" && m != "gpu") fail("unsupported red qualifier ." + m);
      in.op = Op::red_max;
      in.ty = last_type();
      need(2);
    } else if (base == "bra") {
      in.op = Op::bra;
      need(1);
      branch_fix.push_back({k.code.size(), args[0]});
    } else if (base == "ret" || base == "exit") {
      in.op = Op::ret;
    } else if (base == "bar" || base == "barrier") {
      if (has(mods, "warp")) {
        in.op = Op::bar_warp_sync;
      } else if (has(mods, "cluster")) {
        in.op = has(mods, "arrive") ? Op::cluster_arrive : Op::cluster_wait;
        in.release = has(mods, "arrive") && !has(mods, "relaxed");  // .release by default (§9.7.13.3)
      } else if (has(mods, "sync")) {
        // bar.sync a{, b}: named barrier a (0..15), b threads (a multiple of the warp size; all
        // the CTA's threads when absent), PTX ISA 9.1 §9.7.13.1.
        in.op = Op::bar_sync;
        if (args.size() != 1 && args.size() != 2) fail("bar.sync takes a barrier and an optional thread count");
      } else {
        fail("unsupported barrier");
      }
    } else if (base == "shfl") {
      // shfl.sync.bfly.b32 d, a, b, c, membermask (PTX ISA 9.1 §9.7.9.6); the other modes and d|p
      // are not written by ptxgen.
      if (!has(mods, "sync") || !has(mods, "bfly") || args.size() != 5 || args[0].find('|') != std::string::npos)
        fail("unsupported shfl form (only shfl.sync.bfly.b32 d, a, b, c, membermask)");
      in.op = Op::shfl;
      in.ty = last_type();
      in.collective = 1;
    } else if (base == "stmatrix") {
      // stmatrix.sync.aligned.m8n8.{x1,x2,x4}.shared{::cta}.b16 [p], {r0, ...} (PTX ISA 9.1
      // §9.7.14.5.16): one 32-bit register per 8x8 matrix. The .trans, .m16n8 and .b8 forms and a
      // generic address are not simulated (ptxgen does not write them).
      const std::set<std::string> ok = {"sync", "aligned", "m8n8", "x1", "x2", "x4", "shared", "shared::cta", "b16"};
      for (const auto& m : mods)
        if (!ok.count(m)) fail("stmatrix ." + m + " is not simulated (only stmatrix.sync.aligned.m8n8.{x1,x2,x4}.shared.b16)");
      if (!has(mods, "sync") || !has(mods, "aligned") || !has(mods, "m8n8") || !has(mods, "b16") || space_of(mods) != sp_shared_cta)
        fail("unsupported stmatrix form (only stmatrix.sync.aligned.m8n8.{x1,x2,x4}.shared.b16)");
      in.num = has(mods, "x4") ? 4 : has(mods, "x2") ? 2 : has(mods, "x1") ? 1 : 0;
      need(2);
      if (!in.num || in.o[0].kind != Opnd::mem || in.o[1].kind != Opnd::vec || in.o[1].count != in.num)
        fail("stmatrix takes [p], {r...}: one register per matrix of .x1, .x2 or .x4");
      in.op = Op::stmatrix;
      in.collective = 1;
    } else if (base == "elect") {
      // elect.sync d|p, membermask: the lowest lane of the mask is the leader (a warp collective here).
      if (!has(mods, "sync") || args.size() != 2) fail("bad elect.sync");
      const auto bar = args[0].find('|');
      if (bar == std::string::npos) fail("elect.sync needs d|p");
      in.op = Op::elect;
      in.collective = 1;
      in.o[0] = operand(trim(args[0].substr(0, bar)));
      in.o[2] = operand(trim(args[0].substr(bar + 1)));
      in.o[1] = operand(args[1]);
    } else if (base == "prefetch") {
      // prefetch.tensormap [a] (§9.7.9.15): a cache hint, no effect on what the kernel computes.
      if (!has(mods, "tensormap")) fail("prefetch other than .tensormap is not simulated");
      need(1);
      in.op = Op::nop;
    } else if (base == "fence") {
      // fence.proxy.async (§9.7.13.4): orders the generic proxy's shared-memory writes before the
      // async proxy's accesses (TMA, tcgen05.mma/cp, wgmma read shared memory through it). A
      // release at cluster scope or wider (fence.mbarrier_init.release.cluster, whose effect is
      // restricted to the thread's mbarrier.init operations; fence.{release,acq_rel,sc} at .cluster,
      // .gpu, .sys) releases the thread's mbarrier.init operations to the other CTAs. Other fences
      // are no-ops here (docs/simulate.md).
      const bool wide = has(mods, "cluster") || has(mods, "gpu") || has(mods, "sys");
      const bool release = has(mods, "release") || has(mods, "acq_rel") || has(mods, "sc");
      in.op = !mods.empty() && mods[0] == "proxy" && mods.size() > 1 && starts(mods[1], "async") ? Op::fence_proxy_async
              : wide && release && !has(mods, "proxy")                                             ? Op::fence_release
                                                                                                   : Op::nop;
    } else if (base == "mbarrier") {
      const std::string& what = mods.at(0);
      in.cmp = space_of(mods);
      if (in.cmp != sp_shared_cta && in.cmp != sp_none && !(what == "arrive" && in.cmp == sp_shared_cluster))
        fail("mbarrier outside .shared::cta is not simulated (but a remote arrive on .shared::cluster)");
      if (what == "init") {
        in.op = Op::mbar_init;
        need(2);
      } else if (what == "arrive") {
        in.op = Op::mbar_arrive;
        in.pack = has(mods, "expect_tx") ? 1 : 0;
        in.release = has(mods, "cluster") && !has(mods, "relaxed");  // .release is the default semantics (§9.7.13.15.13)
        if (!(args.size() == 2 || args.size() == 3)) fail("bad mbarrier.arrive");
      } else if (what == "try_wait" || what == "test_wait") {
        in.op = Op::mbar_try_wait;
        if (!has(mods, "parity")) fail("only the .parity waits are simulated");
        need(3);
      } else {
        fail("unsupported mbarrier operation");
      }
    } else if (base == "cp" && (has(mods, "commit_group") || has(mods, "wait_group"))) {
      // cp.async.bulk.commit_group; cp.async.bulk.wait_group[.read] N (PTX ISA 9.1 §9.7.9.25.4.x).
      if (!has(mods, "async") || !has(mods, "bulk")) fail("unsupported cp.async group instruction");
      if (has(mods, "commit_group")) {
        in.op = Op::bulk_commit;
        need(0);
      } else {
        in.op = Op::bulk_wait;
        in.read = has(mods, "read") ? 1 : 0;
        need(1);
        in.o[0] = operand(args[0]);
        if (in.o[0].kind != Opnd::immediate || in.o[0].imm < 0) fail("cp.async.bulk.wait_group takes an immediate count");
      }
    } else if (base == "cp" && has(mods, "bulk_group")) {
      // cp.async.bulk.tensor.{2d,3d}.global.shared::cta.bulk_group [tmap, {c0, c1[, c2]}], [smem]: a
      // TMA store (PTX ISA 9.1 §9.7.9.25.5.1), completing with the executing thread's bulk async-group.
      const int rank = has(mods, "2d") ? 2 : has(mods, "3d") ? 3 : 0;
      if (!(has(mods, "async") && has(mods, "bulk") && has(mods, "tensor") && rank && has(mods, "global") && has(mods, "shared::cta")))
        fail("only cp.async.bulk.tensor.2d and .3d .global.shared::cta.bulk_group stores are simulated");
      if (has(mods, "im2col") || has(mods, "L2::cache_hint")) fail("unsupported TMA store mode");
      in.op = Op::tma_store;
      need(2);
      tensor_operand(args[0], in.o[0], in.o[1], rank);  // [tmap, {c0, c1[, c2]}], [smem]
      in.o[2] = operand(args[1]);
      in.nops = 3;
    } else if (base == "cp") {
      const int rank = has(mods, "2d") ? 2 : has(mods, "3d") ? 3 : 0;
      if (!(has(mods, "async") && has(mods, "bulk") && has(mods, "tensor") && rank))
        fail("only cp.async.bulk.tensor.2d and .3d are simulated");
      if (has(mods, "im2col")) fail("unsupported TMA mode");
      if (!has(mods, "mbarrier::complete_tx::bytes") || !has(mods, "global")) fail("unsupported TMA completion");
      in.op = Op::tma_load;
      in.cta_group = has(mods, "cta_group::2") ? 2 : 1;
      in.multicast = has(mods, "multicast::cluster");
      const size_t nargs = in.multicast ? 4 : 3;
      if (has(mods, "L2::cache_hint") && args.size() == nargs + 1) args.pop_back();  // a hint, not a semantics
      need(nargs);
      // [dst], [tmap, {c0, c1}], [mbar] (, ctaMask)
      in.o[0] = operand(args[0]);
      tensor_operand(args[1], in.o[1], in.o[2], rank);
      in.o[3] = operand(args[2]);
      in.nops = 4;
      if (in.multicast) {
        in.o[4] = operand(args[3]);
        in.nops = 5;
      }
    } else if (base == "tcgen05") {
      tcgen05(in, mods, args);
    } else if (base == "wgmma") {
      wgmma(in, mods, args);
    } else if (base == "setmaxnreg") {
      // setmaxnreg.{inc,dec}.sync.aligned.u32 imm-reg-count (§9.7.19.5): 24..256, a multiple of 8.
      if (!has(mods, "sync") || !has(mods, "aligned") || !has(mods, "u32") || !(has(mods, "inc") || has(mods, "dec")))
        fail("bad setmaxnreg");
      need(1);
      if (in.o[0].kind != Opnd::immediate || in.o[0].imm < 24 || in.o[0].imm > 256 || in.o[0].imm % 8)
        fail("setmaxnreg takes an immediate count in 24..256, a multiple of 8 (PTX ISA 9.7.19.5)");
      in.op = Op::setmaxnreg;
      in.collective = 1;
      in.pack = has(mods, "inc") ? 1 : 0;
      in.wg_n = static_cast<uint16_t>(in.o[0].imm);
    } else {
      fail("unknown instruction");
    }
    k.code.push_back(in);
    k.text.push_back(text);
  }

  // A TMA's tensor operand "[tmap, {c0, c1[, c2]}]": the map and the `rank` coordinates.
  void tensor_operand(const std::string& arg, Opnd& map, Opnd& coords, int rank = 2) {
    const auto parts = split_top(trim(arg.substr(1, arg.size() - 2)), ',');
    if (parts.size() != 2) fail("bad tensor operand");
    map = operand(parts[0]);
    coords = operand(parts[1]);
    if (coords.kind != Opnd::vec || static_cast<int>(coords.count) != rank)
      fail("a " + std::to_string(rank) + "-D TMA takes " + std::to_string(rank) + " coordinates");
  }

  void tcgen05(Ins& in, const std::vector<std::string>& mods, const std::vector<std::string>& args) {
    const std::string& what = mods.at(0);
    in.collective = has(mods, "sync") && has(mods, "aligned");
    if (starts(what, "fence")) {  // §9.7.16.11.1
      if (what != "fence::before_thread_sync" && what != "fence::after_thread_sync") fail("unknown tcgen05.fence");
      in.op = what == "fence::before_thread_sync" ? Op::tc_fence_before : Op::tc_fence_after;
      return;
    }
    if (what == "alloc" || what == "dealloc" || what == "relinquish_alloc_permit") {
      in.op = what == "alloc" ? Op::tc_alloc : what == "dealloc" ? Op::tc_dealloc : Op::tc_relinquish;
      cta_group_of(mods, in);
      if (in.op != Op::tc_relinquish && args.size() != 2) fail("expected 2 operands");
      return;
    }
    if (what == "wait::ld" || what == "wait::st") {
      in.op = what == "wait::ld" ? Op::tc_wait_ld : Op::tc_wait_st;
      return;
    }
    if (what == "ld" || what == "st") {
      in.op = what == "ld" ? Op::tc_ld : Op::tc_st;
      static const std::map<std::string, uint8_t> shapes = {{"32x32b", 0}, {"16x64b", 1}, {"16x128b", 2}, {"16x256b", 3},
                                                            {"16x32bx2", 4}};
      bool shape = false;
      for (const auto& m : mods) {
        if (shapes.count(m)) in.shape = shapes.at(m), shape = true;
        if (m.size() > 1 && m[0] == 'x' && std::isdigit(static_cast<unsigned char>(m[1]))) in.num = static_cast<uint8_t>(std::stoi(m.substr(1)));
        if (m == "pack::16b" || m == "unpack::16b") in.pack = 1;
        if (m == "red") fail("tcgen05.ld.red is not simulated");
      }
      if (!shape || !in.num || !in.collective) fail("bad tcgen05.ld/st");
      const size_t n = in.shape == 4 ? 3 : 2;
      if (args.size() != n) fail("expected " + std::to_string(n) + " operands");
      return;
    }
    if (what == "cp") {
      in.op = Op::tc_cp;
      cta_group_of(mods, in);
      int shape = -1;
      const bool w0213 = has(mods, "warpx2::02_13"), w0123 = has(mods, "warpx2::01_23"), w4 = has(mods, "warpx4");
      if (has(mods, "128x256b")) shape = 0;
      if (has(mods, "128x128b")) shape = 1;
      if (has(mods, "4x256b")) shape = 2;
      if (has(mods, "64x128b")) shape = w0213 ? 3 : w0123 ? 4 : -1;
      if (has(mods, "32x128b")) shape = w4 ? 5 : -1;
      if (shape < 0) fail("unsupported tcgen05.cp shape (.64x128b needs .warpx2::*, .32x128b .warpx4)");
      if ((shape < 3 && (w0213 || w0123 || w4))) fail("multicast qualifier on a shape without one");
      in.shape = static_cast<uint8_t>(shape);
      if (has(mods, "b4x16_p64")) in.decompress = 1;
      if (has(mods, "b6x16_p32")) in.decompress = 2;
      if (in.decompress && !has(mods, "b8x16")) fail("decompression needs .b8x16");
      if (args.size() != 2) fail("expected 2 operands");
      return;
    }
    if (what == "commit") {
      in.op = Op::tc_commit;
      cta_group_of(mods, in);
      in.multicast = has(mods, "multicast::cluster");
      if (!has(mods, "mbarrier::arrive::one")) fail("unsupported commit");
      if (args.size() != (in.multicast ? 2u : 1u)) fail("bad tcgen05.commit operands");
      return;
    }
    if (what == "mma") {
      in.op = Op::tc_mma;
      cta_group_of(mods, in);
      in.sparse = has(mods, "sp");
      static const std::map<std::string, uint8_t> kinds = {{"kind::f16", 0},      {"kind::tf32", 1},  {"kind::f8f6f4", 2},
                                                           {"kind::i8", 3},       {"kind::mxf8f6f4", 4}, {"kind::mxf4", 5},
                                                           {"kind::mxf4nvf4", 6}};
      bool kind = false;
      for (const auto& m : mods) {
        if (kinds.count(m)) in.kind = kinds.at(m), kind = true;
        if (m == "block_scale") in.scaled = 1;
        if (m == "scale_vec::1X") in.sf_vec = 1;
        if (m == "scale_vec::2X") in.sf_vec = 2;
        if (m == "scale_vec::4X") in.sf_vec = 4;
        if (m == "block16") in.sf_vec = 16;
        if (m == "block32") in.sf_vec = 32;
        if (m == "collector::a::discard") in.collector = 0;
        else if (m == "collector::a::fill") in.collector = 1;
        else if (m == "collector::a::use") in.collector = 2;
        else if (m == "collector::a::lastuse") in.collector = 3;
        else if (starts(m, "collector") || m == "ashift" || m == "ws") fail("unsupported tcgen05.mma qualifier ." + m);
      }
      if (!kind) fail("tcgen05.mma without .kind");
      if (in.scaled != (in.kind >= 4)) fail(".block_scale goes with (only) the mx kinds");
      size_t n = 5 + (in.sparse ? 1 : 0) + (in.scaled ? 2 : 0);
      if (args.size() != n) fail("expected " + std::to_string(n) + " operands (disable-output-lane and scale-input-d are not simulated)");
      return;
    }
    fail("unsupported tcgen05 instruction");
  }

  // wgmma.fence / commit_group / wait_group N and wgmma.mma_async (PTX ISA 9.1 §9.7.15.5.2,
  // §9.7.15.7): the dense forms with A from a descriptor or from registers; shapes and types as
  // §9.7.15.2-3 list them.
  void wgmma(Ins& in, const std::vector<std::string>& mods, const std::vector<std::string>& args) {
    const std::string& what = mods.at(0);
    if (!has(mods, "sync") || !has(mods, "aligned")) fail("wgmma instructions are .sync.aligned");
    in.collective = 1;
    k.wgmma = true;
    if (what == "fence" || what == "commit_group") {
      if (!args.empty()) fail("expected no operands");
      in.op = what == "fence" ? Op::wg_fence : Op::wg_commit;
      return;
    }
    if (what == "wait_group") {
      in.op = Op::wg_wait;
      if (args.size() != 1 || in.o[0].kind != Opnd::immediate || in.o[0].imm < 0) fail("wgmma.wait_group takes an immediate count");
      return;
    }
    if (what != "mma_async") fail("unsupported wgmma instruction (wgmma.mma_async.sp is not simulated)");
    in.op = Op::wg_mma;
    // .shape{.satfinite}.dtype.atype.btype
    std::vector<std::string> types;
    int n = 0, kk = 0;
    for (size_t i = 1; i < mods.size(); ++i) {
      const std::string& m = mods[i];
      if (m == "sync" || m == "aligned") continue;
      if (m == "satfinite") {
        in.wg_sat = 1;
      } else if (starts(m, "m64n")) {
        const auto kp = m.find('k');
        if (kp == std::string::npos) fail("bad wgmma shape ." + m);
        n = std::stoi(m.substr(4, kp - 4));
        kk = std::stoi(m.substr(kp + 1));
      } else {
        types.push_back(m);
      }
    }
    if (types.size() != 3 || !n) fail("wgmma.mma_async needs .shape.dtype.atype.btype (the .b1 forms are not simulated)");
    const std::string &dt = types[0], &at = types[1], &bt = types[2];
    auto input = [&](const std::string& t, uint8_t& type) -> int {  // tc::Kind of an input type, its type code
      type = t == "bf16" || t == "e5m2" || t == "s8";
      if (t == "f16" || t == "bf16") return 0;
      if (t == "tf32") return 1;
      if (t == "e4m3" || t == "e5m2") return 2;
      if (t == "s8" || t == "u8") return 3;
      fail("wgmma input type ." + t + " is not simulated");
    };
    const int ka = input(at, in.wg_atype), kb = input(bt, in.wg_btype);
    if (ka != kb) fail("wgmma A and B of different type families");
    in.wg_kind = static_cast<uint8_t>(ka);
    in.wg_dtype = dt == "f16" ? 0 : dt == "f32" ? 1 : dt == "s32" ? 2 : 9;
    // §9.7.15.3: f16 -> f16/f32, bf16 and tf32 -> f32, e4m3/e5m2 -> f16/f32, u8/s8 -> s32, equal
    // types but for the 8-bit floats (the u8.s8 mix of PTX 8.4 is accepted too).
    const bool dt_ok = ka == 3 ? in.wg_dtype == 2 : (ka == 0 && in.wg_atype == 0) || ka == 2 ? in.wg_dtype <= 1 : in.wg_dtype == 1;
    if (!dt_ok) fail("wgmma D type ." + dt + " does not go with ." + at);
    if ((ka == 0 || ka == 1) && at != bt) fail("wgmma A and B types must be equal for ." + at);
    if (in.wg_sat && ka != 3) fail(".satfinite is for the integer wgmma");
    static const int kK[] = {16, 8, 32, 32};
    if (kk != kK[ka]) fail("wgmma K = " + std::to_string(kk) + " is not the K of ." + at + " (" + std::to_string(kK[ka]) + ")");
    const bool n_ok = ka == 3 ? (n == 8 || n == 16 || n == 24 || (n >= 32 && n % 16 == 0)) : n % 8 == 0;  // §9.7.15.2
    if (!n_ok || n < 8 || n > 256) fail("wgmma N = " + std::to_string(n) + " is not a shape of §9.7.15.2 for ." + at);
    in.wg_n = static_cast<uint16_t>(n);
    in.wg_k = static_cast<uint8_t>(kk);
    // d, a-desc | {a}, b-desc, scale-d[, imm-scale-a, imm-scale-b[, imm-trans-a (descriptor A only), imm-trans-b]]
    in.wg_areg = in.o[1].kind == Opnd::vec;
    const bool fp = ka != 3, trans = ka == 0;
    const size_t nargs = 4 + (fp ? 2 : 0) + (trans ? (in.wg_areg ? 1 : 2) : 0);
    if (args.size() != nargs) fail("expected " + std::to_string(nargs) + " operands");
    const int dregs = in.wg_dtype == 0 ? n / 4 : n / 2;  // f16 D: two per register
    if (in.o[0].kind != Opnd::vec || in.o[0].count != dregs) fail("wgmma D takes " + std::to_string(dregs) + " registers");
    if (in.wg_areg && in.o[1].count != 4) fail("wgmma A from registers takes 4 registers");
    if (!in.wg_areg && in.o[1].kind != Opnd::reg) fail("wgmma A descriptor must be a register");
    if (in.o[2].kind != Opnd::reg) fail("wgmma B descriptor must be a register");
    if (in.o[3].kind != Opnd::reg && in.o[3].kind != Opnd::immediate) fail("wgmma scale-d must be a predicate or an immediate");
    auto imm = [&](size_t i, int64_t a, int64_t b) {
      if (in.o[i].kind != Opnd::immediate || (in.o[i].imm != a && in.o[i].imm != b))
        fail("wgmma operand " + std::to_string(i + 1) + " must be the immediate " + std::to_string(a) + " or " + std::to_string(b));
      return static_cast<int8_t>(in.o[i].imm);
    };
    if (fp) {
      in.wg_scale_a = imm(4, -1, 1);
      in.wg_scale_b = imm(5, -1, 1);
    }
    if (trans) {
      if (!in.wg_areg) in.wg_trans_a = static_cast<uint8_t>(imm(6, 0, 1));
      in.wg_trans_b = static_cast<uint8_t>(imm(in.wg_areg ? 6 : 7, 0, 1));
    }
    for (int v = 0; v < (in.wg_areg ? 2 : 1); ++v)
      for (uint32_t i = 0; i < in.o[v].count; ++i) {
        const uint32_t sl = k.pool[in.o[v].r + i];
        if (sl == kSinkSlot) fail("wgmma register operands cannot be sinks");
        k.wgmma_slots.push_back(sl);
      }
  }

  void parse(const std::string& ptx) {
    std::istringstream in(ptx);
    std::string raw;
    bool header = false, body = false, in_params = false;
    while (std::getline(in, raw)) {
      ++line;
      std::string s = raw;
      const auto c = s.find("//");
      if (c != std::string::npos) s = s.substr(0, c);
      s = trim(s);
      if (s.empty()) continue;
      text = s;
      if (!header) {
        if (starts(s, ".extern .shared") || starts(s, ".shared")) {
          const auto lb = s.find('[');
          std::string name = trim(s.substr(0, lb));
          name = name.substr(name.find_last_of(" \t") + 1);
          shared_syms[name] = 1;
        }
        if (s.find(".entry") != std::string::npos) {
          header = in_params = true;
          const auto e = s.find(".entry");
          std::string rest = trim(s.substr(e + 6));
          k.name = trim(rest.substr(0, rest.find('(')));
        }
        continue;
      }
      if (!body) {
        if (in_params) {
          if (s[0] == ')' || (s.find(')') != std::string::npos && s.find(".param") == std::string::npos)) {
            in_params = false;
            continue;
          }
          std::string p = s;
          if (p.back() == ',') p.pop_back();
          if (!starts(p, ".param")) continue;
          ParamDecl d;
          std::string name = p.substr(p.find_last_of(" \t") + 1);
          const auto lb = name.find('[');
          if (lb != std::string::npos) {
            d.bytes = std::stoi(name.substr(lb + 1));
            name = name.substr(0, lb);
            d.tensor_map = d.bytes == 128;
          } else {
            d.bytes = p.find(".u32") != std::string::npos || p.find(".b32") != std::string::npos || p.find(".s32") != std::string::npos ? 4 : 8;
          }
          d.name = name;
          k.params.push_back(d);
          continue;
        }
        if (starts(s, ".reqntid")) k.reqntid = static_cast<uint32_t>(std::stoul(trim(s.substr(8))));
        if (starts(s, ".maxnreg")) k.maxnreg = static_cast<uint32_t>(std::stoul(trim(s.substr(8))));
        if (starts(s, ".reqnctapercluster")) {
          const auto v = split_top(s.substr(18), ',');
          for (size_t i = 0; i < 3 && i < v.size(); ++i) k.reqnctapercluster[i] = static_cast<uint32_t>(std::stoul(v[i]));
        }
        if (s == "{") body = true;
        continue;
      }
      if (s == "}") break;
      if (starts(s, ".reg")) {
        declare_regs(s);
        continue;
      }
      if (s[0] == '.') fail("unsupported directive in the body");
      const auto colon = s.find(':');
      if (colon != std::string::npos && s[0] == '$' && s.find_first_of(" \t") > colon) {
        labels[s.substr(0, colon)] = static_cast<uint32_t>(k.code.size());
        s = trim(s.substr(colon + 1));
        if (s.empty()) continue;
      }
      if (s.back() != ';') fail("instruction without ';'");
      s.pop_back();
      instruction(trim(s));
    }
    if (!body) throw Error("no .entry body in the PTX");
    std::sort(k.wgmma_slots.begin(), k.wgmma_slots.end());
    k.wgmma_slots.erase(std::unique(k.wgmma_slots.begin(), k.wgmma_slots.end()), k.wgmma_slots.end());
    for (const auto& [i, l] : branch_fix) {
      auto it = labels.find(l);
      if (it == labels.end()) {
        line = static_cast<int>(k.code[i].line);
        text = k.text[i];
        fail("branch to an unknown label " + l);
      }
      k.code[i].o[0].kind = Opnd::label;
      k.code[i].o[0].r = it->second;
    }
  }
};

}  // namespace

KernelPtr parse(const std::string& ptx) {
  KernelPtr k(new Kernel);
  Parser p{*k, {}, {}, {}, {}, {}, 0, {}};
  p.parse(ptx);
  return k;
}

}  // namespace ksim
