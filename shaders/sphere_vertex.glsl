// sphere impostors, vertex side: shared by sphere.vert (instanced) and sphere_pulled.vert
// one corner (0..3, strip order) of the impostor quad of sphere `instance`
void emit_sphere(vec4 i_sphere, float i_scalar, vec4 i_color, uint instance, int corner_index) {
  View v = frame.views[pc.flags.x];
  vec3 c = i_sphere.xyz;
  float r = i_sphere.w;
  bool ortho = v.eye.w > 0.5;
  vec3 to_eye = ortho ? -v.forward.xyz : v.eye.xyz - c;
  float d = length(to_eye);
  vec3 z = to_eye / max(d, 1e-20);
  vec3 a = abs(z.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
  vec3 x = normalize(cross(a, z));
  vec3 y = cross(z, x);
  // the quad lies on the plane through the sphere's nearest point (the shadow pass: through
  // the centre), so every hit is behind it: the fragment shaders may declare depth_greater
  // and keep early depth tests. Perspective: the silhouette there has radius
  // r (d - r) / sqrt(d^2 - r^2).
  bool shadow = pc.flags.x == 1u;
  float front = shadow ? 0.0 : r;
  float grow = ortho ? 1.0 : (d - r) / sqrt(max(d * d - r * r, 1e-20));
  vec2 corner = vec2(float(corner_index & 1) * 2.0 - 1.0, float(corner_index >> 1) * 2.0 - 1.0);
  vec3 p = c + z * front + (x * corner.x + y * corner.y) * (r * grow * 1.02);
  v_quad = p;
  v_sphere = i_sphere;
  uint bits = pc.flags.z;
  vec4 col = (bits & F_COLORS) != 0u ? i_color : pc.color;
  v_color = vec4(srgb_to_linear(col.rgb), col.a);
  v_scalar = clamp((i_scalar - pc.params.x) * pc.params.y, 0.0, 1.0);
  v_info = uvec4(pc.flags.y, instance, bits, 0u);
  gl_Position = v.view_proj * vec4(p, 1.0);
}
