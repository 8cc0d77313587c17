// The spelling tables (spelling.hpp). Each function spells one family from its parameters; the
// table of families says where the ISA defines each and which targets take it.
#include "spelling.hpp"

namespace ptxgen::emit::spell {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
std::string cg(int cta_group) { return ".cta_group::" + s(cta_group); }
}  // namespace

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"tcgen05.mma", "PTX ISA 9.1 §9.7.16.10.9 (tcgen05.mma, .sp, .block_scale)", 86, true, false},
      {"tcgen05.cp", "PTX ISA 9.1 §9.7.16.9.2", 86, true, false},
      {"tcgen05.ld / tcgen05.st / tcgen05.wait", "PTX ISA 9.1 §9.7.16.8.3-5", 86, true, false},
      {"tcgen05.alloc / dealloc / relinquish_alloc_permit", "PTX ISA 9.1 §9.7.16.7.1", 86, true, false},
      {"tcgen05.commit", "PTX ISA 9.1 §9.7.16.12.1", 86, true, false},
      {"tcgen05.fence", "PTX ISA 9.1 §9.7.16.11.1", 86, true, false},
      {"wgmma.mma_async / fence / commit_group / wait_group", "PTX ISA 9.1 §9.7.15.5.2, §9.7.15.6-7", 80, false, true},
      {"cp.async.bulk.tensor", "PTX ISA 9.1 §9.7.9.27.1.2", 80, true, true},
      {"cp.async.bulk.commit_group / wait_group", "PTX ISA 9.1 §9.7.9.27.3-4", 80, true, true},
      {"fence.proxy.async", "PTX ISA 9.1 §9.7.13.4", 80, true, true},
      {"mbarrier", "PTX ISA 9.1 §9.7.13.15", 80, true, true},
      {"bar.sync / barrier.cluster", "PTX ISA 9.1 §9.7.13.1, §9.7.13.2", 78, true, true},
  };
  return f;
}

// ---- tcgen05 ------------------------------------------------------------------------------------
std::string mma(const plan::MmaStep& m, int cta_group, const isa::TargetInfo& t, plan::Collector c) {
  // §9.7.16.10.9.1: tcgen05.mma{.sp}.cta_group.kind{.block_scale{.scale_vectorsize}}{.collector_usage};
  // the scale vector size as the target spells it (isa::scale_vec_qualifier); no collector
  // qualifier is .collector::a::discard.
  static const char* const kCollector[] = {"", ".collector::a::fill", ".collector::a::use", ".collector::a::lastuse"};
  return std::string("tcgen05.mma") + (m.sparse ? ".sp" : "") + cg(cta_group) + ".kind::" + std::string(isa::name(m.kind)) +
         (m.scaled ? ".block_scale" + isa::scale_vec_qualifier(m.scale.factors, m.scale.vec, t) : "") +
         kCollector[static_cast<int>(c)];
}

int mma_min_ptx(const plan::MmaStep& m, const isa::TargetInfo& t) {
  if (m.engine != ir::Engine::tcgen05) return 0;
  return isa::mma_min_ptx(m.kind, m.scaled ? isa::scale_vec_qualifier(m.scale.factors, m.scale.vec, t) : "");
}

std::string cp(isa::CpShape shape, isa::CpDecompress d, int cta_group) {
  const auto& in = isa::info(shape);
  return "tcgen05.cp" + cg(cta_group) + "." + std::string(in.name) + (in.multicast.empty() ? "" : "." + std::string(in.multicast)) +
         std::string(isa::qualifier(d));
}

std::string ld(isa::LdShape shape, int num, bool pack) {
  return "tcgen05.ld.sync.aligned." + std::string(isa::info(shape).name) + ".x" + s(num) + (pack ? ".pack::16b" : "") + ".b32";
}

std::string st(isa::LdShape shape, int num, bool unpack) {
  return "tcgen05.st.sync.aligned." + std::string(isa::info(shape).name) + ".x" + s(num) + (unpack ? ".unpack::16b" : "") + ".b32";
}

std::string wait_ld() { return "tcgen05.wait::ld.sync.aligned"; }
std::string wait_st() { return "tcgen05.wait::st.sync.aligned"; }
std::string alloc(int cta_group) { return "tcgen05.alloc" + cg(cta_group) + ".sync.aligned.shared::cta.b32"; }
std::string relinquish(int cta_group) { return "tcgen05.relinquish_alloc_permit" + cg(cta_group) + ".sync.aligned"; }
std::string dealloc(int cta_group) { return "tcgen05.dealloc" + cg(cta_group) + ".sync.aligned.b32"; }

std::string commit(int cta_group, bool multicast) {
  return "tcgen05.commit" + cg(cta_group) + ".mbarrier::arrive::one.shared::cluster" + (multicast ? ".multicast::cluster" : "") + ".b64";
}

std::string fence_before() { return "tcgen05.fence::before_thread_sync"; }
std::string fence_after() { return "tcgen05.fence::after_thread_sync"; }

// ---- wgmma --------------------------------------------------------------------------------------
std::string wgmma(const plan::MmaStep& m, int n) {
  const int k = 256 / isa::value_bits(m.a_dtype);
  return "wgmma.mma_async.sync.aligned.m64n" + s(n) + "k" + s(k) + "." + std::string(isa::name(m.acc_dtype)) + "." +
         std::string(isa::name(m.a_dtype)) + "." + std::string(isa::name(m.b_dtype));
}
std::string wgmma_fence() { return "wgmma.fence.sync.aligned"; }
std::string wgmma_commit() { return "wgmma.commit_group.sync.aligned"; }
std::string wgmma_wait() { return "wgmma.wait_group.sync.aligned"; }

// ---- TMA, proxies, barriers ---------------------------------------------------------------------
std::string tma_load(bool cta_group2, int rank) {
  // .dim: the tensor map's rank; .cta_group::2: the mbarrier may be the peer CTA's (§9.7.9.27.1.2).
  return "cp.async.bulk.tensor." + s(rank) + "d.shared::cluster.global.mbarrier::complete_tx::bytes" + (cta_group2 ? ".cta_group::2" : "");
}
std::string tma_load_multicast(int rank, bool cta_group2) {
  // .multicast::cluster: the box goes to every CTA of ctaMask, at the same shared-memory offset,
  // and so does the barrier's complete_tx (§9.7.9.27.1.2); with .cta_group::2 the complete_tx goes
  // to the barrier of each destination's pair CTA of the parity where the named barrier lies.
  return "cp.async.bulk.tensor." + s(rank) + "d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster" +
         (cta_group2 ? ".cta_group::2" : "");
}
std::string tma_store() { return "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"; }
std::string bulk_commit() { return "cp.async.bulk.commit_group"; }
std::string bulk_wait_read() { return "cp.async.bulk.wait_group.read"; }
std::string proxy_fence() { return "fence.proxy.async.shared::cta"; }
std::string mbarrier_init() { return "mbarrier.init.shared::cta.b64"; }
std::string mbarrier_arrive() { return "mbarrier.arrive.shared::cta.b64"; }
// §9.7.13.15.13: .shared::cluster takes the sink `_` as its state; .release.cluster orders this
// thread's prior accesses before the peer's wait.
std::string mbarrier_arrive_cluster() { return "mbarrier.arrive.release.cluster.shared::cluster.b64"; }
// A consumer's release of a stage in every CTA of an sm_90a cluster: the default .release.cta
// (§9.7.13.15.13; the ISA's own example of a remote arrival): its wgmma reads are complete
// (wgmma.wait_group) before it arrives, and only the peer's async-proxy writes follow.
std::string mbarrier_arrive_remote() { return "mbarrier.arrive.release.cta.shared::cluster.b64"; }
std::string mbarrier_expect_tx() { return "mbarrier.arrive.expect_tx.shared::cta.b64"; }
std::string mbarrier_try_wait() { return "mbarrier.try_wait.parity.shared::cta.b64"; }
std::string mbarrier_init_fence() { return "fence.mbarrier_init.release.cluster"; }
std::string bar_sync() { return "bar.sync"; }
std::string cluster_arrive(bool aligned) { return std::string("barrier.cluster.arrive.release") + (aligned ? ".aligned" : ""); }
std::string cluster_wait(bool aligned) { return std::string("barrier.cluster.wait.acquire") + (aligned ? ".aligned" : ""); }

}  // namespace ptxgen::emit::spell
