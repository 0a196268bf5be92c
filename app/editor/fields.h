#pragma once
// The editable fields of scene objects and settings, described once: the inspector draws
// them, the script's `set` command and the tests address them by path
// ("cloth.material.tri_ke", "cloth.position.y", "settings.contact.mu").
#include <optional>
#include <span>
#include <string>

#include "engine/core/status.h"
#include "engine/scene/scene.h"

namespace adj::editor {

enum class FieldType { number, integer, boolean, vec3, text };

struct Field {
  const char* name;     // dotted path inside the object ("material.tri_ke")
  FieldType type;
  float speed;          // drag speed per pixel (numbers); 0: a log-scaled drag (stiffnesses)
  double min, max;      // drag clamp
  const char* unit;     // shown as a tooltip; "" when none
  void* (*get)(scene::Object&);  // the value inside the object (null for settings fields)
  void* (*get_settings)(scene::Settings&);
  std::optional<scene::ParamKind> param;  // the optimizable parameter behind it, if any
};

// the fields an object of this kind shows (particle lists aside)
std::span<const Field> object_fields(const scene::Object& object);
// simulation and contact settings
std::span<const Field> settings_fields();

// the parameters that can be optimized on an object of this kind
std::span<const scene::ParamKind> optimizable(scene::ObjectKind kind);

// value <-> text: numbers, integers, booleans (true/false/1/0), vectors "x,y,z", text
std::string field_to_string(const Field& f, const void* value);
Status field_from_string(const Field& f, void* value, const std::string& text);

// `path` = "<object>.<field>[.x|.y|.z]" or "settings.<field>[.x|.y|.z]" or
// "<object>.particles[i].<position|velocity|mass|radius>[.x|.y|.z]" or "<object>.visible";
// writes `text` into a copy of the scene. Errors name the path.
Status set_by_path(scene::Scene& scene, const std::string& path, const std::string& text);
Result<std::string> get_by_path(const scene::Scene& scene, const std::string& path);

}  // namespace adj::editor
