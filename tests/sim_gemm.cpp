// See sim_gemm.hpp.
#include "sim_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim_support.hpp"

namespace simtest {

using nlohmann::json;

int64_t d_row_unit(const json& mf) {
  for (const json& p : mf.at("params"))
    if (p.at("kind") == "tensor_map" && p.at("tensor") == "D") return 128 / dtype(mf.at("tensors").at("D").at("dtype")).bits;
  return 1;
}

std::vector<std::array<int64_t, 3>> gemm_sizes(const json& mf, int stages) {
  const int64_t tm = mf.at("tile").at("m"), tn = mf.at("tile").at("n"), tk = mf.at("tile").at("k");
  const int64_t u = d_row_unit(mf);
  return {{2 * tm - 5, (2 * tn - 5) / u * u, 2 * tk - 3}, {tm - 3, std::max<int64_t>((tn - 4) / u * u, 2), (stages + 2) * tk - 5}};
}

namespace {

struct Operand {
  uint64_t addr = 0, pitch = 0, inner = 0, outer = 0;
  std::vector<double> v;  // logical values, row-major over the tensor's dims (dims[0] rows)
  bool first_contiguous = false;
};

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

}  // namespace

GemmResult run_gemm(const ksim::Kernel& k, const json& mf, int64_t m, int64_t n, int64_t kk, unsigned seed, const ksim::Options& o,
                    int multiprocessors) {
  GemmResult res;
  std::mt19937 rng(seed);
  const std::map<std::string, int64_t> size = {{"m", m}, {"n", n}, {"k", kk}};
  ksim::Global g;
  std::map<std::string, Operand> ops;
  const json& tensors = mf.at("tensors");
  for (const std::string name : {"A", "B"}) {
    const json& t = tensors.at(name);
    const Dtype dt = dtype(t.at("dtype"));
    Operand op;
    const std::string d0 = t.at("dims")[0], d1 = t.at("dims")[1], c = t.at("contiguous");
    op.first_contiguous = c == d0;
    op.inner = static_cast<uint64_t>(size.at(c));
    op.outer = static_cast<uint64_t>(size.at(c == d0 ? d1 : d0));
    // A row stride the host may choose: the row rounded up to 16 bytes, plus 16 (TMA needs a multiple of 16).
    op.pitch = static_cast<uint64_t>(round_up((static_cast<int64_t>(op.inner) * dt.bits + 7) / 8, 16) + 16);
    op.addr = g.alloc(op.pitch * op.outer, 0x5A);
    std::vector<uint8_t>& mem = g.at(op.addr);
    op.v.assign(static_cast<size_t>(size.at(d0) * size.at(d1)), 0.0);
    for (uint64_t r = 0; r < op.outer; ++r)
      for (uint64_t i = 0; i < op.inner; ++i) {
        const uint32_t b = dt.random(rng);
        put_bits(mem, r * op.pitch * 8 + i * static_cast<uint64_t>(dt.bits), dt.bits, b);
        // logical (dims[0], dims[1]) index
        const uint64_t x0 = op.first_contiguous ? i : r, x1 = op.first_contiguous ? r : i;
        op.v[static_cast<size_t>(x0 * static_cast<uint64_t>(size.at(d1)) + x1)] = dt.decode(b);
      }
    ops[name] = std::move(op);
  }
  const Dtype dd = dtype(tensors.at("D").at("dtype"));
  const uint64_t d_addr = g.alloc(static_cast<size_t>(m * n * dd.bits / 8), 0xEE);

  ksim::Launch l;
  l.threads = mf.at("block")[0];
  l.dynamic_smem = mf.at("dynamic_shared_memory_bytes");
  for (size_t i = 0; i < 3; ++i) l.cluster[i] = mf.at("cluster")[i];
  const int64_t tm = mf.at("tile").at("m"), tn = mf.at("tile").at("n"), cg = mf.at("cta_group");
  l.grid = {static_cast<uint32_t>(round_up((n + tn - 1) / tn * cg, l.cluster[0])),
            static_cast<uint32_t>(round_up((m + tm - 1) / tm, l.cluster[1])), l.cluster[2]};
  if (mf.value("schedule", "") == "persistent") {  // the launcher's rule (the manifest's grid_rule)
    const int64_t tiles = (n + tn - 1) / tn * ((m + tm - 1) / tm);
    const int64_t units = multiprocessors > 0 ? std::min<int64_t>(tiles, multiprocessors / cg) : tiles;
    l.grid = {static_cast<uint32_t>(units * cg), 1, 1};
  }
  // D as a TMA store's tensor map sees it: n elements a row, rows n elements apart.
  Operand dop;
  dop.addr = d_addr;
  dop.inner = static_cast<uint64_t>(n);
  dop.outer = static_cast<uint64_t>(m);
  dop.pitch = static_cast<uint64_t>(n * dd.bits / 8);
  ops["D"] = dop;
  for (const json& p : mf.at("params")) {
    const std::string name = p.at("name"), kind = p.at("kind");
    if (kind == "tensor_map") {
      const std::string tensor = p.at("tensor");
      const Operand& op = ops.at(tensor);
      for (const json& t : mf.at("tensor_maps"))
        if (t.at("param") == name) l.params.push_back(map_param(name, tensor_map(t, op.addr, op.inner, op.outer, op.pitch)));
    } else if (kind == "global_pointer") {
      l.params.push_back(value(name, d_addr));
    } else {
      l.params.push_back(value(name, static_cast<uint64_t>(size.at(name))));
    }
  }
  try {
    const ksim::Kernel& kr = k;
    res.stats = ksim::run(kr, l, g, o);
    res.ctas = res.stats.ctas;
  } catch (const ksim::Error& e) {
    res.error = e.what();
    return res;
  }
  // float64 reference and the bound: every K step of the accumulator (at most k / 8 of them: the
  // smallest K per instruction) rounds to its type; D rounds once more to its own.
  const std::string acc = mf.at("accumulator");
  const double u_acc = acc == "f32" ? std::ldexp(1.0, -24) : acc == "f16" ? std::ldexp(1.0, -11) : 0.0;
  const double u_out = dd.name == "bf16" ? std::ldexp(1.0, -8) : dd.name == "f16" ? std::ldexp(1.0, -11) : 0.0;
  const double steps = static_cast<double>((kk + 7) / 8 + 1);
  const std::vector<uint8_t>& D = g.at(d_addr);
  const Operand& A = ops.at("A");
  const Operand& B = ops.at("B");
  std::vector<double> bt(static_cast<size_t>(n * kk));  // B transposed: [n][k]
  for (int64_t x = 0; x < kk; ++x)
    for (int64_t j = 0; j < n; ++j) bt[static_cast<size_t>(j * kk + x)] = B.v[static_cast<size_t>(x * n + j)];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      const double* a = &A.v[static_cast<size_t>(i * kk)];
      const double* b = &bt[static_cast<size_t>(j * kk)];
      for (int64_t x = 0; x < kk; ++x) {
        ref += a[x] * b[x];
        mag += std::fabs(a[x] * b[x]);
      }
      const double got = dd.decode(get_bits(D, static_cast<uint64_t>((i * n + j) * dd.bits), dd.bits));
      const double bound = steps * u_acc * mag * (1 + u_out) + u_out * std::fabs(ref) + 1e-300;
      const double err = std::fabs(got - ref);
      const double rel = std::isnan(err) ? INFINITY : (dd.name == "s32" ? (err == 0 ? 0 : INFINITY) : err / bound);
      ++res.checked;
      if (std::isnan(err) || err > res.max_err) res.max_err = std::isnan(err) ? INFINITY : err;
      if (rel > res.worst || std::isnan(rel)) {
        res.worst = rel;
        std::ostringstream s;
        s << "D(" << i << "," << j << ") = " << got << ", expected " << ref << " (bound " << bound << ")";
        res.where = s.str();
      }
    }
  return res;
}

}  // namespace simtest
