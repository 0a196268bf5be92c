// SHAC's copies shared by ranks (engine/optim/shac.h, shac_state.cpp) without MPI: ranks are
// threads that meet at a barrier (the communicator below), so every build runs it. Two and
// three ranks take the same steps, bit for bit, as one process, and their checkpoints are
// the same bytes (tests/app/shac_mpi.sh runs the same over MPI when it is built)
#include <catch2/catch.hpp>

#include <barrier>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "engine/dist/communicator.h"
#include "engine/optim/checkpoint.h"
#include "engine/optim/shac.h"
#include "engine/optim/task.h"
#include "tests/engine/asset_scene.h"

using namespace adj;
using namespace adj::optim;

namespace {

using test::ok;

// ranks as threads: every call is collective; slots hold each rank's bytes between barriers
struct Hub {
  explicit Hub(int n) : sync(n), slots(static_cast<std::size_t>(n)) {}
  std::barrier<> sync;
  std::vector<dist::Bytes> slots;
};

class ThreadCommunicator final : public dist::Communicator {
 public:
  ThreadCommunicator(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return int(hub_.slots.size()); }
  const char* kind() const override { return "threads"; }
  void abort(int code) override { std::exit(code); }
  Status allgather(const dist::Bytes& mine, std::vector<dist::Bytes>& parts) override {
    hub_.slots[rank_] = mine;
    hub_.sync.arrive_and_wait();
    parts = hub_.slots;
    hub_.sync.arrive_and_wait();
    return Status::ok();
  }
  Status broadcast(dist::Bytes& bytes, int root) override {
    if (rank_ == root) hub_.slots[0] = bytes;
    hub_.sync.arrive_and_wait();
    if (rank_ != root) bytes = hub_.slots[0];
    hub_.sync.arrive_and_wait();
    return Status::ok();
  }

 private:
  Hub& hub_;
  int rank_;
};

struct Run {
  std::vector<float> weights;
  std::vector<double> costs;     // mean frame cost per window
  std::vector<std::uint8_t> ck;  // the checkpoint after the last window (rank 0's)
  std::string error;
};

// `windows` windows of 5 copies over `ranks` ranks (0: one process, no communicator)
Run train(const TaskT<float>& task, const scene::Task& spec, int ranks, int windows) {
  PolicyEnvOptions eo = training_starts(spec, 5);
  eo.q_range = 3.14, eo.qd_range = 0.5;
  BatchShacOptions so;
  so.window = 8;
  so.thread_count = 1;
  so.seed = 4;
  so.fingerprint_every = 2;
  const int n = std::max(ranks, 1);
  Hub hub(n);
  std::vector<Run> runs(static_cast<std::size_t>(n));
  auto rank_main = [&](int r) {
    ThreadCommunicator comm(hub, r);
    BatchShacOptions mine = so;
    if (ranks > 0) mine.comm = &comm;
    auto shac = BatchShacTrainerT<float>::create(task, mine, eo);
    if (!shac) return void(runs[r].error = shac.status().message());
    for (int k = 0; k < windows; ++k) {
      auto st = shac->step();
      if (!st) return void(runs[r].error = st.status().message());
      runs[r].costs.push_back(st->mean_cost);
    }
    Checkpoint ck;
    if (Status st = shac->save(ck); !st) return void(runs[r].error = st.message());
    runs[r].weights = shac->weights();
    runs[r].ck = encode_checkpoint(ck);
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(rank_main, r);
  for (std::thread& t : threads) t.join();
  for (int r = 1; r < n; ++r) {
    INFO("rank " << r << " against rank 0");
    CHECK(runs[r].error.empty());
    CHECK(runs[r].weights == runs[0].weights);
  }
  return runs[0];
}

}  // namespace

TEST_CASE("SHAC over 2 and 3 ranks steps as one process, bit for bit", "[shac][dist]") {
  test::AssetScene<float> cp("robot_cartpole.json", "swing up (policy)");
  auto task = ok(make_task(cp.cs, cp.task));
  const Run one = train(*task, cp.task, 0, 6);
  REQUIRE(one.error.empty());
  for (int ranks : {2, 3}) {
    INFO(ranks << " ranks");
    const Run many = train(*task, cp.task, ranks, 6);
    INFO(many.error);
    REQUIRE(many.error.empty());
    CHECK(many.costs == one.costs);
    REQUIRE(many.weights.size() == one.weights.size());
    CHECK(std::memcmp(many.weights.data(), one.weights.data(), one.weights.size() * sizeof(float)) == 0);
    CHECK(many.ck == one.ck);  // every copy's episode and random engine gathered, in copy order
  }
}
