#version 450
#extension GL_GOOGLE_include_directive : require
#include "lit_io.glsl"

layout(location = 0) out vec4 o_color;

void main() { o_color = v_color; }  // already display-ready sRGB + alpha
