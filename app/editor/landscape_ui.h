#pragma once
// The Landscape panel (View > Landscape): the loss of the Optimization panel's task along a
// line through its parameters, swept over contact settings, and a 2D slice
// (engine/optim/landscape.h), computed off the UI thread with progress and Cancel. The
// plots have axes with ticks, hover values and each curve's analytic tangent; a click on a
// point loads its parameters (and, on a sweep curve, its contact setting) into the scene as
// one undo step, so playing shows that rollout. The centre is the running optimization's
// parameters when it optimizes this task, else the task's start.
#include <string>

#include "app/editor/landscape_job.h"
#include "engine/core/status.h"

namespace adj::editor {

class Editor;

struct LandscapeUi {
  bool open = false;
  int direction = 0;  // 0 gradient, 1 random, 2 one parameter
  int parameter = 0;  // its entry
  float span = 0;     // 0: automatic (0.1 max(1, |theta|))
  int points = 41;
  int grid = 0;          // 0 (none), 11, 21
  int knob = 0;          // optim::ContactKnob of the sweep
  char sweep[128] = "";  // values, "1e3, 1e5"
  int stats = 0;         // gradient statistics over this many pairs
  int seed = 0;
  LandscapeJob job;
};

void draw_landscape_panel(Editor& e);
// Run with the panel's settings; an error when the settings do not parse or there is no task
Status start_landscape(Editor& e);
// the point k of curve c of the last result (or, with j >= 0, the 2D slice's point (k, j))
// into the scene: one undo step; false with a message when there is nothing to load
bool load_landscape_point(Editor& e, int curve, int k, int j = -1);

}  // namespace adj::editor
