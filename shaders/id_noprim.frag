#version 450
#extension GL_GOOGLE_include_directive : require
// object-ID pass without gl_PrimitiveID (devices without geometryShader): element as given
#include "lit_io.glsl"

layout(location = 0) out uvec2 o_id;

void main() { o_id = v_info.xy; }
