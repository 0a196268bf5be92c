#version 450
#extension GL_GOOGLE_include_directive : require
// object-ID pass: (object id, element); element ~0 means "the primitive" (triangle, segment)
#include "lit_io.glsl"

layout(location = 0) out uvec2 o_id;

void main() {
  o_id = uvec2(v_info.x, v_info.y == 0xffffffffu ? uint(gl_PrimitiveID) : v_info.y);
}
