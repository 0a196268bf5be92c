#version 450
// full-screen triangle; uv runs 0..1 over the viewport
layout(location = 0) out vec2 v_uv;

void main() {
  vec2 p = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
  v_uv = p;
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
