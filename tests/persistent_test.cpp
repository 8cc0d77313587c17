// The persistent schedule on tcgen05 targets, as planned: every role walks the CTA's tiles, the
// accumulator has two buffers in tensor memory when they fit (one otherwise, said under
// `chosen`), the MMA issuer and the epilogue hand the buffers over through acc_full/acc_empty
// rings whose phases follow the tiles, and the cluster is the CTA or its pair (SCHEDULE-PERSISTENT).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace ptxgen;

namespace {

nlohmann::json spec_doc(const std::string& stem) {
  return nlohmann::json::parse(support::slurp(support::source_root() + "/specs/" + stem + ".json"));
}

const plan::RolePlan& role(const plan::Plan& p, const std::string& name) {
  for (const auto& r : p.roles)
    if (r.ir().name == name) return r;
  FAIL("no role " << name);
  return p.roles.front();
}

const plan::BarrierPlacement* barrier(const plan::Plan& p, const std::string& name) {
  for (const auto& b : p.barriers)
    if (b.name == name) return &b;
  return nullptr;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_SUITE("plan") {
TEST_CASE("persistent tcgen05: two accumulator buffers, acc_full/acc_empty over the tiles, every role walking them") {
  auto doc = spec_doc("gemm_bf16_tn_128x256x64");
  const plan::Plan dp = support::plan_of(support::checked_spec(doc.dump()));
  doc["gemm"]["schedule"] = "persistent";
  const plan::Plan p = support::plan_of(support::checked_spec(doc.dump()));
  CHECK(p.ir().grid.persistent);
  CHECK(p.launch.x == 32 * 16);  // at most one CTA per 128 x 256 tile of 4096 x 4096
  for (const auto& r : p.roles) CHECK(r.ir().persistent);
  // 2 x 256 accumulator columns: the whole of tensor memory.
  REQUIRE(p.allocs.size() == 1);
  CHECK(p.allocs[0].columns == 512);
  REQUIRE(p.ir().chosen.size() == 2);  // the cluster (left out), then the accumulator's buffers
  CHECK(p.ir().chosen[0] == "cluster [1, 1, 1]: the CTA alone");
  CHECK(p.ir().chosen[1].find("accumulator: two buffers of 256 tensor-memory columns") == 0);
  REQUIRE(barrier(p, "acc_full"));
  REQUIRE(barrier(p, "acc_empty"));
  CHECK(!barrier(p, "acc"));
  CHECK(barrier(p, "acc_full")->stages == 2);
  CHECK(barrier(p, "acc_full")->count == 1);       // the issuer's commit
  CHECK(barrier(p, "acc_empty")->stages == 2);
  CHECK(barrier(p, "acc_empty")->count == 128);    // every epilogue thread
  // The issuer: wait for the tile's buffer (the first pass finds both empty), the K loop of MMAs
  // into it, commit it to acc_full.
  const plan::RolePlan& mma = role(p, "mma");
  REQUIRE(mma.steps.size() == 3);
  CHECK(mma.steps[0].kind == plan::StepKind::wait);
  CHECK(mma.steps[0].bar.barrier == "acc_empty");
  CHECK(mma.steps[0].bar.phase.tile);
  CHECK(mma.steps[0].bar.phase.flip);
  CHECK(mma.steps[1].kind == plan::StepKind::loop);
  int mmas = 0;
  for (const auto& st : mma.steps[1].body)
    if (st.kind == plan::StepKind::mma) {
      ++mmas;
      CHECK(st.tmem_ring.stages == 2);
      CHECK(st.tmem_ring.stride == 256);
      for (const auto& in : st.mma.instrs) CHECK((in.d_taddr & 0xFFFF) < 256);  // stage 0's columns
    }
  CHECK(mmas == 1);
  CHECK(mma.steps[2].kind == plan::StepKind::commit);
  CHECK(mma.steps[2].bar.barrier == "acc_full");
  CHECK(mma.steps[2].bar.phase.tile);
  CHECK(!mma.steps[2].bar.phase.flip);
  // The epilogue: wait for acc_full, every tcgen05.ld on the ring, the last loads completed
  // before every thread releases the buffer.
  const plan::RolePlan& epi = role(p, "epilogue");
  CHECK(epi.steps.front().kind == plan::StepKind::wait);
  CHECK(epi.steps.front().bar.barrier == "acc_full");
  CHECK(epi.steps.front().bar.phase.tile);
  int lds = 0;
  for (const auto& st : epi.steps)
    if (st.kind == plan::StepKind::tmem_ld) {
      ++lds;
      CHECK(st.tmem_ring.stages == 2);
      CHECK(st.tmem_ring.stride == 256);
    }
  CHECK(lds == 8);  // 256 columns in loads of 32
  const plan::Step& last = epi.steps.back();
  CHECK(last.kind == plan::StepKind::arrive);
  CHECK(last.bar.barrier == "acc_empty");
  CHECK(last.bar.phase.tile);
  CHECK(!last.bar.to_leader);
  // The producer's ring carries on; it knows nothing of the accumulator.
  const plan::RolePlan& prod = role(p, "producer");
  REQUIRE(prod.steps.size() == 1);
  for (const auto& st : prod.steps[0].body) CHECK(!st.bar.phase.tile);
  // The PTX: a tile loop per role, the tile ring set up once in the two roles that follow it.
  const std::string ptx = emit::ptx(p);
  CHECK(count(ptx, "tile loop: the tiles of this CTA") == 3);
  CHECK(count(ptx, "stage of a ring of 2 over this CTA's tiles") == 2);
  CHECK(count(ptx, "this tile's buffer: its stage x 256 columns") == 9);  // the MMA step and the 8 loads
  CHECK(count(ptx, "mbarrier.arrive.shared::cta.b64") == 1);
  // Data-parallel: one "acc" barrier, no tile loop, no ring over the tiles.
  CHECK(barrier(dp, "acc"));
  CHECK(!barrier(dp, "acc_full"));
  CHECK(dp.allocs[0].columns == 256);
  const std::string dptx = emit::ptx(dp);
  CHECK(count(dptx, "tile loop") == 0);
  CHECK(count(dptx, "over this CTA's tiles") == 0);
  for (const auto* st : support::all_steps(dp)) {
    CHECK(st->tmem_ring.stages == 1);
    CHECK(!st->bar.phase.tile);
  }
}

TEST_CASE("persistent tcgen05: one buffer when two do not fit, said under chosen") {
  // 2 x 256 accumulator columns and A's 32 exceed 512: one buffer, no ring over tensor memory.
  auto doc = spec_doc("gemm_bf16_tn_128x256x64");
  doc["gemm"]["schedule"] = "persistent";
  doc["gemm"]["a_source"] = "tmem";
  doc["name"] = "gemm_bf16_a_tmem_persistent_one_buffer";  // the golden's spec
  const plan::Plan p = support::plan_of(support::checked_spec(doc.dump()));
  REQUIRE(p.ir().chosen.size() == 2);
  CHECK(p.ir().chosen[1] ==
        "accumulator: one buffer of 256 tensor-memory columns (two and A's 32 would need 544 of 512): the next tile's MMAs wait "
        "until the epilogue has read this one");
  CHECK(p.allocs[0].columns == 512);  // 256 + 32, rounded up to a power of two
  CHECK(barrier(p, "acc_full")->stages == 1);
  CHECK(barrier(p, "acc_empty")->stages == 1);
  for (const auto* st : support::all_steps(p)) CHECK(st->tmem_ring.stages == 1);
  CHECK(support::slurp(support::source_root() + "/golden/gemm_bf16_a_tmem_persistent_one_buffer.ptx") == emit::ptx(p));
  // A CTA pair: both CTAs' epilogue threads arrive on CTA 0's acc_empty, which expects 256.
  const plan::Plan pp =
      support::plan_of(support::checked_spec(support::slurp(support::source_root() + "/specs/gemm_bf16_cta2_m128_a_tmem_persistent.json")));
  CHECK(barrier(pp, "acc_empty")->count == 256);
  CHECK(role(pp, "epilogue").steps.back().bar.to_leader);
  CHECK(pp.launch.x == 2 * 32 * 32);  // a pair per 128 x 128 tile of 4096 x 4096
  const std::string ptx = emit::ptx(pp);
  CHECK(count(ptx, "mbarrier.arrive.release.cluster.shared::cluster.b64") == 1);
  CHECK(count(ptx, "this pair's first tile") == 3);
}
}

TEST_SUITE("rules") {
TEST_CASE("SCHEDULE-PERSISTENT: a persistent grid's clusters walk blocks of tiles in M and N, with no z") {
  auto doc = spec_doc("gemm_bf16_cta2_m128_a_tmem_persistent");
  auto fires = [](const nlohmann::json& d, const char* rule = "SCHEDULE-PERSISTENT") {
    Diagnostics diags;
    rules::parse_and_check(d.dump(), diags);
    for (const auto& x : diags.list())
      if (x.rule == rule) return x.pointer + ": " + x.message;
    return std::string();
  };
  CHECK(fires(doc).empty());  // a pair in a cluster of 2
  doc["gemm"]["cluster"] = {4, 1, 1};  // two pairs along N sharing A
  CHECK(fires(doc).empty());
  CHECK(fires(doc, "CLUSTER-MULTICAST").empty());
  doc["gemm"]["cluster"] = {2, 2, 1};  // two pairs along M sharing B
  CHECK(fires(doc).empty());
  doc["gemm"]["cluster"] = {2, 1, 2};
  CHECK(fires(doc) == "/gemm/cluster/2: a persistent grid is one row of clusters walking blocks of 1 x 1 tiles (x along N, y along M); "
                      "the cluster's z = 2 has no tiles to take");
  CHECK(fires(doc, "CLUSTER-MULTICAST").empty());  // one rule speaks of the z
  doc["gemm"]["schedule"] = "data_parallel";
  CHECK(fires(doc).empty());
  CHECK(fires(doc, "CLUSTER-MULTICAST").find("/gemm/cluster/2: a cluster of 2 x 1 x 2 CTAs: the cluster's CTAs cover a block of tiles") == 0);
}
}

TEST_SUITE("plan") {
TEST_CASE("TMA epilogue on tcgen05: a staging ring of 128-byte swizzled boxes, one TMA store per box, D's map in the manifest") {
  // Data-parallel, s32 D: 8 boxes of 32 columns x 128 rows, two stages over the operand ring.
  const plan::Plan dp =
      support::plan_of(support::checked_spec(support::slurp(support::source_root() + "/specs/gemm_s8_s32_tma_128x256x128.json")));
  const plan::SmemPlacement* stage = nullptr;
  for (const auto& t : dp.smem)
    if (t.name == "d_stage") stage = &t;
  REQUIRE(stage);
  CHECK(stage->stages == 2);
  CHECK(stage->overlay == "a");
  CHECK(stage->offset == 0);
  CHECK(stage->layout.mn == 128);
  CHECK(stage->layout.k == 32);
  CHECK(stage->layout.swizzle == isa::Swizzle::b128);
  CHECK(stage->stage_bytes == 16384);
  int boxes = 0;
  for (const auto& st : role(dp, "epilogue").steps) {
    if (st.kind != plan::StepKind::store) continue;
    CHECK(st.store.tma);
    CHECK(!st.store.src.wgmma);
    CHECK(st.store.box_cols == 32);
    CHECK(st.store.box_rows == 128);
    CHECK(st.store.pending == 1);
    CHECK(st.store.overlay);
    CHECK(st.store.stage_offset == 16384u * static_cast<uint32_t>(boxes % 2));  // box j in stage j % 2
    CHECK(st.store.col0.base == 32 * boxes);
    CHECK(st.store.col0.n_tile == 256);
    CHECK(st.store.row0.m_tile == 128);
    ++boxes;
  }
  CHECK(boxes == 8);
  CHECK(dp.tma_stores() == 8);
  const auto mf = nlohmann::json::parse(plan::manifest(dp));
  nlohmann::json dmap;
  for (const auto& m : mf.at("tensor_maps"))
    if (m.at("tensor") == "D") dmap = m;
  REQUIRE(!dmap.is_null());
  CHECK(dmap.at("param") == "tmap_d");
  CHECK(dmap.at("data_type") == "CU_TENSOR_MAP_DATA_TYPE_INT32");
  CHECK(dmap.at("global_dims") == nlohmann::json::array({4096, 4096}));
  CHECK(dmap.at("global_strides_bytes") == nlohmann::json::array({4096 * 4}));
  CHECK(dmap.at("box_dims") == nlohmann::json::array({32, 128}));
  CHECK(dmap.at("swizzle") == "CU_TENSOR_MAP_SWIZZLE_128B");
  const std::string ptx = emit::ptx(dp);
  CHECK(count(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 8);
  CHECK(count(ptx, "cp.async.bulk.commit_group;") == 8);
  CHECK(count(ptx, "cp.async.bulk.wait_group.read 1;") == 8);
  CHECK(count(ptx, "cp.async.bulk.wait_group.read 0;") == 1);  // before the CTA's shared memory goes
  CHECK(count(ptx, "bar.sync 1, 128;") == 16);                  // per box: the stage free, the box written
  CHECK(count(ptx, "fence.proxy.async.shared::cta;") == 16);    // per box: over the ring, and the writes
  CHECK(count(ptx, "st.shared.v4.b32") == 8 * 8);               // per box 8 chunks of a row, in one copy the 4 warps share
  // Persistent, bf16 D: the staging ring has its own memory (the producer is loading the next tile).
  const plan::Plan pp =
      support::plan_of(support::checked_spec(support::slurp(support::source_root() + "/specs/gemm_bf16_persistent_tma_128x256x64.json")));
  for (const auto& t : pp.smem)
    if (t.name == "d_stage") {
      CHECK(t.overlay.empty());
      CHECK(t.stages == 2);
      CHECK(t.offset == 4 * (16384 + 32768));  // after the rings of a and b
      CHECK(t.layout.k == 64);
    }
  CHECK(pp.smem_bytes <= static_cast<uint32_t>(isa::target_info(pp.ir().target).smem_per_block_max));
  CHECK(pp.tma_stores() == 4);
  CHECK(pp.ir().chosen.back() ==
        "epilogue: D by TMA in 4 boxes of 64 bf16 columns x 128 rows per tile, through a staging ring of 2 stages (an even number "
        "of boxes: box j waits for box j - 2's reads) of its own");
}

TEST_CASE("stages chosen beside a persistent TMA epilogue's staging ring fit shared memory") {
  auto doc = spec_doc("gemm_bf16_tn_128x256x64");
  doc["gemm"].erase("stages");
  doc["gemm"]["schedule"] = "persistent";
  doc["gemm"]["epilogue"] = "tma";
  for (const auto& tile : {std::array<int, 3>{128, 256, 64}, {128, 128, 64}, {64, 256, 64}, {128, 320, 64}, {256, 256, 64}}) {
    const int m = tile[0], n = tile[1];  // not a structured binding: clang 14 cannot capture one (CAPTURE)
    CAPTURE(m);
    CAPTURE(n);
    doc["gemm"]["tile"] = {{"m", m}, {"n", n}, {"k", tile[2]}};
    const plan::Plan p = support::plan_of(support::checked_spec(doc.dump()));  // no SMEM-BUDGET
    CHECK(p.smem_bytes <= static_cast<uint32_t>(isa::target_info(p.ir().target).smem_per_block_max));
  }
  doc["gemm"]["tile"] = {{"m", 128}, {"n", 256}, {"k", 64}};
  CHECK(support::plan_of(support::checked_spec(doc.dump())).ir().chosen.at(1) ==
        "stages 4: as many as shared memory holds, at most 4 beside the TMA epilogue's staging ring");
}
}

TEST_SUITE("rules") {
TEST_CASE("EPILOGUE-TMA: every run of columns tensor memory holds apart is whole boxes; SMEM-BUDGET counts the staging tile") {
  auto first = [](const nlohmann::json& d, const std::string& id) {
    Diagnostics diags;
    rules::parse_and_check(d.dump(), diags);
    for (const auto& x : diags.list())
      if (x.rule == id) return x.pointer + ": " + x.message;
    return std::string();
  };
  auto doc = spec_doc("gemm_bf16_tn_128x256x64");
  doc["gemm"]["epilogue"] = "tma";
  // A pair's N group of 64 is stored in halves of 32 bf16 columns: half a box.
  auto pair = doc;
  pair["gemm"]["cta_group"] = 2;
  pair["gemm"]["tile"] = {{"m", 256}, {"n", 64}, {"k", 64}};
  CHECK(first(pair, "EPILOGUE-TMA") ==
        "/gemm/tile/n: the TMA epilogue stores D in boxes of 64 bf16 columns, but each CTA of the pair holds an N group's columns in "
        "two halves, which leaves a run ending in a box of 32 columns; it would write into the next columns");
  pair["gemm"]["tile"]["n"] = 128;
  CHECK(first(pair, "EPILOGUE-TMA").empty());
  // An M = 64 group left over folds its N of 64 into halves of 32: whole boxes of f32, half of bf16.
  auto fold = doc;
  fold["gemm"]["tile"] = {{"m", 64}, {"n", 64}, {"k", 64}};
  CHECK(first(fold, "EPILOGUE-TMA").find("an M = 64 group left over holds its N columns in two halves") != std::string::npos);
  fold["gemm"]["d"]["dtype"] = "f32";
  CHECK(first(fold, "EPILOGUE-TMA").empty());
  // Four stages of 56 KB fit without the staging tile, not with it.
  auto big = doc;
  big["gemm"]["tile"]["n"] = 320;
  big["gemm"]["schedule"] = "persistent";
  CHECK(first(big, "SMEM-BUDGET") ==
        "/gemm/stages: 4 stages of 57344 bytes (a 16384 + b 40960), the TMA epilogue's staging tile of 16384 bytes, plus 1120 bytes "
        "of barriers and alignment need 246880 bytes of shared memory; a CTA on sm_100a gets at most 232448");
  big["gemm"]["epilogue"] = "direct";
  CHECK(first(big, "SMEM-BUDGET").empty());
}
}
