// The editor's plots: a series with axes, drawn with ImGui (the Optimization panel's loss,
// gradient, return and |dL/dx_t| plots).
#pragma once

#include <vector>

namespace adj::editor {

// a plot of a series with axes: ticks in the values' units (decades, labelled 1e-3, on a log
// scale), the x axis in `x_unit` (iterations, frames); hover shows the point's real value.
// log: a log scale when every value is positive (a loss that goes negative, a distance
// walked, is drawn as it is). The plot is one ImGui item; returns the hovered index or -1 and
// the x of index i through *x_of (for marks drawn over it)
struct PlotGeometry {
  float x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  int n = 0;
  float x_of(int i) const { return n > 1 ? x0 + (x1 - x0) * float(i) / float(n - 1) : 0.5f * (x0 + x1); }
};

int plot_series(const char* label, const std::vector<double>& values, bool log, float height, const char* x_unit,
                PlotGeometry* geometry = nullptr);

}  // namespace adj::editor
