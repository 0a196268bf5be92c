// Checkpoints (engine/optim/checkpoint.h): values come back bit for bit, damaged files are
// refused with their name, and a SHAC run stopped, saved and loaded into a fresh trainer goes
// on with the same bits as one never stopped (engine/optim/shac_state.cpp)
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "engine/optim/checkpoint.h"
#include "engine/optim/ppo.h"
#include "engine/optim/shac.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"
#include "tests/engine/asset_scene.h"

using namespace adj;
using namespace adj::optim;

namespace {

using test::ok;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

Checkpoint sample() {
  Checkpoint ck;
  ck.header["run"] = {{"scene", "s"}, {"windows", 20}};
  std::mt19937_64 rng(7);
  std::vector<float> f(1000);
  std::vector<double> d(1000);
  for (std::size_t k = 0; k < f.size(); ++k) {
    const std::uint32_t bits = std::uint32_t(rng());
    std::memcpy(&f[k], &bits, 4);  // every pattern: denormals, infinities, NaN payloads
    const std::uint64_t b64 = rng();
    std::memcpy(&d[k], &b64, 8);
  }
  ck.put("f", f);
  ck.put("d", d);
  ck.put("u", std::vector<std::uint64_t>{0, ~0ull, 12345});
  return ck;
}

}  // namespace

TEST_CASE("a checkpoint's arrays come back bit for bit through its file", "[checkpoint]") {
  const Checkpoint ck = sample();
  const std::string path = (std::filesystem::temp_directory_path() / "adj_checkpoint_test.adjck").string();
  REQUIRE(write_checkpoint(ck, path).is_ok());
  CHECK(!std::filesystem::exists(path + ".tmp"));  // renamed into place
  Checkpoint back = ok(read_checkpoint(path));
  for (const char* name : {"f", "d", "u"}) {
    INFO(name);
    CHECK(back.arrays.at(name).type == ck.arrays.at(name).type);
    CHECK(back.arrays.at(name).bytes == ck.arrays.at(name).bytes);
  }
  CHECK(back.header["run"] == ck.header["run"]);
  CHECK(back.expect_run("windows", 20).is_ok());
  Status other = back.expect_run("scene", "t");
  CHECK_THAT(other.message(), Catch::Contains(path) && Catch::Contains("scene is \"s\", this run's is \"t\""));
  std::vector<float> f;
  CHECK_THAT(back.get("f", f, 999).message(),
             Catch::Contains(path) && Catch::Contains("'f' holds 1000 values, this run has 999"));
  CHECK_THAT(back.get("g", f).message(), Catch::Contains("no array 'g'"));
  std::vector<double> d;
  CHECK_THAT(back.get("f", d).message(), Catch::Contains("holds f32 values, this run needs f64"));
  std::filesystem::remove(path);
}

TEST_CASE("a damaged checkpoint is refused with its name and why", "[checkpoint]") {
  const std::vector<std::uint8_t> bytes = encode_checkpoint(sample());
  std::vector<std::uint8_t> flipped = bytes;
  flipped[flipped.size() - 100] ^= 1;
  CHECK_THAT(decode_checkpoint(flipped, "ck.adjck").status().message(), Catch::Contains("ck.adjck: array 'u'") ||
                                                                            Catch::Contains("ck.adjck: array 'f'") ||
                                                                            Catch::Contains("corrupted"));
  std::vector<std::uint8_t> cut(bytes.begin(), bytes.end() - 10);
  CHECK_THAT(decode_checkpoint(cut, "ck.adjck").status().message(),
             Catch::Contains("ck.adjck") && Catch::Contains("truncated"));
  std::vector<std::uint8_t> other{'{', '}'};
  CHECK_THAT(decode_checkpoint(other, "x.json").status().message(),
             Catch::Contains("x.json: not an Adjoint checkpoint"));
  CHECK(decode_checkpoint(bytes, "ck.adjck").is_ok());
}

TEST_CASE("SHAC saved and loaded mid-run goes on with the same bits", "[checkpoint][shac]") {
  // 32-frame episodes: 4 windows each, so training episodes end before and after the checkpoint
  test::AssetScene<float> cp("robot_cartpole.json", "swing up (policy)", 32);
  auto task = ok(make_task(cp.cs, cp.task));
  PolicyEnvOptions eo = training_starts(cp.task, 4);
  eo.q_range = 3.14, eo.qd_range = 0.5;  // randomized restarts: the copies' engines matter
  BatchShacOptions so;
  so.window = 8;
  so.thread_count = 1;
  so.seed = 3;
  so.lr_decay_windows = 12;
  auto straight = ok(BatchShacTrainerT<float>::create(*task, so, eo));
  auto first = ok(BatchShacTrainerT<float>::create(*task, so, eo));
  std::vector<double> costs, returns;
  for (int k = 0; k < 12; ++k) {
    const BatchShacStats st = ok(straight.step());
    costs.push_back(st.mean_cost), returns.push_back(st.train_return);
  }
  for (int k = 0; k < 7; ++k) ok(first.step());  // 7 windows of 8 frames: episodes mid-way
  Checkpoint ck;
  REQUIRE(first.save(ck).is_ok());
  Checkpoint back = ok(decode_checkpoint(encode_checkpoint(ck), "mem.adjck"));
  BatchShacOptions other_seed = so;
  other_seed.seed = 99;  // everything the seed decided comes from the checkpoint
  auto second = ok(BatchShacTrainerT<float>::create(*task, other_seed, eo));
  REQUIRE(second.load(back).is_ok());
  CHECK(second.iteration() == 7);
  for (int k = 7; k < 12; ++k) {
    const BatchShacStats st = ok(second.step());
    CHECK(st.mean_cost == costs[k]);
    CHECK(st.train_return == returns[k]);  // the training episodes' returns came back too
  }
  CHECK(same_bits(second.weights(), straight.weights()));
  CHECK(second.fingerprint() == straight.fingerprint());

  SECTION("another number of copies is refused") {
    PolicyEnvOptions eight = eo;
    eight.env_count = 8;
    auto wider = ok(BatchShacTrainerT<float>::create(*task, so, eight));
    CHECK_THAT(wider.load(back).message(), Catch::Contains("mem.adjck: the checkpoint's copies is 4, this run's is 8"));
  }
  SECTION("another network shape is refused") {
    PolicyEnvOptions bigger = eo;
    bigger.hidden = {7};
    auto net = ok(BatchShacTrainerT<float>::create(*task, so, bigger));
    CHECK_THAT(net.load(back).message(),
               Catch::Contains("mem.adjck: array 'actor.weights' holds") && Catch::Contains("network shape"));
  }
}

// the Ant's run task: a learned exploration std (actor.log_std) and a previous_action
// observation (each copy's last action, episodes.action) come back too
TEST_CASE("SHAC with a learned std and previous actions, saved and loaded mid-run, goes on with the same bits",
          "[checkpoint][shac][locomotion]") {
  test::AssetScene<float> ant("locomotion/ant.json", "run");
  ant.task.policy.hidden = {16};
  auto task = ok(make_task(ant.cs, ant.task));
  BatchShacOptions so = shac_options(ant.task, 12);
  REQUIRE(so.learned_std);
  so.window = 8;
  so.critic_hidden = {16};
  so.thread_count = 1;
  so.seed = 3;
  PolicyEnvOptions eo = training_starts(ant.task, 3);
  auto straight = ok(BatchShacTrainerT<float>::create(*task, so, eo));
  auto first = ok(BatchShacTrainerT<float>::create(*task, so, eo));
  std::vector<double> costs;
  for (int k = 0; k < 10; ++k) costs.push_back(ok(straight.step()).mean_cost);
  for (int k = 0; k < 6; ++k) ok(first.step());
  Checkpoint ck;
  REQUIRE(first.save(ck).is_ok());
  CHECK(ck.has("actor.log_std"));
  CHECK(ck.has("episodes.action"));
  Checkpoint back = ok(decode_checkpoint(encode_checkpoint(ck), "mem.adjck"));
  auto second = ok(BatchShacTrainerT<float>::create(*task, so, eo));
  REQUIRE(second.load(back).is_ok());
  for (int k = 6; k < 10; ++k) CHECK(ok(second.step()).mean_cost == costs[k]);
  CHECK(same_bits(second.weights(), straight.weights()));
  CHECK(same_bits(second.log_std(), straight.log_std()));
  CHECK(second.log_std() != std::vector<float>(8, -1.0f));  // the std trained
  CHECK(second.fingerprint() == straight.fingerprint());

  SECTION("a run without the learned std is refused, and the other way round") {
    BatchShacOptions fixed = so;
    fixed.learned_std = false;
    auto other = ok(BatchShacTrainerT<float>::create(*task, fixed, eo));
    CHECK_THAT(other.load(back).message(),
               Catch::Contains("mem.adjck: the checkpoint's policy has a learned exploration std"));
    Checkpoint plain;
    REQUIRE(other.save(plain).is_ok());
    CHECK_THAT(second.load(plain).message(), Catch::Contains("the checkpoint's policy has no learned exploration std"));
  }
}

TEST_CASE("PPO saved and loaded mid-run goes on with the same bits", "[checkpoint][ppo]") {
  test::AssetScene<double> cp("robot_cartpole.json", "swing up (policy)");
  auto task = ok(make_task(cp.cs, cp.task));
  PolicyEnvOptions eo = training_starts(cp.task, 4);
  eo.q_range = 3.14, eo.qd_range = 0.5;
  PpoOptions po;
  po.seed = 5;
  po.steps_per_env = 40;  // episodes end and restart within the run (horizon 240 frames)
  po.minibatches = 4;
  po.epochs = 2;
  po.normalize_rewards = true;  // the return statistics matter too
  po.lr_anneal_steps = 100000;
  auto straight = ok(PpoTrainer::create(*task, po, eo));
  auto first = ok(PpoTrainer::create(*task, po, eo));
  std::vector<double> rewards;
  for (int k = 0; k < 8; ++k) rewards.push_back(ok(straight.iterate()).mean_reward);
  for (int k = 0; k < 5; ++k) ok(first.iterate());
  Checkpoint ck;
  REQUIRE(first.save(ck).is_ok());
  Checkpoint back = ok(decode_checkpoint(encode_checkpoint(ck), "ppo.adjck"));
  PpoOptions other_seed = po;
  other_seed.seed = 77;
  auto second = ok(PpoTrainer::create(*task, other_seed, eo));
  REQUIRE(second.load(back).is_ok());
  CHECK(second.iteration() == 5);
  for (int k = 5; k < 8; ++k) CHECK(ok(second.iterate()).mean_reward == rewards[k]);
  CHECK(second.parameters() == straight.parameters());
  CHECK(second.fingerprint() == straight.fingerprint());
  PolicyEnvOptions eight = eo;
  eight.env_count = 8;
  auto wider = ok(PpoTrainer::create(*task, po, eight));
  CHECK_THAT(wider.load(back).message(), Catch::Contains("ppo.adjck: the checkpoint's copies is 4, this run's is 8"));
}
