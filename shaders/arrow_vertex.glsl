// arrows and discs, vertex side: shared by arrow.vert (instanced) and arrow_pulled.vert
// data[0]: shaft radius, head radius, max length, length mode (0 linear, 1 log)
// data[1]: x fixed length (> 0: disc) ; params: z length scale, w log reference
// one vertex (unit-mesh vertex and normal) of arrow `instance`
void emit_arrow(vec4 i_vertex, vec3 i_normal, vec3 i_origin, vec3 i_vector, float i_scalar,
                uint instance) {
  float m = length(i_vector);
  vec3 dir = m > 1e-20 ? i_vector / m : vec3(0.0, 1.0, 0.0);
  float len = pc.data[0].w < 0.5 ? pc.params.z * m : pc.params.z * log(1.0 + m / pc.params.w);
  len = min(len, pc.data[0].z);
  float shaft_r = pc.data[0].x, head_r = pc.data[0].y;
  float head_len = min(3.0 * head_r, 0.45 * len);
  float shrink = head_r > 0.0 ? head_len / (3.0 * head_r) : 1.0;  // short arrows: thinner
  if (pc.data[1].x > 0.0) {  // disc
    len = pc.data[1].x;
    head_len = 0.0;
    shrink = 1.0;
  }
  float shaft_len = len - head_len;
  vec3 p = i_vertex.xyz, n = i_normal;
  if (i_vertex.w < 0.5) {
    p = vec3(p.x * shaft_r * shrink, p.y * shaft_len, p.z * shaft_r * shrink);
  } else {
    float hr = head_r * shrink;
    p = vec3(p.x * hr, shaft_len + p.y * head_len, p.z * hr);
    if (n.y == 0.0) n = normalize(vec3(n.x, hr / max(head_len, 1e-9), n.z));
  }
  // basis with +y along the arrow
  vec3 a = abs(dir.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
  vec3 x = normalize(cross(dir, a));
  vec3 z = cross(x, dir);
  mat3 basis = mat3(x, dir, z);
  vec3 w = i_origin + basis * p;
  v_world = w;
  v_normal = basis * n;
  v_color = vec4(srgb_to_linear(pc.color.rgb), pc.color.a);
  float source = (pc.flags.z & F_COLORS) != 0u ? i_scalar : m;  // F_COLORS: scalars given
  v_scalar = clamp((source - pc.params.x) * pc.params.y, 0.0, 1.0);
  v_info = uvec4(pc.flags.y, instance, pc.flags.z, 0u);
  gl_Position = frame.views[pc.flags.x].view_proj * vec4(w, 1.0);
}
