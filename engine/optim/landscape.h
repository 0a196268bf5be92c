// Loss landscapes: what the optimizer walks on, seen through a task's evaluate(theta, grad).
//
// - a 1D slice: the loss at theta + s d for K offsets s in [-span, span] along a unit
//   direction d (the gradient's, a seeded random one, or one parameter), with the analytic
//   directional derivative g.d at the centre: kinks, plateaus and a gradient that disagrees
//   with its curve show at a glance;
// - a 2D slice: the loss on a K x K grid over two orthonormal directions, with the projected
//   gradient at the centre;
// - a smoothing sweep: the same 1D slice at several contact settings (stiffness, damping,
//   friction, smoothing width), each with its gradient at the centre, its roughness (largest
//   second difference) and what the setting does to the physics (final state against the
//   stiffest setting's);
// - gradient statistics (Suh et al. 2022): over N seeded antithetic pairs theta +- w,
//   w ~ N(0, sigma^2 I), the mean and spread of the analytic (first-order) gradient against
//   the zeroth-order randomized-smoothing estimate (L(theta + w) - L(theta - w)) w / (2 sigma^2),
//   and the angle between the two means.
//
// Points are evaluated on `threads` copies of the task in parallel, each point on its own
// copy, so results do not depend on the thread count. progress(done, total) is called from
// the calling thread; `cancel` stops between points (the result is then an error).
//
//   optim::LandscapeOptions o;  o.sweep = {{ContactKnob::ke, 1e3}, {ContactKnob::ke, 1e5}};
//   auto l = optim::compute_landscape<double>(scene, base_dir, "hit_target", o);
//   std::puts(optim::format_landscape(*l).c_str());
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/scene/scene.h"

namespace adj::optim {

enum class SliceDirection { gradient, random, parameter };
// the contact knobs a sweep turns (on the particle contact and the robots' alike)
enum class ContactKnob { ke, kd, kf, mu, eps };
const char* to_string(ContactKnob k);
// "ke" -> ContactKnob::ke; false when unknown
bool parse_contact_knob(const std::string& name, ContactKnob& out);

struct SweepSetting {
  ContactKnob knob = ContactKnob::ke;
  double value = 0;
};

// the scene with one contact knob set, on the particle contact and the robots' contact alike
scene::Scene with_contact_setting(scene::Scene doc, const SweepSetting& setting);

struct LandscapeOptions {
  SliceDirection direction = SliceDirection::gradient;
  int parameter = -1;               // theta entry for SliceDirection::parameter
  int parameter2 = -1;              // 2D: the second direction's entry; < 0: a random direction orthogonal to the first
  double span = 0;                  // half-width along the unit direction [parameter units]; <= 0: 0.1 max(1, |theta|)
  int points = 41;                  // 1D points (odd, so the centre is one)
  int grid = 0;                     // > 1: also a grid x grid 2D slice (odd)
  std::uint64_t seed = 0;           // random directions and the statistics' perturbations
  int threads = 0;                  // task copies evaluating in parallel; 0 = hardware threads
  std::vector<SweepSetting> sweep;  // more curves, one per setting (the task's own contact first)
  int stats_samples = 0;            // > 0: gradient statistics over this many perturbation pairs
  double stats_sigma = 0;           // their standard deviation; <= 0: span / 4
  std::vector<double> theta;        // the centre; empty: the task's starting parameters
};

// one curve of the 1D slice
struct LandscapeCurve {
  std::string label;         // "task contact" or "ke = 1000"
  bool swept = false;        // a sweep curve: `setting` made it
  SweepSetting setting;
  std::vector<double> loss;  // at Landscape::s (NaN where the rollout failed)
  double centre_loss = 0;
  double slope = 0;                   // analytic g.d at the centre
  double fd_slope = 0;                // central difference of the two points beside the centre
  double max_second_diff = 0;         // max |L[k+1] - 2 L[k] + L[k-1]| / h^2 over the curve (roughness)
  int roughest = -1;                  // the point k where it is largest
  double final_state_rms = 0;         // sweep: RMS difference of the centre's final positions and joint
                                      // coordinates against the stiffest curve's (0 for that one)
  std::vector<std::string> failures;  // "s = 0.3: <why>" for points whose rollout failed
};

struct GradientStats {
  int samples = 0;  // antithetic pairs whose rollouts all ran
  double sigma = 0;
  std::vector<double> first_mean, zeroth_mean;  // (theta size)
  double first_norm = 0, zeroth_norm = 0;       // |mean|
  double first_spread = 0, zeroth_spread = 0;   // sqrt(mean |g_i - mean|^2)
  double angle_deg = 0;                         // between the two means
  // the angle the zeroth-order estimate's own noise explains: atan(standard error of its
  // mean / |analytic mean|); an angle well above it is bias, not sampling noise
  double noise_angle_deg = 0;
  // |first_mean - zeroth_mean| and the standard error of that difference from sampling alone:
  // a difference of many standard errors is the analytic gradient's bias (or the smoothing's)
  double difference = 0, difference_stderr = 0;
};

struct Landscape {
  std::string task;
  std::string direction;               // "gradient", "random (seed 0)" or the entry's name
  std::vector<double> d;               // the unit direction (theta size)
  std::vector<double> theta;           // the centre
  std::vector<double> grad;            // dL/dtheta at the centre (the task's own contact)
  std::vector<double> s;               // offsets along d, (points)
  std::vector<LandscapeCurve> curves;  // the task's own contact, then each sweep setting
  // 2D slice (grid > 1)
  int grid = 0;
  std::string direction2;
  std::vector<double> d2;
  std::vector<double> s2;          // offsets along d2, (grid); along d: the same span, grid points
  std::vector<double> loss2d;      // [j * grid + i] at s_i d + s2_j d2
  double grad_d = 0, grad_d2 = 0;  // the gradient projected on d and d2
  GradientStats stats;             // stats_samples > 0
  int evaluations = 0;             // rollouts run in all
};

template <class S>
Result<Landscape> compute_landscape(const scene::Scene& doc, const std::string& base_dir, const std::string& task,
                                    const LandscapeOptions& options,
                                    const std::function<void(int done, int total)>& progress = {},
                                    const std::atomic<bool>* cancel = nullptr);

// the numbers as a table (one row per point, one column per curve) and the summaries
std::string format_landscape(const Landscape& l);

}  // namespace adj::optim
