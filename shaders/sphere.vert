#version 450
#extension GL_GOOGLE_include_directive : require
// sphere impostors, instanced: a 4-vertex strip per instance, attributes per instance
#define VERTEX
#include "common.glsl"
#include "sphere_io.glsl"
#include "sphere_vertex.glsl"

layout(location = 0) in vec4 i_sphere;  // centre, radius
layout(location = 1) in float i_scalar;
layout(location = 2) in vec4 i_color;

void main() { emit_sphere(i_sphere, i_scalar, i_color, uint(gl_InstanceIndex), gl_VertexIndex); }
