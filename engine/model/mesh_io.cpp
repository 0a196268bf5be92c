#include <tiny_obj_loader.h>
#include <tinyxml2.h>

#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/Importer.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

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

// STL: binary (80-byte header, triangle count, 50 bytes a triangle) when the size says so,
// else ASCII ("facet ... outer loop vertex x y z x3 endloop endfacet"). each triangle has its
// own three vertices (STL shares none); users that need a closed mesh weld them
template <class S>
Result<TriMesh<S>> load_stl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("cannot read mesh '" + path + "': no such file or not readable");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TriMesh<S> mesh;
  auto add = [&](const double* v) {
    const int base = int(mesh.vertices.size());
    for (int k = 0; k < 3; ++k) mesh.vertices.push_back({S(v[3 * k]), S(v[3 * k + 1]), S(v[3 * k + 2])});
    mesh.tris.push_back({base, base + 1, base + 2});
  };
  std::uint32_t count = 0;
  if (bytes.size() >= 84) std::memcpy(&count, bytes.data() + 80, 4);
  if (bytes.size() >= 84 && bytes.size() == 84 + 50 * std::size_t(count)) {
    for (std::uint32_t t = 0; t < count; ++t) {
      float f[9];
      std::memcpy(f, bytes.data() + 84 + 50 * std::size_t(t) + 12, sizeof f);
      double v[9];
      for (int k = 0; k < 9; ++k) v[k] = f[k];
      add(v);
    }
  } else {
    std::istringstream ss(bytes);
    std::string word;
    if (!(ss >> word) || word != "solid")
      return Status::error("mesh '" + path + "' is neither binary STL (size does not match its triangle count) " +
                           "nor ASCII STL (does not start with 'solid')");
    double v[9];
    int n = 0;
    while (ss >> word) {
      if (word != "vertex") continue;
      if (!(ss >> v[3 * n] >> v[3 * n + 1] >> v[3 * n + 2]))
        return Status::error("mesh '" + path + "': ASCII STL vertex " +
                             std::to_string(3 * mesh.tris.size() + std::size_t(n)) + " is not three numbers");
      if (++n == 3) add(v), n = 0;
    }
    if (n != 0) return Status::error("mesh '" + path + "': ASCII STL ends inside a facet");
  }
  if (mesh.tris.empty()) return Status::error("mesh '" + path + "' has no triangles");
  for (const auto& p : mesh.vertices)
    if (!is_finite(p.x) || !is_finite(p.y) || !is_finite(p.z))
      return Status::error("mesh '" + path + "' has a non-finite vertex");
  return mesh;
}

// a Collada file as assimp 5.2 (Debian 12) can read it without crashing or running away: its
// reader loops without end on a non-number in an index list (allocating until memory runs
// out), reads through a null pointer for an array without its count or a reference to an id
// that is not there, and reserves memory for whatever a count attribute says (a Name_array of
// count="50000000" in a 2 kB file takes 1.6 GB). So the file is checked first: well-formed XML,
// every "#id" reference (url, source) to an element that exists, no count past the file's
// length in bytes (each counted item is written in the file), number lists of numbers (indices
// of whole numbers), every array (<float_array>, <Name_array>, ...) with a count that matches
// what it holds, every accessor inside its array; errors name the file, the line and the
// element
namespace {

std::size_t count_words(const char* text) {
  std::istringstream in(text ? text : "");
  std::size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

// a primitive element (<triangles>, <polylist>, ...) holds what its count says: assimp 5.2
// asserts it (an abort, built with assertions on Debian 12) instead of refusing the file
template <class Bad>
Status check_collada_primitives(const tinyxml2::XMLElement* e, const std::string& tag, const Bad& bad) {
  const bool fixed = tag == "triangles" || tag == "lines", listed = tag == "polylist";
  const bool per_p = tag == "polygons" || tag == "trifans" || tag == "tristrips" || tag == "linestrips";
  if (!fixed && !listed && !per_p) return Status::ok();
  unsigned count = 0;
  if (e->QueryUnsignedAttribute("count", &count) != tinyxml2::XML_SUCCESS) return bad("needs a count");
  unsigned stride = 1;  // numbers a vertex takes in <p>: one per input offset
  for (const tinyxml2::XMLElement* in = e->FirstChildElement("input"); in; in = in->NextSiblingElement("input")) {
    unsigned offset = 0;
    if (in->Attribute("offset") &&
        (in->QueryUnsignedAttribute("offset", &offset) != tinyxml2::XML_SUCCESS || offset > 64))
      return bad("has an <input> whose offset is not a small whole number");
    stride = std::max(stride, offset + 1);
  }
  std::size_t ps = 0, numbers = 0;
  for (const tinyxml2::XMLElement* p = e->FirstChildElement(); p; p = p->NextSiblingElement())
    if (std::strcmp(p->Name(), "p") == 0 || std::strcmp(p->Name(), "ph") == 0)
      ++ps, numbers += count_words(p->GetText());
  std::size_t want = numbers;
  if (fixed) want = std::size_t(count) * (tag == "triangles" ? 3 : 2) * stride;
  if (listed) {
    const tinyxml2::XMLElement* vc = e->FirstChildElement("vcount");
    std::istringstream in(vc && vc->GetText() ? vc->GetText() : "");
    std::size_t entries = 0, corners = 0;
    for (unsigned long long v; in >> v; ++entries) {
      if (v > (1ull << 20)) return bad("has a <vcount> entry of " + std::to_string(v) + " corners");
      corners += std::size_t(v);
    }
    if (entries != count)
      return bad("has count=\"" + std::to_string(count) + "\" but its <vcount> lists " + std::to_string(entries));
    want = corners * stride;
  }
  if (per_p && ps != count)
    return bad("has count=\"" + std::to_string(count) + "\" but holds " + std::to_string(ps) + " <p>");
  if (numbers != want)
    return bad("has count=\"" + std::to_string(count) + "\" but its <p> holds " + std::to_string(numbers) +
               " numbers, not " + std::to_string(want));
  return Status::ok();
}

// an <accessor> reads inside the array it names: offset + count * stride values at most
template <class Bad>
Status check_collada_accessor(const tinyxml2::XMLElement* e, const std::string& tag,
                              const std::map<std::string, const tinyxml2::XMLElement*>& ids, const Bad& bad) {
  if (tag != "accessor") return Status::ok();
  const char* src = e->Attribute("source");
  const auto it = src && src[0] == '#' ? ids.find(src + 1) : ids.end();
  if (it == ids.end()) return bad("needs a source=\"#id\" naming its array");
  unsigned count = 0, stride = 1, offset = 0, size = 0;
  if (e->QueryUnsignedAttribute("count", &count) != tinyxml2::XML_SUCCESS) return bad("needs a count");
  if (e->Attribute("stride") && e->QueryUnsignedAttribute("stride", &stride) != tinyxml2::XML_SUCCESS)
    return bad("has a stride that is not a whole number");
  if (e->Attribute("offset") && e->QueryUnsignedAttribute("offset", &offset) != tinyxml2::XML_SUCCESS)
    return bad("has an offset that is not a whole number");
  if (it->second->QueryUnsignedAttribute("count", &size) != tinyxml2::XML_SUCCESS)
    return bad("names <" + std::string(it->second->Name()) + " id=\"" + it->first + "\">, which has no count");
  if (std::uint64_t(offset) + std::uint64_t(count) * stride > size)
    return bad("reads " + std::to_string(count) + " items of stride " + std::to_string(stride) + " from offset " +
               std::to_string(offset) + ", past the " + std::to_string(size) + " values of \"" + it->first + "\"");
  return Status::ok();
}

Status check_collada(const std::string& path) {
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(path.c_str()) != tinyxml2::XML_SUCCESS)
    return Status::error("cannot read mesh '" + path + "':" + std::to_string(doc.ErrorLineNum()) +
                         ": not well-formed XML (" + (doc.ErrorStr() ? doc.ErrorStr() : "unknown error") + ")");
  std::vector<const tinyxml2::XMLElement*> all, todo;
  if (doc.RootElement()) todo.push_back(doc.RootElement());
  std::map<std::string, const tinyxml2::XMLElement*> ids;
  while (!todo.empty()) {
    const tinyxml2::XMLElement* e = todo.back();
    todo.pop_back();
    all.push_back(e);
    if (const char* id = e->Attribute("id")) ids.emplace(id, e);
    for (const tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) todo.push_back(c);
  }
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
  for (const tinyxml2::XMLElement* e : all) {
    const std::string tag = e->Name();
    auto bad = [&](const std::string& why) {
      return Status::error("mesh '" + path + "':" + std::to_string(e->GetLineNum()) + ": <" + tag + "> " + why);
    };
    for (const char* ref : {"url", "source"})
      if (const char* r = e->Attribute(ref); r && r[0] == '#' && !ids.count(r + 1))
        return bad(std::string(ref) + "=\"" + r + "\" names no element");
    if (const char* c = e->Attribute("count")) {
      unsigned count = 0;
      if (e->QueryUnsignedAttribute("count", &count) != tinyxml2::XML_SUCCESS)
        return bad("has count=\"" + std::string(c) + "\", not a whole number");
      if (ec || count > bytes)
        return bad("has count=\"" + std::string(c) + "\", more items than a file of " + std::to_string(bytes) +
                   " bytes can list");
    }
    if (Status st = check_collada_primitives(e, tag, bad); !st) return st;
    if (Status st = check_collada_accessor(e, tag, ids, bad); !st) return st;
    const bool array = tag.size() > 6 && tag.compare(tag.size() - 6, 6, "_array") == 0;
    const bool names = tag == "Name_array" || tag == "IDREF_array" || tag == "SIDREF_array";
    const bool index = tag == "p" || tag == "vcount" || tag == "h" || tag == "int_array";
    if (!index && !array) continue;
    const char* text = e->GetText() ? e->GetText() : "";
    const char* allowed = index ? "0123456789 \t\r\n" : "0123456789.eE+- \t\r\n";
    if (!names && std::strspn(text, allowed) != std::strlen(text))
      return bad(index ? "holds something other than whole numbers (indices)" : "holds something other than numbers");
    if (!array) continue;
    unsigned count = 0;
    if (e->QueryUnsignedAttribute("count", &count) != tinyxml2::XML_SUCCESS) return bad("needs a count");
    const std::size_t n = count_words(text);
    if (n != count)
      return bad("has count=\"" + std::to_string(count) + "\" but holds " + std::to_string(n) +
                 (names ? " names" : " values"));
  }
  return Status::ok();
}
}  // namespace

// Collada and the other formats of ROS packages, through assimp: every node's meshes placed by
// the node transforms (the file's <unit meter> included), triangles only, identical vertices
// joined. the file's up axis is ignored, as ROS tools read it: a URDF places its meshes itself
template <class S>
Result<TriMesh<S>> load_assimp(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Status::error("cannot read mesh '" + path + "': no such file or not readable");
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".dae")
    if (Status st = check_collada(path); !st) return st;
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const aiScene* scene = importer.ReadFile(path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                                                     aiProcess_PreTransformVertices | aiProcess_SortByPType);
  if (!scene || (scene->mFlags & AI_SCENE_FLAGS_INCOMPLETE)) {
    std::string err = importer.GetErrorString();
    return Status::error("cannot read mesh '" + path + "': " + (err.empty() ? "unknown error" : err));
  }
  TriMesh<S> mesh;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const aiMesh* am = scene->mMeshes[m];
    const int base = int(mesh.vertices.size());
    for (unsigned v = 0; v < am->mNumVertices; ++v)
      mesh.vertices.push_back({S(am->mVertices[v].x), S(am->mVertices[v].y), S(am->mVertices[v].z)});
    for (unsigned f = 0; f < am->mNumFaces; ++f) {
      const aiFace& face = am->mFaces[f];
      if (face.mNumIndices != 3) continue;
      for (unsigned k = 0; k < 3; ++k)
        if (face.mIndices[k] >= am->mNumVertices)
          return Status::error("mesh '" + path + "' has a face with an invalid vertex index");
      mesh.tris.push_back({base + int(face.mIndices[0]), base + int(face.mIndices[1]), base + int(face.mIndices[2])});
    }
  }
  if (mesh.tris.empty()) return Status::error("mesh '" + path + "' has no triangles");
  for (const auto& p : mesh.vertices)
    if (!is_finite(p.x) || !is_finite(p.y) || !is_finite(p.z))
      return Status::error("mesh '" + path + "' has a non-finite vertex");
  return mesh;
}

template <class S>
Result<TriMesh<S>> load_mesh(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  const bool assimp =
      ext == ".dae" || ext == ".ply" || ext == ".gltf" || ext == ".glb" || ext == ".3ds" || ext == ".fbx";
  if (ext != ".stl" && ext != ".obj" && !assimp)
    return Status::error("mesh '" + path + "': unknown format '" + ext +
                         "' (OBJ, STL, Collada .dae, PLY, glTF, 3DS and FBX are read)");
  // a device or a folder named as a mesh would be read without end (or not at all)
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Status::error("cannot read mesh '" + path + "': no such file (or not a regular file)");
  if (ext == ".stl") return load_stl<S>(path);
  if (ext == ".obj") return load_obj<S>(path);
  return load_assimp<S>(path);
}

template Result<TriMesh<float>> load_stl<float>(const std::string&);
template Result<TriMesh<double>> load_stl<double>(const std::string&);
template Result<TriMesh<float>> load_assimp<float>(const std::string&);
template Result<TriMesh<double>> load_assimp<double>(const std::string&);
template Result<TriMesh<float>> load_mesh<float>(const std::string&);
template Result<TriMesh<double>> load_mesh<double>(const std::string&);

}  // namespace adj
