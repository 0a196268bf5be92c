#include <tiny_obj_loader.h>

#include "engine/model/builder.h"

namespace adj {

template <class S>
Result<TriMesh<S>> load_obj(const std::string& path) {
  tinyobj::ObjReaderConfig config;
  config.triangulate = true;
  config.vertex_color = false;
  tinyobj::ObjReader reader;
  if (!reader.ParseFromFile(path, config)) {
    std::string err = reader.Error();
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    return Status::error("cannot read mesh '" + path + "': " + (err.empty() ? "unknown error" : err));
  }
  TriMesh<S> mesh;
  const auto& v = reader.GetAttrib().vertices;
  for (std::size_t i = 0; i + 2 < v.size(); i += 3) mesh.vertices.push_back({S(v[i]), S(v[i + 1]), S(v[i + 2])});
  for (const auto& shape : reader.GetShapes()) {
    const auto& idx = shape.mesh.indices;
    for (std::size_t f = 0; f + 2 < idx.size(); f += 3)
      mesh.tris.push_back({idx[f].vertex_index, idx[f + 1].vertex_index, idx[f + 2].vertex_index});
  }
  if (mesh.tris.empty()) return Status::error("mesh '" + path + "' has no triangles");
  for (const Idx3& t : mesh.tris) {
    int n = int(mesh.vertices.size());
    if (t.i < 0 || t.j < 0 || t.k < 0 || t.i >= n || t.j >= n || t.k >= n)
      return Status::error("mesh '" + path + "' has a face with an invalid vertex index");
  }
  for (const auto& p : mesh.vertices)
    if (!is_finite(p.x) || !is_finite(p.y) || !is_finite(p.z))
      return Status::error("mesh '" + path + "' has a non-finite vertex");
  return mesh;
}

template Result<TriMesh<float>> load_obj<float>(const std::string&);
template Result<TriMesh<double>> load_obj<double>(const std::string&);

}  // namespace adj
