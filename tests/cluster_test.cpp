// sm_90a clusters that multicast the operand their CTAs share, register budgets (setmaxnreg) for a
// producer warpgroup and the consumers, and ping-pong consumers, as planned and emitted.
#include <doctest/doctest.h>

#include <map>

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
    if (r.ir().name == name) return r;
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
  CHECK(p.ir().grid.cluster_m == 1);
  CHECK(p.ir().grid.cluster_n == 4);
  CHECK(p.ir().cluster == std::array<int, 3>{4, 1, 1});
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
  CHECK(ptx.find("mov.u16 %rs0, 15;") != std::string::npos);  // ctaMask: the cluster's 4 CTAs, set once in the prologue
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
  CHECK(p.ir().grid.cluster_m == 2);
  CHECK(p.ir().grid.cluster_n == 1);
  CHECK(p.ir().cluster == std::array<int, 3>{2, 1, 1});  // the persistent grid is one row: clusters along x
  CHECK(p.launch.x == 16 * 32 * 2 / 2);            // blocks of 2 x 1 tiles of 4096 x 4096, 2 CTAs each
  CHECK(p.ir().threads == 384);
  CHECK(p.ir().max_registers == 168);
  CHECK(role(p, "producer").ir().warps == 4);
  CHECK(role(p, "producer").ir().max_registers == 40);
  CHECK(role(p, "consumer").ir().max_registers == 232);
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
TEST_CASE("ping-pong consumers: two warpgroups take alternate tiles, each its whole tile, and hand the main loop over") {
  const support::Planned p = support::plan_of(support::checked_spec(spec_doc("gemm_sm90_bf16_128x128x64_pingpong").dump()));
  REQUIRE(p.roles.size() == 3);
  const plan::RolePlan& c0 = role(p, "consumer0");
  const plan::RolePlan& c1 = role(p, "consumer1");
  CHECK(c0.ir().first_warp == 0);
  CHECK(c0.ir().warps == 4);
  CHECK(c1.ir().first_warp == 4);
  CHECK(c1.ir().warps == 4);
  CHECK((c0.ir().turn == 0 && c1.ir().turn == 1 && c0.ir().turns == 2 && c1.ir().turns == 2));
  CHECK(role(p, "producer").ir().first_warp == 8);
  CHECK(role(p, "producer").ir().turns == 1);
  CHECK(p.ir().threads == 384);  // two consumer warpgroups and the producer warpgroup of the budgets
  // Each stage is read by one warpgroup: 128 arrivals release it. The hand-off barriers.
  std::map<std::string, int> arrivals;
  for (const auto& b : p.barriers) arrivals[b.name] = b.count;
  CHECK(arrivals["empty"] == 128);
  CHECK(arrivals["mainloop0"] == 128);
  CHECK(arrivals["mainloop1"] == 128);
  // Consumer w: wait for mainloop<w> (its i-th tile, phase i; consumer 0 one phase back), the K
  // loop, hand over to the other, drain, release the last stage, store.
  for (const auto* r : {&c0, &c1}) {
    const int w = r == &c0 ? 0 : 1;
    REQUIRE(r->steps.size() == 6);
    CHECK(r->steps[0].kind == plan::StepKind::wait);
    CHECK(r->steps[0].bar.barrier == "mainloop" + std::to_string(w));
    CHECK(r->steps[0].bar.phase.tile);
    CHECK(r->steps[0].bar.phase.flip == (w == 0));
    CHECK(r->steps[1].kind == plan::StepKind::loop);
    CHECK(r->steps[2].kind == plan::StepKind::arrive);
    CHECK(r->steps[2].bar.barrier == "mainloop" + std::to_string(1 - w));
    CHECK(r->steps[3].kind == plan::StepKind::mma_wait);
    CHECK(r->steps[4].bar.barrier == "empty");
    const plan::StoreStep& st = r->steps[5].store;
    CHECK(st.tma);
    CHECK(st.stage == "d_stage" + std::to_string(w));
    CHECK(st.src.rows == 128);       // the warpgroup's rows: the whole tile
    CHECK(st.src.regs == 128);       // 2 M groups x 64 f32 registers
    CHECK(st.warpgroups == 1);
    CHECK(st.warpgroup_bytes == 128 * 128);
    CHECK(st.map.box_outer == 128);  // one box of 128 rows per 64 columns
    CHECK(st.boxes == 2);
  }
  // The MMA: 2 M groups x 4 K steps of m64n128k16, M group 1 reading A 64 rows (8 KB) further and
  // accumulating into registers 64 on.
  const plan::Step* mma = find_step(c1.steps, plan::StepKind::mma, "");
  REQUIRE(mma);
  CHECK(mma->mma.warpgroup_rows == 128);
  REQUIRE(mma->mma.instrs.size() == 8);
  for (const auto& in : mma->mma.instrs) {
    CHECK(in.m == 64);
    CHECK(in.n == 128);
    CHECK(in.acc_reg == 64 * in.mi);
    CHECK(in.a_desc.start_address == static_cast<uint32_t>(8192 * in.mi + 32 * in.ki));  // tile "a" at 0
  }
  // The staging tiles have memory of their own (the producer refills the ring meanwhile).
  for (const auto& t : p.smem)
    if (t.name.rfind("d_stage", 0) == 0) CHECK(t.overlay.empty());
  const std::string ptx = emit::ptx(p);
  // Consumer 1 starts one tile on, every second tile, its ring one tile of K blocks on; each
  // consumer's named barrier is its own warpgroup's (2 + 0, 2 + 1).
  CHECK(count(ptx, "// this role's first tile: turn 1") == 1);
  CHECK(count(ptx, "// one tile of the CTA's in 2") == 2);
  CHECK(count(ptx, "// Turn 1 of 2: the rings skip the K blocks of the tiles before this role's first.") == 1);
  CHECK(count(ptx, "// wraps of the ring of 4") == 3);  // consumer 1's start, and after each consumer's tile
  CHECK(count(ptx, " bar.sync 2, 128;") == 2);
  CHECK(count(ptx, " bar.sync 3, 128;") == 2);
  CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") == 16);
}

TEST_CASE("epilogue auto: the TMA store where D's rows are 16-byte multiples apart at run time, else the direct store") {
  const support::Planned p = support::plan_of(support::checked_spec(spec_doc("gemm_sm90_bf16_128x256x64_auto_epilogue").dump()));
  const plan::Step* st = find_step(role(p, "consumer").steps, plan::StepKind::store, "");
  REQUIRE(st);
  CHECK(st->store.tma);
  CHECK(st->store.clip);
  CHECK(st->store.map.optional);
  const auto manifest = nlohmann::json::parse(plan::manifest(p));
  int optional = 0;
  for (const auto& m : manifest["tensor_maps"])
    if (m.value("optional", false)) {
      ++optional;
      CHECK(m["tensor"] == "D");
    }
  CHECK(optional == 1);
  const std::string ptx = emit::ptx(p);
  // ld x 2 bytes (D's leading dimension is n, a parameter), its low four bits, one branch each way.
  CHECK(count(ptx, "// bytes from one row of D to the next (low bits exact)") == 1);
  CHECK(count(ptx, "// rows no tensor map can stride: the direct store") == 1);
  const size_t tma = ptx.find("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group");
  const size_t direct = ptx.find("_direct:");
  REQUIRE(tma != std::string::npos);
  REQUIRE(direct != std::string::npos);
  CHECK(tma < direct);  // the TMA path first, then the direct one with its clipped stores
  CHECK(count(ptx.substr(direct), "st.global.b32") == 64);  // a thread's 128 accumulators: 64 pairs of columns
  // The same kernel with "tma" has neither the test nor the direct path.
  auto doc = spec_doc("gemm_sm90_bf16_128x256x64_auto_epilogue");
  doc["gemm"]["epilogue"] = "tma";
  const std::string plain = emit::ptx(support::plan_of(support::checked_spec(doc.dump())));
  CHECK(count(plain, "_direct:") == 0);
  CHECK(count(plain, "st.global") == 0);
}
}

TEST_SUITE("rules") {
TEST_CASE("CLUSTER-MULTICAST, REGISTERS-BUDGET, WGMMA-REGISTERS with budgets: each at its pointer") {
  auto doc = spec_doc("gemm_sm90_bf16_128x256x64_multicast_b_persistent");
  CHECK(fires(doc, "CLUSTER-MULTICAST").empty());
  CHECK(fires(doc, "REGISTERS-BUDGET").empty());
  doc["gemm"]["cluster"] = {1, 3, 1};  // 256 rows of B, one box column: no three equal parts
  CHECK(fires(doc, "CLUSTER-MULTICAST") ==
        "/gemm/tile/n: the 3 CTAs of the cluster along M share B's tile, but its 1 box column(s) of 256 rows do not split into 3 equal "
        "parts of whole TMA boxes (rows in multiples of 1)");
  doc["gemm"]["cluster"] = {2, 2, 1};  // A along the block's rows, B along its columns
  CHECK(fires(doc, "CLUSTER-MULTICAST").empty());
  doc["gemm"]["cluster"] = {2, 1, 2};
  CHECK(fires(doc, "CLUSTER-MULTICAST").empty());  // persistent: SCHEDULE-PERSISTENT speaks of the z
  CHECK(fires(doc, "SCHEDULE-PERSISTENT").find("/gemm/cluster/2: ") == 0);
  doc["gemm"]["schedule"] = "data_parallel";
  CHECK(fires(doc, "CLUSTER-MULTICAST").find("/gemm/cluster/2: a cluster of 2 x 1 x 2 CTAs") == 0);
  doc["gemm"]["schedule"] = "persistent";
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

TEST_CASE("EPILOGUE-AUTO: the run-time choice of epilogue is the wgmma template's") {
  auto doc = spec_doc("gemm_sm90_bf16_128x256x64_auto_epilogue");
  CHECK(fires(doc, "EPILOGUE-AUTO").empty());
  doc["target"] = "sm_100a";
  doc["gemm"].erase("registers");
  CHECK(fires(doc, "EPILOGUE-AUTO").find("/gemm/epilogue: \"epilogue\": \"auto\"") == 0);
  doc["gemm"]["tile"]["n"] = 96;  // EPILOGUE-TMA's boxes are checked for "auto" too (sm_90a)
  doc["target"] = "sm_90a";
  CHECK(fires(doc, "EPILOGUE-TMA").find("/gemm/tile/n: tile.n = 96") == 0);
}

TEST_CASE("CONSUMERS-PINGPONG, and the budgets of two ping-pong warpgroups holding whole tiles") {
  auto doc = spec_doc("gemm_sm90_bf16_128x128x64_pingpong");
  CHECK(fires(doc, "CONSUMERS-PINGPONG").empty());
  CHECK(fires(doc, "WGMMA-REGISTERS").empty());
  auto d = doc;
  d["gemm"]["schedule"] = "data_parallel";
  CHECK(fires(d, "CONSUMERS-PINGPONG").find("/gemm/consumers: ping-pong consumers are not possible here: ping-pong consumers take alternate "
                                            "tiles of a persistent CTA, but the schedule is data_parallel") == 0);
  d = doc;
  d["gemm"]["a_source"] = "registers";
  CHECK(fires(d, "CONSUMERS-PINGPONG").find("/gemm/a_source: ") == 0);
  d = doc;
  d["target"] = "sm_100a";
  d["gemm"].erase("registers");
  CHECK(fires(d, "CONSUMERS-PINGPONG").find("/gemm/consumers: ping-pong consumers are not possible here: sm_100a runs the tcgen05 template") == 0);
  // A ping-pong consumer holds its whole tile: 128 x 256 is 256 accumulators a thread.
  d = doc;
  d["gemm"]["tile"]["n"] = 256;
  d["gemm"]["stages"] = 2;
  CHECK(fires(d, "WGMMA-REGISTERS").find("/gemm/registers/consumer: each consumer thread needs 256 accumulator registers (+~24), but its budget is 232") == 0);
  // Two consumer warpgroups whatever tile.m: 64 x 256 with consumers of 240 overdraws the file
  // (128 x 40 + 256 x 240 = 66560).
  d = doc;
  d["gemm"]["tile"] = {{"m", 64}, {"n", 256}, {"k", 64}};
  d["gemm"]["registers"] = {{"producer", 40}, {"consumer", 240}};
  CHECK(fires(d, "REGISTERS-BUDGET") ==
        "/gemm/registers: register budgets that do not add up: 128 producer threads x 40 + 256 consumer threads x 240 = 66560 registers, "
        "more than the multiprocessor's 65536");
  // One cooperative warpgroup of 64 rows: 256 threads with the producer, 255 registers each at launch.
  d["gemm"]["consumers"] = "cooperative";
  CHECK(fires(d, "REGISTERS-BUDGET") ==
        "/gemm/registers: register budgets that do not add up: the consumers' budget 240 is below the launch's 255 per thread "
        "(256 threads): setmaxnreg.inc only raises it");
  // Both staging tiles count against shared memory.
  d = doc;
  d["gemm"]["d"]["dtype"] = "f32";
  CHECK(fires(d, "SMEM-BUDGET").find("/gemm/stages: 4 stages of 32768 bytes (a 16384 + b 16384), the TMA epilogue's staging tiles (one per "
                                     "ping-pong consumer) of 131072 bytes,") == 0);
}
}

TEST_SUITE("plan") {
TEST_CASE("tcgen05 clusters of pairs multicast A along the block's rows and B along its columns; commits release both") {
  // Persistent, 2 x 2 pairs of 256 x 256 tiles: ranks r = p + 2 (col + 2 row) for pair rank p.
  const support::Planned p = support::plan_of(support::checked_spec(spec_doc("gemm_bf16_cta2_cluster_4x2_persistent_tma").dump()));
  CHECK(p.ir().grid.cluster_m == 2);
  CHECK(p.ir().grid.cluster_n == 2);
  CHECK(p.ir().cluster == std::array<int, 3>{8, 1, 1});  // the persistent grid is one row of clusters
  CHECK(p.launch.x == 8 * 8 * 8);                    // blocks of 2 x 2 tiles of 4096 x 4096, 8 CTAs each
  const plan::Step* a = find_step(role(p, "producer").steps, plan::StepKind::load, "A");
  const plan::Step* b = find_step(role(p, "producer").steps, plan::StepKind::load, "B");
  REQUIRE(a);
  REQUIRE(b);
  // Each CTA's half (128 rows of one 128-byte box column) splits by rows between the two pairs.
  CHECK(a->load.multicast == 2);
  CHECK_FALSE(a->load.multicast_along_m);
  CHECK(b->load.multicast == 2);
  CHECK(b->load.multicast_along_m);
  CHECK(a->load.to_leader);
  CHECK(a->load.map.box_outer == 64);
  REQUIRE(a->load.boxes.size() == 2);
  CHECK(a->load.boxes[0].part == 0);
  CHECK(a->load.boxes[1].part == 1);
  CHECK(a->load.boxes[1].c1 == 64);
  // The leader still expects both CTAs' whole stage: every part lands in each sharer.
  const plan::Step* tx = find_step(role(p, "producer").steps, plan::StepKind::expect_tx, "");
  REQUIRE(tx);
  CHECK(tx->bar.tx_bytes == 2 * (128 + 128) * 64 * 2);
  // A stage of a pair is written by the producers of its row's and column's pairs: one release
  // from each of those 3 pairs' issuers.
  for (const auto& bar : p.barriers)
    if (bar.name == "empty") CHECK(bar.count == 3);
  const plan::Step* rel = nullptr;
  for (const auto& st : role(p, "mma").steps)
    for (const auto& x : st.body)
      if (x.kind == plan::StepKind::commit && x.bar.barrier == "empty") rel = &x;
  REQUIRE(rel);
  CHECK(rel->bar.release_row);
  CHECK(rel->bar.release_column);
  const std::string ptx = emit::ptx(p);
  CHECK(count(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2") == 4);
  // The masks (§9.7.9.27.1.2: bit i for rank i): the row of this rank, 0b101 from the row's first
  // CTA of this rank; the column, 0b10001; both ranks of the row's pairs 0b1111, of the column's 0b110011.
  CHECK(count(ptx, "shl.b32 %r10, 5, %r9;") == 1);
  CHECK(count(ptx, "shl.b32 %r12, 15, %r11;") == 1);
  CHECK(count(ptx, "shl.b32 %r15, 17, %r14;") == 1);
  CHECK(count(ptx, "shl.b32 %r17, 51, %r16;") == 1);
  CHECK(count(ptx, "or.b32 %r18, %r12, %r17;") == 1);
  CHECK(count(ptx, "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r384], %rs2;") == 1);
  const auto manifest = nlohmann::json::parse(plan::manifest(p));
  CHECK(manifest["cluster_tiles"] == nlohmann::json{{"m", 2}, {"n", 2}});
  CHECK(manifest["cluster"] == nlohmann::json{8, 1, 1});
  CHECK(manifest["grid_rule"].get<std::string>().find("* 8, y = z = 1: each cluster of 8 CTAs") != std::string::npos);
  CHECK(manifest["grid_rule"].get<std::string>().find("q = r / 2") != std::string::npos);
}

TEST_CASE("a data-parallel tcgen05 cluster of 2 x 2 CTAs multicasts both operands; CLUSTER-MULTICAST on tcgen05") {
  auto doc = spec_doc("gemm_bf16_cluster_2x2");
  const support::Planned p = support::plan_of(support::checked_spec(doc.dump()));
  CHECK(p.ir().grid.cluster_m == 2);
  CHECK(p.ir().grid.cluster_n == 2);
  CHECK(p.ir().cluster == std::array<int, 3>{2, 2, 1});
  for (const auto& bar : p.barriers)
    if (bar.name == "empty") CHECK(bar.count == 3);
  const std::string ptx = emit::ptx(p);
  CHECK(count(ptx, "%clusterid.x") == 1);
  CHECK(count(ptx, ".multicast::cluster [") == 4);  // A's 2 boxes and B's 2, each by its part's CTA
  CHECK(count(ptx, "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64") == 1);
  // 128 rows of A do not split three ways.
  doc["gemm"]["cluster"] = {3, 1, 1};
  CHECK(fires(doc, "CLUSTER-MULTICAST") ==
        "/gemm/tile/m: the 3 CTAs of the cluster along N share A's tile, but its 1 box column(s) of 128 rows do not split into 3 equal "
        "parts of whole TMA boxes (rows in multiples of 1)");
  doc["gemm"]["cluster"] = {2, 2, 1};
  CHECK(fires(doc, "CLUSTER-MULTICAST").empty());  // tcgen05 shares A and B at once
  doc["gemm"]["tile"] = {{"m", 64}, {"n", 128}, {"k", 64}};
  doc["gemm"]["a_source"] = "tmem";
  CHECK(fires(doc, "CLUSTER-MULTICAST").find("/gemm/cluster/0: the cluster's 2 CTAs along N would share A's tile, but A in tensor memory at M = 64") == 0);
}
}

TEST_SUITE("plan") {
TEST_CASE("an sm_90a cluster of 2 x 2 multicasts A along rows and B along columns; warpgroups release in their row and column") {
  const support::Planned p = support::plan_of(support::checked_spec(spec_doc("gemm_sm90_bf16_128x256x64_cluster_2x2_persistent").dump()));
  CHECK(p.ir().grid.cluster_m == 2);
  CHECK(p.ir().grid.cluster_n == 2);
  CHECK(p.ir().cluster == std::array<int, 3>{4, 1, 1});
  const plan::Step* a = find_step(role(p, "producer").steps, plan::StepKind::load, "A");
  const plan::Step* b = find_step(role(p, "producer").steps, plan::StepKind::load, "B");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->load.multicast == 2);
  CHECK_FALSE(a->load.multicast_along_m);
  CHECK(b->load.multicast == 2);
  CHECK(b->load.multicast_along_m);
  CHECK_FALSE(plan::multicast_whole_cluster(p.ir().grid, p.ir().cta_group, a->load));
  // Each of the 2 consumer warpgroups of the 3 CTAs of a row and column releases a stage once.
  for (const auto& bar : p.barriers)
    if (bar.name == "empty") CHECK(bar.count == 6);
  const plan::Step* rel = find_step(role(p, "consumer").steps, plan::StepKind::arrive, "empty");
  REQUIRE(rel);
  CHECK(rel->bar.per_warpgroup);
  CHECK(rel->bar.release_row);
  CHECK(rel->bar.release_column);
  const std::string ptx = emit::ptx(p);
  // Masks from %cluster_ctarank r = col + 2 row: the row 0b11 << 2 row, the column 0b101 << col.
  CHECK(count(ptx, "shl.b32 %r7, 3, %r6;") == 1);
  CHECK(count(ptx, "shl.b32 %r10, 5, %r9;") == 1);
  CHECK(count(ptx, "or.b32 %r11, %r7, %r10;") == 1);
  // Lane r of a warpgroup's first warp arrives on rank r's barrier where bit r of the union is set
  // (the loop's release and the tile's last).
  CHECK(count(ptx, "shr.b32 %r196, %r11, %r2;") == 1);
  CHECK(count(ptx, "// rank = lane is in this CTA's block row or column") == 2);
  CHECK(count(ptx, "mbarrier.arrive.release.cta.shared::cluster.b64") == 2);
  CHECK(count(ptx, "cvt.u16.u32") == 2);  // the loads' masks; the release uses the 32-bit union
}
}
