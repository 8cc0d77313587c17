// See ptx_sim.hpp. Supports exactly the instructions emit/emit_program.cpp writes.
#include "ptx_sim.hpp"

#include <regex>
#include <sstream>
#include <stdexcept>

namespace ptxsim {

namespace {

struct Val {
  uint64_t i = 0;
  std::vector<Token> t;  // symbolic parts (empty: a plain integer)
};

struct Ins {
  std::string guard;  // "", "%p3" or "!%p3"
  std::string op;
  std::vector<std::string> args;
  int line = 0;
};

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> split_args(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

std::vector<std::string> vec_items(const std::string& s) {  // "{a, b}" -> [a, b]
  return split_args(s.substr(1, s.size() - 2));
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

struct Machine {
  const std::vector<Ins>& code;
  const std::map<std::string, size_t>& labels;
  std::map<std::string, Val> reg;
  std::map<std::string, bool> pred;
  Kernel& k;
  int tid;
  uint64_t next_col;
  Thread out;
  int lds = 0;

  std::map<uint64_t, std::string> tmap_at;

  Machine(Kernel& kk, int t, uint32_t tmem_base, const std::vector<Ins>& c, const std::map<std::string, size_t>& l)
      : code(c), labels(l), k(kk), tid(t), next_col(tmem_base) {}

  // A tiled 2-D box: row y of the box holds box[0] elements from global row c1 + y, starting at
  // element c0; rows land one after another at dstMem. The swizzle moves each 16-byte cell of a
  // 128-byte shared-memory line (PTX ISA 5.5.7, the tables): cell c of line l goes to cell
  // c ^ (l mod (span / 16)) -- in atoms of `atom` bytes, so with 32-byte atomicity pairs of cells
  // move together and the pattern has span / atom rows.
  void tma(const std::vector<std::string>& a) {
    const uint64_t dst = addr(a[0]);
    const auto inner = split_args(a[1].substr(1, a[1].size() - 2));
    const TensorMap& m = k.tensor_maps.at(tmap_at.at(u(inner.at(0))));
    const auto coords = vec_items(inner.at(1));
    const int64_t c0 = static_cast<int32_t>(u(coords.at(0))), c1 = static_cast<int32_t>(u(coords.at(1)));
    const uint64_t row_bytes = uint64_t{m.box[0]} * static_cast<uint64_t>(m.unit);
    if (dst % 128) throw std::runtime_error("TMA destination not 128-byte aligned");
    if (c0 < 0 || c1 < 0 || static_cast<uint64_t>(c0) + m.box[0] > m.dims[0] || static_cast<uint64_t>(c1) + m.box[1] > m.dims[1])
      throw std::runtime_error("TMA box leaves the tensor (the kernel would read zero fill)");
    for (uint64_t y = 0; y < m.box[1]; ++y)
      for (uint64_t x = 0; x < row_bytes; x += 16) {
        const uint64_t g = m.global + (static_cast<uint64_t>(c1) + y) * m.stride + static_cast<uint64_t>(c0) * static_cast<uint64_t>(m.unit) + x;
        uint64_t sh = dst + y * row_bytes + x;
        if (m.swizzle) {
          const uint64_t line = sh / 128, atoms = 128 / static_cast<uint64_t>(m.atom);
          const uint64_t cell = (sh % 128) / static_cast<uint64_t>(m.atom);
          const uint64_t period = static_cast<uint64_t>(m.swizzle / m.atom);
          const uint64_t moved = (cell ^ (line % period)) % atoms;
          sh = line * 128 + moved * static_cast<uint64_t>(m.atom) + sh % static_cast<uint64_t>(m.atom);
        }
        SharedWrite w;
        w.addr = sh;
        for (uint64_t i = 0; i < 4; ++i) {
          Token t;
          t.kind = 1;
          t.addr = g + 4 * i;
          w.from.push_back(t);
        }
        out.shared.push_back(w);
      }
    out.complete_tx[addr(a[2])] += row_bytes * m.box[1];
  }

  uint64_t imm(const std::string& s) const {
    if (s == "%tid.x") return static_cast<uint64_t>(tid);
    if (s == "%cluster_ctarank") return k.cluster_ctarank;
    if (s == "ptxgen_smem") return k.smem_symbol;
    if (starts(s, "0x")) return std::stoull(s.substr(2), nullptr, 16);
    if (starts(s, "-")) return static_cast<uint64_t>(std::stoll(s));
    return std::stoull(s);
  }
  Val get(const std::string& s) const {
    if (starts(s, "%") && s != "%tid.x" && s != "%cluster_ctarank") {
      auto it = reg.find(s);
      if (it == reg.end()) throw std::runtime_error("read of unset register " + s);
      return it->second;
    }
    return {imm(s), {}};
  }
  uint64_t u(const std::string& s) const { return get(s).i; }
  uint64_t addr(const std::string& s) const {  // "[%r1+0x10]" / "[%rd3+12]" / "[%r4]"
    const std::string in = s.substr(1, s.size() - 2);
    const auto plus = in.find('+');
    if (plus == std::string::npos) return u(in);
    return u(in.substr(0, plus)) + imm(in.substr(plus + 1));
  }
  void set(const std::string& d, uint64_t v, bool wide = false) { reg[d] = {wide ? v : (v & 0xFFFFFFFFull), {}}; }

  void exec(const Ins& in, size_t& pc) {
    const auto& a = in.args;
    const std::string& op = in.op;
    auto u32 = [&](size_t i) { return static_cast<uint32_t>(u(a[i])); };
    if (op == "ret") {
      pc = code.size();
      return;
    }
    if (op == "bra") {
      const auto it = labels.find(a[0]);
      if (it == labels.end()) throw std::runtime_error("branch to an unknown label " + a[0]);
      pc = it->second;
      return;
    }
    if (op == "mov.u32" || op == "mov.b32") {
      if (a[0][0] == '{') {  // split a 32-bit register into its 16-bit halves
        const Val v = get(a[1]);
        const auto parts = vec_items(a[0]);
        for (size_t h = 0; h < 2; ++h) {
          Val x{(v.i >> (16 * h)) & 0xFFFF, {}};
          for (auto t : v.t) {
            if (t.kind) t.part = static_cast<int>(h);
            x.t.push_back(t);
          }
          reg[parts[h]] = x;
        }
      } else if (a[1][0] == '{') {  // two halves into one register
        Val x;
        for (const auto& p : vec_items(a[1])) {
          const Val h = get(p);
          x.t.insert(x.t.end(), h.t.begin(), h.t.end());
        }
        reg[a[0]] = x;
      } else {
        reg[a[0]] = get(a[1]);
      }
      return;
    }
    if (op == "shr.u32") return set(a[0], u32(1) >> u32(2));
    if (op == "shl.b32") return set(a[0], uint64_t{u32(1)} << u32(2));
    if (op == "and.b32") return set(a[0], u32(1) & u32(2));
    if (op == "xor.b32") return set(a[0], u32(1) ^ u32(2));
    if (op == "add.u32") return set(a[0], uint64_t{u32(1)} + u32(2));
    if (op == "mul.lo.u32") return set(a[0], uint64_t{u32(1)} * u32(2));
    if (op == "mad.lo.u32") return set(a[0], uint64_t{u32(1)} * u32(2) + u32(3));
    if (op == "div.u32") return set(a[0], u32(1) / u32(2));
    if (op == "rem.u32") return set(a[0], u32(1) % u32(2));
    if (op == "bfe.u32") {
      const Val v = get(a[1]);
      const uint32_t pos = u32(2), len = u32(3);
      Val x{(v.i >> pos) & ((1ull << len) - 1), {}};
      for (auto t : v.t) {
        if (t.kind) t.part = static_cast<int>(pos / len);
        x.t.push_back(t);
      }
      reg[a[0]] = x;
      return;
    }
    if (op == "cvt.u64.u32") return set(a[0], u32(1), true);
    if (op == "cvt.u16.u32" || op == "cvt.u32.u16") {
      reg[a[0]] = get(a[1]);
      return;
    }
    if (starts(op, "cvt.rn.")) {
      Val v = get(a[1]);
      for (auto& t : v.t) t.converted = true;
      reg[a[0]] = v;
      return;
    }
    if (op == "add.s64") return set(a[0], u(a[1]) + u(a[2]), true);
    if (op == "mad.lo.s64") return set(a[0], u(a[1]) * u(a[2]) + u(a[3]), true);
    if (op == "mov.u16") return set(a[0], u(a[1]) & 0xFFFF);
    if (op == "or.pred") {
      pred[a[0]] = pred.at(a[1]) || pred.at(a[2]);
      return;
    }
    if (op == "mul.lo.u64") return set(a[0], u(a[1]) * u(a[2]), true);
    if (op == "mul.wide.u32") return set(a[0], uint64_t{u32(1)} * u32(2), true);
    if (op == "cvta.to.global.u64") return set(a[0], u(a[1]), true);
    if (op == "ld.param.u64") {
      const std::string p = a[1].substr(1, a[1].size() - 2);
      return set(a[0], k.param_values.at(p), true);
    }
    if (op == "setp.ne.u32") {
      pred[a[0]] = u32(1) != u32(2);
      return;
    }
    if (op == "setp.ge.u32") {
      pred[a[0]] = u32(1) >= u32(2);
      return;
    }
    if (op == "ld.global.v4.b32") {
      const uint64_t at = addr(a[1]);
      const auto d = vec_items(a[0]);
      for (size_t w = 0; w < 4; ++w) {
        Token t;
        t.kind = 1;
        t.addr = at + 4 * w;
        reg[d[w]] = {0, {t}};
      }
      return;
    }
    if (op == "st.shared.v4.b32") {
      SharedWrite w;
      w.addr = addr(a[0]);
      for (const auto& x : vec_items(a[1])) w.from.push_back(get(x).t.at(0));
      out.shared.push_back(w);
      return;
    }
    if (op == "ld.shared.b32") return set(a[0], k.alloc_words.at(addr(a[1])));
    if (starts(op, "st.global.b")) {
      const Val v = get(a[1]);
      GlobalWrite g;
      g.addr = addr(a[0]);
      g.bytes = std::stoi(op.substr(11)) / 8;
      if (v.t.size() != 1) throw std::runtime_error("store of a value with " + std::to_string(v.t.size()) + " sources");
      g.from = v.t[0];
      out.global.push_back(g);
      return;
    }
    if (op == "mov.b64" && k.tensor_maps.count(a[1])) {  // the parameter's address stands for the map
      tmap_at[0xC0DE0000ull + tmap_at.size() * 0x100] = a[1];
      return set(a[0], 0xC0DE0000ull + (tmap_at.size() - 1) * 0x100, true);
    }
    if (op == "cvta.param.u64") return set(a[0], u(a[1]), true);
    if (op == "mbarrier.arrive.expect_tx.shared::cta.b64") {
      out.expect_tx[addr(a[1])] += u(a[2]);
      return;
    }
    if (op == "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") return tma(a);
    if (op == "mbarrier.try_wait.parity.shared::cta.b64") {
      pred[a[0]] = true;
      return;
    }
    if (starts(op, "tcgen05.alloc")) {
      const std::string n = a[1];
      k.alloc_words[addr(a[0])] = next_col;
      next_col += imm(n);
      return;
    }
    if (starts(op, "tcgen05.ld")) {
      Tcgen05 t{op, {addr(a[1])}, {}, in.line};
      if (a.size() > 2) t.values.push_back(imm(a[2]));
      const auto d = vec_items(a[0]);
      for (size_t j = 0; j < d.size(); ++j) {
        Token x;
        x.kind = 2;
        x.ld = lds;
        x.reg = static_cast<int>(j);
        reg[d[j]] = {0, {x}};
      }
      out.ld_of_line[in.line] = lds++;
      out.tc.push_back(t);
      return;
    }
    if (starts(op, "tcgen05.st")) {
      Tcgen05 t{op, {addr(a[0])}, {}, in.line};
      if (a.size() > 2) t.values.push_back(imm(a[1]));
      for (const auto& x : vec_items(a.back())) t.regs.push_back(get(x).t);
      out.tc.push_back(t);
      return;
    }
    if (starts(op, "tcgen05.cp") || starts(op, "tcgen05.mma")) {
      Tcgen05 t{op, {}, {}, in.line};
      for (const auto& x : a) t.values.push_back(x[0] == '[' ? addr(x) : u(x));
      out.tc.push_back(t);
      return;
    }
    if (starts(op, "tcgen05.commit")) {
      Tcgen05 t{op, {addr(a[0])}, {}, in.line};
      if (a.size() > 1) t.values.push_back(u(a[1]));  // .multicast::cluster: the ctaMask
      out.tc.push_back(t);
      return;
    }
    // prefetch.tensormap (thread 0 at the start of a kernel with tensor maps): a cache hint.
    if (starts(op, "tcgen05.") || starts(op, "fence.") || op == "bar.sync" || starts(op, "barrier.cluster.") ||
        starts(op, "mbarrier.init") || op == "prefetch.tensormap")
      return;
    throw std::runtime_error("ptx_sim: unknown instruction " + op);
  }
};

}  // namespace

namespace {

// The parsed body of a kernel: every thread of a run shares it (the last one parsed is kept).
struct Parsed {
  std::string ptx;
  std::vector<std::string> params;
  std::vector<Ins> code;
  std::map<std::string, size_t> labels;
};

const Parsed& parse(const std::string& ptx) {
  static Parsed last;
  if (!last.code.empty() && last.ptx == ptx) return last;
  Parsed p;
  p.ptx = ptx;
  std::istringstream in(ptx);
  std::string line;
  bool body = false, header = false;
  int n = 0;
  static const std::regex param("\\.param (?:\\.u64|\\.align 64 \\.b8) (\\w+)");
  while (std::getline(in, line)) {
    ++n;
    const auto c = line.find("//");
    if (c != std::string::npos) line = line.substr(0, c);
    line = trim(line);
    if (line.empty()) continue;
    if (starts(line, ".visible .entry")) header = true;
    if (header && !body) {
      std::smatch mm;
      if (std::regex_search(line, mm, param)) p.params.push_back(mm[1]);
      if (line == "{") body = true;
      continue;
    }
    if (!body || line == "}" || line[0] == '.') continue;
    if (line.back() == ':') {
      p.labels[line.substr(0, line.size() - 1)] = p.code.size();
      continue;
    }
    Ins ins;
    ins.line = n;
    if (line[0] == '@') {
      const auto sp = line.find(' ');
      ins.guard = line.substr(1, sp - 1);
      line = trim(line.substr(sp));
    }
    if (line.back() == ';') line.pop_back();
    const auto sp = line.find_first_of(" \t");
    ins.op = line.substr(0, sp);
    if (sp != std::string::npos) ins.args = split_args(line.substr(sp));
    p.code.push_back(ins);
  }
  last = std::move(p);
  return last;
}

}  // namespace

Thread run(const std::string& ptx, int tid, Kernel& k, uint32_t tmem_base) {
  const Parsed& parsed = parse(ptx);
  if (k.params.empty()) k.params = parsed.params;
  Machine m(k, tid, tmem_base, parsed.code, parsed.labels);
  size_t pc = 0, steps = 0;
  while (pc < m.code.size()) {
    if (++steps > 50'000'000) throw std::runtime_error("ptx_sim: no end");
    const Ins& ins = m.code[pc++];
    if (!ins.guard.empty()) {
      const bool neg = ins.guard[0] == '!';
      const bool p = m.pred.at(neg ? ins.guard.substr(1) : ins.guard);
      if (p == neg) continue;
    }
    m.exec(ins, pc);
  }
  return m.out;
}

}  // namespace ptxsim
