#include "engine/optim/ahac.h"

#include <algorithm>

namespace adj::optim {

AhacHorizon ahac_dual_step(const AhacOptions& o, int window, double dual, double mean_violation) {
  AhacHorizon r;
  r.dual = std::clamp(dual + o.dual_lr * mean_violation, 0.0, double(window - o.horizon_min));
  r.horizon = std::clamp(double(window) - r.dual, double(o.horizon_min), double(window));
  return r;
}

}  // namespace adj::optim
