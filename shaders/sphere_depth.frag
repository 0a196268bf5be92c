#version 450
#extension GL_GOOGLE_include_directive : require
// sphere impostors into the shadow map: a disc at the centre's depth (no depth write from
// the shader, so early depth tests stay on); the error, under one radius, hides in the bias
#include "common.glsl"
#define SPHERE_NO_HIT
#include "sphere_io.glsl"

void main() {
  vec3 d = v_quad - v_sphere.xyz;
  if (dot(d, d) > v_sphere.w * v_sphere.w) discard;
}
