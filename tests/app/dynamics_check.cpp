// dynamics_check ADJOINT REFS_DIR: runs `ADJOINT dynamics FILE --qpos .. --qvel .. --ctrl ..
// --no-contact --no-limits --no-equality --json` for every model in REFS_DIR/mujoco_refs.json and holds its
// qM, qfrc_bias, qfrc_passive, qfrc_actuator and qacc against MuJoCo's to 1e-9 relative (per
// entry; entries below 1e-3 of the quantity's largest are held to 1e-9 of that largest).
// exit 0: all match; 1: a mismatch or a failed run (each printed); 77: no refs (skipped)
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;

namespace {

std::vector<double> flat(const json& j) {
  std::vector<double> v;
  for (const json& x : j) {
    if (x.is_array())
      for (const json& y : x) v.push_back(y.get<double>());
    else
      v.push_back(x.get<double>());
  }
  return v;
}

std::string csv(const json& j) {
  std::ostringstream s;
  s.precision(17);
  for (std::size_t i = 0; i < j.size(); ++i) s << (i ? "," : "") << j[i].get<double>();
  return s.str();
}

bool run(const std::string& cmd, std::string& out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return false;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  return pclose(p) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return std::fprintf(stderr, "usage: dynamics_check ADJOINT REFS_DIR\n"), 2;
  const std::string adjoint = argv[1], dir = argv[2];
  std::ifstream in(dir + "/mujoco_refs.json");
  if (!in) return std::printf("no %s/mujoco_refs.json: skipped\n", dir.c_str()), 77;
  const json refs = json::parse(in);
  int bad = 0, models = 0;
  for (auto it = refs.begin(); it != refs.end(); ++it) {
    const json& r = it.value();
    std::string cmd =
        "'" + adjoint + "' dynamics '" + dir + "/" + it.key() + "' --no-contact --no-limits --no-equality --json";
    if (!r["qpos"].empty()) cmd += " --qpos=" + csv(r["qpos"]);
    if (!r["qvel"].empty()) cmd += " --qvel=" + csv(r["qvel"]);
    if (!r["ctrl"].empty()) cmd += " --ctrl=" + csv(r["ctrl"]);
    cmd += " 2>/dev/null";
    std::string out;
    if (!run(cmd, out)) {
      std::printf("%s: adjoint dynamics failed\n", it.key().c_str());
      ++bad;
      continue;
    }
    const json got = json::parse(out);
    ++models;
    double worst = 0;
    for (const char* key : {"qM", "qfrc_bias", "qfrc_passive", "qfrc_actuator", "qacc"}) {
      std::vector<double> a = flat(got[key]), b = flat(r[key]);
      if (a.size() != b.size()) {
        std::printf("%s %s: %zu numbers, MuJoCo %zu\n", it.key().c_str(), key, a.size(), b.size());
        ++bad;
        continue;
      }
      double big = 0;
      for (double x : b) big = std::fmax(big, std::fabs(x));
      for (std::size_t i = 0; i < b.size(); ++i) {
        double scale = std::fmax(std::fabs(b[i]), 1e-3 * big);
        double err = scale > 0 ? std::fabs(a[i] - b[i]) / scale : std::fabs(a[i]);
        worst = std::fmax(worst, err);
        if (err > 1e-9) {
          std::printf("%s %s[%zu]: adjoint %.17g, MuJoCo %.17g\n", it.key().c_str(), key, i, a[i], b[i]);
          ++bad;
        }
      }
    }
    std::printf("%-32s worst relative error %.3g\n", it.key().c_str(), worst);
  }
  std::printf("%d models, %d mismatches\n", models, bad);
  return bad == 0 && models > 0 ? 0 : 1;
}
