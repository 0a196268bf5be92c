#pragma once
// A compiled scene and one of its states as the renderer's DrawList: meshes for cloth and
// soft bodies, spheres and spring lines for particle systems, instanced collider shapes,
// target rings, and optional contact and gradient overlays. Uses engine/vis for the
// arrays; owns their storage so the list stays valid until the next build().
#include <glm/glm.hpp>

#include <optional>
#include <vector>

#include "engine/model/model.h"
#include "engine/model/rigid_model.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"
#include "engine/vis/vis.h"
#include "render/camera.h"
#include "render/draw_list.h"

namespace adj::app {

struct Overlays {
  bool particles = true;  // spheres for free particle systems
  bool springs = true;
  bool wireframe = false;    // edges over cloth and soft bodies
  bool contacts = false;     // contact points and force arrows
  bool vectors = false;      // the per-particle vector field passed to build()
  float arrow_scale = 0.1f;  // [m per unit] (log length reference = 1 unit)
  // the most vector-field arrows and contact marks drawn, scattered over the particles or
  // contacts (a dense cloth's 4225 arrows are a wall no one reads; lavapipe pays ~0.04 ms of
  // its one command thread for each arrow and disc); 0 = all
  int max_marks = 0;
};

// particle arrays that already live in Vulkan buffers (app/gpu_view.h: CPU-mapped, staging
// or CUDA interop), over all particles of the model; build() draws surfaces and particle
// spheres from them instead of from the state
struct DeviceParticles {
  render::ArrayRef<glm::vec4> spheres;    // x, y, z, radius, (particle_count)
  render::ArrayRef<glm::vec3> positions;  // (particle_count)
  render::ArrayRef<glm::vec3> normals;    // (particle_count), of the particles surface() touches
};

class SceneView {
 public:
  SceneView(const scene::Scene& doc, const scene::CompiledScene& compiled);

  // field: a per-particle vector (gradient, velocity) drawn as arrows when overlays.vectors
  const render::DrawList& build(const State& state, const Contacts* contacts, const Array<vec3<float>>* field,
                                const Overlays& overlays);

  // draw surfaces and particle spheres from device arrays (null: from the state); the rest
  // (springs, overlays, bounds) still reads the state given to build()
  void set_device_particles(const DeviceParticles* d) {
    if (d) device_ = *d;
    use_device_ = d != nullptr;
  }
  // every cloth and soft-body surface as one (for GpuView::set_layout); whether any object
  // draws particle spheres
  vis::Surface surface() const;
  bool has_particle_spheres() const;

  // the selected object (0: none): build() tints it and outlines its shapes, draws the
  // edges of its meshes and colours its springs
  void set_selected(render::ObjectId id) { selected_ = id; }

  // robots: the joint state build() draws (default: the compiled initial state), its contacts
  // (drawn with overlays.contacts; null: none) and a body drawn highlighted (-1: none)
  void set_robot_state(const StateT<float>& state) { robot_state_ = state; }
  void set_robot_contacts(const RigidContactsT<float>* contacts) {
    if (contacts)
      robot_contacts_ = *contacts;
    else
      robot_contacts_ = {};
  }
  void set_robot_highlight(int body) { robot_highlight_ = body; }

  // the first robot's root body's centre of mass in the robot state set above [m] (none: no
  // robot); `adjoint render --follow` keeps the camera on it
  std::optional<glm::vec3> robot_root() const;

  // the scene's extent (particles of the given state, colliders, targets)
  void bounds(const State& state, glm::vec3& lo, glm::vec3& hi) const;
  // a camera that frames the scene from the front, a little above
  render::Camera fit_camera(const State& state, float aspect) const;

 private:
  struct MeshObject {
    vis::Surface surface;
    glm::vec4 color;
    bool two_sided;
    uint32_t id;
  };
  struct ParticleObject {
    int begin, end, spring_begin, spring_end;
    uint32_t id;
    glm::vec4 color;
  };

  void highlight_selection(render::DrawList& list);

  const scene::CompiledScene& cs_;
  std::vector<MeshObject> meshes_;
  std::vector<ParticleObject> particle_objects_;
  struct ShapeObject {  // one draw per object and shape kind, so that picking names the object
    render::ShapeKind kind;
    std::vector<render::ShapeInstance> instances;
    uint32_t id;
  };
  std::vector<ShapeObject> shapes_;
  std::vector<glm::vec3> collider_vertices_;  // mesh colliders
  std::vector<uint32_t> collider_indices_;
  struct ColliderMesh {   // one draw per mesh collider, so that picking names it
    size_t first, count;  // its range of collider_indices_
    uint32_t id;
  };
  std::vector<ColliderMesh> collider_meshes_;
  render::ObjectId selected_ = 0;
  std::vector<render::ShapeInstance> selected_instances_;  // the selection's shapes, tinted
  std::vector<glm::vec3> outline_;                         // and outlined (segment pairs)
  std::vector<uint32_t> outline_indices_;
  bool ground_ = false;
  float ground_height_ = 0.0f;                      // along the up axis
  bool z_up_ = false;                               // the scene's up axis is +Z (settings.up)
  glm::vec3 static_lo_{1e30f}, static_hi_{-1e30f};  // colliders and targets

  // robots: shapes as instances (by render::ShapeKind), bodies' centres of mass and joint axes
  std::vector<uint32_t> body_object_;  // object id of each rigid body
  StateT<float> robot_state_;
  RigidContactsT<float> robot_contacts_;
  int robot_highlight_ = -1;
  std::vector<float> rigid_shapes_, rigid_joints_, rigid_contacts_;
  struct RobotDraw {  // one shape kind of one robot object, so that picking names the robot
    uint32_t id;
    render::ShapeKind kind;
    std::vector<render::ShapeInstance> instances;
  };
  std::vector<RobotDraw> robot_draws_;
  struct RobotMesh {  // a triangle-mesh shape: its range of robot_mesh_indices_
    int shape;
    size_t first, count;
  };
  std::vector<RobotMesh> robot_meshes_;
  std::vector<glm::vec3> robot_mesh_vertices_;  // every mesh shape's vertices, shape frame [m]
  std::vector<uint32_t> robot_mesh_indices_;
  std::vector<glm::vec3> robot_axes_;
  std::vector<glm::vec3> robot_coms_;  // centre-of-mass crosses, segment pairs
  std::vector<glm::vec3> robot_contact_points_, robot_contact_normals_, robot_contact_forces_;
  std::vector<glm::vec3> robot_contact_lines_;  // force segments, drawn through the bodies

  DeviceParticles device_;
  bool use_device_ = false;

  // per-build storage
  render::DrawList list_;
  std::vector<glm::vec3> positions_, normals_;
  std::vector<std::vector<glm::vec4>> spheres_;
  std::vector<std::vector<glm::vec3>> springs_;
  std::vector<uint32_t> spring_indices_;
  std::vector<glm::vec3> contact_points_, contact_normals_, contact_forces_;
  std::vector<glm::vec3> arrow_origins_, arrow_vectors_;
  std::vector<float> arrow_magnitudes_;
};

}  // namespace adj::app
