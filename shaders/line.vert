#version 450
#extension GL_GOOGLE_include_directive : require
// lines: positions, optional per-vertex RGBA8 colours (sRGB + alpha), unlit
#define VERTEX
#include "common.glsl"
#include "lit_io.glsl"

layout(location = 0) in vec3 i_position;
layout(location = 1) in vec4 i_color;

void main() {
  v_world = i_position;
  v_normal = vec3(0.0);
  v_color = (pc.flags.z & F_COLORS) != 0u ? i_color : pc.color;
  v_scalar = 0.0;
  v_info = uvec4(pc.flags.y, 0xffffffffu, pc.flags.z, 0u);
  gl_Position = frame.views[pc.flags.x].view_proj * vec4(i_position, 1.0);
}
