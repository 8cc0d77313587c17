// sm_90a clusters that multicast the operand their CTAs share, and register budgets (setmaxnreg)
// for a producer warpgroup and the consumers, as planned and emitted.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace ptxgen;

namespace {

nlohmann::json spec_doc(const std::string& stem) {
  return nlohmann::json::parse(support::slurp(support::source_root() + "/specs/" + stem + ".json"));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const plan::Step* find_step(const std::vector<plan::Step>& steps, plan::StepKind kind, const std::string& name) {
  for (const auto& st : steps) {
    if (st.kind == kind && (st.kind != plan::StepKind::load || st.load.global == name) &&
        (st.kind != plan::StepKind::arrive || st.bar.barrier == name))
      return &st;
    if (const plan::Step* b = find_step(st.body, kind, name)) return b;
  }
  return nullptr;
}

const plan::RolePlan& role(const plan::Plan& p, const std::string& name) {
  for (const auto& r : p.roles)
    if (r.name == name) return r;
  FAIL("no role " << name);
  return p.roles.front();
}

std::string fires(const nlohmann::json& d, const std::string& rule) {
  Diagnostics diags;
  rules::parse_and_check(d.dump(), diags);
  for (const auto& x : diags.list())
    if (x.rule == rule) return x.pointer + ": " + x.message;
  return "";
}

}  // namespace

TEST_SUITE("plan") {
TEST_CASE("a cluster along N multicasts A: each rank issues its part of the boxes, releases go to every CTA") {
  const support::Planned p = support::plan_of(support::checked_spec(spec_doc("gemm_sm90_f16_nn_128x128x64_multicast_a_x4").dump()));
  CHECK(p.grid.cluster_m == 1);
  CHECK(p.grid.cluster_n == 4);
  CHECK(p.cluster == std::array<int, 3>{4, 1, 1});
  CHECK(p.launch.x == 32);  // 32 tile columns, whole clusters of 4
  CHECK(p.launch.y == 32);
  const plan::Step* a = find_step(role(p, "producer").steps, plan::StepKind::load, "A");
  const plan::Step* b = find_step(role(p, "producer").steps, plan::StepKind::load, "B");
  REQUIRE(a);
  REQUIRE(b);
  // A is M-major: 64 K rows by two 128-byte box columns of M; two columns do not split four ways,
  // so the rows do: boxes of 16 rows, rank r issuing rows [16r, 16r + 16) of each column.
  CHECK(a->load.multicast == 4);
  CHECK(a->load.map.box_outer == 16);
  REQUIRE(a->load.boxes.size() == 8);
  for (size_t i = 0; i < 8; ++i) {
    CHECK(a->load.boxes[i].part == static_cast<int>(i % 4));
    CHECK(a->load.boxes[i].c1 == static_cast<int64_t>(16 * (i % 4)));
  }
  CHECK(b->load.multicast == 0);
  for (const auto& bx : b->load.boxes) CHECK(bx.part == 0);
  // The stage's bytes: all of A (every rank's part lands here) and B.
  const plan::Step* tx = find_step(role(p, "producer").steps, plan::StepKind::expect_tx, "");
  REQUIRE(tx);
  CHECK(tx->bar.tx_bytes == 128 * 64 * 2 * 2);
  // Each consumer warpgroup releases a stage in all 4 CTAs: 4 x 2 arrivals complete a phase.
  const plan::Step* rel = find_step(role(p, "consumer").steps, plan::StepKind::arrive, "empty");
  REQUIRE(rel);
  CHECK(rel->bar.per_warpgroup);
  CHECK(rel->bar.cluster_ctas == 4);
  for (const auto& bar : p.barriers)
    if (bar.name == "empty") CHECK(bar.count == 8);
  const std::string ptx = emit::ptx(p);
  CHECK(count(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster") == 8);
  CHECK(count(ptx, "mov.u16 %rs") == 1);
  CHECK(ptx.find("mov.u16 %rs64, 15;") != std::string::npos);  // ctaMask: the cluster's 4 CTAs
  // Lane r of each warpgroup's first warp arrives on rank r's barrier: one arrive instruction.
  CHECK(count(ptx, "mbarrier.arrive.release.cta.shared::cluster.b64") == 1);
  CHECK(count(ptx, "setp.ge.or.u32 %p9, %r2, 4, %p9;") == 1);  // lanes 0-3 of the first warp only
  CHECK(count(ptx, "mov.u32 %r4, %cluster_ctarank;") == 1);
  CHECK(count(ptx, "%clusterid.x") == 1);
  CHECK(count(ptx, "barrier.cluster.arrive.release;") == 1);  // the CTAs leave together
  CHECK(count(ptx, "barrier.cluster.arrive.release.aligned;") == 1);  // barriers initialised cluster-wide
}

TEST_CASE("a persistent cluster along M multicasts B; a producer warpgroup lowers its registers, the consumers raise theirs") {
  const std::string stem = "gemm_sm90_bf16_128x256x64_multicast_b_persistent";
  const support::Planned p = support::plan_of(support::checked_spec(spec_doc(stem).dump()));
  CHECK(p.grid.cluster_m == 2);
  CHECK(p.grid.cluster_n == 1);
  CHECK(p.cluster == std::array<int, 3>{2, 1, 1});  // the persistent grid is one row: clusters along x
  CHECK(p.launch.x == 16 * 32 * 2 / 2);            // blocks of 2 x 1 tiles of 4096 x 4096, 2 CTAs each
  CHECK(p.threads == 384);
  CHECK(p.max_registers == 168);
  CHECK(role(p, "producer").warps == 4);
  CHECK(role(p, "producer").max_registers == 40);
  CHECK(role(p, "consumer").max_registers == 232);
  const plan::Step* b = find_step(role(p, "producer").steps, plan::StepKind::load, "B");
  REQUIRE(b);
  // K-major B: one box column of 256 rows splits by rows into two boxes of 128.
  CHECK(b->load.multicast == 2);
  CHECK(b->load.map.box_outer == 128);
  REQUIRE(b->load.boxes.size() == 2);
  CHECK(b->load.boxes[0].part == 0);
  CHECK(b->load.boxes[1].part == 1);
  CHECK(b->load.boxes[1].smem - b->load.boxes[0].smem == 128 * 128);
  const std::string ptx = emit::ptx(p);
  // The producer's four warps set its budget before three of them leave.
  const size_t dec = ptx.find("setmaxnreg.dec.sync.aligned.u32 40;");
  const size_t skip = ptx.find("setp.ne.u32", dec);
  REQUIRE(dec != std::string::npos);
  CHECK(ptx.substr(skip, ptx.find('\n', skip) - skip).find(", 256;") != std::string::npos);  // tid != 32 x warp 8
  CHECK(count(ptx, "setmaxnreg.inc.sync.aligned.u32 232;") == 1);
  CHECK(count(ptx, "mov.u32 %r144, %clusterid.x;") == 1);
  const auto manifest = nlohmann::json::parse(plan::manifest(p));
  CHECK(manifest["cluster_tiles"] == nlohmann::json{{"m", 2}, {"n", 1}});
  CHECK(manifest["cluster"] == nlohmann::json{2, 1, 1});
}
}

TEST_SUITE("rules") {
TEST_CASE("CLUSTER-MULTICAST, REGISTERS-BUDGET, WGMMA-REGISTERS with budgets: each at its pointer") {
  auto doc = spec_doc("gemm_sm90_bf16_128x256x64_multicast_b_persistent");
  CHECK(fires(doc, "CLUSTER-MULTICAST").empty());
  CHECK(fires(doc, "REGISTERS-BUDGET").empty());
  doc["gemm"]["cluster"] = {1, 3, 1};  // 256 rows of B, one box column: no three equal parts
  CHECK(fires(doc, "CLUSTER-MULTICAST") ==
        "/gemm/tile/n: the 3 CTAs of the cluster share B's tile, but its 1 box column(s) of 256 rows do not split into 3 equal "
        "parts of whole TMA boxes (rows in multiples of 1)");
  doc["gemm"]["cluster"] = {2, 2, 1};
  CHECK(fires(doc, "CLUSTER-MULTICAST").find("/gemm/cluster: a cluster of 2 x 2 x 1 CTAs") == 0);
  doc["gemm"]["cluster"] = {1, 2, 1};
  doc["gemm"]["registers"]["producer"] = 44;  // parsed (24 .. 256), refused by the rule
  CHECK(fires(doc, "REGISTERS-BUDGET") ==
        "/gemm/registers/producer: producer budget 44 is not a multiple of 8 (setmaxnreg takes 24 to 256 in steps of 8)");
  doc["gemm"]["registers"] = {{"producer", 176}, {"consumer", 168}};
  CHECK(fires(doc, "REGISTERS-BUDGET") ==
        "/gemm/registers: register budgets that do not add up: the producer's budget 176 is above the launch's 168 per thread "
        "(384 threads): setmaxnreg.dec only lowers it");
  doc["gemm"]["registers"] = {{"producer", 40}, {"consumer", 160}};
  CHECK(fires(doc, "REGISTERS-BUDGET") ==
        "/gemm/registers: register budgets that do not add up: the consumers' budget 160 is below the launch's 168 per thread "
        "(384 threads): setmaxnreg.inc only raises it");
  // 256 x 256: four consumer warpgroups of 128 accumulators each; 168 registers is too few.
  doc["gemm"]["tile"]["m"] = 256;
  doc["gemm"]["stages"] = 1;
  doc["gemm"]["epilogue"] = "direct";
  doc["gemm"]["registers"] = {{"producer", 24}, {"consumer", 96}};
  CHECK(fires(doc, "WGMMA-REGISTERS").find("/gemm/registers/consumer: each consumer thread needs 128 accumulator registers (+~24), but its budget is 96") == 0);
  doc["target"] = "sm_100a";
  doc["gemm"]["registers"] = {{"producer", 40}, {"consumer", 232}};
  CHECK(fires(doc, "REGISTERS-TARGET").find("/gemm/registers: ") == 0);
}
}
