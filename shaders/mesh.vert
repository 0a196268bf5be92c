#version 450
#extension GL_GOOGLE_include_directive : require
// triangle meshes: positions, normals, scalars; data[] is the model matrix
#define VERTEX
#include "common.glsl"
#include "lit_io.glsl"

layout(location = 0) in vec3 i_position;
layout(location = 1) in vec3 i_normal;
layout(location = 2) in float i_scalar;

void main() {
  mat4 model = mat4(pc.data[0], pc.data[1], pc.data[2], pc.data[3]);
  vec4 w = model * vec4(i_position, 1.0);
  v_world = w.xyz;
  v_normal = mat3(model) * i_normal;  // rigid or uniformly scaled transforms
  v_color = vec4(srgb_to_linear(pc.color.rgb), pc.color.a);
  v_scalar = clamp((i_scalar - pc.params.x) * pc.params.y, 0.0, 1.0);
  v_info = uvec4(pc.flags.y, 0xffffffffu, pc.flags.z, pc.flags.w);
  gl_Position = frame.views[pc.flags.x].view_proj * w;
}
