#include "engine/optim/parameters.h"

#include "tests/engine/optim/grad_check.h"
#include "tests/engine/optim/optim_scenes.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

TEST_CASE("parameters: blocks, layout and entry names", "[optim][parameters]") {
  auto cs = cage_scene<double>(true);
  Task t = cage_task(5);
  t.parameters = {{ParamKind::spring_rest, "cage", 0.1, 2.0},
                  {ParamKind::spring_activation, "cage", -0.5, 0.5},
                  {ParamKind::initial_velocity, "cage"},
                  {ParamKind::contact_ke, ""}};
  auto p = must_ok(ParametersT<double>::create(cs, t));
  REQUIRE(p.blocks().size() == 4);
  CHECK(p.blocks()[0].count == 8);
  CHECK(p.blocks()[1].count == 5 * 4);  // horizon x actuated springs
  CHECK(p.blocks()[1].offset == 8);
  CHECK(p.blocks()[2].count == 9 * 3);
  CHECK(p.blocks()[3].count == 1);
  CHECK(p.size() == 8 + 20 + 27 + 1);
  CHECK(p.has_controls());
  CHECK(p.entry_name(2) == "spring_rest[cage][2]");
  CHECK(p.entry_name(8 + 4 * 2 + 1) == "spring_activation[cage][t=2][3]");  // actuated springs 1, 3, 4, 6
  CHECK(p.entry_name(28 + 3 * 1 + 2) == "initial_velocity[cage][1].z");
  CHECK(p.entry_name(55) == "contact_ke");

  // initial values come from the model, clamped to the bounds
  auto theta = p.initial(cs);
  CHECK(theta[0] == Approx(std::sqrt(0.75)));
  CHECK(theta[55] == cs.model.contact_ke);
  theta[0] = 5.0;
  theta[9] = -3.0;
  p.clamp(theta);
  CHECK(theta[0] == 2.0);
  CHECK(theta[9] == -0.5);
}

TEST_CASE("parameters: apply writes model, initial state and per-step controls", "[optim][parameters]") {
  auto cs = cage_scene<double>(true);
  Task t = cage_task(3);
  t.parameters = {{ParamKind::spring_rest, "cage"}, {ParamKind::spring_activation, "cage"},
                  {ParamKind::initial_position, "cage"}, {ParamKind::control_force, "cage"}};
  auto p = must_ok(ParametersT<double>::create(cs, t));
  std::vector<double> theta(p.size());
  for (int i = 0; i < p.size(); ++i) theta[i] = 0.001 * i;
  ModelT<double> m = cs.model;
  StateT<double> s;
  std::vector<ControlT<double>> c;
  p.apply(theta, m, s, c);
  REQUIRE(c.size() == 3);
  CHECK(m.spring_rest[5] == theta[5]);
  const ParamBlock& act = p.blocks()[1];
  CHECK(c[2].spring_act[4] == theta[act.offset + 2 * 4 + 2]);  // step 2, actuated spring #2 = model spring 4
  CHECK(c[2].spring_act[0] == 0.0);                             // not actuated
  const ParamBlock& q = p.blocks()[2];
  CHECK(s.particle_q[4].y == theta[q.offset + 4 * 3 + 1]);
  const ParamBlock& f = p.blocks()[3];
  CHECK(c[1].particle_f[7].z == theta[f.offset + (1 * 9 + 7) * 3 + 2]);
  CHECK(s.particle_qd[3] == cs.model.particle_qd[3]);  // not a parameter: the model's
}

TEST_CASE("parameters: errors name the task and the parameter", "[optim][parameters]") {
  auto cs = cage_scene<double>(false);
  auto err = [&](std::vector<scene::ParamSpec> specs) {
    Task t = cage_task(3);
    t.parameters = specs;
    auto r = ParametersT<double>::create(cs, t);
    REQUIRE(!r.is_ok());
    return r.status().message();
  };
  CHECK_THAT(err({{ParamKind::spring_rest, "nope"}}), Catch::Contains("no object named 'nope'") &&
                                                         Catch::Contains("task 'cage': parameters[0]"));
  CHECK_THAT(err({{ParamKind::spring_activation, "cage"}}), Catch::Contains("no actuated springs"));
  CHECK_THAT(err({{ParamKind::tet_mu, "cage"}}), Catch::Contains("no tetrahedra"));
  CHECK_THAT(err({{ParamKind::spring_rest, "cage"}, {ParamKind::spring_rest, "cage"}}),
             Catch::Contains("parameters[1]") && Catch::Contains("listed twice"));
  CHECK_THAT(err({{ParamKind::spring_rest, "cage", 2.0, 1.0}}), Catch::Contains("lower bound above upper"));
  CHECK_THAT(err({{ParamKind::policy, ""}}), Catch::Contains("no policy"));
  CHECK_THAT(err({{ParamKind::spring_rest, "goal"}}), Catch::Contains("no springs"));
}

// each parameter kind's gradient against central differences of the whole task, in double

TEST_CASE("parameters: initial position and velocity through wall and ground contact", "[optim][parameters][fd]") {
  Task t = bounce_task(20);
  t.parameters = {{ParamKind::initial_position, "ball"}, {ParamKind::initial_velocity, "ball"}};
  check_task_grad(bounce_scene<double>(), t, 0, 1e-4);
}

TEST_CASE("parameters: control forces, with an effort term", "[optim][parameters][fd]") {
  Task t = bounce_task(12);
  t.parameters = {{ParamKind::control_force, "ball"}};
  t.loss.push_back({LossKind::effort, "ball", "", -1, {1, 0, 0}, 0.01});
  auto cs = bounce_scene<double>();
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs, t));
  // move away from zero controls so the effort gradient is not trivially zero
  std::vector<double> theta(r.theta().size());
  for (int i = 0; i < int(theta.size()); ++i) theta[i] = 0.3 * std::sin(1.7 * i);
  r.set_theta(theta);
  GradCheckReport rep = must_ok(r.check_grad(0, 1e-6, 1));
  INFO(rep.format());
  CHECK(rep.rows.size() == 36);
  CHECK(rep.max_rel_err < 1e-4);
}

TEST_CASE("parameters: bounce, whole horizon", "[optim][parameters][fd][.bounce]") {
  check_task_grad(bounce_scene<double>(), bounce_task(), 0, 1e-4);
}

TEST_CASE("parameters: spring rest lengths and stiffnesses", "[optim][parameters][fd]") {
  Task t = cage_task(30);
  t.parameters = {{ParamKind::spring_rest, "cage"}, {ParamKind::spring_ke, "cage"}};
  check_task_grad(cage_scene<double>(), t, 0, 1e-5);
}

TEST_CASE("parameters: spring activations", "[optim][parameters][fd]") {
  Task t = cage_task(10);
  t.parameters = {{ParamKind::spring_activation, "cage"}};
  t.loss = {{LossKind::position, "cage", "goal"}, {LossKind::velocity, "cage", "", 6}};
  check_task_grad(cage_scene<double>(true), t, 0, 1e-5);
}

TEST_CASE("parameters: tet Lame parameters", "[optim][parameters][fd]") {
  Task t;
  t.name = "jelly";
  t.horizon = 20;
  t.parameters = {{ParamKind::tet_mu, "jelly"}, {ParamKind::tet_lambda, "jelly"}};
  t.loss = {{LossKind::shape, "jelly", "goal"}};
  check_task_grad(soft_scene<double>(), t, 0, 1e-4);
}

TEST_CASE("parameters: contact stiffness, damping and friction", "[optim][parameters][fd]") {
  Task t;
  t.name = "slide";
  t.horizon = 20;
  t.parameters = {{ParamKind::contact_ke, ""}, {ParamKind::contact_kd, ""}, {ParamKind::contact_mu, ""},
                  {ParamKind::initial_velocity, "ball"}};
  t.loss = {{LossKind::position, "ball", "goal"}};
  check_task_grad(slide_scene<double>(), t, 0, 1e-4);
}

TEST_CASE("parameters: cloth initial positions, velocities and forces", "[optim][parameters][fd]") {
  Task t;
  t.name = "cloth";
  t.horizon = 15;
  t.parameters = {{ParamKind::initial_position, "cloth"}, {ParamKind::initial_velocity, "cloth"},
                  {ParamKind::control_force, "cloth"}};
  // shape and distance also read frame 0: their initial-state seeds meet initial_position
  t.loss = {{LossKind::position, "cloth", "goal"}, {LossKind::shape, "cloth", "goal", -1, {1, 0, 0}, 0.5},
            {LossKind::distance, "cloth", "", 10, {1, 0, 1}, 0.3}};
  check_task_grad(cloth_scene<double>(), t, 60, 1e-4);
}

TEST_CASE("parameters: cloth material, aerodynamics, masses and gravity", "[optim][parameters][fd][fields]") {
  Task t;
  t.name = "cloth material";
  t.horizon = 15;
  t.parameters = {{ParamKind::tri_ke, "cloth"},
                  {ParamKind::tri_ka, "cloth"},
                  {ParamKind::tri_kd, "cloth"},
                  {ParamKind::edge_ke, "cloth"},
                  {ParamKind::particle_mass, "cloth"},
                  {ParamKind::lift, ""},
                  {ParamKind::drag, ""},
                  {ParamKind::gravity, ""}};
  t.loss = {{LossKind::position, "cloth", "goal"}, {LossKind::shape, "cloth", "goal", -1, {1, 0, 0}, 0.5}};
  auto cs = cloth_scene<double>();
  auto p = must_ok(ParametersT<double>::create(cs, t));
  const int tris = cs.model.tri_count(), edges = cs.model.edge_count(), n = cs.model.particle_count();
  REQUIRE(p.blocks().size() == 8);
  CHECK(p.blocks()[0].count == tris);
  CHECK(p.blocks()[3].count == edges);
  CHECK(p.blocks()[4].count == n);     // no pinned particle
  CHECK(p.blocks()[4].lower == 1e-6);  // masses stay positive
  CHECK(p.blocks()[7].count == 3);
  CHECK(p.size() == 3 * tris + edges + n + 2 + 3);
  CHECK(p.entry_name(1) == "tri_ke[cloth][1]");
  CHECK(p.entry_name(3 * tris + 2) == "edge_ke[cloth][2]");
  CHECK(p.entry_name(3 * tris + edges + n) == "lift");
  CHECK(p.entry_name(p.size() - 2) == "gravity.y");
  auto theta = p.initial(cs);
  CHECK(theta[0] == cs.model.tri_ke[0]);
  CHECK(theta[3 * tris + edges + n + 1] == cs.model.tri_drag);
  CHECK(theta[p.size() - 2] == cs.model.gravity.y);
  // apply writes each field where the table says
  for (double& x : theta) x *= 1.5;
  ModelT<double> m = cs.model;
  StateT<double> s;
  std::vector<ControlT<double>> c;
  p.apply(theta, m, s, c);
  CHECK(m.tri_ka[2] == 1.5 * cs.model.tri_ka[2]);
  CHECK(m.edge_ke[0] == 1.5 * cs.model.edge_ke[0]);
  CHECK(m.tri_lift == 1.5 * cs.model.tri_lift);
  CHECK(m.gravity.y == 1.5 * cs.model.gravity.y);
  CHECK(m.particle_mass[3] == 1.5 * cs.model.particle_mass[3]);
  // and the gradient of every entry matches central differences through the rollout
  check_task_grad(cs, t, 0, 1e-4);
}

TEST_CASE("parameters: field kinds refuse objects without their elements", "[optim][parameters][fields]") {
  auto cs = cage_scene<double>();
  Task t = cage_task(5);
  auto err = [&](std::vector<scene::ParamSpec> ps) {
    t.parameters = std::move(ps);
    auto p = ParametersT<double>::create(cs, t);
    REQUIRE(!p);
    return p.status().message();
  };
  CHECK_THAT(err({{ParamKind::tri_ke, "cage"}}), Catch::Contains("has no triangles"));
  CHECK_THAT(err({{ParamKind::edge_ke, "cage"}}), Catch::Contains("has no bending edges"));
  CHECK_THAT(err({{ParamKind::body_mass, "cage"}}), Catch::Contains("robot parameter"));
}
