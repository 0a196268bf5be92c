#pragma once
// Authoring from nothing: the scene File > New starts from, the objects the Add menu makes
// (one entry per object type the scene format has) and the reference scenes File > New from
// template offers. Plain functions over scene documents: the editor adds what they return
// as one undo step (Document::add_object), tests call them directly.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/editor/worker.h"
#include "engine/core/status.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::editor {

// a cloth over the ground, stable at the default 8 substeps (see starter_scene's comment)
scene::Scene starter_scene();

enum class AddKind {
  particle,
  particle_lattice,
  cloth_grid,
  cloth_obj,
  soft_grid,
  soft_obj,  // particles
  ground,
  plane,
  sphere,
  box,
  capsule,
  mesh_collider,  // colliders
  target,
  body_box,
  body_sphere,
  body_capsule,
  body_mesh,  // a free rigid body (a one-body robot)
  urdf,
  mjcf,
};

struct AddEntry {
  AddKind kind;
  const char* id;                     // the script's `add TYPE` name
  const char* label;                  // the menu's
  const char* group;                  // the menu's submenu ("" = top level)
  const char* file_filter = nullptr;  // entries that need a file: its extensions, else null
};

// every Add entry, in menu order
std::span<const AddEntry> add_entries();
const AddEntry* find_add_entry(std::string_view id);

// a new object of that kind standing on the ground at `at` (its coordinate along `up`, the
// scene's up axis "y" or "z", is the ground's height), named `name` (the document makes it
// unique). `file` is the mesh or URDF path as the scene will store it (relative to the
// scene's folder), required by entries with a filter. an MJCF robot (z-up) is turned by -90
// deg about x in a y-up scene and not at all in a z-up one. TODO: cloth and soft grids lie in
// the xz plane whatever the up axis (in a z-up scene they stand upright until rotated)
Result<scene::Object> make_object(AddKind kind, const std::string& name, const scene::V3& at,
                                  const std::string& file = "", const std::string& up = "y");

// where a new object covering `radius` [m] of the ground goes: `at` if nothing stands there,
// else the nearest free spot of a 0.5 m grid around it, so that new objects do not start
// inside each other; footprint_radius is what an object covers (0: ground, plane)
scene::V3 free_spot(const scene::Scene& s, const scene::V3& at, double radius);
double footprint_radius(const scene::Object& o);

// the contact of the shipped robot scenes (ke 1e4 N/m, kd 1e2, kf 1e2, mu 0.8): kg-scale bodies
// on the one soft default (ke 1e3, the particles' stability bound) sink in (an A1 stands 1.7 cm
// deep). The first robot added to a scene that still has the default robot contact brings it:
// the settings to add it with, or nullopt when the scene keeps its own
std::optional<scene::Settings> settings_for_added(const scene::Scene& s, const scene::Object& o);
// the message that says so
inline const char* robot_contact_note() {
  return "robot contact set to ke 1e4 N/m, kd 1e2, kf 1e2, mu 0.8 for kg-scale robots (scene settings, "
         "robot_contact.*; Ctrl+Z undoes it with the robot)";
}

// File > New from template: the reference problems in assets/scenes
struct TemplateEntry {
  const char* label;
  const char* file;  // relative to assets/scenes
};
std::span<const TemplateEntry> templates();

// a task named `name` (made unique among the scene's tasks) over `horizon` frames, with a
// loss term already filled in when the scene has something to measure; not yet added
scene::Task make_task(const scene::Scene& s, const std::string& name, int horizon);
std::string unique_task_name(const scene::Scene& s, const std::string& base);

// a policy's action scale or offset (one number per action) as the task panel and the script
// write it: numbers separated by commas, "0.25,0.002,0.002"; "" is none (the defaults 1 and 0).
// nullopt when an entry is not a finite number
std::optional<std::vector<double>> parse_number_list(std::string_view text);
// the entries comma-separated, each printed with `format` ("%.17g": read back to the same bits)
std::string number_list_text(const std::vector<double>& v, const char* format = "%.17g");

// Apply: an evaluated iterate `theta` of the optimization in `snap` (its blocks, its task) into
// `doc`, compiled as `cs`: objects and settings (optim::write_back, write_back_robot) and the
// task's per-frame inputs and policy weights (optim::store_values). Returns what could not be
// written.
std::vector<std::string> apply_optimization(const Snapshot& snap, const std::vector<float>& theta,
                                            const scene::CompiledScene& cs, scene::Scene& doc);

}  // namespace adj::editor
