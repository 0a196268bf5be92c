#version 450
#extension GL_GOOGLE_include_directive : require
// instanced arrows (origin + vector) and discs (fixed length, no head)
#define VERTEX
#include "common.glsl"
#include "lit_io.glsl"
#include "arrow_vertex.glsl"

layout(location = 0) in vec4 i_vertex;  // unit arrow: xyz, w 0 shaft / 1 head
layout(location = 1) in vec3 i_normal;  // cone sides have n.y = 0: set from the head's slope
layout(location = 2) in vec3 i_origin;
layout(location = 3) in vec3 i_vector;
layout(location = 4) in float i_scalar;

void main() { emit_arrow(i_vertex, i_normal, i_origin, i_vector, i_scalar, uint(gl_InstanceIndex)); }
