// loss landscapes (engine/optim/landscape.h): the slice agrees with the gradient where the
// task is smooth, shows the kink where the bounce's ball starts to miss the wall, the sweep
// orders the curves as contact physics says, and the gradient statistics tell the smooth
// task's unbiased gradient from the bounce's biased one
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/optim/landscape.h"
#include "engine/optim/task.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

namespace adj::optim {
namespace {

const std::string k_dir = ADJ_ASSET_SCENES;

scene::Scene load(const char* file) {
  auto s = scene::load_scene(k_dir + "/" + file);
  REQUIRE(s.is_ok());
  return *s;
}

double dot_of(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
double norm_of(const std::vector<double>& a) { return std::sqrt(dot_of(a, a)); }

Landscape run(const scene::Scene& doc, const std::string& task, const LandscapeOptions& o) {
  auto l = compute_landscape<double>(doc, k_dir, task, o);
  INFO(l.status().message());
  REQUIRE(l.is_ok());
  return std::move(*l);
}

TEST_CASE("landscape: on a smooth task the slice's slope at the centre is the gradient's", "[optim][landscape]") {
  const scene::Scene doc = load("spring_cage.json");
  LandscapeOptions o;
  o.span = 0.02;  // h = 1e-3: the central difference's error is O(h^2 L''')
  o.points = 41;
  o.threads = 2;
  for (SliceDirection d : {SliceDirection::gradient, SliceDirection::random}) {
    o.direction = d;
    const Landscape l = run(doc, "reach", o);
    REQUIRE(l.curves.size() == 1);
    const LandscapeCurve& c = l.curves[0];
    INFO(l.direction << ": slope " << c.slope << " central difference " << c.fd_slope);
    CHECK(std::abs(c.fd_slope - c.slope) <= 1e-4 * std::max(1.0, std::abs(c.slope)));
    CHECK(c.failures.empty());
    REQUIRE(l.s.size() == 41);
    CHECK(l.s[20] == 0.0);
    CHECK(std::abs(norm_of(l.d) - 1.0) < 1e-12);
    if (d == SliceDirection::gradient) CHECK(c.slope > 0);  // uphill along +g
  }
}

TEST_CASE("landscape: the bounce's slice has its kink where the ball starts to miss the wall", "[optim][landscape]") {
  const scene::Scene doc = load("bounce.json");
  auto cs = scene::compile<double>(doc, k_dir);
  REQUIRE(cs.is_ok());
  auto task = make_task(*cs, *doc.find_task("hit_target"));
  REQUIRE(task.is_ok());
  std::vector<double> theta = (*task)->theta();
  const int vy = 1;  // initial_velocity[ball][0].y
  REQUIRE((*task)->entry_name(vy) == "initial_velocity[ball][0].y");
  // where, independently of the landscape, the ball first flies over the wall (it ends
  // behind it, x > 2.25) as the initial downward speed grows: the first s, from 0 down
  const double h = 0.05;
  double miss = 0;
  for (double s = 0; s >= -4; s -= h) {
    std::vector<double> th = theta;
    th[vy] += s;
    REQUIRE((*task)->evaluate(th).is_ok());
    if ((*task)->final_state().particle_q[0].x > 2.25) {
      miss = s;
      break;
    }
  }
  INFO("the ball misses the wall from s = " << miss);
  REQUIRE(miss < -1);

  LandscapeOptions o;
  o.direction = SliceDirection::parameter;
  o.parameter = vy;
  o.span = 4;
  o.points = 161;  // h = 0.05, the scan's step
  o.threads = 2;
  const Landscape l = run(doc, "hit_target", o);
  const LandscapeCurve& c = l.curves[0];
  REQUIRE(c.roughest >= 0);
  INFO("roughest at s = " << l.s[size_t(c.roughest)] << ", |L''| " << c.max_second_diff);
  // the ball grazes the wall's top edge over a few tenths of vy before it clears it (penalty
  // contact has no sharp edge): the sharpest bend lies within that transition
  CHECK(std::abs(l.s[size_t(c.roughest)] - miss) <= 4 * h + 1e-9);
  // a jump in slope, not a wiggle: the one-sided slopes around the kink differ by far more
  // than the slope anywhere on the smooth side
  const int k = c.roughest;
  const double left = (c.loss[size_t(k - 1)] - c.loss[size_t(k - 3)]) / (2 * h);
  const double right = (c.loss[size_t(k + 3)] - c.loss[size_t(k + 1)]) / (2 * h);
  double smooth = 0;
  for (size_t j = 100; j + 1 < c.loss.size(); ++j) smooth = std::max(smooth, std::abs(c.loss[j + 1] - c.loss[j]) / h);
  INFO("slopes " << left << " | " << right << ", smooth side at most " << smooth);
  CHECK(std::abs(left - right) > 5 * smooth);
}

TEST_CASE("landscape: softer contact gives a smoother slice (bounce, cloth on a sphere)", "[optim][landscape]") {
  struct Case {
    const char* file;
    const char* task;
    std::vector<double> ke;  // ascending
    int points;
  };
  for (const Case& k : {Case{"bounce.json", "hit_target", {1e3, 1e4, 1e5}, 41},
                        Case{"default.json", "land_on_target", {500, 2000, 8000}, 15}}) {
    INFO(k.file);
    const scene::Scene doc = load(k.file);
    LandscapeOptions o;
    o.points = k.points;
    o.threads = 2;
    for (double v : k.ke) o.sweep.push_back({ContactKnob::ke, v});
    const Landscape l = run(doc, k.task, o);
    REQUIRE(l.curves.size() == 1 + k.ke.size());
    for (size_t i = 1; i + 1 < l.curves.size(); ++i) {
      INFO(l.curves[i].label << ": " << l.curves[i].max_second_diff << " vs " << l.curves[i + 1].label << ": "
                             << l.curves[i + 1].max_second_diff);
      CHECK(l.curves[i].max_second_diff < l.curves[i + 1].max_second_diff);
    }
    // what the softness costs: the final state moves away from the stiffest setting's
    CHECK(l.curves.back().final_state_rms == 0.0);
    CHECK(l.curves[1].final_state_rms > 1e-3);
    CHECK(l.curves[1].label == "ke = " + std::to_string(int(k.ke[0])));
  }
}

TEST_CASE("landscape: gradient statistics, unbiased on a smooth task, biased on the bounce", "[optim][landscape]") {
  LandscapeOptions o;
  o.points = 3;
  o.threads = 2;
  o.seed = 7;
  {
    o.span = 0.02;
    o.stats_samples = 1024;
    const Landscape l = run(load("spring_cage.json"), "reach", o);
    const GradientStats& s = l.stats;
    INFO("angle " << s.angle_deg << " (noise " << s.noise_angle_deg << "), difference " << s.difference << " +- "
                  << s.difference_stderr);
    REQUIRE(s.samples == 1024);
    CHECK(s.angle_deg < 2 * s.noise_angle_deg);
    CHECK(s.angle_deg < 10);
    CHECK(s.difference < 3 * s.difference_stderr);
  }
  {
    o.span = 0;  // the default: sigma = 0.1 |theta| / 4
    o.stats_samples = 256;
    const Landscape l = run(load("bounce.json"), "hit_target", o);
    const GradientStats& s = l.stats;
    INFO("angle " << s.angle_deg << " (noise " << s.noise_angle_deg << "), difference " << s.difference << " +- "
                  << s.difference_stderr);
    CHECK(s.angle_deg > 1.5 * s.noise_angle_deg);
    CHECK(s.difference > 4 * s.difference_stderr);
  }
}

TEST_CASE("landscape: the same points whatever the thread count, bad options are refused", "[optim][landscape]") {
  const scene::Scene doc = load("bounce.json");
  LandscapeOptions o;
  o.points = 9;
  o.grid = 5;
  o.stats_samples = 4;
  o.threads = 1;
  const Landscape a = run(doc, "hit_target", o);
  o.threads = 3;
  const Landscape b = run(doc, "hit_target", o);
  CHECK(a.curves[0].loss == b.curves[0].loss);
  CHECK(a.loss2d == b.loss2d);
  CHECK(a.stats.first_mean == b.stats.first_mean);
  CHECK(a.loss2d.size() == 25);
  CHECK(std::abs(dot_of(a.d, a.d2)) < 1e-12);  // the 2D slice's directions are orthonormal
  o.points = 4;
  auto bad = compute_landscape<double>(doc, k_dir, "hit_target", o);
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("points must be odd"));
  o.points = 9;
  bad = compute_landscape<double>(doc, k_dir, "nope", o);
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("no task \"nope\""));
}

}  // namespace
}  // namespace adj::optim
