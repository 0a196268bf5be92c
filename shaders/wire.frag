#version 450
#extension GL_GOOGLE_include_directive : require
// wireframe overlay: the draw's colour (sRGB + alpha), unlit
#include "common.glsl"

layout(location = 0) out vec4 o_color;

void main() { o_color = pc.color; }
