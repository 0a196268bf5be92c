#version 450
#extension GL_GOOGLE_include_directive : require
// instanced colliders and markers: box, capsule, plane, sphere, ring (flags.w = kind)
#define VERTEX
#include "common.glsl"
#include "lit_io.glsl"

layout(location = 0) in vec4 i_vertex;  // unit mesh position, w: capsule side / ring outer
layout(location = 1) in vec3 i_normal;
layout(location = 2) in vec3 i_position;
layout(location = 3) in vec4 i_rotation;  // quaternion x, y, z, w
layout(location = 4) in vec3 i_size;
layout(location = 5) in vec4 i_color;

vec3 rotate(vec4 q, vec3 v) { return v + 2.0 * cross(q.xyz, cross(q.xyz, v) + q.w * v); }

void main() {
  uint kind = pc.flags.w;
  vec3 p = i_vertex.xyz;
  if (kind == 0u) p *= i_size;                                             // box
  else if (kind == 1u) p = p * i_size.x + vec3(0.0, i_vertex.w * i_size.y, 0.0);  // capsule
  else if (kind == 2u) p *= vec3(i_size.x, 1.0, i_size.z);                 // plane
  else if (kind == 3u) p *= i_size.x;                                      // sphere
  else p *= mix(i_size.y, i_size.x, i_vertex.w);                           // ring
  vec4 q = normalize(i_rotation);
  vec3 w = i_position + rotate(q, p);
  v_world = w;
  v_normal = rotate(q, i_normal);
  v_color = vec4(srgb_to_linear(i_color.rgb), i_color.a);
  v_scalar = 0.0;
  v_info = uvec4(pc.flags.y, uint(gl_InstanceIndex), F_NORMALS, 0u);
  gl_Position = frame.views[pc.flags.x].view_proj * vec4(w, 1.0);
}
