#version 450
#extension GL_GOOGLE_include_directive : require
// the ground: one quad on y = height (z = height in a z-up world), covering the fade radius
// around its centre
#include "common.glsl"

layout(location = 0) out vec3 v_world;

void main() {
  vec2 corner = vec2(float(gl_VertexIndex & 1) * 2.0 - 1.0, float(gl_VertexIndex >> 1) * 2.0 - 1.0);
  vec3 c = frame.ground_center.xyz;
  vec3 p = frame.ground.w > 0.5 ? vec3(c.x + corner.x * frame.ground.z, c.y + corner.y * frame.ground.z, frame.ground.x)
                                 : vec3(c.x + corner.x * frame.ground.z, frame.ground.x, c.z + corner.y * frame.ground.z);
  v_world = p;
  gl_Position = frame.views[0].view_proj * vec4(p, 1.0);
}
