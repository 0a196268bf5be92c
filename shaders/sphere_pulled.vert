#version 450
#extension GL_GOOGLE_include_directive : require
// sphere impostors, pulled: one non-instanced indexed draw, 4 vertices per sphere (index
// 4 i + corner) reading the frame's upload buffer (binding 2). Much faster than tiny
// instances on CPU drivers.
// data[0] (as uint bits): first word of the spheres (vec4), scalars (float), colours (RGBA8)
#define VERTEX
#include "common.glsl"
#include "sphere_io.glsl"
#include "sphere_vertex.glsl"

layout(std430, set = 0, binding = 2) readonly buffer Upload { uint words[]; } upload;

void main() {
  uint instance = uint(gl_VertexIndex) / 4u;
  int corner = gl_VertexIndex & 3;
  uvec4 at = floatBitsToUint(pc.data[0]);
  uint s = at.x + 4u * instance;
  vec4 sphere = uintBitsToFloat(uvec4(upload.words[s], upload.words[s + 1u], upload.words[s + 2u],
                                      upload.words[s + 3u]));
  float scalar = uintBitsToFloat(upload.words[at.y + instance]);
  vec4 color = unpackUnorm4x8(upload.words[at.z + instance]);
  emit_sphere(sphere, scalar, color, instance, corner);
}
