#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "sphere_io.glsl"

layout(location = 0) out uvec2 o_id;

void main() {
  vec3 p, n;
  if (!hit_sphere(p, n)) discard;
  o_id = v_info.xy;
}
