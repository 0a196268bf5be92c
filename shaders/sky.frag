#version 450
// vertical sky gradient behind everything, darker towards the bottom
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 o_color;

layout(push_constant) uniform Push {
  vec4 top;
  vec4 bottom;
} pc;

void main() {
  float t = smoothstep(0.0, 1.0, v_uv.y);
  o_color = vec4(mix(pc.top.rgb, pc.bottom.rgb, t), 1.0);
}
