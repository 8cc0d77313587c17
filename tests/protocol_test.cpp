// The mbarrier protocol of the sm_90a kernels, checked on an abstract machine independent of the
// emitter: each role's barrier steps unrolled over a CTA's tiles at the ring positions the IR
// means (tile t's K block kb is position t x trips + kb; Phase::tile follows the role's tiles), the
// TMA loads landing whenever a random scheduler lets them, and every wait passing as the hardware's
// parity test does (§9.7.13.15.16: try_wait.parity P passes once the phase of parity P completed,
// i.e. while the completed count's parity differs from P). A wait that passes on another phase
// than the one it means reads a stage that is not its block's: the fault the H200 found in the
// first ping-pong kernel (consumer 1 a whole tile of K blocks ahead of the producer). A run in which
// nothing can move before every role is done is a deadlock.
#include <doctest/doctest.h>

#include <deque>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace ptxgen;

namespace {

struct Stage {
  int64_t completed = 0;  // phases completed
  int arrivals = 0;       // arrivals in the current phase
  int tx = 0;             // loads armed in the current phase and not landed
  bool armed = false;     // expect_tx arrived in the current phase
};

struct Event {
  enum Kind { wait, arrive, expect_tx, load } kind = wait;
  std::string barrier;
  int64_t pos = 0;    // the ring position (iteration or tile) the step means
  bool flip = false;  // a wait for the phase before (the producer's empty barrier)
  int arrivals = 0;   // arrive: how many
  int loads = 0;      // expect_tx: the loads of its iteration
  std::string what;
};

struct Machine {
  std::map<std::string, int> count, stages;
  std::map<std::string, std::vector<Stage>> bars;
  std::vector<std::string> errors;

  Stage& at(const std::string& b, int64_t pos) { return bars.at(b)[static_cast<size_t>(pos % stages.at(b))]; }
  void complete_if_done(Stage& s, const std::string& b) {
    if (s.arrivals == count.at(b) && s.tx == 0) {
      ++s.completed;
      s.arrivals = 0;
      s.armed = false;
    }
  }
};

// A role's barrier events in program order, for the CTA's `tiles` tiles and `trips` K blocks a tile.
std::vector<Event> unroll(const plan::RolePlan& r, int tiles, int trips) {
  std::vector<Event> out;
  const int threads = r.ir().single_thread ? 1 : 32 * r.ir().warps;
  int mine = 0;  // the role's own tiles so far
  for (int t = 0; t < (r.ir().persistent ? tiles : 1); ++t) {
    if (r.ir().turns > 1 && t % r.ir().turns != r.ir().turn) continue;
    int64_t last = -1;  // the last loop iteration's position (a step after the loop with a lag)
    for (const auto& st : r.steps) {
      auto barrier_event = [&](const plan::Step& s, int64_t pos, int64_t kb, bool in_loop) {
        Event e;
        e.barrier = s.bar.barrier;
        e.flip = s.bar.phase.flip;
        e.what = r.ir().name + " tile " + std::to_string(t) + (in_loop ? " kb " + std::to_string(kb) : "") + ": " + std::string(plan::name(s.kind)) + " " + s.bar.barrier;
        if (s.bar.phase.tile) {
          e.pos = r.ir().turns > 1 ? mine : t;
        } else if (in_loop) {
          if (kb < s.bar.phase.lag) return false;
          e.pos = pos - s.bar.phase.lag;
        } else if (s.bar.phase.lag) {
          e.pos = last - (s.bar.phase.lag - 1);
        } else {
          e.pos = 0;
          e.flip = s.bar.parity == 1;  // outside a loop: the parity the wait waits for
        }
        if (s.kind == plan::StepKind::wait) e.kind = Event::wait;
        else if (s.kind == plan::StepKind::arrive) e.kind = Event::arrive, e.arrivals = threads;
        else if (s.kind == plan::StepKind::expect_tx) e.kind = Event::expect_tx, e.arrivals = 1;
        else return false;
        out.push_back(e);
        return true;
      };
      if (st.kind != plan::StepKind::loop) {
        barrier_event(st, 0, 0, false);
        continue;
      }
      int loads = 0;
      for (const auto& b : st.body) loads += b.kind == plan::StepKind::load ? 1 : 0;
      for (int kb = 0; kb < trips; ++kb) {
        const int64_t pos = int64_t{t} * trips + kb;
        for (const auto& b : st.body) {
          if (b.kind == plan::StepKind::load) {
            Event e;
            e.kind = Event::load;
            e.barrier = b.load.barrier;
            e.pos = pos;
            out.push_back(e);
            continue;
          }
          if (barrier_event(b, pos, kb, true) && out.back().kind == Event::expect_tx) out.back().loads = loads;
        }
        last = pos;
      }
    }
    ++mine;
  }
  return out;
}

// Runs the roles under a random schedule; returns the first protocol error, or "".
std::string run(const plan::Plan& p, int tiles, int trips, unsigned seed) {
  Machine m;
  for (const auto& b : p.barriers) {
    m.count[b.name] = b.count;
    m.stages[b.name] = b.stages;
    m.bars[b.name].assign(static_cast<size_t>(b.stages), Stage{});
  }
  std::vector<std::vector<Event>> roles;
  for (const auto& r : p.roles) roles.push_back(unroll(r, tiles, trips));
  std::vector<size_t> pc(roles.size(), 0);
  std::vector<std::pair<std::string, int64_t>> in_flight;  // loads issued, not landed
  std::mt19937 rng(seed);
  for (;;) {
    // Who can move: a role whose next event is not a blocked wait, or a load landing.
    std::vector<int> ready;
    bool done = true;
    for (size_t i = 0; i < roles.size(); ++i) {
      if (pc[i] == roles[i].size()) continue;
      done = false;
      const Event& e = roles[i][pc[i]];
      if (e.kind == Event::wait) {
        const Stage& s = m.at(e.barrier, e.pos);
        const int64_t meant = e.pos / m.stages.at(e.barrier) + 1 - (e.flip ? 1 : 0);  // phases completed when it should pass
        const int parity = static_cast<int>((meant - 1) & 1);                          // the parity it waits for
        if ((s.completed & 1) == parity) continue;                                    // blocked: that phase is not complete
        if (s.completed != meant)
          return e.what + " at position " + std::to_string(e.pos) + " passes with " + std::to_string(s.completed) +
                 " phase(s) completed; it means " + std::to_string(meant);
      }
      ready.push_back(static_cast<int>(i));
    }
    if (done) return "";
    for (size_t j = 0; j < in_flight.size(); ++j) ready.push_back(-1 - static_cast<int>(j));
    if (ready.empty()) {
      std::string where;
      for (size_t i = 0; i < roles.size(); ++i)
        if (pc[i] < roles[i].size()) where += " [" + roles[i][pc[i]].what + "]";
      return "deadlock:" + where;
    }
    const int pick = ready[rng() % ready.size()];
    if (pick < 0) {  // a load lands: its bytes complete the stage's phase once armed
      const auto [b, pos] = in_flight[static_cast<size_t>(-1 - pick)];
      in_flight.erase(in_flight.begin() + (-1 - pick));
      Stage& s = m.at(b, pos);
      --s.tx;
      m.complete_if_done(s, b);
      continue;
    }
    const Event& e = roles[static_cast<size_t>(pick)][pc[static_cast<size_t>(pick)]++];
    if (e.kind == Event::wait) continue;
    Stage& s = m.at(e.barrier, e.pos);
    if (e.kind == Event::load) {
      in_flight.emplace_back(e.barrier, e.pos);
      continue;
    }
    if (e.kind == Event::expect_tx) s.tx += e.loads;
    s.arrivals += e.arrivals;
    if (s.arrivals > m.count.at(e.barrier)) return e.what + ": more arrivals than the barrier's count in one phase";
    m.complete_if_done(s, e.barrier);
  }
}

// The sm_90a template specs of one CTA (multicast clusters arrive across CTAs, which this machine
// does not model).
std::vector<std::string> wgmma_specs() {
  std::vector<std::string> out;
  for (const auto& f : support::spec_files()) {
    const auto j = nlohmann::json::parse(support::slurp(f));
    if (j.value("target", "") != "sm_90a" || !j.contains("gemm")) continue;
    if (j["gemm"].contains("cluster") && j["gemm"]["cluster"] != nlohmann::json{1, 1, 1}) continue;
    out.push_back(f);
  }
  return out;
}

// The TMA epilogue's subtile buffers (plan::StoreStep::subtiles) on an abstract machine of the
// issuing thread's bulk groups, read off the emitted PTX of the store (its straight-line code
// from the first box's wait, or its first stmatrix, to the last box's commit), run `tiles` times in a row: a
// cp.async.bulk.tensor store reads buffer b (its source `add.u32 %r, %r, b * box_stride` past the
// first box, the line before); cp.async.bulk.commit_group closes the stores since the last into a
// group (PTX ISA 9.1 §9.7.9.27.2.1); cp.async.bulk.wait_group.read N leaves only the N most recent
// groups reading shared memory (§9.7.9.27.2.2); a stmatrix into buffer b (its immediate offset
// b * box_stride plus its rows') while a store still reads b is a fault. Empty: none.
std::string subtile_fault(const std::string& ptx, uint32_t box_stride, int tiles) {
  const size_t from = std::min(ptx.find("stmatrix.sync"), ptx.find("is free once the store that read it before")),
               to = ptx.rfind("one bulk group per box");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const std::string code = ptx.substr(ptx.rfind('\n', from) + 1, ptx.find('\n', to) - ptx.rfind('\n', from));
  static const std::regex stmatrix(R"(stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 \[%r\d+(?:\+(\d+))?\])");
  static const std::regex add(R"(add\.u32 %r\d+, %r\d+, (\d+);)"), wait(R"(cp\.async\.bulk\.wait_group\.read (\d+);)");
  std::deque<std::set<uint32_t>> groups;  // committed, oldest first
  std::set<uint32_t> open;                // stores not yet committed
  for (int tile = 0; tile < tiles; ++tile) {
    int box = 0;
    uint32_t added = 0;
    std::istringstream lines(code);
    for (std::string l; std::getline(lines, l);) {
      std::smatch m;
      if (std::regex_search(l, m, stmatrix)) {
        const uint32_t b = (m[1].matched ? static_cast<uint32_t>(std::stoul(m[1].str())) : 0) / box_stride;
        bool read = open.count(b) > 0;
        for (const auto& g : groups) read = read || g.count(b) > 0;
        if (read)
          return "tile " + std::to_string(tile) + " box " + std::to_string(box) + ": stmatrix into buffer " + std::to_string(b) +
                 " while a bulk group still reads it";
      } else if (std::regex_search(l, m, add)) {
        added = static_cast<uint32_t>(std::stoul(m[1].str()));
      } else if (l.find("cp.async.bulk.tensor") != std::string::npos) {
        open.insert(added / box_stride);
      } else if (l.find("cp.async.bulk.commit_group") != std::string::npos) {
        groups.push_back(open);
        open.clear();
        ++box;
      } else if (std::regex_search(l, m, wait)) {
        while (groups.size() > std::stoul(m[1].str())) groups.pop_front();
      }
    }
  }
  return "";
}

}  // namespace

TEST_SUITE("plan") {
TEST_CASE("the sm_90a subtile epilogue: no stmatrix writes a buffer a bulk group still reads, over the tiles too") {
  // Every shipped kernel with subtiles, twice in a row where its role is persistent.
  int kernels = 0;
  std::string multicast;
  for (const auto& f : support::spec_files()) {
    const auto j = nlohmann::json::parse(support::slurp(f));
    if (j.value("target", "") != "sm_90a" || !j.contains("gemm")) continue;
    const support::Planned p = support::plan_of(support::checked_spec(support::slurp(f)));
    for (const plan::Step* s : support::all_steps(p)) {
      if (s->kind != plan::StepKind::store || !s->store.subtiles) continue;
      CAPTURE(f);
      const std::string golden = support::slurp(support::source_root() + "/golden/" + support::stem(f) + ".ptx");
      CHECK(s->store.box_stride == 128u * 128);  // a buffer: 128 rows of 128 bytes
      CHECK(subtile_fault(golden, s->store.box_stride, s->store.reuse ? 3 : 1) == "");
      ++kernels;
      if (support::stem(f) == "gemm_sm90_bf16_128x256x64_multicast_b_persistent") multicast = golden;
    }
  }
  CHECK(kernels == 7);  // the shipped subtile epilogues (the masked grouped goldens the sixth and seventh)
  REQUIRE(!multicast.empty());
  // Mutations the machine catches (4 boxes a tile; waits at boxes 0-3 of a persistent role's tile).
  auto without_wait = [&](int n) {  // the wait before box n's writes removed
    std::string out = multicast;
    size_t at = 0;
    for (int i = 0; i <= n; ++i) {
      at = out.find("is free once the store that read it before", at + 1);
      REQUIRE(at != std::string::npos);
    }
    const size_t line = out.rfind('\n', at) + 1;
    return out.erase(line, out.find('\n', at) + 1 - line);
  };
  auto replaced = [&](const char* re, const char* fmt) {
    const std::string out = std::regex_replace(multicast, std::regex(re), fmt);
    REQUIRE_MESSAGE(out != multicast, "the pattern no longer matches the golden");
    return out;
  };
  // Box 1's wait dropped (as the first subtile kernels had it): the previous tile's box 3 may still
  // read buffer 1, its group the newest when box 0 waited for all but 1.
  CHECK(subtile_fault(without_wait(1), 16384, 3) == "tile 1 box 1: stmatrix into buffer 1 while a bulk group still reads it");
  // Box 2's wait dropped: box 0 may still read buffer 0.
  CHECK(subtile_fault(without_wait(2), 16384, 1) == "tile 0 box 2: stmatrix into buffer 0 while a bulk group still reads it");
  // Box j through the wrong buffer: the odd boxes' stores read buffer 0, which box 2 then writes
  // while box 1's group (the newest) reads it; or their stmatrix writes buffer 0 while box 0's reads.
  CHECK(subtile_fault(replaced(R"(add\.u32 (%r\d+), (%r\d+), 16384;(\n\t@!%p\d+ cp\.async\.bulk\.tensor))", "add.u32 $1, $2, 0;$3"), 16384,
                      1) == "tile 0 box 2: stmatrix into buffer 0 while a bulk group still reads it");
  CHECK(subtile_fault(replaced(R"((stmatrix[^\[]*\[%r\d+)\+16384\])", "$1]"), 16384, 1) ==
        "tile 0 box 1: stmatrix into buffer 0 while a bulk group still reads it");
}

TEST_CASE("the sm_90a kernels' mbarrier protocol: every wait passes on the phase it means, and nothing deadlocks") {
  const std::vector<std::string> files = wgmma_specs();
  CHECK(files.size() >= 12);
  for (const auto& f : files) {
    CAPTURE(f);
    const support::Planned p = support::plan_of(support::checked_spec(support::slurp(f)));
    int stages = 1;
    for (const auto& b : p.barriers) stages = std::max(stages, b.stages);
    // One K block, fewer blocks than stages, more; one tile, an odd number of tiles, many.
    for (int trips : {1, stages - 1, stages + 1, 3 * stages + 2})
      for (int tiles : {1, 3, 6})
        for (unsigned seed = 1; seed <= 12; ++seed) {
          if (trips < 1) continue;
          const std::string err = run(p, tiles, trips, seed);
          CHECK_MESSAGE(err.empty(), err << " (trips " << trips << ", tiles " << tiles << ", seed " << seed << ")");
        }
  }
}

TEST_CASE("the protocol check catches ping-pong consumers without their main-loop hand-off") {
  const support::Planned planned =
      support::plan_of(support::checked_spec(support::slurp(support::source_root() + "/specs/gemm_sm90_bf16_128x128x64_pingpong.json")));
  plan::Plan p = planned;
  CHECK(run(p, 6, 9, 1).empty());
  // Drop the consumers' waits on and arrivals at mainloop0/1: what the first ping-pong kernel did.
  for (auto& r : p.roles) {
    std::vector<plan::Step> kept;
    for (const auto& st : r.steps)
      if (st.bar.barrier.rfind("mainloop", 0) != 0) kept.push_back(st);
    r.steps = kept;
  }
  int caught = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const std::string err = run(p, 6, 9, seed);
    if (err.find("passes with") != std::string::npos) ++caught;
  }
  // Consumer 1's first wait on full[9 % 4] passes on that stage's first phase (parity 0), which
  // is K block 1's, not its own (the third).
  CHECK(caught == 20);
  CHECK(run(p, 6, 9, 1) == "consumer1 tile 1 kb 0: wait full at position 9 passes with 1 phase(s) completed; it means 3");
  // And a release dropped from the cooperative kernel deadlocks the producer.
  const support::Planned coop =
      support::plan_of(support::checked_spec(support::slurp(support::source_root() + "/specs/gemm_sm90_bf16_128x256x64_persistent.json")));
  plan::Plan q = coop;
  for (auto& r : q.roles) {
    if (r.ir().name != "consumer") continue;
    std::vector<plan::Step> kept;
    for (const auto& st : r.steps)
      if (!(st.kind == plan::StepKind::arrive && st.bar.barrier == "empty")) kept.push_back(st);
    r.steps = kept;
  }
  CHECK(run(q, 3, 7, 1).rfind("deadlock:", 0) == 0);
}
}
