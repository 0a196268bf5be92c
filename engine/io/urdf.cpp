#include "engine/io/urdf.h"

#include <tinyxml2.h>
#include <urdf_parser/urdf_parser.h>

#include "engine/model/builder.h"
#include "engine/model/rigid_cylinder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace adj {

namespace {

vec3<double> v(const urdf::Vector3& a) { return {a.x, a.y, a.z}; }
rigid::quat<double> q(const urdf::Rotation& r) { return {r.w, r.x, r.y, r.z}; }

// one URDF geometry as a shape in the link frame; false when it has no primitive
bool shape_of(const urdf::Geometry& g, const urdf::Pose& origin, int cylinder_segments, RigidShapeDesc& s) {
  s.pos = v(origin.position);
  s.rot = q(origin.rotation);
  switch (g.type) {
    case urdf::Geometry::SPHERE:
      s.type = GEOM_SPHERE;
      s.size = {static_cast<const urdf::Sphere&>(g).radius, 0, 0};
      return true;
    case urdf::Geometry::BOX: {
      const urdf::Vector3& d = static_cast<const urdf::Box&>(g).dim;
      s.type = GEOM_BOX;
      s.size = {d.x / 2, d.y / 2, d.z / 2};
      return true;
    }
    case urdf::Geometry::CYLINDER: {
      const auto& c = static_cast<const urdf::Cylinder&>(g);
      if (cylinder_segments > 2) {
        rigid_cylinder_mesh(c.radius, c.length / 2, s, "cylinder", cylinder_segments);
        return true;
      }
      // capsule of the cylinder's radius and overall length, its y axis turned onto z
      s.type = GEOM_CAPSULE;
      s.size = {c.radius, std::max(c.length / 2 - c.radius, 1e-4), 0};
      const double h = std::sqrt(0.5);
      s.rot = rigid::qmul(s.rot, rigid::quat<double>(h, h, 0, 0));
      return true;
    }
    default:
      return false;
  }
}

namespace fs = std::filesystem;

// a mesh filename as a path: package://pkg/rest is looked up as <dir>/pkg/rest and
// <dir>/rest for the URDF's directory and each of its parents in turn (the package is the
// folder that holds the URDF's folder, or one above); file:///abs is /abs; anything else is
// relative to the URDF's directory. empty when a package file is found nowhere
std::string resolve_mesh(const std::string& name, const fs::path& dir, std::string& tried) {
  const std::string pkg = "package://", file = "file://";
  if (name.rfind(file, 0) == 0) return name.substr(file.size());
  if (name.rfind(pkg, 0) != 0) return fs::path(name).is_absolute() ? name : (dir / name).string();
  const fs::path rel(name.substr(pkg.size()));
  fs::path rest;
  for (auto it = std::next(rel.begin()); it != rel.end(); ++it) rest /= *it;
  std::error_code ec;
  fs::path d = fs::absolute(dir.empty() ? fs::path(".") : dir, ec).lexically_normal();
  for (;;) {
    for (const fs::path& c : {d / rel, d / rest}) {
      if (!rest.empty() && fs::is_regular_file(c, ec)) return c.string();
      tried += tried.empty() ? "" : ", ";
      tried += c.string();
    }
    if (!d.has_parent_path() || d.parent_path() == d) return {};
    d = d.parent_path();
  }
}

// a URDF mesh as a mesh shape: the file read (load_mesh: OBJ, STL, Collada) with its scale; errors name `who`
Status mesh_shape_of(const urdf::Mesh& g, const fs::path& dir, const std::string& who, RigidShapeDesc& s) {
  std::string tried;
  std::string path = resolve_mesh(g.filename, dir, tried);
  if (path.empty()) return Status::error(who + ": mesh \"" + g.filename + "\" not found (looked for " + tried + ")");
  auto mesh = load_mesh<double>(path);
  if (!mesh) return Status::error(who + ": " + mesh.status().message());
  s.type = GEOM_MESH;
  s.mesh_vertices.assign(mesh->vertices.begin(), mesh->vertices.end());
  s.mesh_tris.assign(mesh->tris.begin(), mesh->tris.end());
  s.scale = v(g.scale);
  s.mesh_name = path;
  return Status::ok();
}

// the file order of the <joint> elements of <robot> (urdfdom keeps its joints sorted by name;
// MuJoCo, and readers of the file, go in file order)
std::map<std::string, int> joint_file_order(const std::string& xml) {
  std::map<std::string, int> order;
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS || !doc.RootElement()) return order;
  for (const tinyxml2::XMLElement* j = doc.RootElement()->FirstChildElement("joint"); j;
       j = j->NextSiblingElement("joint"))
    if (const char* n = j->Attribute("name")) order.emplace(n, int(order.size()));
  return order;
}

// what the URDF text holds beyond urdfdom's URDF: pybullet's extensions, rewritten into URDF
// that urdfdom reads and remembered here to be mapped back
struct Extensions {
  std::set<std::pair<std::string, int>> capsules;  // (link, collision index): <capsule radius length>
  std::set<std::string> spherical;                 // joints of type="spherical"
  std::vector<std::string> warnings;               // elements urdfdom reads past that the simulation lacks
};

// elements outside urdfdom's URDF, or read by it, that change a simulator's dynamics but not
// Adjoint's: one warning per kind, with the first line and how many
void warn_unsimulated(const tinyxml2::XMLElement* robot, const std::string& source, Extensions& ext) {
  struct Kind {
    const char* what;
    int line = 0, count = 0;
  };
  Kind kinds[] = {
      {"<transmission> ignored: every revolute and prismatic joint gets one actuator (the scene's)"},
      {"<gazebo> ignored: its friction, stiffness and damping are not read (the scene's robot contact law applies)"},
      {"<contact> of a link ignored (pybullet's friction and stiffness): the scene's robot contact law applies"},
      {"<limit effort velocity> ignored: actuator forces and joint speeds are not clamped"},
  };
  auto seen = [](Kind& k, const tinyxml2::XMLElement* e) {
    if (k.count++ == 0) k.line = e->GetLineNum();
  };
  for (const tinyxml2::XMLElement* c = robot->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string tag = c->Name();
    if (tag == "transmission") seen(kinds[0], c);
    if (tag == "gazebo") seen(kinds[1], c);
    if (tag == "link")
      for (const tinyxml2::XMLElement* k = c->FirstChildElement("contact"); k; k = k->NextSiblingElement("contact"))
        seen(kinds[2], k);
    if (tag == "joint")
      if (const tinyxml2::XMLElement* l = c->FirstChildElement("limit")) {
        if (l->DoubleAttribute("effort", 0) > 0 || l->DoubleAttribute("velocity", 0) > 0) seen(kinds[3], l);
      }
  }
  for (const Kind& k : kinds)
    if (k.count > 0)
      ext.warnings.push_back(source + ":" + std::to_string(k.line) + ": " + k.what + " (" + std::to_string(k.count) +
                             (k.count == 1 ? " element)" : " elements)"));
}

// the joints must make the links a tree: each joint names a parent and a child link, a link is
// the child of one joint at most and never its own ancestor. urdfdom rejects such files too, but
// only after building a graph whose cycles it never frees, and with a message in its log only
Status check_tree(const tinyxml2::XMLElement* robot, const std::string& source) {
  std::map<std::string, std::pair<std::string, int>> parent;  // child link -> (parent link, joint line)
  std::set<std::string> links;
  for (const tinyxml2::XMLElement* l = robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link"))
    if (const char* n = l->Attribute("name")) links.insert(n);
  for (const tinyxml2::XMLElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    const std::string at = source + ":" + std::to_string(j->GetLineNum()) + ": joint \"" +
                           (j->Attribute("name") ? j->Attribute("name") : "") + "\"";
    const tinyxml2::XMLElement* pe = j->FirstChildElement("parent");
    const tinyxml2::XMLElement* ce = j->FirstChildElement("child");
    const char* p = pe ? pe->Attribute("link") : nullptr;
    const char* c = ce ? ce->Attribute("link") : nullptr;
    if (!p || !c) return Status::error(at + ": needs <parent link=...> and <child link=...>");
    for (const char* l : {p, c})
      if (!links.count(l)) return Status::error(at + ": no link named \"" + l + "\"");
    if (std::string(p) == c) return Status::error(at + ": its parent and child are the same link \"" + c + "\"");
    auto [it, fresh] = parent.try_emplace(c, p, j->GetLineNum());
    if (!fresh)
      return Status::error(at + ": link \"" + c + "\" is already the child of the joint at line " +
                           std::to_string(it->second.second) + " (a URDF is a tree: one parent joint per link)");
  }
  for (const auto& [child, up] : parent) {
    std::string l = up.first;
    for (std::size_t steps = 0; parent.count(l); ++steps) {
      if (l == child || steps > parent.size())
        return Status::error(source + ":" + std::to_string(up.second) + ": the joints make a loop through link \"" +
                             child + "\" (a URDF is a tree)");
      l = parent.at(l).first;
    }
  }
  return Status::ok();
}

// checks the XML (errors with their line), refuses xacro, and rewrites pybullet's <capsule>
// (as a cylinder of the capsule's overall length) and type="spherical" joints (as floating);
// `text` is what urdfdom then reads
Status prepare_urdf(const std::string& xml, const std::string& source, std::string& text, Extensions& ext) {
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS)
    return Status::error(source + ":" + std::to_string(doc.ErrorLineNum()) + ": not well-formed XML (" +
                         (doc.ErrorStr() ? doc.ErrorStr() : "unknown error") + ")");
  tinyxml2::XMLElement* robot = doc.RootElement();
  if (!robot || std::string(robot->Name()) != "robot")
    return Status::error(source + ": the root element is <" + (robot ? robot->Name() : "") + ">, not <robot>");
  // xacro: macros and properties that only the xacro tool expands
  std::vector<const tinyxml2::XMLElement*> todo{robot};
  while (!todo.empty()) {
    const tinyxml2::XMLElement* e = todo.back();
    todo.pop_back();
    if (std::string(e->Name()).rfind("xacro:", 0) == 0)
      return Status::error(source + ":" + std::to_string(e->GetLineNum()) + ": <" + e->Name() +
                           "> is a xacro macro: expand the file first (`xacro " + fs::path(source).filename().string() +
                           " > robot.urdf`, ROS's xacro tool) and load the result");
    for (const tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) todo.push_back(c);
  }
  if (Status st = check_tree(robot, source); !st) return st;
  warn_unsimulated(robot, source, ext);
  for (tinyxml2::XMLElement* link = robot->FirstChildElement("link"); link; link = link->NextSiblingElement("link")) {
    const char* name = link->Attribute("name");
    int index = 0;
    for (tinyxml2::XMLElement* c = link->FirstChildElement("collision"); c;
         c = c->NextSiblingElement("collision"), ++index) {
      tinyxml2::XMLElement* g = c->FirstChildElement("geometry");
      tinyxml2::XMLElement* cap = g ? g->FirstChildElement("capsule") : nullptr;
      if (!cap) continue;
      const double r = cap->DoubleAttribute("radius", -1), len = cap->DoubleAttribute("length", -1);
      if (!(r > 0) || !(len >= 0))
        return Status::error(source + ":" + std::to_string(cap->GetLineNum()) +
                             ": <capsule> needs radius > 0 and length >= 0 (pybullet's capsule)");
      cap->SetName("cylinder");
      cap->SetAttribute("length", len + 2 * r);  // pybullet's length is between the cap centres
      ext.capsules.insert({name ? name : "", index});
    }
    for (tinyxml2::XMLElement* vis = link->FirstChildElement("visual"); vis; vis = vis->NextSiblingElement("visual"))
      if (tinyxml2::XMLElement* g = vis->FirstChildElement("geometry"))
        if (tinyxml2::XMLElement* cap = g->FirstChildElement("capsule")) {  // drawn as the collision capsule
          cap->SetName("sphere");
          cap->DeleteAttribute("length");
        }
  }
  for (tinyxml2::XMLElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint"))
    if (const char* type = j->Attribute("type"); type && std::string(type) == "spherical") {
      j->SetAttribute("type", "floating");
      ext.spherical.insert(j->Attribute("name") ? j->Attribute("name") : "");
    }
  tinyxml2::XMLPrinter printer;
  doc.Print(&printer);
  text = printer.CStr();
  return Status::ok();
}

}  // namespace

Result<UrdfImport> rigid_import_urdf_string(const std::string& xml, const std::string& source, RigidBuilder& b,
                                            const UrdfOptions& opt) {
  std::string text;
  Extensions ext;
  if (Status st = prepare_urdf(xml, source, text, ext); !st) return st;
  urdf::ModelInterfaceSharedPtr model = urdf::parseURDF(text);
  if (!model) return Status::error(source + ": not a valid URDF (urdfdom rejected it; its log says why)");
  urdf::LinkConstSharedPtr root = model->getRoot();
  if (!root) return Status::error(source + ": no root link");

  UrdfImport out;
  out.warnings = ext.warnings;
  const std::map<std::string, int> file_order = joint_file_order(xml);
  struct Mimic {
    std::string joint, leader;
    double ratio, offset;
  };
  std::vector<Mimic> mimics;
  std::map<std::string, int> joint_body;  // URDF joint name -> builder body
  // depth first from the root: parents before children
  std::vector<std::pair<urdf::LinkConstSharedPtr, int>> stack{{root, -1}};
  while (!stack.empty()) {
    auto [link, parent] = stack.back();
    stack.pop_back();
    const std::string who = source + ": link \"" + link->name + "\"";
    RigidJointDesc jd;
    jd.parent = parent;
    std::string joint_name;
    double effort = 0;
    if (parent < 0) {
      jd.type = opt.fixed_base ? RIGID_JOINT_FIXED : RIGID_JOINT_FREE;
      jd.pos = opt.position;
      jd.rot = opt.rotation;
    } else {
      const urdf::Joint& j = *link->parent_joint;
      joint_name = j.name;
      if (j.limits && std::isfinite(j.limits->effort) && j.limits->effort > 0) effort = j.limits->effort;
      const std::string jwho = source + ": joint \"" + j.name + "\"";
      jd.pos = v(j.parent_to_joint_origin_transform.position);
      jd.rot = q(j.parent_to_joint_origin_transform.rotation);
      jd.axis = v(j.axis);
      switch (j.type) {
        case urdf::Joint::REVOLUTE:
        case urdf::Joint::CONTINUOUS:
          jd.type = RIGID_JOINT_REVOLUTE;
          break;
        case urdf::Joint::PRISMATIC:
          jd.type = RIGID_JOINT_PRISMATIC;
          break;
        case urdf::Joint::FIXED:
          jd.type = RIGID_JOINT_FIXED;
          break;
        case urdf::Joint::FLOATING:
          jd.type = ext.spherical.count(j.name) ? RIGID_JOINT_BALL : RIGID_JOINT_FREE;
          break;
        default:
          return Status::error(jwho + ": joint type is not supported (planar or unknown)");
      }
      bool one_dof = jd.type == RIGID_JOINT_REVOLUTE || jd.type == RIGID_JOINT_PRISMATIC;
      if (one_dof && !(std::sqrt(dot(jd.axis, jd.axis)) > 1e-12)) return Status::error(jwho + ": axis is zero");
      if (j.type != urdf::Joint::CONTINUOUS && one_dof && j.limits && j.limits->lower < j.limits->upper &&
          opt.limit_ke > 0) {
        jd.lower = j.limits->lower;
        jd.upper = j.limits->upper;
        jd.limit_ke = opt.limit_ke;
        jd.limit_kd = opt.limit_kd;
      }
      if (j.dynamics) {
        if (!(j.dynamics->damping >= 0)) return Status::error(jwho + ": damping must be >= 0");
        if (jd.type != RIGID_JOINT_FIXED) jd.damping = j.dynamics->damping;
        if (j.dynamics->friction != 0)
          out.warnings.push_back(jwho + ": dynamics friction ignored (Coulomb joint friction is not simulated)");
      }
      if (j.mimic && opt.mimic_ke <= 0) out.warnings.push_back(jwho + ": mimic ignored (the joint moves freely)");
      if (j.mimic && opt.mimic_ke > 0)
        mimics.push_back({j.name, j.mimic->joint_name, j.mimic->multiplier, j.mimic->offset});
    }
    int body = b.add_body(link->name, jd);
    if (!joint_name.empty()) joint_body[joint_name] = body;
    out.bodies.push_back(body);
    out.links.push_back(link->name);
    out.joints.push_back(joint_name);
    out.effort.push_back(effort);

    if (link->inertial) {
      const urdf::Inertial& in = *link->inertial;
      if (!(in.mass >= 0) || !std::isfinite(in.mass)) return Status::error(who + ": inertial mass must be >= 0");
      mat33<double> I;
      I.m[0][0] = in.ixx, I.m[1][1] = in.iyy, I.m[2][2] = in.izz;
      I.m[0][1] = I.m[1][0] = in.ixy;
      I.m[0][2] = I.m[2][0] = in.ixz;
      I.m[1][2] = I.m[2][1] = in.iyz;
      mat33<double> R = rigid::qmat(q(in.origin.rotation));
      mat33<double> Ib = R * I * transpose(R);
      if (std::string why = rigid_inertia_problem(Ib); !why.empty() && in.mass > 0) {
        if (!opt.balance_inertia)
          return Status::error(who + ": inertial: " + why +
                               " (no rigid body has this inertia; \"balance_inertia\": true repairs it as MuJoCo's "
                               "balanceinertia does)");
        Ib = rigid_balance_inertia(Ib);
        out.warnings.push_back(who + ": inertial: " + why + "; balanced to " + std::to_string(Ib.m[0][0]) +
                               " kg m^2 about each axis (balance_inertia)");
      }
      b.set_mass(body, in.mass, v(in.origin.position), Ib);
    } else {
      b.set_mass(body, 0, {}, mat33<double>{});
    }

    // collision geometry, else the visual geometry (named for messages)
    // (a pybullet <capsule>, read as a cylinder of its overall length, is a capsule again)
    std::vector<std::tuple<const urdf::Geometry*, urdf::Pose, std::string, bool>> geoms;
    for (size_t i = 0; i < link->collision_array.size(); ++i)
      if (const auto& c = link->collision_array[i]; c && c->geometry)
        geoms.push_back({c->geometry.get(), c->origin, "collision " + std::to_string(i),
                         ext.capsules.count({link->name, int(i)}) > 0});
    if (geoms.empty())
      for (size_t i = 0; i < link->visual_array.size(); ++i)
        if (const auto& vis = link->visual_array[i]; vis && vis->geometry)
          geoms.push_back({vis->geometry.get(), vis->origin, "visual " + std::to_string(i), false});
    for (const auto& [g, origin, what, capsule] : geoms) {
      RigidShapeDesc s;
      if (shape_of(*g, origin, capsule ? 0 : opt.cylinder_segments, s)) {
        b.add_shape(body, s);
      } else if (g->type == urdf::Geometry::MESH) {
        std::string gwho = who;
        gwho += ", ";
        gwho += what;
        s.pos = v(origin.position);
        s.rot = q(origin.rotation);
        if (Status st = mesh_shape_of(static_cast<const urdf::Mesh&>(*g), fs::path(source).parent_path(), gwho, s); !st)
          return st;
        b.add_shape(body, s);
      }
    }

    if (opt.default_actuators && (jd.type == RIGID_JOINT_REVOLUTE || jd.type == RIGID_JOINT_PRISMATIC))
      out.actuators.push_back(b.add_actuator(body, opt.actuator));

    // children in the file order of their joints (pushed in reverse, so they come out first)
    std::vector<urdf::LinkConstSharedPtr> kids(link->child_links.begin(), link->child_links.end());
    auto rank = [&](const urdf::LinkConstSharedPtr& l) {
      auto it = l->parent_joint ? file_order.find(l->parent_joint->name) : file_order.end();
      return it == file_order.end() ? int(file_order.size()) : it->second;
    };
    std::stable_sort(kids.begin(), kids.end(), [&](const auto& a, const auto& c) { return rank(a) < rank(c); });
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, body});
  }
  for (const Mimic& mi : mimics) {
    const std::string jwho = source + ": joint \"" + mi.joint + "\": mimic";
    auto leader = joint_body.find(mi.leader);
    if (leader == joint_body.end()) return Status::error(jwho + ": no joint named \"" + mi.leader + "\"");
    b.couplings.push_back({.joint = joint_body[mi.joint],
                           .leader = leader->second,
                           .ratio = mi.ratio,
                           .offset = mi.offset,
                           .ke = opt.mimic_ke,
                           .kd = opt.mimic_kd});
  }
  return out;
}

Result<UrdfImport> rigid_import_urdf(const std::string& path, RigidBuilder& b, const UrdfOptions& opt) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Status::error(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  return rigid_import_urdf_string(ss.str(), path, b, opt);
}

}  // namespace adj
