// The editor's document: every edit undoes and redoes exactly; merges, dirty state,
// renames and deletes keep tasks consistent; fields are addressed by path.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "app/editor/document.h"
#include "app/editor/fields.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

using namespace adj;
using namespace adj::editor;

namespace {

scene::Scene load(const char* name) {
  auto s = scene::load_scene(std::string(ADJ_SCENES) + "/" + name);
  REQUIRE(s.is_ok());
  return *s;
}

// one random edit of the kinds the editor makes
void random_edit(Document& d, std::mt19937& rng) {
  const auto& s = d.scene();
  std::uniform_real_distribution<double> u(-2, 2);
  int n = int(s.objects.size());
  int i = n > 0 ? int(rng() % unsigned(n)) : -1;
  switch (rng() % 11) {
    case 0:
      if (i >= 0) {
        scene::Object o = s.objects[size_t(i)];
        for (const Field& f : object_fields(o))
          if (f.type == FieldType::vec3) (*static_cast<scene::V3*>(f.get(o)))[rng() % 3] = u(rng);
        d.set_object(i, o, "move");
      }
      break;
    case 1: {
      scene::Settings st = s.settings;
      st.contact.ke = 100 + 1000 * std::abs(u(rng));
      st.substeps = 1 + int(rng() % 10);
      d.set_settings(st, "settings");
      break;
    }
    case 2:
      if (i >= 0) d.duplicate_object(i);
      break;
    case 3:
      if (i >= 0 && n > 1) d.delete_object(i);
      break;
    case 4:
      if (i >= 0) d.rename_object(i, "renamed" + std::to_string(rng() % 5));
      break;
    case 5:
      if (!s.tasks.empty()) {
        scene::Task t = s.tasks[0];
        t.optimizer.lr = std::abs(u(rng));
        if (!t.loss.empty()) t.loss[0].weight = std::abs(u(rng));
        d.set_task(0, t, "task");
      }
      break;
    case 6: {  // a drag: several merged edits
      if (i < 0) break;
      uint64_t key = 1000 + rng() % 3;
      for (int k = 0; k < 4; ++k) {
        scene::Object o = d.scene().objects[size_t(i)];
        o.visible = !o.visible;
        d.set_object(i, o, "drag", key);
      }
      d.end_merge();
      break;
    }
    case 7: {
      scene::Object o;
      o.name = "ball";
      o.kind = scene::ObjectKind::target;
      o.target.position = {u(rng), u(rng), u(rng)};
      d.add_object(o, "add");
      break;
    }
    case 8:
      if (d.can_undo() && rng() % 2) d.undo();
      break;  // undo in the middle, then edit on
    case 9:   // loss terms: add one, or retarget / remove one
      if (!s.tasks.empty()) {
        const auto& loss = s.tasks[0].loss;
        scene::LossTerm t;
        t.kind = scene::LossKind::velocity;
        t.object = i >= 0 ? s.objects[size_t(i)].name : "";
        t.step = int(rng() % 30);
        if (loss.empty() || rng() % 2)
          d.add_loss_term(0, t);
        else
          d.remove_loss_term(0, int(rng() % loss.size()));
      }
      break;
    case 10:
      if (!s.tasks.empty() && !s.tasks[0].loss.empty()) {
        scene::LossTerm t = s.tasks[0].loss[0];
        t.weight = std::abs(u(rng));
        t.step = int(rng() % 10) - 1;
        d.set_loss_term(0, 0, t, "loss", 77);  // a drag: merged
      }
      break;
  }
}

}  // namespace

TEST_CASE("random edits, then undo all, give back the original scene exactly", "[editor][document]") {
  for (const char* file : {"default.json", "bounce.json", "spring_cage.json", "cloth_throw.json"}) {
    const scene::Scene original = load(file);
    for (unsigned seed = 0; seed < 20; ++seed) {
      std::mt19937 rng(seed);
      Document d(original, "x.json");
      for (int k = 0; k < 40; ++k) random_edit(d, rng);
      const scene::Scene edited = d.scene();
      int steps = 0;
      while (d.undo()) ++steps;
      INFO(file << " seed " << seed << " after undoing " << steps << " steps");
      REQUIRE(d.scene() == original);
      REQUIRE_FALSE(d.dirty());
      for (int k = 0; k < steps; ++k) REQUIRE(d.redo());
      REQUIRE(d.scene() == edited);
    }
  }
}

TEST_CASE("a drag merges into one undo step, end_merge starts the next", "[editor][document]") {
  const scene::Scene original = load("default.json");
  Document d(original, "x.json");
  scene::Object o = d.scene().objects[0];
  for (int k = 1; k <= 10; ++k) {
    o.cloth.position[1] = 1.0 + 0.1 * k;
    d.set_object(0, o, "drag", 42);
  }
  CHECK(d.undo_count() == 1);
  d.end_merge();
  o.cloth.position[1] = 5.0;
  d.set_object(0, o, "drag", 42);
  CHECK(d.undo_count() == 2);
  d.undo();
  CHECK(d.scene().objects[0].cloth.position[1] == Approx(2.0));
  d.undo();
  CHECK(d.scene() == original);
}

TEST_CASE("dirty follows the saved state through undo and redo", "[editor][document]") {
  Document d(load("default.json"), "x.json");
  CHECK_FALSE(d.dirty());
  scene::Settings s = d.scene().settings;
  s.damping = 0.5;
  d.set_settings(s, "damping");
  CHECK(d.dirty());
  d.mark_saved("x.json");
  CHECK_FALSE(d.dirty());
  d.undo();
  CHECK(d.dirty());
  d.redo();
  CHECK_FALSE(d.dirty());
  s.damping = d.scene().settings.damping;  // a no-op edit records nothing
  d.set_settings(s, "same");
  CHECK_FALSE(d.dirty());
  CHECK(d.undo_count() == 1);
}

TEST_CASE("rename and delete keep the tasks' references right", "[editor][document]") {
  Document d(load("default.json"), "");
  const scene::Task& t0 = d.scene().tasks.at(0);
  REQUIRE_FALSE(t0.parameters.empty());
  std::string obj = t0.parameters[0].object;
  int index = -1;
  for (size_t i = 0; i < d.scene().objects.size(); ++i)
    if (d.scene().objects[i].name == obj) index = int(i);
  REQUIRE(index >= 0);
  CHECK_FALSE(d.rename_object(index, ""));
  CHECK(d.rename_object(index, "sheet"));
  CHECK(d.scene().tasks[0].parameters[0].object == "sheet");
  d.delete_object(index);
  for (const auto& p : d.scene().tasks[0].parameters) CHECK(p.object != "sheet");
  for (const auto& l : d.scene().tasks[0].loss) CHECK(l.object != "sheet");
  d.undo();
  d.undo();
  CHECK(d.scene().tasks[0].parameters[0].object == obj);
}

TEST_CASE("loss terms: add, set (merged drags), remove, each undoes exactly", "[editor][document]") {
  const scene::Scene original = load("cloth_throw.json");
  REQUIRE_FALSE(original.tasks.empty());
  Document d(original, "x.json");
  const size_t n = original.tasks[0].loss.size();
  scene::LossTerm t;
  t.kind = scene::LossKind::velocity;
  t.object = original.objects.back().name;
  CHECK(d.add_loss_term(0, t) == int(n));
  CHECK(d.add_loss_term(5, t) == -1);  // no such task: nothing recorded
  CHECK(d.undo_count() == 1);
  for (double w : {0.5, 0.25, 0.125}) {  // one drag of the weight
    t.weight = w;
    CHECK(d.set_loss_term(0, int(n), t, "weight", 42));
  }
  d.end_merge();
  CHECK(d.undo_count() == 2);
  CHECK(d.scene().tasks[0].loss[n].weight == 0.125);
  CHECK_FALSE(d.set_loss_term(0, int(n) + 1, t, "weight"));
  CHECK(d.remove_loss_term(0, int(n)));
  CHECK_FALSE(d.remove_loss_term(0, int(n)));
  CHECK(d.scene().tasks[0].loss.size() == n);
  CHECK(d.undo());
  CHECK(d.scene().tasks[0].loss[n].weight == 0.125);
  CHECK(d.undo());
  CHECK(d.scene().tasks[0].loss[n].weight == 1.0);
  CHECK(d.undo());
  CHECK(d.scene() == original);
}

TEST_CASE("same_simulation: names, visibility, targets and tasks do not change what is simulated",
          "[editor][document]") {
  const scene::Scene a = load("cloth_throw.json");
  scene::Scene b = a;
  b.name = "other";
  b.tasks.clear();
  for (auto& o : b.objects) {
    o.name += "_x";
    o.visible = false;
    if (o.kind == scene::ObjectKind::target) o.target.position[0] += 1;
  }
  CHECK(same_simulation(a, b));
  scene::Scene c = a;
  c.settings.contact.ke *= 2;
  CHECK_FALSE(same_simulation(a, c));
  scene::Scene e = a;
  for (auto& o : e.objects)
    if (o.kind == scene::ObjectKind::cloth) o.cloth.position[1] += 0.1;
  CHECK_FALSE(same_simulation(a, e));
  scene::Scene f = a;
  f.objects.pop_back();
  CHECK_FALSE(same_simulation(a, f));
}

TEST_CASE("duplicate names the copy like Blender", "[editor][document]") {
  Document d(load("default.json"), "");
  int c = d.duplicate_object(0);
  CHECK(d.scene().objects[size_t(c)].name == d.scene().objects[0].name + ".001");
  int c2 = d.duplicate_object(c);
  CHECK(d.scene().objects[size_t(c2)].name == d.scene().objects[0].name + ".002");
}

TEST_CASE("fields by path: set, get, and errors that name the path", "[editor][fields]") {
  scene::Scene s = load("default.json");
  const std::string cloth = s.objects[0].name;
  REQUIRE(set_by_path(s, cloth + ".position.y", "2.5").is_ok());
  CHECK(s.objects[0].cloth.position[1] == 2.5);
  REQUIRE(set_by_path(s, cloth + ".material.tri_ke", "1234").is_ok());
  CHECK(*get_by_path(s, cloth + ".material.tri_ke") == "1234");
  REQUIRE(set_by_path(s, "settings.contact.mu", "0.25").is_ok());
  CHECK(s.settings.contact.mu == 0.25);
  REQUIRE(set_by_path(s, cloth + ".visible", "false").is_ok());
  CHECK_FALSE(s.objects[0].visible);
  Status bad = set_by_path(s, cloth + ".nope", "1");
  CHECK_FALSE(bad.is_ok());
  CHECK(bad.message().find(cloth + ".nope") != std::string::npos);
  CHECK_FALSE(set_by_path(s, "missing.position", "1,2,3").is_ok());
  CHECK_FALSE(set_by_path(s, "settings.substeps", "2.5").is_ok());
}

TEST_CASE("document: a cloth's optimized initial state follows its placement and goes with its particles",
          "[editor][document]") {
  scene::Scene s;
  scene::Object c;
  c.name = "cloth";
  c.kind = scene::ObjectKind::cloth;
  c.cloth.nx = 3;
  c.cloth.ny = 2;
  c.cloth.rotation = {90, 0, 0};
  s.objects.push_back(c);
  // the optimized state: the generated positions, the velocities all different
  auto generated = [](const scene::Scene& sc) {
    auto cs = scene::compile<double>(sc, ".");
    REQUIRE(cs.is_ok());
    std::vector<scene::V3> q;
    for (const auto& p : cs->model.particle_q) q.push_back({p.x, p.y, p.z});
    return q;
  };
  s.objects[0].cloth.particle_positions = generated(s);
  for (int i = 0; i < 12; ++i) s.objects[0].cloth.particle_velocities.push_back({double(i), 1, 0});
  Document doc(s, "");
  // moved and turned in the inspector: the list is where the grid now generates its particles
  scene::Object moved = doc.scene().objects[0];
  moved.cloth.position = {1, 2, 3};
  moved.cloth.rotation = {90, 30, 0};
  moved.cloth.cell = 0.2;  // twice the default cell: twice as far apart
  doc.set_object(0, moved, "Move");
  scene::Scene plain = doc.scene();
  plain.objects[0].cloth.particle_positions.clear();
  const auto want = generated(plain);
  const auto& got = doc.scene().objects[0].cloth.particle_positions;
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    for (int k = 0; k < 3; ++k) CHECK(got[i][size_t(k)] == Approx(want[i][size_t(k)]).margin(1e-12));
  CHECK(doc.scene().objects[0].cloth.particle_velocities[3][0] == Approx(3 * std::cos(3.14159265358979 / 6)));
  // undo gives the list back exactly
  REQUIRE(doc.undo());
  CHECK(doc.scene() == s);
  // another grid: other particles, so the optimized state goes
  scene::Object bigger = doc.scene().objects[0];
  bigger.cloth.nx = 4;
  doc.set_object(0, bigger, "nx");
  CHECK(doc.scene().objects[0].cloth.particle_positions.empty());
  CHECK(doc.scene().objects[0].cloth.particle_velocities.empty());
  CHECK(scene::compile<float>(doc.scene(), ".").is_ok());
}
