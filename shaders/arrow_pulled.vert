#version 450
#extension GL_GOOGLE_include_directive : require
// arrows and discs, pulled: one non-instanced draw of (mesh indices x arrows) vertices that
// reads the unit mesh (binding 3) and the frame's upload buffer (binding 2)
// data[2] (uint bits): first word of origins, vectors, scalars; data[3]: first word of the
// mesh's indices, index count
#define VERTEX
#include "common.glsl"
#include "lit_io.glsl"
#include "arrow_vertex.glsl"

layout(std430, set = 0, binding = 2) readonly buffer Upload { uint words[]; } upload;
layout(std430, set = 0, binding = 3) readonly buffer Unit { uint words[]; } unit;

vec3 load3(uint w) {
  return uintBitsToFloat(uvec3(upload.words[w], upload.words[w + 1u], upload.words[w + 2u]));
}

void main() {
  uvec4 at = floatBitsToUint(pc.data[2]);
  uvec4 mesh = floatBitsToUint(pc.data[3]);
  uint instance = uint(gl_VertexIndex) / mesh.y;
  uint v = unit.words[mesh.x + uint(gl_VertexIndex) % mesh.y] * 8u;  // 8 words per vertex
  vec4 vertex = uintBitsToFloat(uvec4(unit.words[v], unit.words[v + 1u], unit.words[v + 2u],
                                      unit.words[v + 3u]));
  vec3 normal = uintBitsToFloat(uvec3(unit.words[v + 4u], unit.words[v + 5u], unit.words[v + 6u]));
  emit_arrow(vertex, normal, load3(at.x + 3u * instance), load3(at.y + 3u * instance),
             uintBitsToFloat(upload.words[at.z + instance]), instance);
}
