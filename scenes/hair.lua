-- scenes/hair.lua: hair on a head. Each strand is a chain of particles with stretch springs and
-- angular springs (S3 "Hair model"), stiffness scaled k_i ~ 1/l_i so a strand behaves the same
-- with any number of segments. The roots are kinematic: the script moves and turns the head (a
-- sphere collider) and carries every root and its clamped direction with hair:move_root. The
-- strands collide with the head. Implicit integration at 60 Hz.
-- Keys: M stops / starts the head, B makes the hair stiffer or softer.
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
S.strands = S.strands or {}
local RADIUS = 0.25
if S.moving == nil then S.moving, S.stiff = true, false end

-- head pose at time t: a sway, a bob and a turn about y
local function pose(t)
  local c = { 0.25 * math.sin(1.3 * t), 1.45 + 0.05 * math.sin(2.6 * t), 0.1 * math.sin(0.7 * t) }
  return c, 0.7 * math.sin(0.9 * t)
end

local function turn(v, yaw)
  local c, s = math.cos(yaw), math.sin(yaw)
  return { c * v[1] + s * v[3], v[2], -s * v[1] + c * v[3] }
end

local function add(a, b, s) return { a[1] + s * b[1], a[2] + s * b[2], a[3] + s * b[3] } end

return {
  title = "Hair on a moving head (implicit)",
  keys = { { "m", "stop / start the head" }, { "b", "stiff / soft hair" } },
  camera = { eye = { 1.2, 1.6, 1.5 }, target = { 0, 1.3, 0 } },
  setup = function(world)
    world.integrator = "implicit"
    world:plane { friction = 0.5, restitution = 0 }
    local c, yaw = pose(0)
    S.head = world:sphere { static = true, position = c, radius = RADIUS, friction = 0.4, restitution = 0 }
    S.strands = {}
    -- roots: a Fibonacci lattice over the scalp (top, sides and back; the face looks along +z)
    local n, golden = 420, math.pi * (3 - math.sqrt(5))
    for i = 0, n - 1 do
      local y = 1 - 2 * (i + 0.5) / n
      local r = math.sqrt(1 - y * y)
      local d = { r * math.cos(golden * i), y, r * math.sin(golden * i) }
      local scalp = (d[2] > 0.25 and d[3] < 0.45) or (d[3] < -0.2 and d[2] > -0.55) or
          (math.abs(d[1]) > 0.75 and d[2] > -0.3 and d[3] < 0.25)
      if scalp then
        local dir = { d[1], d[2] + 0.4, d[3] - 0.45 } -- combed up and back: it falls under its weight
        local shade = 0.75 + 0.5 * ((i * 0.618) % 1)
        local h = world:hair {
          root = add(c, turn(d, yaw), RADIUS), direction = turn(dir, yaw), length = 0.42, segments = 12,
          mass = 0.0015, stretch = 5, bend = 4e-5, damping = 0.02, radius = 0.006, root_motion = "kinematic",
          color = { 0.42 * shade, 0.27 * shade, 0.14 * shade, 1 },
        }
        S.strands[#S.strands + 1] = { hair = h, local_root = d, local_dir = dir }
      end
    end
  end,
  update = function(world, dt)
    if not S.moving then return end
    local c, yaw = pose(world.time + dt)
    S.head.position = c
    for _, s in ipairs(S.strands) do
      s.hair:move_root(add(c, turn(s.local_root, yaw), RADIUS), turn(s.local_dir, yaw), dt)
    end
  end,
  keypressed = function(world, key)
    if key == "m" then
      S.moving = not S.moving
      if not S.moving then
        for _, s in ipairs(S.strands) do
          s.hair:particle(1).velocity = { 0, 0, 0 }
          s.hair.anchor.velocity = { 0, 0, 0 }
        end
      end
    end
    if key == "b" then
      S.stiff = not S.stiff
      for _, s in ipairs(S.strands) do s.hair.bend = S.stiff and 4e-4 or 4e-5 end
    end
  end,
  draw = function(world, gfx)
    local c, yaw = pose(world.time)
    if not S.moving then c = S.head.position end
    for _, side in ipairs({ -1, 1 }) do
      gfx.sphere(add(c, turn({ 0.09 * side, 0.05, 0.22 }, S.moving and yaw or 0), 1), 0.035, { 0.95, 0.95, 0.95, 1 })
    end
    local _, h = gfx.size()
    local p = world:profile()
    gfx.text(16, h - 50, string.format("%d strands, %d particles   CG %d iterations   %.2f ms/step", #S.strands,
      world.particle_count, p.cg_iterations, p.total), { 0.85, 0.85, 0.85, 1 })
    gfx.text(16, h - 30, "M: stop / start the head   B: stiffer / softer hair", { 0.8, 0.8, 0.8, 1 })
  end,
}
