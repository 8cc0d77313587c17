// The spelling tables: how each instruction family is written in PTX, for which targets, from
// which PTX ISA version. Every mnemonic the emitter and the `ptxgen plan` printer write comes from
// here; a variant's spelling is computed from its parameters, never assembled by hand elsewhere.
// Every spelling reaches ptxas through the goldens (golden/, each assembled for its target by the
// golden suite); there is no separate table test.
#pragma once

#include <string>
#include <vector>

#include "ptxgen/isa.hpp"
#include "ptxgen/plan.hpp"

namespace ptxgen::emit::spell {

// One family: where the ISA defines it and the lowest PTX ISA version (major * 10 + minor) and
// target kind that accept it.
struct Family {
  std::string_view name;     // "tcgen05.mma"
  std::string_view isa;      // "§9.7.16.10.9"
  int min_ptx;               // lowest PTX ISA version of the basic form
  bool tcgen05_targets;      // sm_100a family
  bool sm90;                 // sm_90a
};
const std::vector<Family>& families();

// tcgen05 (§9.7.16)
// tcgen05.mma[.sp].cta_group::N.kind::K[.block_scale.scale_vec][.collector::a::OP]
std::string mma(const plan::MmaStep& m, int cta_group, const isa::TargetInfo& t,
                plan::Collector c = plan::Collector::discard);
int mma_min_ptx(const plan::MmaStep& m, const isa::TargetInfo& t);
std::string cp(isa::CpShape s, isa::CpDecompress d, int cta_group);
std::string ld(isa::LdShape s, int num, bool pack);      // tcgen05.ld.sync.aligned.SHAPE.xN[.pack::16b].b32
std::string st(isa::LdShape s, int num, bool unpack);    // tcgen05.st.sync.aligned.SHAPE.xN[.unpack::16b].b32
std::string wait_ld();
std::string wait_st();
std::string alloc(int cta_group);
std::string relinquish(int cta_group);
std::string dealloc(int cta_group);
std::string commit(int cta_group, bool multicast);
std::string fence_before();
std::string fence_after();

// wgmma (§9.7.15)
std::string wgmma(const plan::MmaStep& m, int n);        // wgmma.mma_async.sync.aligned.m64nNkK.D.A.B
std::string wgmma_fence();
std::string wgmma_commit();
std::string wgmma_wait();

// cp.async.bulk.tensor (§9.7.9.27.1.2) and the proxy fence (§9.7.13.4.x)
std::string tma_load(bool cta_group2, int rank = 2);
std::string tma_load_multicast(int rank, bool cta_group2 = false);
std::string tma_store();        // cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
std::string bulk_commit();      // cp.async.bulk.commit_group
std::string bulk_wait_read();   // cp.async.bulk.wait_group.read N: the groups' shared-memory reads are done
std::string proxy_fence();

// mbarrier (§9.7.13.15) and thread / cluster barriers (§9.7.13.1, §9.7.13.2)
std::string mbarrier_init();
std::string mbarrier_arrive();
std::string mbarrier_arrive_remote();
std::string mbarrier_arrive_cluster();  // a release arrival on a barrier of another CTA of the cluster
std::string mbarrier_expect_tx();
std::string mbarrier_try_wait();
std::string mbarrier_init_fence();
std::string bar_sync();
std::string cluster_arrive(bool aligned);
std::string cluster_wait(bool aligned);

}  // namespace ptxgen::emit::spell
