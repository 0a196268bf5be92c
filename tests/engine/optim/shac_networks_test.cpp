// SHAC's network keys (the task's shac block: layer_norm, init; engine/optim/shac_task.h): read
// from the scene, bad values named by their JSON path; both networks built with them; a LayerNorm
// policy's checkpoint comes back with the same actions, also into a trainer made from a scene
// without the keys (use_checkpoint_networks: what evaluating a checkpoint does)
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <random>

#include "engine/optim/checkpoint.h"
#include "engine/optim/shac.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"
#include "engine/scene/scene_json.h"
#include "tests/engine/asset_scene.h"

using namespace adj;
using namespace adj::optim;

namespace {

using test::ok;

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// the cartpole scene with `keys` added to its policy task's shac block
Result<scene::Scene> with_shac(const nlohmann::json& keys) {
  const std::string file = std::string(ADJ_ASSET_SCENES) + "/robot_cartpole.json";
  std::ifstream in(file);
  nlohmann::json j = nlohmann::json::parse(in);
  for (nlohmann::json& t : j["tasks"])
    if (t["name"] == "swing up (policy)") t["shac"].update(keys);
  return scene::parse_scene(j.dump(), file);
}

// each copy's states of an evaluation episode, frame after frame
std::vector<float> episode(BatchShacTrainerT<float>& shac) {
  std::vector<float> q;
  ok(shac.evaluate([&](int, const PolicyEnvT<float>& env) {
    const StateT<float>& s = env.state(0);
    q.insert(q.end(), s.joint_q.begin(), s.joint_q.end());
    q.insert(q.end(), s.joint_qd.begin(), s.joint_qd.end());
  }));
  return q;
}

}  // namespace

TEST_CASE("shac networks: layer_norm and init read from the scene, bad values named", "[optim][shac][scene]") {
  auto doc = with_shac({{"activation", "elu"}, {"layer_norm", true}, {"init", "orthogonal"}});
  INFO(doc.status().message());
  REQUIRE(doc.is_ok());
  const scene::Task& t = *doc->find_task("swing up (policy)");
  CHECK(shac_network_form(t) == MlpForm{MlpActivation::elu, true, MlpInit::orthogonal});
  auto again = scene::parse_scene(scene::to_json(*doc), "again.json");
  REQUIRE(again.is_ok());
  CHECK(again->find_task("swing up (policy)")->shac == t.shac);
  CHECK(shac_network_form(*ok(with_shac(nlohmann::json::object())).find_task("swing up (policy)")) == MlpForm{});
  for (const auto& [key, value] :
       {std::pair{"init", nlohmann::json("xavier")}, std::pair{"layer_norm", nlohmann::json("yes")}}) {
    auto bad = with_shac({{key, value}});
    INFO(key << ": " << bad.status().message());
    REQUIRE(!bad.is_ok());
    CHECK_THAT(bad.status().message(),
               Catch::Contains("robot_cartpole.json") && Catch::Contains(std::string(".shac.") + key));
  }
}

TEST_CASE("shac networks: a LayerNorm policy's checkpoint gives the same actions", "[optim][shac][checkpoint]") {
  test::AssetScene<float> cp("robot_cartpole.json", "swing up (policy)");
  scene::Task plain = cp.task;
  plain.shac.window = 8;
  scene::Task normed = plain, glorot = plain;
  normed.shac.activation = "elu";
  normed.shac.layer_norm = true;
  normed.shac.init = "orthogonal";
  const ShacTaskSettings settings{.envs = 4, .windows = 6, .seed = 3, .thread_count = 1};
  auto task = ok(make_task(cp.cs, normed));
  auto first = ok(make_shac_trainer(*task, settings));
  const MlpForm form{MlpActivation::elu, true, MlpInit::orthogonal};
  REQUIRE(first.env().mlp().form() == form);
  for (int k = 0; k < 3; ++k) ok(first.step());
  Checkpoint ck;
  REQUIRE(first.save(ck).is_ok());
  CHECK(ck.header["shac"]["critic_network"] == network_form_json(form));
  const Checkpoint back = ok(decode_checkpoint(encode_checkpoint(ck), "mem.adjck"));
  // a scene without the keys: the checkpoint's networks set on its task
  REQUIRE(use_checkpoint_networks(back, plain).is_ok());
  CHECK(shac_network_form(plain) == form);
  auto plain_task = ok(make_task(cp.cs, plain));
  auto second = ok(make_shac_trainer(*plain_task, settings));
  REQUIRE(second.load(back).is_ok());
  CHECK(same_bits(second.weights(), first.weights()));
  // the policy's actions at the same observations, and a whole evaluation episode
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int k = 0; k < 4; ++k) {
    std::vector<float> obs(std::size_t(first.env().mlp().input_size())), a1, a2;
    for (float& v : obs) v = u(rng);
    first.env().mlp().forward(first.weights().data(), obs, a1);
    second.env().mlp().forward(second.weights().data(), obs, a2);
    CHECK(same_bits(a1, a2));
  }
  CHECK(same_bits(episode(second), episode(first)));

  SECTION("a trainer with other networks is refused, naming them") {
    auto glorot_task = ok(make_task(cp.cs, glorot));
    auto glorot = ok(make_shac_trainer(*glorot_task, settings));
    CHECK_THAT(glorot.load(back).message(),
               Catch::Contains("mem.adjck: the checkpoint's actor_network is") && Catch::Contains("layer_norm"));
  }
}
