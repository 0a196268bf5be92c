#include "app/cmd_landscape.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/image_io.h"
#include "app/landscape_plot.h"
#include "app/scene_task.h"
#include "engine/optim/landscape.h"
#include "engine/optim/task.h"

namespace adj::app {

namespace {

// a parameter entry by its name ("initial_velocity[ball][0].x") or index; -1 when unknown
int find_entry(const optim::TaskT<double>& task, const std::string& what) {
  const int n = int(task.theta().size());
  char* end = nullptr;
  const long i = std::strtol(what.c_str(), &end, 10);
  if (end && *end == '\0' && !what.empty()) return i >= 0 && i < n ? int(i) : -1;
  for (int k = 0; k < n; ++k)
    if (task.entry_name(k) == what) return k;
  return -1;
}

// "ke=1e3,1e4" -> settings; false with a message
bool parse_sweep(const std::string& text, std::vector<optim::SweepSetting>& out, std::string& error) {
  const size_t eq = text.find('=');
  optim::ContactKnob knob;
  if (eq == std::string::npos || !optim::parse_contact_knob(text.substr(0, eq), knob)) {
    error = "--sweep " + text + ": expected KNOB=V1,V2,... with KNOB one of ke, kd, kf, mu, eps";
    return false;
  }
  std::stringstream list(text.substr(eq + 1));
  for (std::string v; std::getline(list, v, ',');) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x)) {
      error = "--sweep " + text + ": \"" + v + "\" is not a number";
      return false;
    }
    out.push_back({knob, x});
  }
  return true;
}

nlohmann::json numbers(const std::vector<double>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (double x : v) a.push_back(std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr));
  return a;
}

nlohmann::json to_json(const optim::Landscape& l) {
  nlohmann::json j;
  j["task"] = l.task;
  j["direction"] = l.direction;
  j["d"] = numbers(l.d);
  j["theta"] = numbers(l.theta);
  j["grad"] = numbers(l.grad);
  j["s"] = numbers(l.s);
  for (const optim::LandscapeCurve& c : l.curves)
    j["curves"].push_back({{"label", c.label},
                           {"loss", numbers(c.loss)},
                           {"centre_loss", c.centre_loss},
                           {"slope", c.slope},
                           {"fd_slope", c.fd_slope},
                           {"max_second_diff", c.max_second_diff},
                           {"final_state_rms", std::isfinite(c.final_state_rms) ? nlohmann::json(c.final_state_rms)
                                                                                : nlohmann::json(nullptr)},
                           {"failures", c.failures}});
  if (l.grid > 1)
    j["slice2d"] = {{"grid", l.grid},      {"direction2", l.direction2}, {"d2", numbers(l.d2)},
                    {"s2", numbers(l.s2)}, {"loss", numbers(l.loss2d)},  {"grad_d", l.grad_d},
                    {"grad_d2", l.grad_d2}};
  if (l.stats.samples > 0)
    j["stats"] = {{"samples", l.stats.samples},
                  {"sigma", l.stats.sigma},
                  {"first_mean", numbers(l.stats.first_mean)},
                  {"zeroth_mean", numbers(l.stats.zeroth_mean)},
                  {"first_spread", l.stats.first_spread},
                  {"zeroth_spread", l.stats.zeroth_spread},
                  {"angle_deg", l.stats.angle_deg},
                  {"noise_angle_deg", l.stats.noise_angle_deg},
                  {"difference", l.stats.difference},
                  {"difference_stderr", l.stats.difference_stderr}};
  j["evaluations"] = l.evaluations;
  return j;
}

}  // namespace

int run_landscape(const LandscapeCliOptions& o) {
  auto loaded = load_scene_task<double>(o.scene_path, o.task);
  if (!loaded) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;
  auto probe = optim::make_task(loaded->cs, loaded->task);
  if (!probe) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), probe.status().message().c_str()), 1;
  optim::LandscapeOptions lo;
  lo.span = o.span;
  lo.points = o.points;
  lo.grid = o.grid;
  lo.seed = o.seed;
  lo.threads = o.threads;
  lo.stats_samples = o.stats;
  lo.stats_sigma = o.sigma;
  if (o.direction == "grad" || o.direction == "gradient") {
    lo.direction = optim::SliceDirection::gradient;
  } else if (o.direction == "random") {
    lo.direction = optim::SliceDirection::random;
  } else {
    lo.direction = optim::SliceDirection::parameter;
    lo.parameter = find_entry(**probe, o.direction);
    if (lo.parameter < 0)
      return std::fprintf(stderr, "%s: --direction %s: not grad, random or a parameter entry of task '%s' (e.g. %s)\n",
                          o.scene_path.c_str(), o.direction.c_str(), loaded->task.name.c_str(),
                          (*probe)->entry_name(0).c_str()),
             1;
  }
  if (!o.direction2.empty()) {
    lo.parameter2 = find_entry(**probe, o.direction2);
    if (lo.parameter2 < 0)
      return std::fprintf(stderr, "%s: --direction2 %s: not a parameter entry of task '%s'\n", o.scene_path.c_str(),
                          o.direction2.c_str(), loaded->task.name.c_str()),
             1;
  }
  for (const std::string& s : o.sweep) {
    std::string error;
    if (!parse_sweep(s, lo.sweep, error)) return std::fprintf(stderr, "%s\n", error.c_str()), 1;
  }
  const std::string base_dir = std::filesystem::path(o.scene_path).parent_path().string();
  int last_pct = -1;
  auto l = optim::compute_landscape<double>(loaded->doc, base_dir, loaded->task.name, lo, [&](int done, int total) {
    const int pct = total > 0 ? 100 * done / total : 100;
    if (pct / 10 != last_pct / 10) std::fprintf(stderr, "landscape: %d%% (%d of %d rollouts)\n", pct, done, total);
    last_pct = pct;
  });
  if (!l) return std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), l.status().message().c_str()), 1;
  std::fputs(optim::format_landscape(*l).c_str(), stdout);
  if (!o.png.empty()) {
    PlotImage img = plot_landscape(*l);
    std::string error;
    if (!write_png(o.png, uint32_t(img.width), uint32_t(img.height), img.rgba, &error))
      return std::fprintf(stderr, "%s\n", error.c_str()), 1;
    std::printf("plot written to %s\n", std::filesystem::absolute(o.png).string().c_str());
  }
  if (!o.json.empty()) {
    const std::string tmp = o.json + ".tmp";
    {
      std::ofstream f(tmp);
      f << to_json(*l).dump(1) << "\n";
      if (!f) return std::fprintf(stderr, "%s: cannot write\n", o.json.c_str()), 1;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, o.json, ec);
    if (ec) return std::fprintf(stderr, "%s: cannot write: %s\n", o.json.c_str(), ec.message().c_str()), 1;
    std::printf("numbers written to %s\n", std::filesystem::absolute(o.json).string().c_str());
  }
  return 0;
}

}  // namespace adj::app
